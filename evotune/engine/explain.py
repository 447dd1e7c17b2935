"""Explaining an evaluation of a linear feature set: each feature's share (``evotune features``)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .api import evaluate, phi
from .evaluation import Evaluation, engine_weights, evaluation_of


@dataclass(frozen=True)
class Contribution:
    """One feature's share of an evaluation."""

    name: str
    """Weight name."""
    phi: float
    """Feature value (side to move's view, phase folded in)."""
    weight: int
    """The rounded weight the engine uses."""
    contribution: float
    """weight x phi."""


def contributions(position, weights, features: str | Evaluation = "shannon", *,
                  nonzero: bool = True) -> tuple[list[Contribution], int]:
    """(the features of ``position`` with their weighted contributions, the core's evaluation).
    ``nonzero``: only the features whose value is not zero."""
    evaluation = evaluation_of(features)
    if not evaluation.phi_width:
        raise ConfigError("a network has no linear features to list; its evaluation is "
                          "'evotune search FEN --depth 1 --engine nnue:FILE' or the nn commands")
    w = engine_weights(weights, "weights", features)
    values = phi(position, features)
    rows = [Contribution(name, float(v), int(wi), float(wi * v))
            for name, v, wi in zip(evaluation.names, values, w)
            if v != 0 or not nonzero]
    return rows, evaluate(position, w, features)
