"""Strategies: pure numerics behind an ask/tell interface (see :mod:`evotune.strategies.base`).

``STRATEGIES`` maps a registry name to its class; :func:`make_strategy` builds one with checked
parameters. Strategies import numpy, ``evotune.space``, ``evotune.seeding`` and
``evotune.errors`` only: they never play a game or touch disk.
"""
from __future__ import annotations

from typing import Mapping

from ..errors import ConfigError
from ..space import WeightSpace
from .base import GameLeaves, MatchOutcome, MatchRequest, Param, Strategy
from .de import DE
from .ea import EA
from .jde import JDE
from .td import TD

STRATEGIES: dict[str, type[Strategy]] = {"de": DE, "jde": JDE, "ea": EA, "td": TD}

__all__ = ["STRATEGIES", "make_strategy", "strategy_class", "Strategy", "MatchRequest",
           "MatchOutcome", "GameLeaves", "Param", "DE", "JDE", "EA", "TD"]


def strategy_class(name: str) -> type[Strategy]:
    """The class registered under ``name`` (ConfigError listing the known ones otherwise)."""
    try:
        return STRATEGIES[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown strategy {name!r}; use one of "
                          f"{', '.join(STRATEGIES)}") from None


def make_strategy(name: str, space: WeightSpace, *, params: Mapping[str, object] | None = None,
                  seed: int) -> Strategy:
    """A new strategy ``name`` on ``space`` with checked ``params``, seeded by ``seed``."""
    return strategy_class(name)(space, params=params, seed=seed)
