"""The rating model's evidence for a strategy that selects by it (``selection = 'model'``).

The run loop keeps every game of the run in the model's form (:class:`~evotune.match.rating.
GameResult`): read from the store's game log when a run opens (so a resumed run holds what an
uninterrupted one holds), extended by each generation's games. After a generation's games are
played, the model is fitted afresh on all of them (from r = 0: a pure function of the stored
games, never of the order they were played in) and each outcome the strategy is told carries the
model's ratings of its A and B with the error of their difference, as plain numbers; a strategy
that proposes by the model (``quad``) is told the fit itself (:meth:`RatedEvidence.view`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ..match import GameRecord
from ..match.quadmodel import QuadraticRatings, fit_quadratic
from ..match.rating import (
    GameResult,
    LinearRatings,
    Ratings,
    fit_linear,
    fit_ratings,
    game_results,
)
from ..space import WeightSpace, finetune_scale
from ..strategies.base import MatchOutcome, MatchRequest
from ..strategies.ratingrequest import ModelRequest, ModelView

FORMS = ("vectors", "linear", "quadratic")


def model_scale(space: WeightSpace) -> tuple[float, ...]:
    """The linear model's unit of each weight: its fine-tuning scale (the step SPSA and a
    fine-tuning DE take; 1 where that is 0, a fixed weight's, whose difference is always 0)."""
    scale = finetune_scale(space.reference, space.lower, space.upper)
    return tuple(float(x) if x > 0 else 1.0 for x in scale)


class RatedEvidence:
    """Every game of a run so far, and the model fitted on them."""

    def __init__(self, stored: Iterable[dict | GameRecord], *, request: ModelRequest,
                 scale: Sequence[float]) -> None:
        """``stored``: the run's game log; ``request``: the strategy's model (its form, prior
        and anchor: :meth:`~evotune.strategies.base.Strategy.rating_model`); ``scale``: each
        weight's unit of the linear and quadratic forms (:func:`model_scale`)."""
        if request.form not in FORMS:
            raise ValueError(f"unknown rating model form {request.form!r}")
        if request.form == "quadratic" and request.anchor is None:
            raise ValueError("the quadratic rating model needs an anchor (the run's start)")
        self.games: list[GameResult] = game_results(stored)
        self.request = request
        self.anchor = None if request.anchor is None else tuple(float(x) for x in request.anchor)
        self.scale = tuple(float(x) for x in scale)
        self.last: Ratings | LinearRatings | QuadraticRatings | None = None

    def ratings(self) -> Ratings | LinearRatings | QuadraticRatings:
        """The model over every game so far."""
        req = self.request
        if req.form == "linear":
            model: Ratings | LinearRatings | QuadraticRatings = fit_linear(
                self.games, scale=self.scale, anchor=self.anchor, prior=req.prior)
        elif req.form == "quadratic":
            assert self.anchor is not None
            model = fit_quadratic(self.games, scale=self.scale, anchor=self.anchor,
                                  prior=req.prior, curvature=req.curvature,
                                  curvature_sd=req.curvature_sd)
        else:
            model = fit_ratings(self.games, anchor=self.anchor, prior=req.prior)
        self.last = model
        return model

    def view(self) -> ModelView | None:
        """The last fit of a linear or quadratic model as plain numbers (None: a model per
        vector, or none fitted yet)."""
        model = self.last
        if isinstance(model, QuadraticRatings):
            curvature = tuple(float(x) for x in model.curvature)
        elif isinstance(model, LinearRatings):
            curvature = (0.0,) * len(model.slope)
        else:
            return None
        return ModelView(slope=tuple(float(x) for x in model.slope), curvature=curvature,
                         scale=tuple(float(x) for x in model.scale), anchor=model.anchor,
                         games=int(model.games))

    def told(self, records: Iterable[GameRecord], requests: Sequence[MatchRequest],
             outcomes: Sequence[MatchOutcome]) -> list[MatchOutcome]:
        """Add a generation's games, refit, and return the outcomes with the model's verdict
        (``MatchOutcome.rated``: A's and B's Elo, the error of A minus B)."""
        self.add(game_results(records))
        return self.rate(requests, outcomes)

    def add(self, games: Iterable[GameResult]) -> None:
        """Games played since the last fit (the model's form of them)."""
        self.games = sorted(self.games + list(games), key=lambda g: g.key)

    def rate(self, requests: Sequence[MatchRequest],
             outcomes: Sequence[MatchOutcome]) -> list[MatchOutcome]:
        """The outcomes with the verdict of the model fitted on every game held now."""
        model = self.ratings()
        out = []
        for req, outcome in zip(requests, outcomes):
            elo_a, _ = model.rating(req.a)
            elo_b, _ = model.rating(req.b)
            _, error = model.difference(req.a, req.b)
            out.append(dataclasses.replace(outcome, rated=(elo_a, elo_b, error)))
        return out
