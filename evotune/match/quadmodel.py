"""The rating model's quadratic form: strength as a separable quadratic in the weights, fitted
over every game of a run (``strategy = quad`` proposes where it peaks).

With ``u = (v - anchor) / scale`` (each weight in its fine-tuning unit, the anchor the run's
start), the strength of a vector v is, in Elo,

    E(v) = g . u - 1/2 sum_i h_i u_i^2

a slope ``g_i`` and a curvature ``h_i`` per weight: CLOP's quadratic regression (Coulom 2011)
without its cross terms, which a space of 55 weights could not fill (1,540 of them) with the games
a tune plays. Each game's expected score for A is the logistic of ``E(a) - E(b)``, a linear
function of (g, h): the fit is a logistic regression on the rows ``[u_a - u_b, -(u_a^2 - u_b^2)
/ 2]``, with a normal prior per coefficient: slopes of mean 0 and standard deviation ``prior``
Elo per unit, curvatures of mean ``curvature`` and standard deviation ``curvature_sd`` Elo per
unit squared (a positive mean: a good start sits near a peak, which is what a fine-tuning
assumes). The MAP by Newton's method from the prior's mean (:func:`evotune.match.rating.
logistic_map`); a pure function of the games, so a resumed run fits what an uninterrupted one
fits.

Near a peak the slope of a pair played at ``t +- c Delta`` measures the gradient at t,
``g - h t``; as the centre moves the gradients it measures tell the curvature apart from the
slope. The model is a model: a landscape with strong interactions between weights is fitted by
its separable part only (docs/results/finetune-study.md measures it in real games).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .rating import ELO, GameResult, Vector, check_prior, logistic_map, pair_sums


@dataclass(frozen=True)
class QuadraticRatings:
    """The fitted quadratic model; the same questions as :class:`~evotune.match.rating.Ratings`
    (a vector's rating, a difference with its error, the best), and its peak."""

    slope: np.ndarray = field(repr=False)
    """MAP Elo per scale unit of each weight, at the anchor (g)."""
    curvature: np.ndarray = field(repr=False)
    """MAP Elo per scale unit squared of each weight (h; positive: strength falls away)."""
    covariance: np.ndarray = field(repr=False)
    """Posterior covariance of (slope, curvature), Elo^2, (2n, 2n)."""
    anchor: Vector
    """The vector rated 0 (u = 0)."""
    scale: np.ndarray = field(repr=False)
    """Each weight's unit."""
    prior: float
    """Standard deviation of each slope's prior, Elo per unit."""
    games: int = 0
    """Games the model was fitted on."""

    def _u(self, v: Sequence[float]) -> np.ndarray:
        return (np.asarray(v, dtype=np.float64) - np.asarray(self.anchor)) / self.scale

    def _row(self, a: Sequence[float], b: Sequence[float]) -> np.ndarray:
        ua, ub = self._u(a), self._u(b)
        return np.concatenate([ua - ub, -0.5 * (ua * ua - ub * ub)])

    def rating(self, v: Sequence[float]) -> tuple[float, float]:
        """(Elo over the anchor, standard error) of ``v``."""
        return self.difference(v, self.anchor)

    def difference(self, a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
        """(Elo of a minus Elo of b, its standard error)."""
        r = self._row(a, b)
        beta = np.concatenate([self.slope, self.curvature])
        return float(beta @ r), float(math.sqrt(max(float(r @ self.covariance @ r), 0.0)))

    def best(self, among: Iterable[Sequence[float]]) -> Vector | None:
        """The vector of ``among`` rated highest (ties: the first); None for none."""
        pool = [tuple(float(x) for x in v) for v in among]
        if not pool:
            return None
        return pool[int(np.argmax([self.rating(v)[0] for v in pool]))]


def fit_quadratic(games: Sequence[GameResult], *, scale: Sequence[float],
                  anchor: Sequence[float], prior: float = 5.0, curvature: float = 0.5,
                  curvature_sd: float = 1.0, tol: float = 1e-10,
                  max_iter: int = 100) -> QuadraticRatings:
    """The MAP slopes and curvatures over every game in ``games`` (the module docstring).

    ``scale``: each weight's unit (> 0); ``anchor``: the vector at u = 0 (the run's start);
    ``prior``: the slopes' prior standard deviation, Elo per unit; ``curvature`` and
    ``curvature_sd``: the curvatures' prior mean and standard deviation, Elo per unit squared."""
    check_prior(prior)
    check_prior(curvature_sd, what="curvature_sd")
    if not math.isfinite(curvature):
        raise ConfigError(f"quadratic rating model: curvature must be a finite number of Elo, "
                          f"got {curvature!r}")
    unit = np.asarray(scale, dtype=np.float64)
    if unit.ndim != 1 or not np.all(np.isfinite(unit)) or np.any(unit <= 0):
        raise ConfigError("quadratic rating model: every weight's scale must be a positive "
                          "number")
    n = unit.size
    centre = np.asarray(anchor, dtype=np.float64)
    if centre.shape != (n,):
        raise ConfigError(f"quadratic rating model: the anchor has {centre.size} weights, "
                          f"the scale {n}")
    pairs, count, score = pair_sums(games, n, what="quadratic rating model")
    if pairs:
        ua = (np.array([p[0] for p in pairs], dtype=np.float64) - centre) / unit
        ub = (np.array([p[1] for p in pairs], dtype=np.float64) - centre) / unit
        rows = np.hstack([ua - ub, -0.5 * (ua * ua - ub * ub)])
    else:
        rows = np.zeros((0, 2 * n))
    mean = np.concatenate([np.zeros(n), np.full(n, curvature / ELO)])
    precision = np.concatenate([np.full(n, (ELO / prior) ** 2),
                                np.full(n, (ELO / curvature_sd) ** 2)])
    beta, cov = logistic_map(rows, count, score, mean, precision, tol=tol, max_iter=max_iter)
    return QuadraticRatings(slope=beta[:n] * ELO, curvature=beta[n:] * ELO,
                            covariance=cov * ELO * ELO, anchor=tuple(float(x) for x in centre),
                            scale=unit, prior=float(prior), games=int(count.sum()))
