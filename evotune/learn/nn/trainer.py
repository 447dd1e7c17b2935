"""Training a (768 K -> H) x 2 -> N net on labelled positions, on the CPU, in numba (K king
buckets and N output buckets as the engine's nets, engine/net/inputs.py; 1 and 1: the plain net).

No deep-learning framework: PyPI's torch for Linux is a 3-4 GB CUDA install, and a framework
gains nothing on 32 sparse inputs. The input layer is a gather-add of at most 32 rows forward
and a scatter-add backward (:mod:`evotune.learn.nn.kernels`), as the community's trainers do.

A training step (one mini-batch): forward and backward of every position (threads over the
batch), the gradients summed in a fixed order, then AdamW on every parameter with the weights
clipped to ``[-clip, clip]``. The default clip, 1.98 (bullet's), keeps every quantised value
inside int16 with the community's integer inference (QA 255, QB 64): an input weight or bias is at
most round(1.98 * 255) = 505, so an accumulator (a bias and at most 32 rows) is at most 33 * 505
= 16665; an output weight is at most round(1.98 * 64) = 127, so the SCReLU product clamp(acc, 0,
255) * w is at most 255 * 127 = 32385; the output bias at most round(1.98 * 255 * 64) = 32314.

An epoch visits the training positions once, in the order of a permutation drawn from
``generator(seed, STREAM_NN_TRAIN, 1, epoch)``, in batches of ``batch`` positions (the last
one smaller). The learning rate of epoch e (0-based) is ``lr * gamma ** (e // lr_drop)`` (constant
when ``lr_drop`` is 0). A training's whole state between epochs is :class:`TrainState` (the
float parameters, Adam's moments and step count, the epoch); the epoch's shuffle is addressed by
the epoch, so a training continued from a stored state equals an uninterrupted one.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numba
import numpy as np

from ...engine.net.inputs import OUTPUT_BUCKETS_MAX, bucket_count, king_bucket_map, parse_king_buckets
from ...engine.net.network import ACTIVATIONS, HIDDEN_MAX, HIDDEN_MIN, Net, read_net
from ...errors import FieldError, NetError
from ...runs.trainrecords import EpochLine as EpochRecord
from ...seeding import STREAM_NN_TRAIN, generator
from ..fitdata import split_indices
from . import kernels
from .bulletdata import load_positions
from .data import PackedData
from .floatnet import PARAMS, FloatNet, map_text, param_count, param_views, shape_text


@dataclass(frozen=True)
class TrainSettings:
    """What a training does (everything here decides its result)."""

    hidden: int = 128
    activation: str = "screlu"
    wdl: float = 0.25
    """Weight of the game result in the target (1 - wdl: the score's)."""
    epochs: int = 10
    batch: int = 16384
    lr: float = 0.001
    lr_drop: int = 0
    """Multiply the learning rate by ``gamma`` every ``lr_drop`` epochs (0: never)."""
    gamma: float = 0.3
    decay: float = 0.01
    """AdamW's decoupled weight decay (per unit of learning rate)."""
    clip: float = 1.98
    """Weights are clipped to [-clip, clip] after every step (see the module docstring); at most
    2.0, as the output bias is stored in int16 scaled by QA * QB = 16320."""
    seed: int = 1
    val_share: float = 0.1
    """Held-out share of the positions, drawn in blocks of ``val_block`` (as texel)."""
    val_block: int = 64
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    stream: int = 0
    """Positions held at once when streaming bullet data files larger than memory (a window,
    :mod:`evotune.learn.nn.stream`); 0: every position in memory."""
    king_buckets: str = "1"
    """The net's king buckets as ``nn init --king-buckets`` takes them: a preset's bucket count
    (1: none) or 32 comma-separated bucket ids (stored as the preset's count when it is one)."""
    output_buckets: int = 1
    """The net's output buckets (MaterialCount<N>), 1..8."""
    factoriser: bool = False
    """Train king buckets with a factoriser (:class:`~evotune.learn.nn.floatnet.FloatNet`'s
    ``l0f``: 768 rows shared by every bucket, merged into each bucket's when the net is saved);
    only with king buckets. Left out of :meth:`record` when off (trainings keep their identity)."""

    def __post_init__(self) -> None:
        ints = {"hidden": (HIDDEN_MIN, HIDDEN_MAX), "epochs": (1, 100_000), "batch": (1, 1 << 22),
                "lr_drop": (0, 100_000), "seed": (0, 2**63 - 1), "val_block": (1, 1 << 30),
                "stream": (0, 1 << 40), "output_buckets": (1, OUTPUT_BUCKETS_MAX)}
        for name, (low, high) in ints.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise FieldError(name, f"must be an integer from {low} to {high}, got {v!r}")
        reals = {"wdl": (0.0, 1.0, True), "lr": (0.0, 1.0, False), "gamma": (0.0, 1.0, False),
                 "decay": (0.0, 1.0, True), "clip": (0.0, 2.0, False),
                 "val_share": (0.0, 0.9, True), "beta1": (0.0, 1.0, True),
                 "beta2": (0.0, 1.0, True), "eps": (0.0, 1.0, False)}
        for name, (lowf, highf, low_ok) in reals.items():
            v = getattr(self, name)
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool)
                  and np.isfinite(v) and (lowf <= v if low_ok else lowf < v) and v <= highf)
            if not ok:
                raise FieldError(name, f"must be a number in {'[' if low_ok else '('}{lowf:g}, "
                                        f"{highf:g}], got {v!r}")
        if self.activation not in ACTIVATIONS:
            raise FieldError("activation", f"{self.activation!r} is unknown: use one of "
                                           f"{', '.join(ACTIVATIONS)}")
        try:
            kb = self.king_buckets
            bmap = parse_king_buckets(kb) if isinstance(kb, str) else king_bucket_map(kb)
        except NetError as exc:
            raise FieldError("king_buckets", str(exc).removeprefix("king buckets ")
                             .removeprefix("net king bucket map ")) from None
        object.__setattr__(self, "king_buckets", map_text(bmap))
        if not isinstance(self.factoriser, bool):
            raise FieldError("factoriser", f"must be true or false, got {self.factoriser!r}")
        if self.factoriser and bucket_count(bmap) == 1:
            raise FieldError("factoriser", "shares rows between king buckets: give king buckets "
                                           "too (--king-buckets)")

    @property
    def bucket_map(self) -> tuple[int, ...]:
        """The king bucket map (32 ids, rank 1's a-d first)."""
        return parse_king_buckets(self.king_buckets)

    def new_net(self) -> FloatNet:
        """A random net of these settings' shape and seed."""
        return FloatNet.random(self.hidden, self.seed, self.activation,
                               king_buckets=self.bucket_map, output_buckets=self.output_buckets,
                               factoriser=self.factoriser)

    def check_net(self, net: FloatNet, where: str = "") -> None:
        """FieldError ('init') when ``net`` is not of these settings' shape."""
        if (net.hidden, net.activation, net.king_buckets, net.output_buckets) != \
                (self.hidden, self.activation, self.bucket_map, self.output_buckets):
            raise FieldError("init", f"{where}is a {net.shape_text()}; the training's net is a "
                                     + shape_text(self.hidden, self.activation, self.bucket_map,
                                                  self.output_buckets))

    def lr_at(self, epoch: int) -> float:
        """The learning rate of epoch ``epoch`` (0-based)."""
        return self.lr * self.gamma ** (epoch // self.lr_drop) if self.lr_drop else self.lr

    @property
    def king_bucket_count(self) -> int:
        """K of the net's king buckets (1: none)."""
        return bucket_count(self.bucket_map)

    @property
    def net_text(self) -> str:
        """The trained net in a few words: 'H activation', with buckets '..., K king buckets
        (map M), N output buckets'."""
        k, n = self.king_bucket_count, self.output_buckets
        text = f"{self.hidden} {self.activation}"
        if k > 1:
            text += f", {k} king buckets (map {self.king_buckets})"
            text += ", factorised" if self.factoriser else ""
        return text + (f", {n} output buckets" if n > 1 else "")

    def record(self) -> dict:
        """The stored form (a training's manifest): every field, ``factoriser`` only when on."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "factoriser" or self.factoriser}


@dataclass
class TrainState:
    """Everything a training carries from one epoch to the next."""

    net: FloatNet
    m: np.ndarray
    """Adam's first moments, flat like ``net.flat``."""
    v: np.ndarray
    """Adam's second moments, flat like ``net.flat``."""
    steps: int = 0
    """Optimiser steps taken (Adam's t)."""
    epoch: int = 0
    """Epochs done."""

    @classmethod
    def start(cls, net: FloatNet) -> TrainState:
        return cls(net, np.zeros_like(net.flat), np.zeros_like(net.flat))

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict]:
        """(arrays, JSON-safe fields): what a checkpoint stores; a bucketed net's fields add
        ``king_buckets`` (as :attr:`TrainSettings.king_buckets`) and ``output_buckets`` (a plain
        net's are those of before buckets), a factorised one's ``factoriser`` (1)."""
        net = self.net
        shape = {"king_buckets": map_text(net.king_buckets),
                 "output_buckets": net.output_buckets} if net.bucketed else {}
        if net.factorised:
            shape["factoriser"] = 1
        return ({"params": net.flat, "m": self.m, "v": self.v},
                {"activation": net.activation, "hidden": net.hidden, **shape,
                 "steps": self.steps, "epoch": self.epoch})

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict) -> TrainState:
        """The state :meth:`to_arrays` stored (fields without buckets: a plain net); ValueError
        when the arrays do not fit the shape."""
        hidden = int(meta["hidden"])
        bmap = parse_king_buckets(str(meta.get("king_buckets", "1")))
        k, n = bucket_count(bmap), int(meta.get("output_buckets", 1))
        f = bool(meta.get("factoriser", 0))
        flat = np.asarray(arrays["params"], dtype=np.float32)
        if flat.size != param_count(hidden, k, n, f):
            raise ValueError(f"{flat.size} parameters, not the {param_count(hidden, k, n, f)} "
                             f"of its net's shape")
        v = param_views(flat, hidden, k, n, f)
        net = FloatNet(str(meta["activation"]), *(v[p] for p in PARAMS), king_buckets=bmap,
                       l0f=v.get("l0f"))
        return cls(net, np.array(arrays["m"], dtype=np.float32),
                   np.array(arrays["v"], dtype=np.float32), int(meta["steps"]),
                   int(meta["epoch"]))


@dataclass(frozen=True)
class Progress:
    """Where an epoch stands (given to the progress callback after every batch)."""

    epoch: int
    """The epoch under way (1-based)."""
    done: int
    """Positions of this epoch done."""
    total: int
    """Positions per epoch."""
    rate: float
    """Positions per second so far in this call."""
    seconds_left: float
    """Estimated seconds to the end of the training."""


class Buffers:
    """Work arrays of one batch size and net shape (allocated once per training)."""

    def __init__(self, batch: int, hidden: int, *, king_buckets: int = 1,
                 output_buckets: int = 1, factoriser: bool = False) -> None:
        size = param_count(hidden, king_buckets, output_buckets, factoriser)
        self.sliced = np.zeros((kernels.SLICES, size), np.float32)
        """Each slice's gradient sum (see :mod:`~evotune.learn.nn.kernels`)."""
        self.loss = np.zeros(batch, np.float32)
        self.flat = np.zeros(size, np.float32)
        self.grads = param_views(self.flat, hidden, king_buckets, output_buckets, factoriser)
        """Gradients, views of ``flat`` named as the parameters."""

    @classmethod
    def of(cls, batch: int, settings: TrainSettings) -> Buffers:
        """The buffers of a training's batch and net shape."""
        return cls(batch, settings.hidden, king_buckets=bucket_count(settings.bucket_map),
                   output_buckets=settings.output_buckets, factoriser=settings.factoriser)


def gradients(state: TrainState, data: PackedData, idx: np.ndarray, wdl: float,
              buf: Buffers) -> float:
    """The mean loss of positions ``idx`` and its gradients (into ``buf.grads``)."""
    b = idx.size
    net = state.net
    with numba.parallel_chunksize(1):  # slices dealt one at a time to the free thread
        kernels.slice_gradients(idx, data.occ, data.pcs, data.score, data.result, data.stm,
                                np.float32(wdl), *net.kernel_args(), buf.sliced, buf.loss[:b])
    kernels.reduce_slices(buf.sliced, buf.flat, numba.get_num_threads())
    return kernels.ordered_sum(buf.loss[:b]) / b


def step(state: TrainState, data: PackedData, idx: np.ndarray, settings: TrainSettings,
         lr: float, buf: Buffers) -> float:
    """One training step on positions ``idx``: returns the batch's mean loss before it."""
    loss = gradients(state, data, idx, settings.wdl, buf)
    state.steps += 1
    kernels.adamw(state.net.flat, buf.flat, state.m, state.v, lr, settings.beta1,
                  settings.beta2, settings.eps, settings.decay, state.steps, -settings.clip,
                  settings.clip)
    return loss


def evaluate(net: FloatNet, data: PackedData, idx: np.ndarray, wdl: float
             ) -> tuple[np.ndarray, float]:
    """(float outputs, side to move's view, in units of SCALE centipawns; mean loss) of ``idx``."""
    out = np.zeros(idx.size, np.float32)
    loss = np.zeros(idx.size, np.float32)
    kernels.outputs(np.ascontiguousarray(idx, dtype=np.int64), data.occ, data.pcs, data.score,
                    data.result, data.stm, np.float32(wdl), *net.kernel_args(), out, loss)
    return out, (kernels.ordered_sum(loss) / idx.size if idx.size else 0.0)


def check_data(data: PackedData, settings: TrainSettings) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) indices of ``data``; FieldError when the settings cannot train on
    it (a score is needed on every position unless wdl is 1; positions for both parts)."""
    n = len(data)
    if settings.wdl < 1 and data.scored < n:
        raise FieldError("wdl", f"{settings.wdl:g} mixes in a score, but {n - data.scored} of "
                                f"the {n} positions have none; give wdl 1 (results only) or "
                                "data with a score on every line ('FEN | score | result')")
    train_idx, val_idx = split_indices(n, settings.val_share, settings.seed, settings.val_block)
    if train_idx.size == 0:
        raise FieldError("val_share", f"{settings.val_share:g} of {n} positions leaves none to "
                                      "train on; lower it or give more data")
    if settings.val_share > 0 and val_idx.size == 0:
        raise FieldError("val_share", f"{settings.val_share:g} of {n} positions holds out none; "
                                      "give 0 or more data")
    return np.sort(train_idx).astype(np.int64), np.sort(val_idx).astype(np.int64)


def epoch_order(settings: TrainSettings, train_idx: np.ndarray, epoch: int) -> np.ndarray:
    """The training positions in epoch ``epoch``'s (0-based) order."""
    rng = generator(settings.seed, STREAM_NN_TRAIN, 1, epoch)
    return train_idx[rng.permutation(train_idx.size)]


def run_epoch(state: TrainState, data: PackedData, train_idx: np.ndarray, val_idx: np.ndarray,
              settings: TrainSettings, buf: Buffers, *,
              progress: Callable[[Progress], None] | None = None,
              started: float | None = None, done_before: int = 0) -> EpochRecord:
    """Train epoch ``state.epoch + 1`` and return its record (``state`` is updated)."""
    t0 = time.perf_counter()
    started = t0 if started is None else started
    e = state.epoch
    lr = settings.lr_at(e)
    order = epoch_order(settings, train_idx, e)
    total, loss_sum = order.size, 0.0
    remaining = (settings.epochs - e) * total
    for at in range(0, total, settings.batch):
        idx = order[at:at + settings.batch]
        loss_sum += step(state, data, idx, settings, lr, buf) * idx.size
        if progress is not None:
            done = done_before + at + idx.size
            rate = done / max(time.perf_counter() - started, 1e-9)
            progress(Progress(e + 1, at + idx.size, total, rate,
                              (remaining - at - idx.size) / rate))
    state.epoch += 1
    val = evaluate(state.net, data, val_idx, settings.wdl)[1] if val_idx.size else None
    return EpochRecord(state.epoch, lr, loss_sum / total, val, total,
                       time.perf_counter() - t0, state.net.digest(),
                       state.net.quantised().checksum)


@dataclass
class TrainResult:
    net: FloatNet
    """The trained float net."""
    records: list[EpochRecord] = field(default_factory=list)
    """One per epoch trained by this call."""
    state: TrainState | None = None
    """The state after the last epoch (a checkpoint to continue from)."""

    def engine_net(self) -> Net:
        """The trained net quantised: what the engine plays and net files hold."""
        return self.net.quantised()


def resolve_threads(workers: int) -> int:
    """Threads of the trainer: ``workers``, 0 = every core numba may use."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise FieldError("workers", f"must be an integer >= 0 (0 = every core), got {workers!r}")
    return min(workers or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)


def train_packed(data: PackedData, settings: TrainSettings, *, workers: int = 1,
                 init: FloatNet | None = None, state: TrainState | None = None,
                 progress: Callable[[Progress], None] | None = None,
                 on_epoch: Callable[[EpochRecord, TrainState], None] | None = None
                 ) -> TrainResult:
    """Train on packed positions from ``init`` (default: a random net of ``settings.seed``) or
    continue ``state`` (a stored state of the same settings) up to ``settings.epochs`` epochs;
    ``on_epoch(record, state)`` is called after each epoch (a run's checkpoint)."""
    threads = resolve_threads(workers)
    if settings.stream:
        raise FieldError("stream", f"{settings.stream} streams the data files: train with "
                                   "evotune.learn.nn.stream.train_stream (or a run), not on "
                                   "positions in memory")
    train_idx, val_idx = check_data(data, settings)
    state = start_state(settings, init, state)
    buf = Buffers.of(min(settings.batch, train_idx.size), settings)
    return run_epochs(state, settings, threads, on_epoch,
                      lambda started, done: run_epoch(state, data, train_idx, val_idx, settings,
                                                      buf, progress=progress, started=started,
                                                      done_before=done))


def start_state(settings: TrainSettings, init: FloatNet | None,
                state: TrainState | None) -> TrainState:
    """``state`` when continuing, else a new state at ``init`` (default: a random net of
    ``settings.seed``), which must have the training's size and activation (with a factoriser
    of zeros added, or one it has merged, as the settings ask)."""
    if state is not None:
        return state
    net = init.copy() if init is not None else settings.new_net()
    settings.check_net(net)
    net = net.with_factoriser() if settings.factoriser else net.merged()
    return TrainState.start(net)


def run_epochs(state: TrainState, settings: TrainSettings, threads: int,
               on_epoch: Callable[[EpochRecord, TrainState], None] | None,
               epoch: Callable[[float, int], EpochRecord]) -> TrainResult:
    """Epochs until ``settings.epochs`` on ``threads`` numba threads (restored afterwards):
    ``epoch(started, positions_done)`` plays one (in memory or streamed), ``on_epoch(record,
    state)`` follows each (a run's checkpoint)."""
    result = TrainResult(state.net, [], state)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        started, done = time.perf_counter(), 0
        while state.epoch < settings.epochs:
            rec = epoch(started, done)
            done += rec.positions
            result.records.append(rec)
            if on_epoch is not None:
                on_epoch(rec, state)
    finally:
        numba.set_num_threads(before)
    result.net = state.net
    return result


def train(data_paths, *, workers: int = 1, init: FloatNet | Net | str | Path | None = None,
          max_bad: int = 0,
          cache_dir=None, state: TrainState | None = None,
          progress: Callable[[Progress], None] | None = None,
          on_epoch: Callable[[EpochRecord, TrainState], None] | None = None,
          **settings) -> TrainResult:
    """Train a net on the labelled positions of ``data_paths``: text read once into the cache
    beside them (:func:`evotune.learn.nn.data.load_data`), or bullet's binary data files
    (``.bin``, ``.data``: :mod:`evotune.learn.nn.bulletdata`); ``settings`` are :class:`TrainSettings`'
    fields (hidden, activation, wdl, epochs, batch, lr, lr_drop, gamma, seed, val_share,
    val_block, king_buckets, output_buckets ...). Returns the per-epoch records and the float
    net.

    ``init``: the starting net, a float net, an integer :class:`~evotune.engine.net.network.Net` or
    a net file (either format; its values divided by QA and QB) of the settings' shape (hidden
    size, activation, king and output buckets); default a random net of the seed. Every input
    is checked before anything is written (the data cache included): the settings, the thread
    count, the initial net and its shape, each data line, whether the data fits the settings
    (scores for wdl < 1, positions for both parts of the split).
    """
    cfg = TrainSettings(**settings)
    resolve_threads(workers)
    if cfg.stream:
        raise FieldError("stream", f"{cfg.stream}: stream bullet data with "
                                   "evotune.learn.nn.stream.train_stream or a run")
    if isinstance(init, (str, Path)):
        init = read_net(init)
    if isinstance(init, Net):
        init = FloatNet.from_net(init)
    if init is not None:
        cfg.check_net(init)
    data = load_positions(data_paths, max_bad=max_bad, cache_dir=cache_dir,
                          check=lambda d: check_data(d, cfg))
    return train_packed(data, cfg, workers=workers, init=init, state=state, progress=progress,
                        on_epoch=on_epoch)
