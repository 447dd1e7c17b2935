"""Texel's method: fit linear evaluation weights to game results of labelled positions.

Model: a position with feature row x (White's view, phase factors folded in, so that the
White-view evaluation is ``x . w``) is predicted to score ``p = sigma(K * x.w / 400)`` for White,
with the base-10 logistic ``sigma(s) = 1 / (1 + 10**(-s))`` of the Texel tuning method. The error
is the mean squared difference between p and the game result r (1, 0.5, 0).

The fit: K first (the value that minimises the error with the initial weights, by a bounded
scalar search), then the free weights with K fixed, inside their bounds, by

- ``lbfgs``: scipy's L-BFGS-B; an epoch is one L-BFGS-B call of ``iters`` iterations started from
  the previous epoch's weights (so an epoch is a pure function of its start weights, and a fit
  resumed from any stored epoch equals an uninterrupted one);
- ``adam``: full-batch Adam, ``iters`` steps per epoch, projected onto the bounds; its moments
  are part of the stored state.

Pure numerics (numpy, scipy.sparse): no I/O. The run around it is :mod:`evotune.learn.fitrun`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from ..errors import ConfigError

LN10 = math.log(10.0)
K_RANGE = (0.05, 10.0)
L2_GRID = (0.0, 1e-5, 5e-5, 2e-4, 1e-3)
"""Ridge strengths the ``lowest`` rule of ``--l2 auto`` tries
(:data:`evotune.kinds.fit.config.L2_RULES`)."""
L2_GRID_ONE_SE = (0.0, 1e-5, 5e-5, 2e-4, 1e-3, 5e-3, 2e-2, 1e-1)
"""Ridge strengths the ``one-se`` rule tries, increasing: up to 1e-1, where a fit stays near its
start (a 100-unit move of one weight costs about as much as the whole error)."""


FeatureMatrix: TypeAlias = Any
"""(n, p) feature rows: a scipy.sparse CSR matrix or a dense array (scipy is optional and has no
stubs, so its matrices are Any to mypy)."""


def require_scipy():
    """scipy (sparse matrices, L-BFGS-B), or one clear error line when it is not installed."""
    try:
        import scipy.optimize
        import scipy.sparse
    except ImportError:
        raise ConfigError("evotune texel needs scipy; install it with 'pip install "
                          "evotune[texel]' (or 'pip install scipy')") from None
    return scipy


def sigmoid(s: np.ndarray) -> np.ndarray:
    """1 / (1 + 10**(-s)), computed stably."""
    return 0.5 * (1.0 + np.tanh(0.5 * LN10 * s))


@dataclass
class Problem:
    """A Texel problem: the feature matrix, the results, which weights are free and their bounds."""

    X: FeatureMatrix
    """(n, p) feature rows, White's view (scipy.sparse CSR or a dense array)."""
    y: np.ndarray
    """(n,) results, White's view: 1, 0.5 or 0."""
    free: np.ndarray
    """Indices of the free weights."""
    lower: np.ndarray
    """(p,) lower bounds."""
    upper: np.ndarray
    """(p,) upper bounds."""
    l2: float = 0.0
    """Ridge strength: the optimisers minimise error + l2 * sum over the free weights of
    ((w - center) / 100)^2 (a 100-unit move of one weight costs l2); 0 = plain Texel."""
    center: np.ndarray | None = None
    """(p,) weights the ridge pulls toward (the fit's initial weights); None = zeros."""

    def __post_init__(self) -> None:
        self.y = np.asarray(self.y, dtype=np.float64)
        if self.X.shape[0] != self.y.size:
            raise ConfigError(f"{self.X.shape[0]} feature rows but {self.y.size} results")

    @property
    def n(self) -> int:
        return int(self.y.size)

    def evals(self, w: np.ndarray) -> np.ndarray:
        """White-view evaluations x . w of every row."""
        return np.asarray(self.X @ w).ravel()

    def error(self, w: np.ndarray, K: float) -> float:
        """Mean squared error of the predictions (0 rows: 0)."""
        if self.n == 0:
            return 0.0
        d = self.y - sigmoid(K * self.evals(w) / 400.0)
        return float(d @ d / self.n)

    def squared_errors(self, w: np.ndarray, K: float) -> np.ndarray:
        """(n,) squared error of every row's prediction (their mean is :meth:`error`)."""
        d = self.y - sigmoid(K * self.evals(w) / 400.0)
        return d * d

    def error_and_gradient(self, w: np.ndarray, K: float) -> tuple[float, np.ndarray]:
        """The error and its gradient with respect to every weight (fixed ones included)."""
        p = sigmoid(K * self.evals(w) / 400.0)
        d = self.y - p
        # dE/dw = mean(-2 d p (1 - p) ln10 K / 400 x)
        g = -2.0 * d * p * (1.0 - p) * (LN10 * K / 400.0)
        return float(d @ d / self.n), np.asarray(self.X.T @ g).ravel() / self.n  # no copy

    def objective_and_gradient(self, w: np.ndarray, K: float) -> tuple[float, np.ndarray]:
        """What the optimisers minimise: the error plus the ridge penalty (when l2 > 0)."""
        e, g = self.error_and_gradient(w, K)
        if self.l2 > 0:
            d = np.zeros_like(w)
            center = self.center if self.center is not None else 0.0
            d[self.free] = ((w - center) / 100.0)[self.free]
            e += self.l2 * float(d @ d)
            g = g + (2.0 * self.l2 / 100.0) * d
        return e, g


def difference_se(diff: np.ndarray, groups: np.ndarray) -> float:
    """Standard error of ``diff.mean()`` where the rows of one group (one block of consecutive
    positions: a game's) are dependent and the groups independent: the spread of the groups'
    sums (0 with fewer than 2 groups)."""
    if diff.size == 0:
        return 0.0
    _, inv = np.unique(groups, return_inverse=True)
    sums = np.bincount(inv, weights=diff)
    if sums.size < 2:
        return 0.0
    return float(math.sqrt(sums.size * float(sums.var(ddof=1))) / diff.size)


def fit_k(problem: Problem, w: np.ndarray, *, bounds: tuple[float, float] = K_RANGE) -> float:
    """The K in ``bounds`` that minimises the error with weights ``w`` (bounded Brent search)."""
    require_scipy()
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(lambda k: problem.error(w, k), bounds=bounds, method="bounded",
                          options={"xatol": 1e-6})
    return float(res.x)


def lbfgs_epoch(problem: Problem, w: np.ndarray, K: float, *, iters: int) -> np.ndarray:
    """``iters`` L-BFGS-B iterations on the free weights from ``w`` (bounds respected)."""
    require_scipy()
    from scipy.optimize import minimize

    free = problem.free
    w = np.array(w, dtype=np.float64)

    def f(x):
        full = w.copy()
        full[free] = x
        e, g = problem.objective_and_gradient(full, K)
        return e, g[free]

    res = minimize(f, w[free], jac=True, method="L-BFGS-B",
                   bounds=list(zip(problem.lower[free], problem.upper[free])),
                   options={"maxiter": int(iters), "ftol": 1e-15, "gtol": 1e-12,
                            "maxcor": 20})
    out = w.copy()
    out[free] = np.clip(res.x, problem.lower[free], problem.upper[free])
    return out


@dataclass
class AdamState:
    """Adam's moments and step count (JSON-safe through :meth:`to_dict`)."""

    m: np.ndarray
    v: np.ndarray
    t: int = 0

    @classmethod
    def zeros(cls, p: int) -> AdamState:
        return cls(np.zeros(p), np.zeros(p), 0)

    def to_dict(self) -> dict:
        return {"m": self.m.tolist(), "v": self.v.tolist(), "t": self.t}

    @classmethod
    def from_dict(cls, d: dict) -> AdamState:
        return cls(np.asarray(d["m"], dtype=np.float64), np.asarray(d["v"], dtype=np.float64),
                   int(d["t"]))


def adam_epoch(problem: Problem, w: np.ndarray, K: float, state: AdamState, *, iters: int,
               lr: float, beta1: float = 0.9, beta2: float = 0.999,
               eps: float = 1e-12) -> np.ndarray:
    """``iters`` full-batch Adam steps of size ``lr`` (engine units), projected on the bounds."""
    free = problem.free
    w = np.array(w, dtype=np.float64)
    for _ in range(int(iters)):
        _, g = problem.objective_and_gradient(w, K)
        g = g[free]
        state.t += 1
        state.m[free] = beta1 * state.m[free] + (1 - beta1) * g
        state.v[free] = beta2 * state.v[free] + (1 - beta2) * g * g
        mhat = state.m[free] / (1 - beta1 ** state.t)
        vhat = state.v[free] / (1 - beta2 ** state.t)
        w[free] = np.clip(w[free] - lr * mhat / (np.sqrt(vhat) + eps), problem.lower[free],
                          problem.upper[free])
    return w


def epochs(problem: Problem, w: np.ndarray, K: float, *, optimizer: str, iters: int, lr: float,
           tol: float, adam: AdamState, start: int, stop: int, last: float | None):
    """The epochs after epoch ``start`` (weights ``w``, training error ``last``), up to epoch
    ``stop`` or convergence: yields (epoch, weights, training error, converged). Converged: the
    epoch changed the training error by less than ``tol``."""
    epoch = start
    while epoch < stop:
        if optimizer == "lbfgs":
            w = lbfgs_epoch(problem, w, K, iters=iters)
        else:
            w = adam_epoch(problem, w, K, adam, iters=iters, lr=lr)
        epoch += 1
        loss = problem.error(w, K)
        converged = last is not None and abs(last - loss) < tol
        yield epoch, w, loss, converged
        if converged:
            return
        last = loss


def rounded(w: np.ndarray, problem: Problem) -> np.ndarray:
    """Whole engine units inside the bounds (fixed weights keep their value)."""
    out = np.array(w, dtype=np.float64)
    free = problem.free
    out[free] = np.clip(np.rint(out[free]), np.ceil(problem.lower[free]),
                        np.floor(problem.upper[free]))
    return out
