"""A move-model training's commit point, ``moves-checkpoint.npz`` (:class:`Checkpoint`): the
trainer's state (:class:`~evotune.learn.movetrain.MoveTrainState`: weights, Adam's moments and
step count, the epoch) with every finished epoch's figures (:class:`EpochFigures`), its one
writer (:func:`write_checkpoint`) and its one validator (:func:`read_checkpoint`), and the model
of its last epoch read back (:func:`stored_move_model`)."""
from __future__ import annotations

import dataclasses
import io
import json
import math
import zipfile
from dataclasses import dataclass

import numpy as np

from ...engine.movemodel.modelfile import MoveModel, move_model_bytes
from ...errors import StoreError
from ...learn.movetrain import (
    MOMENT_MAX,
    PARAM_MAX,
    EpochReport,
    MoveTrainSettings,
    MoveTrainState,
    n_params,
    quantise,
)
from ...runs.store import Store
from .config import MoveRunConfig

MODEL_FILE = "model.evomove"
CHECKPOINT_FILE = "moves-checkpoint.npz"
MAX_EPOCHS = 100_000
"""The most epochs a training has (:class:`MoveTrainSettings`' bound)."""
MAX_STEPS = 2 ** 53
"""The most Adam steps a checkpoint may count (a float64's whole numbers)."""
EPOCH_KEYS = ("epoch", "train_loss", "loss", "top1", "top3")
"""An epoch record's keys, as the checkpoint keeps them."""


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
    settings = cfg.settings
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


def stored_move_model(store: Store) -> MoveModel:
    """The run's model after its last finished epoch: the checkpoint's weights rounded, as
    ``model.evomove`` holds them once it is written."""
    cfg = store.manifest().config
    assert isinstance(cfg, MoveRunConfig)
    cp = read_checkpoint(store)
    if cp.state.epoch == 0:
        raise StoreError(f"run '{store.run_id}' has no model yet (no epoch finished); continue "
                         f"it with 'evotune resume {store.run_id}'")
    settings = cfg.settings  # read_checkpoint checked the parameters against it
    return quantise(cp.state.w, settings.scale, settings.hidden, settings.features)


def stored_model(store: Store) -> bytes:
    """The bytes of :func:`stored_move_model` (a move-model file)."""
    return move_model_bytes(stored_move_model(store))

