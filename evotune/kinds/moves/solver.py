"""The move-model kind's solver: a move-model training (``evotune nn train-moves``, the
numerics :mod:`evotune.learn.movetrain`'s) as a run of its own kind, ``moves``, under
``populations/<run-id>/`` (through :class:`~evotune.runs.store.Store`), shaped as a net
training's run (:mod:`evotune.kinds.training.solver`); its checkpoint is :mod:`.checkpoint`:

- manifest: ``kind = "moves"``, the :class:`MoveRunConfig` (data paths, the trainer's settings,
  ``max_bad``) and the data files' names, sizes and SHA-256 (resume refuses a changed file);
- ``moves-checkpoint.npz``: the trainer's state (:class:`~evotune.learn.movetrain.
  MoveTrainState`: weights, Adam's moments and step count, the epoch) with every finished
  epoch's figures, written atomically after every epoch: the commit point (epoch 0 is written
  when the run is made);
- ``model.evomove``: the model after the last epoch (written after the checkpoint; export
  rounds the checkpoint's weights, so a kill between the two exports the committed epoch);
  ``state.json``: the epoch as the run's generation, for the readers.

A killed training resumed with ``evotune resume RUN`` restarts the epoch it was in from the
checkpoint; an epoch's order is drawn from the seed and the epoch, so it ends with the bytes an
uninterrupted training ends with. One stopped before its first checkpoint (right after its
manifest) starts from zero weights again: nothing had been trained.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path

from ...datafiles import DataFile
from ...engine.movemodel.modelfile import move_model_bytes
from ...errors import ConfigError, EvotuneError, StoreError
from ...fileio import check_writable
from ...learn.labels import data_files
from ...learn.movetrain import (
    EpochReport,
    MoveData,
    MoveTrainState,
    baseline,
    quantise,
    read_move_data,
    split,
    train_moves,
)
from ...runs.manifest import check_new_run, check_outside_runs
from ...runs.records import State
from ...runs.store import Store
from .checkpoint import (
    CHECKPOINT_FILE,
    MODEL_FILE,
    Checkpoint,
    EpochFigures,
    read_checkpoint,
    write_checkpoint,
)
from .config import MoveRunConfig


def default_run_id(cfg: MoveRunConfig, files: tuple[DataFile, ...]) -> str:
    """``moves-`` and 8 hex digits of the config and the data's hashes."""
    settings = {k: v for k, v in cfg.to_dict()["settings"].items()
                if (k != "hidden" or v) and (k != "features" or v != 1)
                and (k != "target" or v != "move")}
    # a linear training of feature set 1 on chosen moves keeps the id it had before hidden
    # units, set 2 and visit targets
    text = json.dumps([settings, cfg.max_bad, [f.sha256 for f in files]], sort_keys=True)
    return "moves-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def check_model_out(out: str | Path, *, data, runs_dir: str | Path) -> None:
    """Refuse, before any work, a model file ``out`` (``--out``) that cannot be written, that is
    one of the ``data`` files, or that lies inside a run's folder or the runs folder."""
    check_writable(out, "--out", parents=False)
    for d in data:
        if Path(out).resolve() == Path(d).resolve() or (
                Path(out).exists() and Path(d).exists() and Path(out).samefile(d)):
            raise ConfigError(f"--out {out} is the move data file {d}; give another file for "
                              "the model")
    check_outside_runs(out, "--out", runs_dir=runs_dir)


def new_move_run(cfg: MoveRunConfig, *, out_dir: str | Path,
                 run_id: str | None) -> tuple[Store, MoveData]:
    """Reads the data (every input checked first), then makes the run with its epoch-0
    checkpoint; the store is returned locked."""
    settings = cfg.settings
    check_new_run(out_dir, run_id)
    files = data_files(cfg.data, "move data file")
    data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings.target)
    base = baseline(data, settings)  # also checks the split
    store = Store.create(out_dir, run_id or default_run_id(cfg, files), config=cfg,
                         identity={}, data_files=files)
    write_checkpoint(store, Checkpoint(state=MoveTrainState.zero(settings), epochs=(),
                                       baseline=dataclasses.asdict(base), seconds=0.0), cfg)
    return store, data


def open_move_run(store: Store) -> MoveData:
    """Locks a stopped run and reads its data again (refused when a file changed)."""
    manifest = store.manifest()
    if not isinstance(manifest.config, MoveRunConfig):
        raise StoreError(f"run '{store.run_id}' is a {manifest.kind} run, not a move-model "
                         "training")
    cfg = manifest.config
    now = data_files(cfg.data, "move data file")
    if [f.sha256 for f in now] != [f.sha256 for f in manifest.data_files]:
        raise StoreError(f"the data of move-model training '{store.run_id}' changed since it "
                         f"started ({', '.join(cfg.data)}); restore it or start a new run")
    store.lock()
    try:
        fresh = (not (store.root / CHECKPOINT_FILE).exists()
                 and not (store.root / MODEL_FILE).exists())
        if not fresh:
            read_checkpoint(store)  # a damaged one is refused before the data is read
        data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings.target)
        settings = cfg.settings
        if fresh:  # stopped between its manifest and its first checkpoint: nothing was trained
            base = baseline(data, settings)
            write_checkpoint(store, Checkpoint(state=MoveTrainState.zero(settings), epochs=(),
                                               baseline=dataclasses.asdict(base), seconds=0.0),
                             cfg)
        state = read_checkpoint(store).state
        per_epoch = -(-split(len(data), settings)[0].size // settings.batch)
        if state.steps != state.epoch * per_epoch:
            raise StoreError(f"{store.root / CHECKPOINT_FILE} is damaged (its {state.steps} "
                             f"steps are not {state.epoch} epochs of {per_epoch} steps on this "
                             "data); restore it or start a new training with another --run-id")
        return data
    except EvotuneError:
        store.unlock()
        raise


def execute_move_run(store: Store, cfg: MoveRunConfig, data: MoveData, *,
                     report=None) -> Checkpoint:
    """Trains from the checkpoint to ``cfg``'s epochs, committing every epoch; unlocks the
    store at the end. ``report`` gets each :class:`EpochReport`."""
    settings = cfg.settings
    cp = read_checkpoint(store)
    began = time.monotonic()
    history = list(cp.epochs)
    last = [cp]

    def commit(state: MoveTrainState, r: EpochReport) -> None:
        history.append(EpochFigures.of(r))
        seconds = cp.seconds + time.monotonic() - began
        last[0] = Checkpoint(state=state, epochs=tuple(history), baseline=cp.baseline,
                             seconds=seconds)
        write_checkpoint(store, last[0], cfg)
        store.write_bytes(MODEL_FILE, move_model_bytes(quantise(state.w, settings.scale,
                                                                settings.hidden,
                                                                settings.features)))
        store.write_state(State(generation=state.epoch, games=0, seconds=seconds,
                                finished=state.epoch >= settings.epochs, strategy={}))

    try:
        model = train_moves(data, settings, report=report, start=cp.state, on_epoch=commit)
        if cp.state.epoch >= settings.epochs:  # nothing left: (re)write the committed model
            store.write_bytes(MODEL_FILE, move_model_bytes(model))
    finally:
        store.unlock()
    return last[0]
