"""The settings of a net training (:class:`TrainConfig`): which data, which net and how it is
trained; and the validators of a training's own records (:func:`parse_epoch`,
:func:`parse_checkpoint`). A training is a run of its own kind (``kind = "train"`` in its manifest;
:mod:`evotune.learn.nn.trainrun` runs it); its manifest stores this record and the data files
it read (:class:`~evotune.datafiles.DataFile`).

The training's own settings (hidden size, activation, wdl, epochs, batch, learning rate ...) are
:class:`evotune.learn.nn.trainer.TrainSettings`' fields, kept here as its ``record()``: the store
sits below ``learn`` and checks their form (names, types); the trainer checks their values when
a stored training is opened.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import ConfigError, StoreError

STRATEGY = "nn-train"
"""What ``evotune runs`` and ``status`` name a training's method."""
INIT_RANDOM = "random"
"""``init`` of a training that starts from a random net of its seed."""
INIT_EVAL = "eval:"
"""Prefix of the ``init`` of a training whose initial net is fitted to a linear evaluation
(``eval:SPEC[:WEIGHTS]``, :mod:`evotune.learn.nn.evalinit`)."""
INIT_EPOCHS = 100
"""Epochs of that fit by default."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a net training (stored as the run's config)."""

    kind: ClassVar[str] = "train"
    """The run kind a manifest names."""

    data: tuple[str, ...]
    """Files of labelled positions, in order."""
    settings: dict = field(default_factory=dict)
    """The trainer's settings (``TrainSettings.record()``: hidden, activation, wdl, epochs ...)."""
    init: str = INIT_RANDOM
    """The starting net: 'random' (drawn from the seed), a net file, or 'eval:SPEC[:WEIGHTS]'
    (a net fitted to that linear evaluation's scores of the data's positions)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""
    cache_dir: str = ""
    """Folder of the packed data cache ('' = beside the first data file)."""
    init_epochs: int = INIT_EPOCHS
    """Epochs of the initial net's fit to the evaluation of an ``eval:`` init (stored only with
    one)."""

    NON_IDENTITY: ClassVar[tuple[str, ...]] = ("epochs",)
    """Settings that may change on resume (a finished training continued to more epochs)."""
    PLAIN_SHAPE: ClassVar[tuple[tuple[str, object], ...]] = (("king_buckets", "1"),
                                                             ("output_buckets", 1))
    """A plain net's shape keys: left out of the identity, so a plain training keeps the
    identity (and automatic run id) it had before nets had buckets."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        object.__setattr__(self, "settings", dict(self.settings))
        if not self.data:
            raise ConfigError("nn train: give at least one data file of labelled positions")
        if isinstance(self.max_bad, bool) or not isinstance(self.max_bad, int) \
                or self.max_bad < 0:
            raise ConfigError(f"--max-bad {self.max_bad!r}: give a number of lines >= 0")
        n = self.init_epochs
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100_000:
            raise ConfigError(f"--init-epochs {n!r}: give a number of epochs from 1 to 100000")
        if n != INIT_EPOCHS and not self.fits_eval:
            raise ConfigError(f"--init-epochs {n}: only an initial net fitted to an evaluation "
                              "(--init eval:SPEC) has epochs of its own")
        for key in ("epochs", "seed"):
            v = self.settings.get(key)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"a training's settings need an integer '{key}', not {v!r}")

    @property
    def fits_eval(self) -> bool:
        """True when the initial net is fitted to a linear evaluation (``eval:SPEC``)."""
        return self.init.startswith(INIT_EVAL)

    @property
    def init_text(self) -> str:
        """The initial net in a few words (the report's configuration)."""
        return (f"{self.init} (fitted to its scores, {self.init_epochs} epochs)" if self.fits_eval
                else self.init)

    # -- what the readers of any run take from its config ----------------------------------------
    @property
    def strategy(self) -> str:
        return STRATEGY

    @property
    def population(self) -> int:
        """One net per epoch."""
        return 1

    @property
    def generations(self) -> int:
        """The epochs: epoch E is the training's step E."""
        return int(self.settings["epochs"])

    @property
    def seed(self) -> int:
        return int(self.settings["seed"])

    @property
    def net_text(self) -> str:
        """The trained net in a few words: 'H activation', with buckets '..., K king buckets
        (map M), N output buckets'."""
        s = self.settings
        k, n = self.king_bucket_count, int(s.get("output_buckets", 1))
        text = f"{s.get('hidden')} {s.get('activation')}"
        if k > 1:
            text += f", {k} king buckets (map {s.get('king_buckets')})"
            text += ", factorised" if s.get("factoriser") else ""
        return text + (f", {n} output buckets" if n > 1 else "")

    @property
    def king_bucket_count(self) -> int:
        """K of the trained net's king buckets (a preset's count, or 32 ids' largest + 1; a
        config of before buckets has none: 1)."""
        text = str(self.settings.get("king_buckets", "1"))
        try:
            return int(text) if "," not in text else max(int(v) for v in text.split(",")) + 1
        except ValueError:
            return 1

    def summary_items(self) -> list[tuple[str, str]]:
        """(label, value) lines that describe the training (the report's configuration)."""
        s = self.settings
        k, n = self.king_bucket_count, int(s.get("output_buckets", 1))
        inputs = "768" if k == 1 else f"768 x {k}"
        net = f"({inputs} -> {s.get('hidden')}) x 2 -> {n}, {s.get('activation')}" + (
            f", king buckets {s.get('king_buckets')}" if k > 1 else "") + (
            ", a factoriser (l0f) merged when saved" if s.get("factoriser") else "")
        data = ", ".join(self.data) + (f" (streamed, {s['stream']} positions at once)"
                                       if s.get("stream") else "")
        return [("kind", "net training"), ("data", data), ("net", net),
                ("initial net", self.init_text),
                ("target", f"wdl {s.get('wdl')} x result + (1 - wdl) x sigmoid(score / 400)"),
                ("optimiser", f"AdamW, lr {s.get('lr')}, x {s.get('gamma')} every "
                              f"{s.get('lr_drop') or 'never'} epochs, batch {s.get('batch')}, "
                              f"clip {s.get('clip')}"),
                ("epochs", str(s.get("epochs"))),
                ("validation", f"{s.get('val_share')} of the positions in blocks of "
                               f"{s.get('val_block')}"),
                ("seed", str(s.get("seed")))]

    # -- stored forms -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {"data": list(self.data), "settings": dict(self.settings), "init": self.init,
             "max_bad": self.max_bad, "cache_dir": self.cache_dir}
        if self.fits_eval:  # only then: the configs (and identities) of other trainings as before
            d["init_epochs"] = self.init_epochs
        return d

    def identity_dict(self) -> dict:
        """The settings the identity hashes (all but :attr:`NON_IDENTITY` and a plain net's
        :attr:`PLAIN_SHAPE`; the data files and the initial net are hashed by their bytes)."""
        d = self.to_dict()
        del d["data"]
        d["settings"] = {k: v for k, v in self.settings.items() if k not in self.NON_IDENTITY
                         and (k, v) not in self.PLAIN_SHAPE}
        return d


def train_config_from_dict(d: dict) -> TrainConfig:
    """The one validator of a stored TrainConfig (:meth:`TrainConfig.to_dict`'s form): every key
    present with its type, no unknown key (ConfigError naming the key)."""
    keys = {"data", "settings", "init", "max_bad", "cache_dir"}
    missing, unknown = sorted(keys - set(d)), sorted(set(d) - keys - {"init_epochs"})
    if missing or unknown:
        raise ConfigError("stored training config: " + "; ".join(
            part for part in (f"missing {missing}" if missing else "",
                              f"unknown key(s) {unknown}" if unknown else "") if part))
    data, settings = d["data"], d["settings"]
    if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
        raise ConfigError("'data' must be a list of file names")
    if not isinstance(settings, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float, str)) for k, v in settings.items()):
        raise ConfigError("'settings' must be an object of numbers and names")
    for key in ("init", "cache_dir"):
        if not isinstance(d[key], str):
            raise ConfigError(f"'{key}' must be a string, not {d[key]!r}")
    return TrainConfig(data=tuple(data), settings=settings, init=d["init"],
                       max_bad=d["max_bad"], cache_dir=d["cache_dir"],
                       init_epochs=d.get("init_epochs", INIT_EPOCHS))


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
