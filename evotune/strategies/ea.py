"""A classical (mu + mu) evolutionary programming scheme in the style of Fogel et al. (2004).

Every parent carries a per-weight step vector sigma (initially ``sigma_init`` times the width of
each free weight's bounds; never below ``sigma_floor`` engine units). Each parent makes one
offspring with the self-adaptive log-normal rule, drawn per component:

    sigma'_j = max(sigma_floor, sigma_j * exp(tau * N_j(0, 1))),  tau = 1 / sqrt(2 sqrt(n))
    x'_j     = x_j + sigma'_j * N'_j(0, 1)

(n = number of free weights; fixed weights never move), then the offspring is repaired into the
bounds (``bound_rule``, base = the parent) and rounded.

Tournament: each of the 2 mu individuals (parents 0..mu-1, offspring mu..2mu-1) meets
``games / 2`` opponents drawn uniformly from the other 2 mu - 1, two colour-swapped games each
(``MatchRequest(games=2, stop='none', tag=(k, j))``); every request's points are credited to both
sides. Because an individual also plays when it is drawn as an opponent, the number of games per
individual varies; the ranking is therefore by points per game played (the mean score), ties by
more games played, then by index (parents before offspring). The best mu survive, best first.

With ``selection = 'race'`` (:mod:`evotune.strategies.selection`; the default of a run from
earlier weights) there is no tournament: each offspring races its own parent and replaces it
(with its step vector) only when the sequential test says it is better, as a (1 + 1) selection
per parent; the population keeps its order. ``selection = 'model'`` pairs offspring and parents
the same way and replaces a parent when the rating model over every game of the run rates its
offspring higher by ``model_z`` standard errors; the ranking is then by the model's ratings.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from ..space import BOUND_RULES
from .base import (
    POPULATION_INIT_PARAMS,
    MatchOutcome,
    MatchRequest,
    Param,
    Strategy,
    as_tuple,
)
from .ratingrequest import ModelRequest
from .selection import SELECTION_PARAMS, challenger_wins, comparison, rates, selection_model


def rank_by_score(points: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Indices best first: by points per game, then by more games, then by lower index."""
    rate = points / np.maximum(2 * played, 1)
    return np.lexsort((np.arange(len(points)), -played, -rate))


class EA(Strategy):
    """(mu + mu) evolutionary programming with self-adaptive per-weight step sizes."""

    name = "ea"
    TITLE = "EA"
    ABOUT = "an evolutionary algorithm with self-adaptive steps"
    RANKED_BY = "the score in the last tournament"
    PARAMS = {
        "np": Param(20, "int", low=2, doc="number of parents mu (mu offspring per generation)"),
        "games": Param(4, "int", low=2, even=True,
                       doc="games each individual starts per generation (pairs vs random others)"),
        "sigma_init": Param(0.05, "float", low=0.0, high=1.0, low_open=True,
                            doc="initial step, as a fraction of each weight's bound width"),
        "sigma_floor": Param(1.0, "float", low=0.0,
                             doc="smallest step, engine units"),
        "bound_rule": Param("reflect", "choice", choices=BOUND_RULES,
                            doc="how out-of-bounds offspring are repaired"),
        **POPULATION_INIT_PARAMS,
        **SELECTION_PARAMS,
    }

    def _initialize(self) -> None:
        mu = self.params["np"]
        self.population = self._initial_population(mu)
        width = self.space.upper_array - self.space.lower_array
        sigma = np.zeros(self.space.size)
        sigma[self._free] = np.maximum(self.params["sigma_init"] * width[self._free],
                                       self.params["sigma_floor"])
        self.sigma = np.tile(sigma, (mu, 1))
        self.score = np.zeros(mu)  # points per game in the last tournament
        self.rating = np.full(mu, np.nan)  # the model's Elo as last told (selection=model)

    @property
    def tau(self) -> float:
        """Learning rate of the step sizes: 1 / sqrt(2 sqrt(n)), n = number of free weights."""
        return 1.0 / math.sqrt(2.0 * math.sqrt(self._free.size))

    def make_offspring(self) -> tuple[np.ndarray, np.ndarray]:
        """One offspring per parent: (offspring vectors, their sigmas)."""
        mu, free = len(self.population), self._free
        sigma = self.sigma.copy()
        n1 = self.rng.standard_normal((mu, free.size))
        sigma[:, free] = np.maximum(sigma[:, free] * np.exp(self.tau * n1),
                                    self.params["sigma_floor"])
        n2 = self.rng.standard_normal((mu, free.size))
        x = self.population.copy()
        x[:, free] += sigma[:, free] * n2
        x = self._repair_rows(x, rule=self.params["bound_rule"], base=self.population)
        return x, sigma

    def _plan(self) -> tuple[list[MatchRequest], dict]:
        offspring, osigma = self.make_offspring()
        pool = np.vstack([self.population, offspring])
        sigmas = np.vstack([self.sigma, osigma])
        size = len(pool)
        if self.params["selection"] in ("race", "model"):  # each offspring meets its parent
            mu = len(self.population)
            return ([comparison(as_tuple(offspring[k]), as_tuple(self.population[k]),
                                self.params, tag=(k,)) for k in range(mu)],
                    {"pool": pool, "sigmas": sigmas})
        requests = []
        for k in range(size):
            for _ in range(self.params["games"] // 2):
                j = int(self.rng.integers(size - 1))
                j += j >= k
                requests.append(MatchRequest(a=as_tuple(pool[k]), b=as_tuple(pool[j]), games=2,
                                             stop="none", tag=(k, j)))
        return requests, {"pool": pool, "sigmas": sigmas}

    def _update(self, requests: list[MatchRequest], plan: dict,
                outcomes: list[MatchOutcome]) -> dict:
        pool = plan["pool"]
        size, mu = len(pool), len(self.population)
        if self.params["selection"] in ("race", "model"):
            return self._race_update(plan, outcomes)
        points = np.zeros(size, dtype=np.int64)
        played = np.zeros(size, dtype=np.int64)
        for req, out in zip(requests, outcomes):
            k, j = req.tag
            points[k] += out.points_a
            points[j] += out.points_b
            played[k] += out.games
            played[j] += out.games
        order = rank_by_score(points, played)
        survivors = order[:mu]
        self.population = pool[survivors].copy()
        self.sigma = plan["sigmas"][survivors].copy()
        self.score = points[survivors] / np.maximum(2 * played[survivors], 1)
        return {
            "offspring_survived": int(np.sum(survivors >= mu)),
            "replacement_rate": float(np.sum(survivors >= mu)) / mu,
            "best_score": float(self.score[0]),
            "sigma_mean": [float(v) for v in self.sigma[:, self._free].mean(axis=0)],
            "diversity": self._diversity(),
        }

    def _race_update(self, plan: dict, outcomes: list[MatchOutcome]) -> dict:
        """selection = 'race' or 'model': offspring k replaces parent k when its race said H1
        (the model rates it higher)."""
        mu = len(self.population)
        won = [k for k, out in enumerate(outcomes) if challenger_wins(out, self.params)]
        for k in won:
            self.population[k] = plan["pool"][mu + k]
            self.sigma[k] = plan["sigmas"][mu + k]
        for k, out in enumerate(outcomes):
            if out.rated is not None:
                self.rating[k] = out.rated[0] if k in won else out.rated[1]
        self.score = np.array([out.points_a / max(2 * out.games, 1) if k in won
                               else out.points_b / max(2 * out.games, 1)
                               for k, out in enumerate(outcomes)], dtype=np.float64)
        return {
            "offspring_survived": len(won),
            "replacement_rate": len(won) / mu,
            "best_score": float(self.score.max()),
            "sigma_mean": [float(v) for v in self.sigma[:, self._free].mean(axis=0)],
            "diversity": self._diversity(),
        }

    def ranking(self) -> np.ndarray:
        n = len(self.population)
        if rates(self.params) and not np.all(np.isnan(self.rating)):  # by the model's ratings
            return np.lexsort((np.arange(n), -np.where(np.isnan(self.rating), -np.inf,
                                                       self.rating)))
        if self.params["selection"] in ("race", "model"):  # by the score of each one's last race
            return np.lexsort((np.arange(n), -self.score))
        # survivors are stored best first; before the first tournament, index order
        return np.arange(n)

    def rated(self) -> np.ndarray | None:
        return self.rating.copy() if rates(self.params) else None

    def rating_model(self) -> ModelRequest | None:
        return selection_model(self.params, tuple(float(x) for x in self.space.reference))

    def _extra_state(self) -> dict:
        extra: dict = {"sigma": self.sigma.tolist(), "score": self.score.tolist()}
        if rates(self.params):  # only then: the states of other runs stay as they were
            extra["rating"] = [None if np.isnan(v) else float(v) for v in self.rating]
        return extra

    def _load_extra_state(self, state: dict) -> None:
        self.sigma = np.array(state["sigma"], dtype=np.float64)
        self.score = np.array(state["score"], dtype=np.float64)
        rating = state.get("rating", [None] * len(self.population))
        self.rating = np.array([np.nan if v is None else float(v) for v in rating])
        if self.sigma.shape != self.population.shape or len(self.score) != len(self.population) \
                or len(self.rating) != len(self.population):
            raise ConfigError(f"strategy '{self.name}': saved sigma/score do not match the "
                              "population")
