"""A move-model training (``evotune nn train-moves``, :mod:`evotune.learn.movetrain`) as a run of
its own kind, ``moves``, under ``populations/<run-id>/`` (through :class:`~evotune.runs.store.
Store`), shaped as a net training's run (:mod:`evotune.learn.nn.trainrun`):

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
import io
import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..engine.movemodel import HIDDEN_MAX, SET_BLOCKS, MoveModel, move_model_bytes
from ..errors import ConfigError, EvotuneError, StoreError
from ..runs.fitconfig import DataFile, data_files_from_list
from ..runs.manifest import check_run_id
from ..runs.records import State
from ..runs.store import Store
from .labels import data_files
from .movetrain import (
    EpochReport,
    MoveData,
    MoveTrainSettings,
    MoveTrainState,
    baseline,
    n_params,
    quantise,
    read_move_data,
    train_moves,
)

MODEL_FILE = "model.evomove"
CHECKPOINT_FILE = "moves-checkpoint.npz"


@dataclass(frozen=True)
class MoveRunConfig:
    """A move-model training: its data, the trainer's settings and the bad lines tolerated."""

    kind: ClassVar[str] = "moves"
    data: tuple[str, ...]
    """The ``FEN | score | result | move`` files."""
    settings: dict
    """The :class:`MoveTrainSettings` as a dict (every field)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        if not self.data:
            raise ConfigError("nn train-moves: give at least one data file of moves")
        if isinstance(self.max_bad, bool) or not isinstance(self.max_bad, int) \
                or self.max_bad < 0:
            raise ConfigError(f"'max_bad' must be an integer >= 0, got {self.max_bad!r}")
        object.__setattr__(self, "settings", dataclasses.asdict(self.train_settings()))

    def train_settings(self) -> MoveTrainSettings:
        """The settings (FieldError for a bad one; ConfigError for an unknown key)."""
        known = {f.name for f in dataclasses.fields(MoveTrainSettings)}
        if not isinstance(self.settings, dict) or set(self.settings) - known:
            raise ConfigError(f"'settings' must be an object of {', '.join(sorted(known))}")
        return MoveTrainSettings(**self.settings)

    @property
    def strategy(self) -> str:
        return "move-model"

    @property
    def np(self) -> int:
        return 1

    @property
    def generations(self) -> int:
        return int(self.settings["epochs"])

    def summary_items(self) -> list[tuple[str, str]]:
        s = self.settings
        return [("kind", "move-model training"), ("data", ", ".join(self.data)),
                ("epochs", str(s["epochs"])), ("batch", str(s["batch"])), ("lr", str(s["lr"])),
                ("hidden", str(s["hidden"]) if s["hidden"] else "0 (linear)"),
                ("features", f"set {s['features']}"),
                ("target", "the chosen move" if s["target"] == "move"
                 else "UCT's visit distribution"),
                ("seed", str(s["seed"]))]

    def to_dict(self) -> dict:
        return {"data": list(self.data), "settings": dict(self.settings),
                "max_bad": self.max_bad}

    def identity_dict(self) -> dict:
        return {"settings": {k: v for k, v in self.settings.items() if k != "epochs"},
                "max_bad": self.max_bad}


def read_stored(d: dict, config: dict, fmt: int) -> tuple[MoveRunConfig, tuple[DataFile, ...]]:
    """A manifest's config of kind ``moves`` (the store's reader)."""
    if set(config) != {"data", "settings", "max_bad"} or not isinstance(config["data"], list):
        raise ConfigError("a move-model training's config holds data (a list), settings and "
                          "max_bad")
    settings = config["settings"]
    if isinstance(settings, dict) and "features" not in settings:
        settings = {**settings, "features": 1}  # a run made before feature set 2 trained set 1
    if isinstance(settings, dict) and "target" not in settings:
        settings = {**settings, "target": "move"}  # made before visit targets: the chosen move
    return (MoveRunConfig(data=tuple(config["data"]), settings=settings,
                          max_bad=config["max_bad"]),
            data_files_from_list(d.get("data_files")))


@dataclass(frozen=True)
class EpochFigures:
    """One epoch's record, as the checkpoint keeps it."""

    epoch: int
    """1-based."""
    train_loss: float
    """Mean training loss (nats)."""
    loss: float
    """Held-out loss of the rounded model (nats)."""
    top1: float
    """Held-out top-1 accuracy."""
    top3: float
    """Held-out top-3 accuracy."""

    @staticmethod
    def of(r: EpochReport) -> EpochFigures:
        h = r.held_out
        return EpochFigures(epoch=r.epoch, train_loss=r.train_loss, loss=h.loss, top1=h.top1,
                            top3=h.top3)


@dataclass(frozen=True)
class Checkpoint:
    """What ``moves-checkpoint.npz`` holds."""

    state: MoveTrainState
    """The trainer's state after the last finished epoch."""
    epochs: tuple[EpochFigures, ...]
    """Every finished epoch's figures."""
    baseline: dict
    """The ordering prior's held-out figures (loss, top1, top3)."""
    seconds: float
    """Training time of the whole run."""


def default_run_id(cfg: MoveRunConfig, files: tuple[DataFile, ...]) -> str:
    """``moves-`` and 8 hex digits of the config and the data's hashes."""
    settings = {k: v for k, v in cfg.to_dict()["settings"].items()
                if (k != "hidden" or v) and (k != "features" or v != 1)
                and (k != "target" or v != "move")}
    # a linear training of feature set 1 on chosen moves keeps the id it had before hidden
    # units, set 2 and visit targets
    text = json.dumps([settings, cfg.max_bad, [f.sha256 for f in files]], sort_keys=True)
    return "moves-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def write_checkpoint(store: Store, cp: Checkpoint) -> None:
    """The run's commit point, written atomically."""
    meta = {"epoch": cp.state.epoch, "steps": cp.state.steps, "seconds": cp.seconds,
            "baseline": cp.baseline, "epochs": [dataclasses.asdict(e) for e in cp.epochs]}
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8),
             w=cp.state.w, m=cp.state.m, v=cp.state.v)
    store.write_bytes(CHECKPOINT_FILE, buf.getvalue())


def read_checkpoint(store: Store) -> Checkpoint:
    """The run's checkpoint, checked; StoreError for a missing or damaged one."""
    path = store.root / CHECKPOINT_FILE
    if not path.exists():
        raise StoreError(f"{path} is missing; restore it or start a new training with another "
                         "--run-id")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(arrays.pop("meta").tobytes().decode())
        size = arrays["w"].shape[0] if arrays["w"].ndim == 1 else -1
        if size not in {n_params(h, fs) for h in range(HIDDEN_MAX + 1) for fs in SET_BLOCKS}:
            raise ValueError("w is not a move model's parameters")
        for k in ("w", "m", "v"):
            if arrays[k].shape != (size,) or arrays[k].dtype != np.float64:
                raise ValueError(f"{k} is not float64 ({size},)")
        epochs = tuple(EpochFigures(**e) for e in meta["epochs"])
        state = MoveTrainState(epoch=int(meta["epoch"]), steps=int(meta["steps"]),
                               w=arrays["w"], m=arrays["m"], v=arrays["v"])
        if [e.epoch for e in epochs] != list(range(1, state.epoch + 1)):
            raise ValueError("its epochs do not count 1 to its epoch")
        return Checkpoint(state=state, epochs=epochs, baseline=dict(meta["baseline"]),
                          seconds=float(meta["seconds"]))
    except (OSError, EOFError, ValueError, KeyError, TypeError, UnicodeDecodeError,
            zipfile.BadZipFile) as exc:
        raise StoreError(f"{path} is damaged ({type(exc).__name__}); restore it or start a new "
                         "training with another --run-id") from None


def new_move_run(cfg: MoveRunConfig, *, out_dir: str | Path,
                 run_id: str | None) -> tuple[Store, MoveData]:
    """Reads the data (every input checked first), then makes the run with its epoch-0
    checkpoint; the store is returned locked."""
    settings = cfg.train_settings()
    if run_id is not None:
        check_run_id(run_id)
    files = data_files(cfg.data, "move data file")
    data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings["target"])
    base = baseline(data, settings)  # also checks the split
    store = Store.create(out_dir, run_id or default_run_id(cfg, files), config=cfg,
                         identity={}, data_files=files)
    write_checkpoint(store, Checkpoint(state=MoveTrainState.zero(settings), epochs=(),
                                       baseline=dataclasses.asdict(base), seconds=0.0))
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
        data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings["target"])
        if not (store.root / CHECKPOINT_FILE).exists() and not (store.root / MODEL_FILE).exists():
            # stopped between its manifest and its first checkpoint: nothing was trained
            base = baseline(data, cfg.train_settings())
            write_checkpoint(store, Checkpoint(state=MoveTrainState.zero(cfg.train_settings()),
                                               epochs=(),
                                               baseline=dataclasses.asdict(base), seconds=0.0))
        read_checkpoint(store)
        return data
    except EvotuneError:
        store.unlock()
        raise


def execute_move_run(store: Store, cfg: MoveRunConfig, data: MoveData, *,
                     report=None) -> Checkpoint:
    """Trains from the checkpoint to ``cfg``'s epochs, committing every epoch; unlocks the
    store at the end. ``report`` gets each :class:`EpochReport`."""
    settings = cfg.train_settings()
    cp = read_checkpoint(store)
    began = time.monotonic()
    history = list(cp.epochs)
    last = [cp]

    def commit(state: MoveTrainState, r: EpochReport) -> None:
        history.append(EpochFigures.of(r))
        seconds = cp.seconds + time.monotonic() - began
        last[0] = Checkpoint(state=state, epochs=tuple(history), baseline=cp.baseline,
                             seconds=seconds)
        write_checkpoint(store, last[0])
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


def stored_move_model(store: Store) -> MoveModel:
    """The run's model after its last finished epoch: the checkpoint's weights rounded, as
    ``model.evomove`` holds them once it is written."""
    cfg = store.manifest().config
    assert isinstance(cfg, MoveRunConfig)
    cp = read_checkpoint(store)
    if cp.state.epoch == 0:
        raise StoreError(f"run '{store.run_id}' has no model yet (no epoch finished); continue "
                         f"it with 'evotune resume {store.run_id}'")
    settings = cfg.train_settings()
    if cp.state.w.size != n_params(settings.hidden, settings.features):
        raise StoreError(f"{store.root / CHECKPOINT_FILE} holds {cp.state.w.size} parameters, not "
                         f"a model of {settings.hidden} hidden units over feature set "
                         f"{settings.features}; restore it or start a new "
                         "training with another --run-id")
    return quantise(cp.state.w, settings.scale, settings.hidden, settings.features)


def stored_model(store: Store) -> bytes:
    """The bytes of :func:`stored_move_model` (a move-model file)."""
    return move_model_bytes(stored_move_model(store))


__all__ = ["CHECKPOINT_FILE", "MODEL_FILE", "Checkpoint", "EpochFigures", "MoveModel",
           "MoveRunConfig", "execute_move_run", "new_move_run", "open_move_run",
           "read_checkpoint", "read_stored", "stored_model", "stored_move_model"]
