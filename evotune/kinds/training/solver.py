"""The training kind's solver: a net training as a run of its own kind under
``populations/<run-id>/`` (through :class:`evotune.runs.store.Store`), shaped as a fit's run
(:mod:`evotune.kinds.fit.solver`); the numerics are :mod:`evotune.learn.nn`'s:

- manifest: ``kind = "train"``, the :class:`TrainConfig` (the trainer's settings, the initial
  net, ``max_bad``, the cache folder), the data files' names, sizes and SHA-256 and the
  identity: hashes of the config, the initial net file and the data files, and the key of the
  packed data cache (``cache``);
- ``initial.nnue``: the initial net quantised; ``checkpoint.npz``: the trainer's state
  (:class:`TrainState`) after the last epoch, written atomically after every epoch (the commit
  point; epoch 0 is written when the run is made); ``epochs/epoch-E.json``: epoch E's record
  (losses, lr, seconds, the float digest and the quantised net's checksum); ``net.nnue``: the
  net after the last epoch; ``state.json``: the epoch as the run's generation, for the readers.

A killed training resumed with ``evotune resume RUN`` restarts the epoch it was in from the
checkpoint; the epoch's shuffle is addressed by the epoch, so it ends with the net an
uninterrupted training ends with. One stopped before its first checkpoint (killed, or a full
disk, right after its manifest) starts from its config again: nothing had been trained.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...datafiles import DataFile
from ...engine.net.network import Net, net_bytes
from ...errors import EvotuneError, FieldError, StoreError
from ...learn.labels import data_files, file_record
from ...learn.nn.bulletdata import load_positions
from ...learn.nn.data import PackedData
from ...learn.nn.initnet import INIT_RANDOM, INITIAL_FILE, NET_FILE, InitialNet
from ...learn.nn.stream import BulletStream, train_stream
from ...learn.nn.trainer import (
    EpochRecord,
    FloatNet,
    Progress,
    TrainSettings,
    TrainState,
    check_data,
    resolve_threads,
    train_packed,
)
from ...runs.manifest import check_new_run
from ...runs.records import State
from ...runs.store import Store
from ...runs.trainrecords import EpochLine
from .config import STRATEGY, TrainConfig
from .plan import TrainPlan, plan_training


def _digest_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def train_identity(plan: TrainPlan, files: tuple[DataFile, ...], cache_key: str) -> dict:
    """Hashes of the config, the initial net file and the data files; the data cache's key."""
    parts = {
        "config": _digest_text(json.dumps(plan.config.identity_dict(), sort_keys=True)),
        "init": _init_identity(plan.initial),
        "data": _digest_text(json.dumps([f.to_json() for f in files], sort_keys=True)),
        "cache": cache_key,
    }
    parts["hash"] = _digest_text(json.dumps(parts, sort_keys=True))[:16]
    return parts


def _init_identity(initial: InitialNet) -> str:
    """The initial net's part of a training's identity: 'random', a net file's SHA-256, or for
    an ``eval:`` init its text and its weights file's SHA-256 (when it names one)."""
    if initial.init == INIT_RANDOM:
        return INIT_RANDOM
    if initial.fits_eval:
        weights = initial.file
        return _digest_text(initial.init + ("" if weights is None else
                                            " " + file_record(weights)["sha256"]))
    return file_record(Path(initial.init))["sha256"]


def _load(cfg: TrainConfig, settings: TrainSettings,
          progress: Callable[[int], None] | None = None) -> PackedData | BulletStream:
    """The training's positions: in memory, or (``stream``) bullet files read and checked once
    and then streamed."""
    if settings.stream:
        source = BulletStream(cfg.data, settings.stream)
        source.check(settings)
        return source
    return load_positions(cfg.data, max_bad=cfg.max_bad, cache_dir=cfg.cache_dir or None,
                          check=lambda d: check_data(d, settings), progress=progress)


def new_training(cfg: TrainConfig | TrainPlan, *, out_dir: str | Path = "populations",
                 run_id: str | None = None, workers: int = 1,
                 progress: Callable[[int], None] | None = None,
                 init_progress: Callable[[Progress], None] | None = None
                 ) -> tuple[Store, PackedData | BulletStream]:
    """Create the run folder of a new training. Every input is checked first (settings, thread
    count, initial net, run id and folder, each data line, whether the data fits the settings),
    so a bad one leaves no run folder (the data cache beside the data is written only after
    every check passed). Stores the manifest, the initial net and the epoch-0 checkpoint.
    ``progress(positions)``: the positions read so far, while the text is read (no cache yet);
    ``init_progress``: the epochs of an ``eval:`` initial net's fit (made after the data is
    read, before the run folder)."""
    plan = plan_training(cfg, check_data=True)
    cfg, settings = plan.config, plan.settings
    resolve_threads(workers)
    plan.initial.check()
    check_new_run(out_dir, run_id)
    data = _load(cfg, settings, progress)
    net = plan.initial.make(data if isinstance(data, PackedData) else None,
                            workers=resolve_threads(workers), progress=init_progress)
    files = data_files(cfg.data)
    identity = train_identity(plan, files, str(data.info["key"]))
    run_id = run_id or f"nn-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"
    store = Store.create(out_dir, run_id, config=cfg, identity=identity, data_files=files)
    _start(store, net)
    return store, data


def _start(store: Store, net: FloatNet) -> None:
    """Store the initial net and the epoch-0 checkpoint (the training's first commit)."""
    store.write_bytes(INITIAL_FILE, net_bytes(net.quantised()))
    _commit(store, TrainState.start(net), 0.0, finished=False)


def never_committed(store: Store) -> bool:
    """Whether the training stopped before its first checkpoint (killed, or out of disk space,
    right after its manifest): it has no checkpoint and no epoch record. Nothing was trained, so
    :func:`execute_training` starts it again from its config (the same initial net)."""
    return not store.checkpoint_path.exists() and not store.epoch_path(1).exists()


def open_training(store: Store) -> TrainConfig:
    """The config of a stored training, after checking that its inputs did not change; takes
    the run's writer lock."""
    return open_plan(store).config


def open_plan(store: Store) -> TrainPlan:
    """The plan of a stored training (its initial net resolved once), after checking that its
    inputs did not change; takes the run's writer lock."""
    manifest = store.manifest()
    cfg = manifest.config
    if not isinstance(cfg, TrainConfig):
        raise StoreError(f"run '{store.run_id}' is a {manifest.kind} run, not a training")
    store.lock()
    plan = plan_training(cfg)
    init = plan.initial.file
    for p in cfg.data + (() if init is None else (str(init),)):
        if not Path(p).is_file():
            what = "data file" if p in cfg.data else "initial net file"
            raise StoreError(f"training '{store.run_id}' cannot be resumed: its {what} {p} is "
                             "missing; put it back (same size and SHA-256) and resume again")
    now = train_identity(plan, data_files(cfg.data), manifest.identity.get("cache", ""))
    changed = [k for k in ("config", "init", "data") if manifest.identity.get(k) != now[k]]
    if changed:
        raise StoreError(f"training '{store.run_id}' cannot be resumed: its "
                         + ", ".join(changed) + " changed since it started; restore them or "
                         "start a new training")
    return plan


def _commit(store: Store, state: TrainState, seconds: float, *, finished: bool,
            record: EpochRecord | None = None) -> None:
    """Store one epoch: its record, then the checkpoint (the commit point), then the net and the
    readers' state."""
    if record is not None:
        store.write_epoch(record)
    arrays, meta = state.to_arrays()
    store.write_checkpoint(arrays, {**meta, "seconds": float(seconds)})
    net = state.net.quantised()
    store.write_bytes(NET_FILE, net_bytes(net))
    store.write_state(State(generation=state.epoch, games=0, seconds=float(seconds),
                            finished=finished, strategy={"kind": STRATEGY,
                                                          "checksum": net.checksum}))


def load_state(store: Store) -> tuple[TrainState, float]:
    """The stored trainer state and the training's seconds so far."""
    got = store.read_checkpoint()
    if got is None and never_committed(store):
        raise StoreError(f"training '{store.run_id}' stopped before its first checkpoint; "
                         f"start it with 'evotune resume {store.run_id}'")
    if got is None:
        raise StoreError(f"{store.checkpoint_path} is missing; restore it or start a new "
                         "training with another --run-id")
    arrays, meta = got
    try:
        state = TrainState.from_arrays(arrays, meta)
    except (ValueError, KeyError, EvotuneError) as exc:
        raise StoreError(f"{store.checkpoint_path} is damaged ({exc}); restore it or start a "
                         "new training with another --run-id") from None
    cfg = store.manifest().config
    if isinstance(cfg, TrainConfig):
        try:  # the shape the manifest records (a manifest without buckets: a plain net)
            cfg.settings.check_net(state.net, "its net ")
        except FieldError as exc:
            raise StoreError(f"{store.checkpoint_path} is damaged ({exc.problem}); restore it "
                             "or start a new training with another --run-id") from None
    return state, float(meta["seconds"])


def stored_net(store: Store) -> Net:
    """The net of the training's last stored epoch (its checkpoint quantised)."""
    return load_state(store)[0].net.quantised()


@dataclass(frozen=True)
class TrainSummary:
    run_id: str
    epochs: list[EpochLine]
    """Every stored epoch's record (the whole training's, not only this call's)."""
    positions: int
    train_positions: int
    checksum: str
    """The final net's checksum."""
    net_path: Path
    seconds: float


def execute_training(store: Store, cfg: TrainConfig | TrainPlan, *,
                     data: PackedData | BulletStream | None = None,
                     progress: Callable[[Progress], None] | None = None,
                     on_epoch: Callable[[EpochLine], None] | None = None,
                     on_start: Callable[[], None] | None = None,
                     workers: int = 1) -> TrainSummary:
    """Run (or continue) the training stored in ``store`` up to its epochs; ``workers``:
    threads (the net does not depend on it). ``on_start()`` is called once every check passed
    (settings, checkpoint, epoch records, data), before the first epoch."""
    t_start = time.perf_counter()
    store.lock()
    plan = cfg if isinstance(cfg, TrainPlan) else None
    cfg = cfg.config if isinstance(cfg, TrainPlan) else cfg
    settings = cfg.settings
    if never_committed(store):  # nothing trained: the initial net made again, as new made it
        if data is None:
            data = _load(cfg, settings)
        initial = (plan or plan_training(cfg)).initial
        _start(store, initial.make(data if isinstance(data, PackedData) else None,
                                   workers=resolve_threads(workers)))
    state, seconds_before = load_state(store)
    store.epoch_lines(state.epoch)  # the history up to the checkpoint is whole
    store.drop_epochs_after(state.epoch)
    if data is None:
        data = _load(cfg, settings)
    if data.info.get("key") != store.manifest().identity.get("cache"):
        raise StoreError(f"the data of training '{store.run_id}' packs to another cache key "
                         "than its manifest's; the data cache belongs to other data")
    if on_start is not None:
        on_start()

    def commit(record: EpochRecord, st: TrainState) -> None:
        total = seconds_before + time.perf_counter() - t_start
        _commit(store, st, total, finished=st.epoch >= settings.epochs, record=record)
        if on_epoch is not None:
            on_epoch(store.epoch_lines(st.epoch)[-1])

    if isinstance(data, BulletStream):
        train_stream(data, settings, workers=workers, state=state, progress=progress,
                     on_epoch=commit)
        train_positions = data.check(settings)[0]
    else:
        train_packed(data, settings, workers=workers, state=state, progress=progress,
                     on_epoch=commit)
        train_positions = check_data(data, settings)[0].size
    seconds = seconds_before + time.perf_counter() - t_start
    net = state.net.quantised()
    store.write_state(State(generation=state.epoch, games=0, seconds=seconds, finished=True,
                            strategy={"kind": STRATEGY, "checksum": net.checksum}))
    store.unlock()
    return TrainSummary(run_id=store.run_id, epochs=store.epoch_lines(state.epoch),
                        positions=len(data), train_positions=train_positions,
                        checksum=net.checksum, net_path=store.root / NET_FILE, seconds=seconds)
