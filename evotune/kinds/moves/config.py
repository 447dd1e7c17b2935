"""The settings of a move-model training (:class:`MoveRunConfig`): its data, the trainer's
settings as their typed record (:class:`~evotune.learn.movetrain.MoveTrainSettings`) and the bad
lines tolerated; validated when made. A move-model training is a run of its own kind
(``kind = "moves"`` in its manifest, :mod:`.solver` runs it); :func:`read_stored` is the store's
reader of its manifest's config."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ...datafiles import DataFile, data_files_from_list
from ...errors import ConfigError
from ...learn.movetrain import MoveTrainSettings

METHOD = "move-model"
"""What ``evotune runs`` and ``status`` name a move-model training's method."""


@dataclass(frozen=True)
class MoveRunConfig:
    """A move-model training: its data, the trainer's settings and the bad lines tolerated."""

    kind: ClassVar[str] = "moves"
    data: tuple[str, ...]
    """The ``FEN | score | result | move`` files."""
    settings: MoveTrainSettings = MoveTrainSettings()
    """How the model is trained (epochs, batch, lr, hidden units, feature set, target ...)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        if not isinstance(self.settings, MoveTrainSettings):
            raise ConfigError("a move-model training's settings must be a MoveTrainSettings "
                              "record")
        if not self.data:
            raise ConfigError("nn train-moves: give at least one data file of moves")
        if isinstance(self.max_bad, bool) or not isinstance(self.max_bad, int) \
                or self.max_bad < 0:
            raise ConfigError(f"'max_bad' must be an integer >= 0, got {self.max_bad!r}")

    @property
    def method(self) -> str:
        """'move-model' (what ``evotune runs`` and ``status`` name the method)."""
        return METHOD

    @property
    def steps(self) -> int:
        """The epochs: epoch E is the training's step E."""
        return self.settings.epochs

    max_games: ClassVar[int] = 0
    """A training plays no games (its data are positions)."""

    def summary_items(self) -> list[tuple[str, str]]:
        s = self.settings
        return [("kind", "move-model training"), ("data", ", ".join(self.data)),
                ("epochs", str(s.epochs)), ("batch", str(s.batch)), ("lr", str(s.lr)),
                ("hidden", str(s.hidden) if s.hidden else "0 (linear)"),
                ("features", f"set {s.features}"),
                ("target", "the chosen move" if s.target == "move"
                 else "UCT's visit distribution"),
                ("seed", str(s.seed))]

    def to_dict(self) -> dict:
        """The stored form: the settings with every field."""
        return {"data": list(self.data), "settings": dataclasses.asdict(self.settings),
                "max_bad": self.max_bad}

    def identity_dict(self) -> dict:
        """The settings a checkpoint was trained with (all but the epochs)."""
        return {"settings": {k: v for k, v in dataclasses.asdict(self.settings).items()
                             if k != "epochs"},
                "max_bad": self.max_bad}


def move_settings_from_dict(settings) -> MoveTrainSettings:
    """The settings of a stored training (FieldError for a bad one; ConfigError for an unknown
    key)."""
    known = {f.name for f in dataclasses.fields(MoveTrainSettings)}
    if not isinstance(settings, dict) or set(settings) - known:
        raise ConfigError(f"'settings' must be an object of {', '.join(sorted(known))}")
    return MoveTrainSettings(**settings)


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
    return (MoveRunConfig(data=tuple(config["data"]), settings=move_settings_from_dict(settings),
                          max_bad=config["max_bad"]),
            data_files_from_list(d.get("data_files")))
