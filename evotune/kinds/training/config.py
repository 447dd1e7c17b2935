"""The settings of a net training (:class:`TrainConfig`): which data, which net and how it is
trained, the trainer's settings as their typed record (:class:`~evotune.learn.nn.trainer.
TrainSettings`); validated when made. A training is a run of its own kind (``kind = "train"`` in
its manifest, :mod:`.solver` runs it); its manifest stores this record and the data files it
read (:class:`~evotune.datafiles.DataFile`). The records a training stores per epoch are the
store's (:mod:`evotune.runs.trainrecords`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ...errors import ConfigError
from ...learn.nn.initnet import INIT_EPOCHS, INIT_RANDOM, InitialNet
from ...learn.nn.trainer import TrainSettings

STRATEGY = "nn-train"
"""What ``evotune runs`` and ``status`` name a training's method."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a net training (stored as the run's config)."""

    kind: ClassVar[str] = "train"
    """The run kind a manifest names."""

    data: tuple[str, ...]
    """Files of labelled positions, in order."""
    settings: TrainSettings = TrainSettings()
    """The trainer's settings (hidden, activation, wdl, epochs ...)."""
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
    absent: frozenset[str] = field(default=frozenset())
    """The trainer's settings a training stored before they existed does not record (e.g.
    ``stream``): left out of its stored form and identity, as it stored them."""

    NON_IDENTITY: ClassVar[tuple[str, ...]] = ("epochs",)
    """Settings that may change on resume (a finished training continued to more epochs)."""
    PLAIN_SHAPE: ClassVar[tuple[tuple[str, object], ...]] = (("king_buckets", "1"),
                                                             ("output_buckets", 1))
    """A plain net's shape keys: left out of the identity, so a plain training keeps the
    identity (and automatic run id) it had before nets had buckets."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        object.__setattr__(self, "absent", frozenset(self.absent))
        if not isinstance(self.settings, TrainSettings):
            raise ConfigError("a training's settings must be a TrainSettings record")
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

    @property
    def initial(self) -> InitialNet:
        """The training's starting net as a value (what the solver and verification make)."""
        return InitialNet(init=self.init, settings=self.settings, epochs=self.init_epochs)

    @property
    def fits_eval(self) -> bool:
        """True when the initial net is fitted to a linear evaluation (``eval:SPEC``)."""
        return self.initial.fits_eval

    @property
    def init_text(self) -> str:
        """The initial net in a few words (the report's configuration)."""
        return (f"{self.init} (fitted to its scores, {self.init_epochs} epochs)" if self.fits_eval
                else self.init)

    # -- what the readers of any run take from its config ----------------------------------------
    @property
    def method(self) -> str:
        """'nn-train' (what ``evotune runs`` and ``status`` name the method)."""
        return STRATEGY

    @property
    def steps(self) -> int:
        """The epochs: epoch E is the training's step E."""
        return self.settings.epochs

    max_games: ClassVar[int] = 0
    """A training plays no games (its data are positions)."""

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def net_text(self) -> str:
        """The trained net in a few words (:attr:`TrainSettings.net_text`)."""
        return self.settings.net_text

    def summary_items(self) -> list[tuple[str, str]]:
        """(label, value) lines that describe the training (the report's configuration)."""
        s = self.settings
        k, n = s.king_bucket_count, s.output_buckets
        inputs = "768" if k == 1 else f"768 x {k}"
        net = f"({inputs} -> {s.hidden}) x 2 -> {n}, {s.activation}" + (
            f", king buckets {s.king_buckets}" if k > 1 else "") + (
            ", a factoriser (l0f) merged when saved" if s.factoriser else "")
        data = ", ".join(self.data) + (f" (streamed, {s.stream} positions at once)"
                                       if s.stream else "")
        return [("kind", "net training"), ("data", data), ("net", net),
                ("initial net", self.init_text),
                ("target", f"wdl {s.wdl} x result + (1 - wdl) x sigmoid(score / 400)"),
                ("optimiser", f"AdamW, lr {s.lr}, x {s.gamma} every "
                              f"{s.lr_drop or 'never'} epochs, batch {s.batch}, "
                              f"clip {s.clip}"),
                ("epochs", str(s.epochs)),
                ("validation", f"{s.val_share} of the positions in blocks of "
                               f"{s.val_block}"),
                ("seed", str(s.seed))]

    # -- stored forms -----------------------------------------------------------------------------
    def stored_settings(self) -> dict:
        """The settings as the manifest stores them (``TrainSettings.record()`` less
        :attr:`absent`)."""
        return {k: v for k, v in self.settings.record().items() if k not in self.absent}

    def to_dict(self) -> dict:
        d = {"data": list(self.data), "settings": self.stored_settings(), "init": self.init,
             "max_bad": self.max_bad, "cache_dir": self.cache_dir}
        if self.fits_eval:  # only then: the configs (and identities) of other trainings as before
            d["init_epochs"] = self.init_epochs
        return d

    def identity_dict(self) -> dict:
        """The settings the identity hashes (all but :attr:`NON_IDENTITY` and a plain net's
        :attr:`PLAIN_SHAPE`; the data files and the initial net are hashed by their bytes)."""
        d = self.to_dict()
        del d["data"]
        d["settings"] = {k: v for k, v in d["settings"].items() if k not in self.NON_IDENTITY
                         and (k, v) not in self.PLAIN_SHAPE}
        return d


def train_settings_from_dict(settings: dict) -> TrainSettings:
    """The trainer's settings of a stored training (ConfigError for an unknown key, FieldError
    naming a bad value)."""
    try:
        return TrainSettings(**settings)
    except TypeError as exc:
        raise ConfigError(f"a training's settings: {exc}") from None


def train_config_from_dict(d: dict) -> TrainConfig:
    """The one validator of a stored TrainConfig (:meth:`TrainConfig.to_dict`'s form): every key
    present with its type, no unknown key (ConfigError naming the key), the settings valid and
    read exactly: written back they give the stored config key for key."""
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
    typed = train_settings_from_dict(settings)
    cfg = TrainConfig(data=tuple(data), settings=typed, init=d["init"],
                      max_bad=d["max_bad"], cache_dir=d["cache_dir"],
                      init_epochs=d.get("init_epochs", INIT_EPOCHS),
                      absent=frozenset(typed.record()) - set(settings))
    again = cfg.stored_settings()
    differ = sorted(k for k in set(again) | set(settings)
                    if k not in again or k not in settings or again[k] != settings[k]
                    or type(again[k]) is not type(settings[k]))
    if differ:
        raise ConfigError(f"stored training config: its settings {', '.join(differ)} cannot be "
                          "read exactly")
    return cfg
