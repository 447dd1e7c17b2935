"""A net training's own records, which the store reads and writes (:class:`evotune.runs.store.
Store`'s ``epochs/epoch-NNNN.json`` and ``checkpoint.npz``): one epoch's line (:class:`EpochLine`,
its validator :func:`parse_epoch`) and the checkpoint's form (:func:`parse_checkpoint`). The
training's config and solver are the kind's (:mod:`evotune.kinds.training`); these stay in
``runs/`` because the store, below the kinds, validates every record it reads.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import StoreError

# ---- a training's records ---------------------------------------------------------------------

_HEX = re.compile(r"^[0-9a-f]+$")
CHECKPOINT_ARRAYS = ("params", "m", "v")
"""The trainer's flat float32 vectors a checkpoint holds (``TrainState.to_arrays()``)."""


@dataclass(frozen=True)
class EpochLine:
    """epochs/epoch-NNNN.json: one epoch of a training, as the trainer reports it (the trainer's
    ``EpochRecord`` is this record)."""

    epoch: int
    """1-based."""
    lr: float
    train_loss: float
    val_loss: float | None
    """None when no position is held out."""
    positions: int
    seconds: float
    digest: str
    """SHA-256 of the float parameters after the epoch."""
    checksum: str
    """The quantised net's checksum (the net the engine plays; net.nnue's header)."""

    def to_json(self) -> dict:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def parse_epoch(d, path) -> EpochLine:
    """The one validator of an epoch record."""
    def bad(what: str) -> StoreError:
        return StoreError(f"{path} is damaged ({what}); restore it or start a new training "
                          "with another --run-id")
    if not isinstance(d, dict) or set(d) != set(EpochLine.__dataclass_fields__):
        raise bad(f"its keys must be {', '.join(EpochLine.__dataclass_fields__)}")
    for k in ("epoch", "positions"):
        if isinstance(d[k], bool) or not isinstance(d[k], int) or d[k] < (k == "epoch"):
            raise bad(f"'{k}' must be a whole number")
    for k in ("lr", "train_loss", "seconds") + (("val_loss",) if d["val_loss"] is not None
                                                 else ()):
        if isinstance(d[k], bool) or not isinstance(d[k], (int, float)) \
                or not math.isfinite(d[k]):
            raise bad(f"'{k}' must be a finite number")
    for k in ("digest", "checksum"):
        if not isinstance(d[k], str) or not _HEX.match(d[k]):
            raise bad(f"'{k}' must be hex digits")
    return EpochLine(**d)


def parse_checkpoint(arrays: dict, meta, path) -> tuple[dict, dict]:
    """The one validator of checkpoint.npz: its three float32 vectors of one size and its meta
    (activation, hidden, steps, epoch, seconds; a bucketed net's king_buckets and
    output_buckets too, a factorised one's factoriser)."""
    def bad(what: str) -> StoreError:
        return StoreError(f"{path} is damaged ({what}); restore it or start a new training "
                          "with another --run-id")
    if set(arrays) != set(CHECKPOINT_ARRAYS):
        raise bad(f"it must hold the arrays {', '.join(CHECKPOINT_ARRAYS)}")
    sizes = {a.size for a in arrays.values()}
    if len(sizes) != 1 or any(a.dtype != "float32" or a.ndim != 1 for a in arrays.values()):
        raise bad("its arrays must be float32 vectors of one size")
    types = {"activation": str, "hidden": int, "steps": int, "epoch": int, "seconds": float}
    shape = {"king_buckets": str, "output_buckets": int}  # a bucketed net's (both or neither)
    if isinstance(meta, dict) and set(shape) <= set(meta):
        types.update(shape)
        if "factoriser" in meta:  # a factorised net's (king buckets: 1)
            types["factoriser"] = int
    if not isinstance(meta, dict) or set(meta) != set(types) or any(
            isinstance(meta[k], bool) or not isinstance(meta[k], (int, float) if t is float else t)
            for k, t in types.items()):
        raise bad(f"its meta must hold {', '.join(types)}")
    return arrays, meta
