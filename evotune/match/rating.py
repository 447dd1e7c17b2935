"""A rating model over every game of a run: Bradley-Terry (logistic Elo) with a weak prior.

Every stored game names both weight vectors that played it, so all games of a run, whichever
comparison asked for them, rate the distinct vectors on one scale. The model (Bradley-Terry as
Elo's logistic curve; Hunter 2004 for its fitting, BayesElo for the prior):

- strength r_v of each distinct vector v, in Elo; the expected score of a against b is
  ``1 / (1 + 10^(-(r_a - r_b) / 400))``, as :func:`evotune.match.scoring.logistic_score`;
- every game counts its score for A (1, 1/2, 0: a draw is half a win, as in the pentanomial
  pair score, whose mean over a colour-swapped pair is the same sum);
- the anchor (the run's start, when it played) is fixed at 0; every other rating has a normal
  prior of mean 0 (the anchor's) and standard deviation ``prior`` Elo, so that a vector with two
  won games is rated tens of Elo above the start, not +inf (the maximum likelihood) or +400;
- the estimate is the maximum of the posterior (MAP), found by Newton's method on the exactly
  concave log posterior from r = 0; the standard errors are from its curvature (the inverse
  Hessian), per-game binomial: the pairing of colour-swapped games and the draws make the true
  variance of a pair score smaller, so the errors err on the wide side.

It is a pure function of the games (their order does not matter beyond floating point sums,
which are taken in key order), so a resumed run and an uninterrupted one compute the same
ratings. :func:`game_results` reads stored game records (dicts or :class:`GameRecord`);
:func:`fit_ratings` fits them; :class:`Ratings` answers a vector's rating and a difference with
its error.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .gamerecord import GameRecord

ELO = 400.0 / math.log(10.0)
"""Elo per natural logit unit."""

Vector = tuple[float, ...]


@dataclass(frozen=True)
class GameResult:
    """The part of a game the model reads: who played whom and A's score."""

    key: tuple[int, int, int, int]
    """The game's key (generation, fixture, pair, game): the order the sums are taken in."""
    a: Vector
    """A's weight vector."""
    b: Vector
    """B's weight vector."""
    score: float
    """A's score: 1, 0.5 or 0."""


def game_results(records: Iterable[GameRecord | dict]) -> list[GameResult]:
    """The model's view of game records (the game log's dicts or GameRecords), sorted by key.

    A game whose side has no weight vector (an external engine without mapped weights) is left
    out: it names no vector to rate."""
    out = []
    for rec in records:
        r = GameRecord.from_dict(rec) if isinstance(rec, dict) else rec
        if not r.white_weights or not r.black_weights:
            continue
        white, black = tuple(r.white_weights), tuple(r.black_weights)
        a, b = (white, black) if r.a_white else (black, white)
        out.append(GameResult(key=r.key, a=a, b=b, score=r.points_a() / 2.0))
    return sorted(out, key=lambda g: g.key)


@dataclass(frozen=True)
class Ratings:
    """The fitted model: each distinct vector's Elo against the anchor, with its covariance."""

    vectors: tuple[Vector, ...]
    """The distinct vectors, in order of first appearance (by game key)."""
    elo: np.ndarray = field(repr=False)
    """MAP Elo of each vector against the anchor."""
    covariance: np.ndarray = field(repr=False)
    """Posterior covariance of the ratings, Elo^2 (the anchor's row and column are 0)."""
    games: np.ndarray = field(repr=False)
    """Games each vector played."""
    anchor: Vector | None
    """The vector fixed at 0 (None: no anchor played; the prior alone sets the scale's zero)."""
    prior: float
    """Standard deviation of the prior, Elo."""
    _positions: dict[Vector, int] = field(init=False, repr=False, compare=False)
    """Position of each vector in :attr:`vectors`."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_positions", {v: i for i, v in enumerate(self.vectors)})

    def index(self, v: Sequence[float]) -> int | None:
        """Position of vector ``v`` in :attr:`vectors`, None when it played no game."""
        return self._positions.get(tuple(float(x) for x in v))

    def error(self) -> np.ndarray:
        """Standard error of each rating, Elo."""
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    def rating(self, v: Sequence[float]) -> tuple[float, float]:
        """(Elo, standard error) of ``v``; a vector that never played has the prior's (0,
        prior) (the anchor: (0, 0))."""
        i = self.index(v)
        if i is None:
            return (0.0, 0.0) if self.anchor == tuple(float(x) for x in v) else (0.0, self.prior)
        return float(self.elo[i]), float(math.sqrt(max(self.covariance[i, i], 0.0)))

    def difference(self, a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
        """(Elo of a minus Elo of b, its standard error), the covariance of the two included."""
        ia, ib = self.index(a), self.index(b)
        ra, ea = self.rating(a)
        rb, eb = self.rating(b)
        if ia is not None and ib is not None:
            c = self.covariance
            var = c[ia, ia] + c[ib, ib] - 2.0 * c[ia, ib]
            return ra - rb, float(math.sqrt(max(var, 0.0)))
        return ra - rb, float(math.hypot(ea, eb))

    def best(self, among: Iterable[Sequence[float]] | None = None) -> Vector | None:
        """The vector rated highest (ties: the first), among ``among`` when given (those that
        never played count at the prior's 0); None when there is nothing to choose."""
        if among is None:
            if not self.vectors:
                return None
            return self.vectors[int(np.argmax(self.elo))]
        pool = [tuple(float(x) for x in v) for v in among]
        if not pool:
            return None
        scores = [self.rating(v)[0] for v in pool]
        return pool[int(np.argmax(scores))]


def fit_ratings(games: Sequence[GameResult], *, anchor: Sequence[float] | None = None,
                prior: float = 50.0, tol: float = 1e-10, max_iter: int = 100) -> Ratings:
    """The MAP ratings of every vector in ``games`` (see the module docstring).

    ``anchor``: the vector fixed at 0 (ignored when it played no game); ``prior``: the prior's
    standard deviation in Elo (> 0). Newton's method from r = 0 until the largest step is below
    ``tol`` logits."""
    check_prior(prior)
    games = sorted(games, key=lambda g: g.key)
    positions: dict[Vector, int] = {}
    for g in games:
        positions.setdefault(g.a, len(positions))
        positions.setdefault(g.b, len(positions))
    vectors = tuple(positions)
    n = len(vectors)
    anchor_t = None if anchor is None else tuple(float(x) for x in anchor)
    fixed = positions.get(anchor_t) if anchor_t is not None else None
    # games and score sums per ordered pair (a, b): all the likelihood depends on
    sums: dict[tuple[int, int], list[float]] = {}
    played = np.zeros(n, dtype=np.int64)
    for g in games:
        i, j = positions[g.a], positions[g.b]
        if i == j:
            continue  # a vector against itself says nothing of its strength
        cell = sums.setdefault((i, j), [0.0, 0.0])
        cell[0] += 1.0
        cell[1] += g.score
        played[i] += 1
        played[j] += 1
    ia = np.array([k[0] for k in sums], dtype=np.int64)
    ib = np.array([k[1] for k in sums], dtype=np.int64)
    count = np.array([v[0] for v in sums.values()], dtype=np.float64)
    score = np.array([v[1] for v in sums.values()], dtype=np.float64)
    free = np.array([i for i in range(n) if i != fixed], dtype=np.int64)
    precision = (ELO / prior) ** 2  # the prior's, per logit^2
    r = np.zeros(n)
    hess = np.zeros((free.size, free.size))
    for _ in range(max_iter):
        grad, hess = _gradient_hessian(r, ia, ib, count, score, n, precision)
        grad, hess = grad[free], hess[np.ix_(free, free)]
        step = np.linalg.solve(hess, grad) if free.size else np.zeros(0)
        r[free] -= step
        if free.size == 0 or float(np.max(np.abs(step))) < tol:
            break
    grad, hess = _gradient_hessian(r, ia, ib, count, score, n, precision)
    cov = np.zeros((n, n))
    if free.size:
        cov[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)]) * ELO * ELO
    return Ratings(vectors=vectors, elo=r * ELO, covariance=cov, games=played,
                   anchor=vectors[fixed] if fixed is not None else None, prior=float(prior))


def _gradient_hessian(r: np.ndarray, ia: np.ndarray, ib: np.ndarray, count: np.ndarray,
                      score: np.ndarray, n: int, precision: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the log posterior at ``r`` (logits)."""
    p = 1.0 / (1.0 + np.exp(-(r[ia] - r[ib])))
    resid = score - count * p
    w = count * p * (1.0 - p)
    grad = -precision * r
    np.add.at(grad, ia, resid)
    np.add.at(grad, ib, -resid)
    hess = -precision * np.eye(n)
    np.add.at(hess, (ia, ia), -w)
    np.add.at(hess, (ib, ib), -w)
    np.add.at(hess, (ia, ib), w)
    np.add.at(hess, (ib, ia), w)
    return grad, hess



# ---- strength as a linear function of the weights -----------------------------------------------

@dataclass(frozen=True)
class LinearRatings:
    """The fitted linear model: a vector's Elo is ``slope . (v - anchor) / scale``; the same
    questions as :class:`Ratings` (a vector's rating, a difference with its error, the best)."""

    slope: np.ndarray = field(repr=False)
    """MAP Elo per scale unit of each weight."""
    covariance: np.ndarray = field(repr=False)
    """Posterior covariance of the slope, Elo^2."""
    anchor: Vector
    """The vector rated 0 (the run's start; zeros for a run from random weights)."""
    scale: np.ndarray = field(repr=False)
    """Each weight's unit (the fine-tuning scale, :func:`evotune.space.finetune_scale`)."""
    prior: float
    """Standard deviation of the prior of each slope, Elo per scale unit."""
    games: int = 0
    """Games the model was fitted on."""

    def _delta(self, a: Sequence[float], b: Sequence[float]) -> np.ndarray:
        return (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)) / self.scale

    def rating(self, v: Sequence[float]) -> tuple[float, float]:
        """(Elo over the anchor, standard error) of ``v``."""
        return self.difference(v, self.anchor)

    def difference(self, a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
        """(Elo of a minus Elo of b, its standard error)."""
        d = self._delta(a, b)
        return float(self.slope @ d), float(math.sqrt(max(float(d @ self.covariance @ d), 0.0)))

    def best(self, among: Iterable[Sequence[float]]) -> Vector | None:
        """The vector of ``among`` rated highest (ties: the first); None for none."""
        pool = [tuple(float(x) for x in v) for v in among]
        if not pool:
            return None
        return pool[int(np.argmax([self.rating(v)[0] for v in pool]))]


def fit_linear(games: Sequence[GameResult], *, scale: Sequence[float],
               anchor: Sequence[float] | None = None, prior: float = 50.0,
               tol: float = 1e-10, max_iter: int = 100) -> LinearRatings:
    """The MAP slope of strength on the weights over every game in ``games``: each game's
    expected score for A is ``1 / (1 + 10^(-slope . (a - b) / scale / 400))`` (logistic
    regression of the score on the two vectors' difference, as CLOP's model is, without its
    quadratic terms), each slope with a normal prior of mean 0 and ``prior`` Elo per scale unit.
    Newton's method from 0 on the concave log posterior; a pure function of the games.

    ``scale``: each weight's unit (> 0; a fixed weight's difference is always 0); ``anchor``: the
    vector rated 0 (None: zeros)."""
    check_prior(prior)
    unit = np.asarray(scale, dtype=np.float64)
    if unit.ndim != 1 or not np.all(np.isfinite(unit)) or np.any(unit <= 0):
        raise ConfigError("linear rating model: every weight's scale must be a positive number")
    n = unit.size
    pairs, count, score = pair_sums(games, n, what="linear rating model")
    rows = (np.array([np.subtract(a, b) for a, b in pairs], dtype=np.float64) / unit
            if pairs else np.zeros((0, n)))
    beta, cov = logistic_map(rows, count, score, np.zeros(n), np.full(n, (ELO / prior) ** 2),
                             tol=tol, max_iter=max_iter)
    cov = cov * ELO * ELO
    return LinearRatings(slope=beta * ELO, covariance=cov,
                         anchor=tuple(float(x) for x in (anchor if anchor is not None
                                                         else np.zeros(n))),
                         scale=unit, prior=float(prior), games=int(count.sum()))


# ---- shared by the linear and quadratic forms ---------------------------------------------------

def check_prior(value: float, *, what: str = "prior") -> None:
    """A prior's standard deviation: a positive finite number of Elo (ConfigError otherwise)."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ConfigError(f"rating model: {what} must be a positive number of Elo, got {value!r}")


def pair_sums(games: Sequence[GameResult], n: int, *, what: str
              ) -> tuple[list[tuple[Vector, Vector]], np.ndarray, np.ndarray]:
    """(ordered pairs (a, b), games of each, A's score sum of each), summed in key order: all
    a model of the two vectors' weights reads of the games (a vector against itself left out);
    ConfigError when a game's vectors do not have ``n`` weights."""
    sums: dict[tuple[Vector, Vector], list[float]] = {}
    for g in sorted(games, key=lambda g: g.key):
        if g.a != g.b:
            cell = sums.setdefault((g.a, g.b), [0.0, 0.0])
            cell[0] += 1.0
            cell[1] += g.score
    sizes = {len(v) for pair in sums for v in pair}
    if sizes - {n}:
        raise ConfigError(f"{what}: the games' vectors have {min(sizes - {n})} weights, the "
                          f"scale {n}")
    return (list(sums), np.array([v[0] for v in sums.values()], dtype=np.float64),
            np.array([v[1] for v in sums.values()], dtype=np.float64))


def logistic_map(rows: np.ndarray, count: np.ndarray, score: np.ndarray, mean: np.ndarray,
                 precision: np.ndarray, *, tol: float = 1e-10, max_iter: int = 100
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(MAP coefficients, their posterior covariance), in logits, of a logistic regression of
    the score sums ``score`` of ``count`` games on ``rows``, each coefficient with a normal
    prior (``mean``, 1 / ``precision``): Newton's method from the prior's mean on the concave
    log posterior until the largest step is below ``tol``.

    A coefficient whose column is 0 in every row (a fixed weight's: its two vectors never
    differ) is exactly its prior, independent of the others; it is left out of the solve, so a
    space of 824 weights with 55 free costs what 55 weights cost."""
    mean = np.asarray(mean, dtype=np.float64)
    precision = np.asarray(precision, dtype=np.float64)
    beta = mean.copy()
    cov = np.diag(1.0 / precision)
    active = np.flatnonzero(np.any(rows != 0.0, axis=0))
    if active.size == 0:
        return beta, cov
    x, m = rows[:, active], mean[active]
    prec = np.diag(precision[active])
    b = m.copy()
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(x @ b)))
        grad = x.T @ (score - count * p) - prec @ (b - m)
        hess = -(x.T * (count * p * (1.0 - p))) @ x - prec
        step = np.linalg.solve(hess, grad)
        b -= step
        if float(np.max(np.abs(step), initial=0.0)) < tol:
            break
    p = 1.0 / (1.0 + np.exp(-(x @ b)))
    hess = -(x.T * (count * p * (1.0 - p))) @ x - prec
    beta[active] = b
    cov[np.ix_(active, active)] = np.linalg.inv(-hess)
    return beta, cov
