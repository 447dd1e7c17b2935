"""The rating model between a strategy and the run loop, as plain numbers: what a strategy asks
the loop to fit over every game of the run (:class:`ModelRequest`, from
:meth:`~evotune.strategies.base.Strategy.rating_model`) and the fit it is told after each
generation (:class:`ModelView`, ``tell(model=)``). Strategies do not import the match layer that
fits it (:mod:`evotune.match.rating`, :mod:`evotune.match.quadmodel`)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelRequest:
    """The rating model a strategy asks the run loop to fit over every game of the run
    (:meth:`Strategy.rating_model`; plain numbers: strategies do not import the match layer)."""

    form: str
    """'vectors' (a rating per distinct vector), 'linear' (strength linear in the weights) or
    'quadratic' (a slope and a curvature per weight: :mod:`evotune.match.quadmodel`)."""
    prior: float
    """The prior's standard deviation: Elo of a vector ('vectors'), Elo per scale unit of a
    slope ('linear', 'quadratic')."""
    anchor: tuple[float, ...] | None
    """The vector rated 0 (the run's start; None: a run from random weights has none)."""
    curvature: float = 0.0
    """'quadratic': the curvatures' prior mean, Elo per scale unit squared."""
    curvature_sd: float = 1.0
    """'quadratic': the curvatures' prior standard deviation."""


@dataclass(frozen=True)
class ModelView:
    """The fitted model of a 'linear' or 'quadratic' :class:`ModelRequest` as plain numbers,
    handed to :meth:`Strategy.tell` after every generation: a vector v's Elo is
    ``slope . u - 1/2 curvature . u^2`` with ``u = (v - anchor) / scale``."""

    slope: tuple[float, ...]
    """Elo per scale unit of each weight, at the anchor."""
    curvature: tuple[float, ...]
    """Elo per scale unit squared of each weight (all 0 for the linear form)."""
    scale: tuple[float, ...]
    """Each weight's unit (its fine-tuning scale)."""
    anchor: tuple[float, ...]
    """The vector at u = 0."""
    games: int
    """Games the model was fitted on."""
