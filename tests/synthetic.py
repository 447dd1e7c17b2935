"""A synthetic test oracle: a fast "player" whose strength is a known function of its weights.

Strength (Elo) of a weight vector w: ``-k * sum(((w - w*) / scale)^2)`` over the free weights, so
the optimum w* is known. A game between A and B is drawn from a logistic model: the expected
score of A is ``1 / (1 + 10^(-(s_A - s_B) / 400))``, a draw takes probability
``draw * 2 * min(E, 1 - E)`` and the rest splits so that the expected score stays E. Colours do
not matter. ``stop='decisive'`` is honoured game by game, exactly as the real match runner must.

For TD there is a synthetic game generator: the features (white's view) walk randomly (piece
counts change by +-1 now and then, mobility wanders), each ply's leaf features are given from the
mover's view, and the result is drawn with P(white wins) = sigmoid(2 beta w* . phi_final) and no
draws, so E[result in +-1] = tanh(beta w* . phi_final): TD with the same beta has w* as its fixed
point.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from evotune.seeding import STREAM_GAMES, generator
from evotune.space import WeightSpace
from evotune.strategies.base import GameLeaves, MatchOutcome, MatchRequest

OPTIMUM = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)


@dataclass(frozen=True)
class SyntheticOracle:
    """A known-strength player model and a synthetic game generator."""

    space: WeightSpace = WeightSpace()
    """The weight space (its free weights count in the strength)."""
    optimum: tuple[float, ...] = OPTIMUM
    """w*: the strongest weight vector."""
    k: float = 40.0
    """Elo lost per squared scale unit of distance."""
    scale: float = 100.0
    """Engine units per distance unit."""
    draw: float = 0.3
    """Draw propensity (0: no draws)."""
    beta: float = 0.005
    """TD games: results drawn from sigmoid(2 beta w* . phi)."""
    plies: int = 60
    """TD games: plies per game."""
    predicted_rate: float = 0.8
    """TD games: probability that the PV predicted the next move."""

    def strength(self, w) -> float:
        """Elo strength of w (0 at the optimum)."""
        free = self.space.free
        d = (np.asarray(w, dtype=np.float64)[free] - np.asarray(self.optimum)[free]) / self.scale
        return float(-self.k * np.sum(d * d))

    def game_probs(self, a, b) -> tuple[float, float, float]:
        """(win, draw, loss) probabilities of A against B."""
        e = 1.0 / (1.0 + 10.0 ** (-(self.strength(a) - self.strength(b)) / 400.0))
        pd = self.draw * 2.0 * min(e, 1.0 - e)
        return e - pd / 2.0, pd, 1.0 - e - pd / 2.0

    def match(self, req: MatchRequest, rng: np.random.Generator) -> MatchOutcome:
        """Play one request."""
        if req.record_leaves:
            return self.td_match(req, rng)
        pw, pd, _ = self.game_probs(req.a, req.b)
        pa = pb = played = 0
        for g in range(req.games):
            u = rng.random()
            if u < pw:
                pa += 2
            elif u < pw + pd:
                pa += 1
                pb += 1
            else:
                pb += 2
            played += 1
            left = 2 * (req.games - played)
            if req.stop == "decisive" and (pa > pb + left or pa + left <= pb):
                break
        return MatchOutcome(points_a=pa, points_b=pb, games=played)

    def td_game(self, rng: np.random.Generator, *, a_white: bool, w=None) -> GameLeaves:
        """One synthetic self-play game (scores are w . phi for the player's w, or w*)."""
        w = np.asarray(self.optimum if w is None else w, dtype=np.float64)
        phi = np.zeros(6, dtype=np.int64)
        movers, scores, leaves = [], [], []
        for t in range(self.plies):
            change = rng.random(5) < 0.03
            phi[:5] += change * rng.choice((-1, 1), size=5)
            phi[5] = int(round(0.8 * phi[5] + rng.normal(0.0, 4.0)))
            white = t % 2 == 0
            view = phi if white else -phi
            movers.append(1 if white else 0)
            leaves.append(tuple(int(x) for x in view))
            scores.append(int(np.rint(w @ view)))
        z = 2.0 * self.beta * float(np.asarray(self.optimum) @ phi)
        result = 1.0 if rng.random() < 1.0 / (1.0 + np.exp(-z)) else 0.0
        predicted = tuple(bool(rng.random() < self.predicted_rate) for _ in range(self.plies - 1))
        return GameLeaves(a_white=a_white, result=result, movers=tuple(movers),
                          scores=tuple(scores), leaf_phi=tuple(leaves),
                          predicted=predicted + (False,))

    def td_match(self, req: MatchRequest, rng: np.random.Generator) -> MatchOutcome:
        games = tuple(self.td_game(rng, a_white=g % 2 == 0, w=req.a) for g in range(req.games))
        pa = sum(int(2 * (g.result if g.a_white else 1 - g.result)) for g in games)
        return MatchOutcome(points_a=pa, points_b=2 * req.games - pa, games=req.games,
                            leaves=games)

    def play(self, requests: Sequence[MatchRequest], rng: np.random.Generator
             ) -> list[MatchOutcome]:
        """One outcome per request, in request order."""
        return [self.match(r, rng) for r in requests]


DEFAULT = SyntheticOracle()


def play(requests: Sequence[MatchRequest], rng: np.random.Generator, *,
         oracle: SyntheticOracle = DEFAULT) -> list[MatchOutcome]:
    """Play ``requests`` with the synthetic oracle (``DEFAULT`` unless given)."""
    return oracle.play(requests, rng)


def distance(w, *, oracle: SyntheticOracle = DEFAULT) -> float:
    """Euclidean distance of w to the optimum over the free weights (engine units)."""
    free = oracle.space.free
    return float(np.linalg.norm(np.asarray(w, dtype=np.float64)[free]
                                - np.asarray(oracle.optimum)[free]))


def run(strategy, generations: int, *, seed: int = 7, oracle: SyntheticOracle = DEFAULT
        ) -> list[dict]:
    """Drive ``strategy`` for ``generations`` with the oracle; returns the stats of each."""
    rng = generator(seed, STREAM_GAMES)
    stats = []
    for _ in range(generations):
        stats.append(strategy.tell(oracle.play(strategy.ask(), rng)))
    return stats
