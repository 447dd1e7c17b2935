"""The rating model's evidence for a strategy that selects by it (``selection = 'model'``).

The run loop keeps every game of the run in the model's form (:class:`~evotune.match.rating.
GameResult`): read from the store's game log when a run opens (so a resumed run holds what an
uninterrupted one holds), extended by each generation's games. After a generation's games are
played, the model is fitted afresh on all of them (from r = 0: a pure function of the stored
games, never of the order they were played in) and each outcome the strategy is told carries the
model's ratings of its A and B with the error of their difference, as plain numbers.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ..match import GameRecord
from ..match.rating import GameResult, Ratings, fit_ratings, game_results
from ..strategies.base import MatchOutcome, MatchRequest


class RatedEvidence:
    """Every game of a run so far, and the model fitted on them."""

    def __init__(self, stored: Iterable[dict | GameRecord], *, anchor: Sequence[float] | None,
                 prior: float) -> None:
        """``stored``: the run's game log; ``anchor``: the run's start (None for a run from
        random weights); ``prior``: the model's prior, Elo."""
        self.games: list[GameResult] = game_results(stored)
        self.anchor = None if anchor is None else tuple(float(x) for x in anchor)
        self.prior = float(prior)

    def ratings(self) -> Ratings:
        """The model over every game so far."""
        return fit_ratings(self.games, anchor=self.anchor, prior=self.prior)

    def told(self, records: Iterable[GameRecord], requests: Sequence[MatchRequest],
             outcomes: Sequence[MatchOutcome]) -> list[MatchOutcome]:
        """Add a generation's games, refit, and return the outcomes with the model's verdict
        (``MatchOutcome.rated``: A's and B's Elo, the error of A minus B)."""
        self.games = sorted(self.games + game_results(records), key=lambda g: g.key)
        model = self.ratings()
        out = []
        for req, outcome in zip(requests, outcomes):
            elo_a, _ = model.rating(req.a)
            elo_b, _ = model.rating(req.b)
            _, error = model.difference(req.a, req.b)
            out.append(dataclasses.replace(outcome, rated=(elo_a, elo_b, error)))
        return out
