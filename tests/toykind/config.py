"""The toy kind's config (count to ``steps``) and how its manifest reads."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from evotune.errors import ConfigError


@dataclass(frozen=True)
class ToyConfig:
    """A toy kind's config: count to ``steps``."""

    kind: ClassVar[str] = "toy"
    steps: int = 3
    """How far the toy counts."""
    max_games: ClassVar[int] = 0
    """A toy plays no games."""

    @property
    def method(self) -> str:
        return "count"

    def summary_items(self) -> list[tuple[str, str]]:
        return [("kind", "toy"), ("steps", str(self.steps))]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def identity_dict(self) -> dict:
        return self.to_dict()


def read_toy(manifest: dict, config: dict, fmt: int):
    if not isinstance(config.get("steps"), int) or config["steps"] < 1:
        raise ConfigError("a toy counts at least one step")
    return ToyConfig(steps=config["steps"]), ()
