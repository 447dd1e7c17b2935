"""Training from bullet data files larger than memory: the positions streamed in windows.

With ``stream = W`` (:class:`~evotune.learn.nn.trainer.TrainSettings`) a training never holds
more than W positions (28 bytes each) of its bullet data files (:mod:`.bulletdata`): the files,
taken as one sequence of positions in order, are cut into windows of W consecutive positions
(the last one shorter), and an epoch

- visits the windows in the order of a permutation drawn from ``generator(seed,
  STREAM_NN_TRAIN, 2, epoch)``;
- reads each window (every record checked), and trains on its training positions in the order
  of a permutation drawn from ``generator(seed, STREAM_NN_TRAIN, 3, epoch, window)``, in batches
  of ``batch`` (a window's last batch smaller: batches do not span windows);
- then reads the windows again in file order for the validation loss (the mean over every
  held-out position, summed in file order).

This is the shuffle bullet's loader does (a buffer of consecutive positions, shuffled), with the
windows' order drawn too. A position is held out when its block of ``val_block`` consecutive
positions is: block b is held out when a hash of (seed, b) (splitmix64 of
``game_seed(seed, STREAM_NN_TRAIN, 4) + b * golden``), as a number in [0, 1), is below
``val_share``; so about ``val_share`` of the blocks, decided without holding the whole set (the
in-memory trainer's split, :func:`evotune.learn.fitdata.split_indices`, draws exactly that share
and is another split). Everything is addressed by the seed, the epoch and the window: the same
seed gives the same net, for any number of threads, and a training continued from a stored
state equals an uninterrupted one.

Before the first step every record of every file is read and checked once (a bad file is one
DataError, before anything is trained or written).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...errors import FieldError
from ...fileio import check_input_file
from ...runs.trainrecords import EpochLine as EpochRecord
from ...seeding import STREAM_NN_TRAIN, game_seed, generator
from ..labels import DATA_HINT as HINT
from ..labels import DataError, file_record
from .bulletdata import bullet_key, empty_packed, is_bullet, read_into, record_count
from .data import PackedData
from .trainer import (
    Buffers,
    FloatNet,
    Progress,
    TrainResult,
    TrainSettings,
    TrainState,
    evaluate,
    resolve_threads,
    run_epochs,
    start_state,
    step,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def held_out(start: int, count: int, settings: TrainSettings) -> np.ndarray:
    """Whether each of the positions ``start .. start + count - 1`` is held out (a bool array;
    the hash is taken per block, so its temporaries are a few bytes a block)."""
    if settings.val_share <= 0 or count == 0:
        return np.zeros(count, bool)
    size = settings.val_block
    first, last = start // size, (start + count - 1) // size
    z = np.uint64(game_seed(settings.seed, STREAM_NN_TRAIN, 4)) \
        + np.arange(first, last + 1, dtype=np.uint64) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    held = (z >> np.uint64(11)).astype(np.float64) / float(1 << 53) < settings.val_share
    return np.repeat(held, size)[start - first * size:start - first * size + count]


class BulletStream:
    """Bullet data files read window by window (the positions of all files, in order)."""

    def __init__(self, paths, window: int) -> None:
        self.paths = [Path(p) for p in paths]
        if not all(is_bullet(p) for p in self.paths):
            raise FieldError("stream", "streams bullet's binary data (.bin, .data) only; "
                                       "convert text with 'evotune nn convert'")
        for p in self.paths:
            check_input_file(p, "data file", error=DataError, hint=HINT)
        self.counts = [record_count(p) for p in self.paths]
        self.starts = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        self.window = int(window)
        self.info: dict = {}
        self.checked: tuple[int, int] | None = None
        """(training, held-out) positions, once :meth:`check` has read every record."""

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def windows(self) -> int:
        return -(-len(self) // self.window)

    def read(self, w: int) -> tuple[PackedData, int]:
        """(window ``w``'s positions, its first position's place in the sequence)."""
        lo = w * self.window
        hi = min(len(self), lo + self.window)
        data = empty_packed(hi - lo)
        for i, p in enumerate(self.paths):
            a, b = max(lo, int(self.starts[i])), min(hi, int(self.starts[i + 1]))
            if a < b:
                read_into(p, b - a, data, a - lo, first=a - int(self.starts[i]))
        return data, lo

    def check(self, settings: TrainSettings) -> tuple[int, int]:
        """Read and check every record once; (training positions, held-out positions). Sets
        ``info`` as a loaded set's (the data key of the files) and ``checked``."""
        if self.checked is not None:
            return self.checked
        if len(self) == 0:
            raise DataError(f"{', '.join(map(str, self.paths))}: no positions (empty files)")
        held = 0
        for w in range(self.windows):
            data, lo = self.read(w)
            held += int(np.count_nonzero(held_out(lo, len(data), settings)))
        records = []
        for p, n in zip(self.paths, self.counts):
            rec = file_record(p)
            if rec["size"] != n * 32:
                raise DataError(f"data file {p} changed while it was read; read it again")
            records.append({**rec, "positions": n})
        self.info = {"key": bullet_key(records), "format": "bullet", "files": records,
                     "positions": len(self), "stream": self.window}
        train = len(self) - held
        if train == 0:
            raise FieldError("val_share", f"{settings.val_share:g} of {len(self)} positions "
                                          "leaves none to train on; lower it or give more data")
        if settings.val_share > 0 and held == 0:
            raise FieldError("val_share", f"{settings.val_share:g} of {len(self)} positions "
                                          "holds out none; give 0 or more data")
        self.checked = (train, held)
        return self.checked


def _epoch(state: TrainState, source: BulletStream, settings: TrainSettings, buf: Buffers,
           train_total: int, held_total: int, progress, started: float,
           done_before: int) -> EpochRecord:
    t0 = time.perf_counter()
    e = state.epoch
    lr = settings.lr_at(e)
    order = generator(settings.seed, STREAM_NN_TRAIN, 2, e).permutation(source.windows)
    done, loss_sum = 0, 0.0
    remaining = (settings.epochs - e) * train_total
    for w in order:
        data, lo = source.read(int(w))
        idx = np.flatnonzero(~held_out(lo, len(data), settings)).astype(np.int64)
        idx = idx[generator(settings.seed, STREAM_NN_TRAIN, 3, e, int(w)).permutation(idx.size)]
        for at in range(0, idx.size, settings.batch):
            part = idx[at:at + settings.batch]
            loss_sum += step(state, data, part, settings, lr, buf) * part.size
            done += part.size
            if progress is not None:
                rate = (done_before + done) / max(time.perf_counter() - started, 1e-9)
                progress(Progress(e + 1, done, train_total, rate, (remaining - done) / rate))
    state.epoch += 1
    val = None
    if held_total:
        total = 0.0
        for w in range(source.windows):
            data, lo = source.read(w)
            vidx = np.flatnonzero(held_out(lo, len(data), settings)).astype(np.int64)
            if vidx.size:
                total += evaluate(state.net, data, vidx, settings.wdl)[1] * vidx.size
        val = total / held_total
    return EpochRecord(state.epoch, lr, loss_sum / train_total, val, train_total,
                       time.perf_counter() - t0, state.net.digest(),
                       state.net.quantised().checksum)


def train_stream(source: BulletStream, settings: TrainSettings, *, workers: int = 1,
                 init: FloatNet | None = None, state: TrainState | None = None,
                 progress: Callable[[Progress], None] | None = None,
                 on_epoch: Callable[[EpochRecord, TrainState], None] | None = None
                 ) -> TrainResult:
    """:func:`~evotune.learn.nn.trainer.train_packed` for streamed data: train from ``init``
    (default a random net of the seed) or continue ``state`` up to ``settings.epochs``."""
    threads = resolve_threads(workers)
    train_total, held_total = source.check(settings)
    state = start_state(settings, init, state)
    buf = Buffers.of(settings.batch, settings)
    return run_epochs(state, settings, threads, on_epoch,
                      lambda started, done: _epoch(state, source, settings, buf, train_total,
                                                   held_total, progress, started, done))
