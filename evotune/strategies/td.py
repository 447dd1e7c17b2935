"""TDLeaf(lambda) by self-play, as in KnightCap (Baxter, Tridgell & Weaver) and Giraffe (Lai).

``np`` learners (default 1), each a float weight vector w. Initial vectors: ``init='sample'``
draws them like DE (``space.sample``: uniform in the initial range), ``init='reference'`` starts
every learner at the space's reference values. Each generation each learner plays ``games``
self-play games, ``MatchRequest(a=w, b=w, games, record_leaves=True, tag=(k,))``.

For each game and each side, over that side's own moves t = 0..N-1 (phi_t = the PV-leaf features
of the search at that move, from the mover's = the side's view):

    J_t = tanh(beta * w . phi_t)          (a mate score at the root gives J_t = +-1, gradient 0)
    J_N = the game's result from the side's view: +1 win, 0 draw, -1 loss
    d_t = J_{t+1} - J_t
    grad J_t = beta * (1 - J_t^2) * phi_t
    dw = sum_t grad J_t * sum_{j >= t} lambda^(j - t) d_j

KnightCap's rule: a positive d_t is used only when the opponent's reply to move t was the one
the PV predicted (``GameLeaves.predicted``); otherwise d_t = 0. When move t ended the game there
is no reply to mispredict and d_t is kept. The per-side, per-game updates of a generation are
summed (all games of a generation were played with the same w) and applied once:
w += alpha_g * dw on the free weights only, with alpha_g = alpha / (1 + g / decay) (g = the
generation number, from 0). w is then projected onto the bounds (clipped).

beta is per engine unit: the default 1/200 makes a one-pawn (100 unit) advantage worth
tanh(0.5) = 0.46. The engine plays integral weights, so the float vector w is kept in the state
and the rounded vectors are given in ``population`` and in the requests; small updates
accumulate instead of vanishing.

Ranking (``recommended('better-half')``): self-play gives no comparison between learners, so the
better half is the learners with the smallest mean squared temporal difference in the last
generation (the best-calibrated evaluations); ties and not-yet-played learners by index.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..rules import MATE_BOUND
from .base import GameLeaves, MatchOutcome, MatchRequest, Param, Strategy, as_tuple


def tdleaf_gradient(w: np.ndarray, game: GameLeaves, *, beta: float, lam: float
                    ) -> tuple[np.ndarray, list[float]]:
    """TDLeaf(lambda) direction for one game, both sides summed; returns (dw, the d_t used)."""
    w = np.asarray(w, dtype=np.float64)
    movers = np.asarray(game.movers, dtype=np.int64)
    plies = len(movers)
    if not (len(game.scores) == len(game.leaf_phi) == len(game.predicted) == plies):
        raise ValueError("GameLeaves: movers, scores, leaf_phi and predicted must have one entry "
                         "per ply")
    leaf_phi = np.asarray(game.leaf_phi, dtype=np.int64).reshape(plies, -1)
    dw = np.zeros_like(w)
    diffs: list[float] = []
    for side in (1, 0):
        own = np.flatnonzero(movers == side)
        if own.size == 0:
            continue
        phi = leaf_phi[own] / game.denominator
        scores = np.array([game.scores[t] for t in own], dtype=np.float64)
        J = np.tanh(beta * (phi @ w))
        grad = beta * (1.0 - J * J)[:, None] * phi
        mate = np.abs(scores) > MATE_BOUND
        J[mate] = np.sign(scores[mate])
        grad[mate] = 0.0
        result = game.result if side == 1 else 1.0 - game.result
        d = np.diff(np.append(J, 2.0 * result - 1.0))
        for k, t in enumerate(own):
            if d[k] > 0 and t + 1 < plies and not game.predicted[t]:
                d[k] = 0.0
        e = np.empty_like(d)
        acc = 0.0
        for k in range(d.size - 1, -1, -1):
            acc = d[k] + lam * acc
            e[k] = acc
        dw += (grad * e[:, None]).sum(axis=0)
        diffs.extend(float(x) for x in d)
    return dw, diffs


class TD(Strategy):
    """TDLeaf(lambda) self-play learners (a gradient baseline for the evolutionary strategies)."""

    name = "td"
    TITLE = "TD"
    ABOUT = "TDLeaf(lambda) self-play from the evaluation's features"
    RANKED_BY = "the TD error of each learner"
    NEEDS_FEATURES = True
    PARAMS = {
        "np": Param(1, "int", low=1, doc="number of independent learners"),
        "games": Param(4, "int", low=2, even=True, doc="self-play games per learner per generation"),
        "alpha": Param(500.0, "float", low=0.0, low_open=True,
                       doc="initial learning rate (engine units per unit of TD gradient)"),
        "decay": Param(200.0, "float", low=0.0, low_open=True,
                       doc="alpha_g = alpha / (1 + g / decay)"),
        "beta": Param(0.005, "float", low=0.0, low_open=True,
                      doc="J = tanh(beta * eval), per engine unit"),
        "lambda": Param(0.7, "float", low=0.0, high=1.0, doc="TD(lambda) trace decay"),
        "init": Param("sample", "choice", choices=("sample", "reference"),
                      doc="initial learners: uniform sample like DE, or the reference values"),
    }

    def _initialize(self) -> None:
        k = self.params["np"]
        if self.params["init"] == "sample":
            theta = self.space.sample(self.rng, k)
        else:
            theta = np.tile(self.space.reference_array, (k, 1))
        self.theta = self._project(theta)
        self.population = self._rounded()
        self.td_error = np.full(k, np.nan)

    def _project(self, theta: np.ndarray) -> np.ndarray:
        theta = np.clip(np.asarray(theta, dtype=np.float64), self.space.lower_array,
                        self.space.upper_array)
        fixed = np.array(self.space.fixed, dtype=bool)
        theta[:, fixed] = self.space.reference_array[fixed]
        return theta

    def _rounded(self) -> np.ndarray:
        return self._repair_rows(self.theta, rule="clip")

    def learning_rate(self, generation: int | None = None) -> float:
        """alpha_g for generation g (default: the next one)."""
        g = self.generation if generation is None else generation
        return self.params["alpha"] / (1.0 + g / self.params["decay"])

    def _plan(self) -> tuple[list[MatchRequest], None]:
        games = self.params["games"]
        return [MatchRequest(a=as_tuple(w), b=as_tuple(w), games=games, record_leaves=True,
                             tag=(k,)) for k, w in enumerate(self.population)], None

    def _update(self, requests: list[MatchRequest], plan: None,
                outcomes: list[MatchOutcome]) -> dict:
        p = self.params
        rate = self.learning_rate()
        free_mask = np.zeros(self.space.size, dtype=bool)
        free_mask[self._free] = True
        step = np.zeros_like(self.theta)
        all_d: list[float] = []
        games = 0
        for req, out in zip(requests, outcomes):
            (k,) = req.tag
            if out.games and not out.leaves:
                raise ValueError("strategy 'td': outcomes need the per-game leaves "
                                 "(MatchRequest.record_leaves)")
            ds: list[float] = []
            for game in out.leaves:
                dw, d = tdleaf_gradient(self.theta[k], game, beta=p["beta"], lam=p["lambda"])
                step[k] += dw
                ds.extend(d)
                games += 1
            self.td_error[k] = float(np.mean(np.square(ds))) if ds else np.nan
            all_d.extend(ds)
        step[:, ~free_mask] = 0.0
        self.theta = self._project(self.theta + rate * step)
        self.population = self._rounded()
        return {
            "learning_rate": rate,
            "td_abs_mean": float(np.mean(np.abs(all_d))) if all_d else 0.0,
            "update_norm": float(np.linalg.norm(rate * step)),
            "games_learned": games,
            "diversity": self._diversity(),
        }

    def _vectors(self) -> np.ndarray:
        return self.theta

    def ranking(self) -> np.ndarray:
        err = np.where(np.isnan(self.td_error), np.inf, self.td_error)
        return np.lexsort((np.arange(len(err)), err))

    def _extra_state(self) -> dict:
        return {"theta": self.theta.tolist(),
                "td_error": [None if np.isnan(x) else float(x) for x in self.td_error]}

    def _load_extra_state(self, state: dict) -> None:
        self.theta = np.array(state["theta"], dtype=np.float64)
        self.td_error = np.array([np.nan if x is None else x for x in state["td_error"]],
                                 dtype=np.float64)
        if self.theta.shape != self.population.shape or len(self.td_error) != len(self.theta):
            raise ConfigError(f"strategy '{self.name}': saved theta does not match the "
                              "population")
