"""A move-model training (``evotune nn train-moves``, :mod:`evotune.learn.movetrain`) as a run of
its own kind, ``moves``, under ``populations/<run-id>/`` (through :class:`~evotune.runs.store.
Store`), shaped as a net training's run (:mod:`evotune.kinds.training.solver`):

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
import math
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..datafiles import DataFile, data_files_from_list
from ..engine.movemodel.modelfile import MoveModel, move_model_bytes
from ..errors import ConfigError, EvotuneError, StoreError
from ..fileio import check_writable
from ..runs.manifest import check_outside_runs, check_run_id, check_runs_folder
from ..runs.records import State
from ..runs.store import Store
from .labels import data_files
from .movetrain import (
    MOMENT_MAX,
    PARAM_MAX,
    EpochReport,
    MoveData,
    MoveTrainSettings,
    MoveTrainState,
    baseline,
    n_params,
    quantise,
    read_move_data,
    split,
    train_moves,
)

MODEL_FILE = "model.evomove"
CHECKPOINT_FILE = "moves-checkpoint.npz"
MAX_EPOCHS = 100_000
"""The most epochs a training has (:class:`MoveTrainSettings`' bound)."""
MAX_STEPS = 2 ** 53
"""The most Adam steps a checkpoint may count (a float64's whole numbers)."""
EPOCH_KEYS = ("epoch", "train_loss", "loss", "top1", "top3")
"""An epoch record's keys, as the checkpoint keeps them."""


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
    def population(self) -> int:
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


def write_checkpoint(store: Store, cp: Checkpoint, cfg: MoveRunConfig | None = None) -> None:
    """The run's commit point, written atomically; with ``cfg``, the settings it was trained
    with (every one but the epochs), which :func:`read_checkpoint` holds the manifest to."""
    meta = {"epoch": cp.state.epoch, "steps": cp.state.steps, "seconds": cp.seconds,
            "baseline": cp.baseline, "epochs": [dataclasses.asdict(e) for e in cp.epochs]}
    if cfg is not None:
        meta["settings"] = cfg.identity_dict()
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8),
             w=cp.state.w, m=cp.state.m, v=cp.state.v)
    store.write_bytes(CHECKPOINT_FILE, buf.getvalue())


class _Damaged(ValueError):
    """What is wrong with a checkpoint (the text of its one-line StoreError)."""


class _Settings(ValueError):
    """The settings of the manifest that differ from those the checkpoint was trained with."""


def _changed(trained, now: dict) -> str:
    """'lr, seed': the keys of ``now`` (a config's identity_dict) that ``trained`` differs in."""
    if not isinstance(trained, dict) or not isinstance(trained.get("settings"), dict):
        raise _Damaged("its settings are not an object")
    old = {**trained["settings"], "max_bad": trained.get("max_bad")}
    new = {**now["settings"], "max_bad": now["max_bad"]}
    return ", ".join(sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k)))


def _count(meta: dict, key: str, high: int) -> int:
    v = meta.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= high:
        raise _Damaged(f"its {key} is {v!r}, not a count from 0 to {high}")
    return v


def _real(d: dict, key: str, high: float = math.inf) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
            math.isfinite(v) and 0 <= v <= high):
        raise _Damaged(f"its {key} is {v!r}, not a number from 0 to {high:g}")
    return float(v)


def _figures(d, keys: tuple[str, ...], what: str) -> dict:
    """``d``, an object of exactly ``keys``: losses >= 0, accuracies from 0 to 1."""
    if not isinstance(d, dict) or set(d) != set(keys):
        raise _Damaged(f"{what} is not an object of {', '.join(keys)}")
    if "epoch" in d and (isinstance(d["epoch"], bool) or not isinstance(d["epoch"], int)):
        raise _Damaged(f"{what}'s epoch is {d['epoch']!r}, not a count")
    return {k: d[k] if k == "epoch" else _real(d, k, 1.0 if k.startswith("top") else math.inf)
            for k in keys}


def _arrays(arrays: dict, settings: MoveTrainSettings) -> MoveTrainState:
    """The trainer's arrays, each float64 (n_params,) of ``settings``' model, finite and within
    what a training reaches."""
    size = n_params(settings.hidden, settings.features)
    for k, bound in (("w", PARAM_MAX), ("m", MOMENT_MAX), ("v", MOMENT_MAX ** 2)):
        a = arrays.get(k)
        if not isinstance(a, np.ndarray) or a.shape != (size,) or a.dtype != np.float64:
            got = a.shape if isinstance(a, np.ndarray) else "none"
            raise _Damaged(f"its {k} (shape {got}) is not a model of {settings.hidden} hidden "
                           f"units over feature set {settings.features}, the manifest's ({size} "
                           "float64 parameters)")
        if not np.all(np.isfinite(a)) or np.abs(a).max(initial=0.0) > bound:
            raise _Damaged(f"its {k} holds values that are not finite or beyond +-{bound:g}")
    if arrays["v"].min(initial=0.0) < 0:
        raise _Damaged("its v (Adam's second moments) holds negative values")
    return MoveTrainState(epoch=0, steps=0, w=arrays["w"], m=arrays["m"], v=arrays["v"])


def read_checkpoint(store: Store) -> Checkpoint:
    """The run's checkpoint, checked against its manifest (the parameters of its settings'
    model, finite and bounded; counts and figures in range; the settings it was trained with);
    StoreError, one line naming the file, for a missing or damaged one."""
    path = store.root / CHECKPOINT_FILE
    cfg = store.manifest().config
    if not isinstance(cfg, MoveRunConfig):
        raise StoreError(f"run '{store.run_id}' is not a move-model training")
    settings = cfg.train_settings()
    if not path.exists():
        raise StoreError(f"{path} is missing; restore it or start a new training with another "
                         "--run-id")
    try:
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(arrays.pop("meta").tobytes().decode())
        except (OSError, EOFError, ValueError, KeyError, TypeError, UnicodeDecodeError,
                zipfile.BadZipFile) as exc:
            raise _Damaged(f"not a checkpoint: {type(exc).__name__}") from None
        if not isinstance(meta, dict):
            raise _Damaged("its meta is not an object")
        trained = meta.get("settings")
        if trained is not None and trained != cfg.identity_dict():
            raise _Settings(_changed(trained, cfg.identity_dict()))
        epoch = _count(meta, "epoch", MAX_EPOCHS)
        steps = _count(meta, "steps", MAX_STEPS)
        if (steps == 0) != (epoch == 0) or steps < epoch:
            raise _Damaged(f"its {steps} steps cannot make {epoch} epochs")
        seconds = _real(meta, "seconds")
        base = _figures(meta.get("baseline"), ("loss", "top1", "top3"), "its baseline")
        rows = meta.get("epochs")
        if not isinstance(rows, list):
            raise _Damaged("its epochs are not a list")
        epochs = tuple(EpochFigures(**_figures(e, EPOCH_KEYS, f"epoch record {i + 1}"))
                       for i, e in enumerate(rows))
        if [e.epoch for e in epochs] != list(range(1, epoch + 1)):
            raise _Damaged("its epochs do not count 1 to its epoch")
        state = dataclasses.replace(_arrays(arrays, settings), epoch=epoch, steps=steps)
    except _Settings as exc:
        raise StoreError(f"run '{store.run_id}': {store.manifest_path} sets {exc} other than "
                         f"{CHECKPOINT_FILE} was trained with; restore the manifest (a "
                         "training's settings do not change)") from None
    except _Damaged as exc:
        raise StoreError(f"{path} is damaged ({exc}); restore it or start a new training with "
                         "another --run-id") from None
    return Checkpoint(state=state, epochs=epochs, baseline=base, seconds=seconds)


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
    settings = cfg.train_settings()
    if run_id is not None:
        check_run_id(run_id)
    check_runs_folder(out_dir)
    if run_id is not None and (Path(out_dir) / run_id / "manifest.json").exists():
        raise StoreError(f"run '{run_id}' already exists in {out_dir}; continue it with "
                         f"'evotune resume {run_id}' or choose another --run-id")
    files = data_files(cfg.data, "move data file")
    data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings["target"])
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
        data = read_move_data(cfg.data, max_bad=cfg.max_bad, target=cfg.settings["target"])
        settings = cfg.train_settings()
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


def stored_move_model(store: Store) -> MoveModel:
    """The run's model after its last finished epoch: the checkpoint's weights rounded, as
    ``model.evomove`` holds them once it is written."""
    cfg = store.manifest().config
    assert isinstance(cfg, MoveRunConfig)
    cp = read_checkpoint(store)
    if cp.state.epoch == 0:
        raise StoreError(f"run '{store.run_id}' has no model yet (no epoch finished); continue "
                         f"it with 'evotune resume {store.run_id}'")
    settings = cfg.train_settings()  # read_checkpoint checked the parameters against it
    return quantise(cp.state.w, settings.scale, settings.hidden, settings.features)


def stored_model(store: Store) -> bytes:
    """The bytes of :func:`stored_move_model` (a move-model file)."""
    return move_model_bytes(stored_move_model(store))


__all__ = ["CHECKPOINT_FILE", "MODEL_FILE", "Checkpoint", "EpochFigures", "MoveModel",
           "MoveRunConfig", "check_model_out", "execute_move_run", "new_move_run", "open_move_run",
           "read_checkpoint", "read_stored", "stored_model", "stored_move_model"]
