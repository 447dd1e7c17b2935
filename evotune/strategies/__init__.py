"""Strategies: pure numerics behind an ask/tell interface (see :mod:`evotune.strategies.base`).

``STRATEGIES`` maps a registry name to its class; ``ng:NAME`` names any nevergrad optimiser
(:func:`strategy_class` builds its class); :func:`make_strategy` builds one with checked
parameters. Strategies import numpy, ``evotune.space``, ``evotune.seeding`` and
``evotune.errors`` only (pycma and nevergrad lazily, as optional extras): they never play a game
or touch disk.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from ..space import WeightSpace
from .base import GameLeaves, MatchOutcome, MatchRequest, Param, Strategy
from .cmaes import CMAES
from .de import DE
from .ea import EA
from .jde import JDE
from .nevergrad import PREFIX as NG_PREFIX
from .nevergrad import nevergrad_class
from .quad import Quad
from .spsa import SPSA
from .td import TD

STRATEGIES: dict[str, type[Strategy]] = {"de": DE, "jde": JDE, "ea": EA, "td": TD,
                                         "spsa": SPSA, "cmaes": CMAES, "quad": Quad}

__all__ = ["STRATEGIES", "keeps_population", "known_strategy", "strategy_names",
           "make_strategy", "strategy_class", "strategy_params",
           "strategy_terms", "Strategy",
           "MatchRequest", "MatchOutcome", "GameLeaves", "Param", "DE", "JDE", "EA", "TD",
           "SPSA", "CMAES", "Quad"]


def known_strategy(name: str) -> bool:
    """A registered strategy name, or ``ng:NAME`` (a nevergrad optimiser, checked when built)."""
    return isinstance(name, str) and (name in STRATEGIES or (
        name.startswith(NG_PREFIX) and len(name) > len(NG_PREFIX)))


def strategy_class(name: str) -> type[Strategy]:
    """The class registered under ``name``, or ``ng:NAME``'s (ConfigError otherwise)."""
    if not known_strategy(name):
        raise ConfigError(f"unknown strategy {name!r}; use one of {strategy_names()} (a "
                          f"nevergrad optimiser, e.g. {NG_PREFIX}NGOpt)")
    if name in STRATEGIES:
        return STRATEGIES[name]
    return nevergrad_class(name)


NG_ABOUT = "any nevergrad optimiser, e.g. ng:NGOpt"
"""What ``ng:NAME`` is, in the help's list of strategies."""


def strategy_names(*, joiner: str = "or", needs_features: bool | None = None,
                   gauntlet: bool | None = None, about: bool = False) -> str:
    """The registered names as a reader's list, 'de, jde, ..., cmaes, quad or ng:NAME' (a
    nevergrad optimiser last), only those that need (or do not need) the evaluation's features
    or can (or cannot) be scored by a gauntlet when asked: the error messages' lists, made from
    the registry rather than written out; ``about``: each with what it is, 'de (differential
    evolution, DE/rand/1/bin), ...' (the help's list)."""
    names = [f"{n} ({cls.ABOUT})" if about and cls.ABOUT else n for n, cls in STRATEGIES.items()
             if (needs_features is None or cls.NEEDS_FEATURES == needs_features)
             and (gauntlet is None or cls.GAUNTLET == gauntlet)]
    last = f"{NG_PREFIX}NAME ({NG_ABOUT})" if about else f"{NG_PREFIX}NAME"
    return f"{', '.join(names)} {joiner} {last}"


def keeps_population(name: str) -> bool:
    """Whether strategy ``name`` keeps a population (DE, jDE, the EA, TD's learners) rather than
    one vector and its step (SPSA, CMA-ES, nevergrad): :meth:`Strategy.keeps_population`; a
    name this version does not know is read as the population its runs stored."""
    return bool(strategy_terms(name)["population"])


def strategy_terms(name: str) -> dict:
    """How readers name strategy ``name``'s run: ``title`` ('SPSA'), ``centre`` (the vector a
    generation is summarised by: 'mean' or 'theta'), ``step`` (the statistics of its step) and
    ``population`` (:func:`keeps_population`); a name this version cannot build reads as a
    population with its registry name."""
    try:
        cls = strategy_class(name)
    except ConfigError:
        return {"title": name, "centre": "mean", "step": [], "population": True}
    return {"title": cls.TITLE or name, "centre": cls.CENTRE, "step": list(cls.STEP),
            "population": cls.keeps_population()}


def strategy_params(name: str, *, population: int, games: int, budget: int,
                    params: Mapping[str, object] | None = None) -> dict:
    """The parameters a run gives strategy ``name``: its explicit ``params``, plus the run's
    ``population`` (the parameter ``np``), ``games`` and game ``budget`` where the strategy has
    such a parameter."""
    cls = strategy_class(name)
    given = (("np", population), ("games", games), ("budget", budget))
    out: dict[str, object] = {k: v for k, v in given
                              if k in cls.PARAMS and not (k == "budget" and v <= 0)}
    out.update(params or {})
    return out


def make_strategy(name: str, space: WeightSpace, *, params: Mapping[str, object] | None = None,
                  seed: int) -> Strategy:
    """A new strategy ``name`` on ``space`` with checked ``params``, seeded by ``seed``."""
    return strategy_class(name)(space, params=params, seed=seed)
