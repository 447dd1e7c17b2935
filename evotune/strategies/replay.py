"""Optimisers from libraries (pycma, nevergrad) behind ask/tell, restored by replaying their tells.

These libraries keep their state in objects that only pickle, and a run folder must never hold a
pickle (resume may read folders from elsewhere). So the state is the start point ``x0`` and every
told fitness, per generation; :meth:`Strategy.from_state` rebuilds the optimiser from the seed
and replays ask/tell generation by generation, which gives exactly the object an uninterrupted
run has. Every library call runs with numpy's global generator set to this strategy's own state
(derived from the seed) and restored afterwards, so the libraries' draws never depend on, or
disturb, anything else in the process.

Search space: the free weights, normalised to [0, 1] between their bounds (the libraries get the
bounds [0, 1]). A generation asks ``np`` candidates; each plays a colour-balanced mini-match of
``games`` games against the current mean of the search distribution (self-relative, like SPSA's
pairs); its fitness is its score, points / (2 games), and the library minimises 1 - score. When
the run has a gauntlet (``--opponents``) the run loop plays every candidate against it instead and
the fitness is the candidate's score against the gauntlet (``MatchOutcome.fitness``).
``population`` holds the candidates about to play (rounded, inside the bounds);
:meth:`recommended` is the distribution's mean (the library's recommendation).
"""
from __future__ import annotations

import abc
import contextlib
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..seeding import STREAM_STRATEGY, library_random_state, library_seed
from ..space import finetune_scale
from .base import MatchOutcome, MatchRequest, Param, Strategy, as_tuple

COMMON_PARAMS = {
    "np": Param(8, "int", low=2, doc="candidates per generation (the library's population)"),
    "games": Param(4, "int", low=2, even=True,
                   doc="games per candidate against the distribution mean (even)"),
    "budget": Param(3000, "int", low=2, doc="planned games (set from --max-games)"),
    "init": Param("sample", "choice", choices=("sample", "reference"),
                  doc="start point: a uniform draw like DE's, or the reference"),
}


def missing_library(strategy: str, module: str, extra: str) -> ConfigError:
    """The one-line error for an optional library that is not installed."""
    return ConfigError(f"strategy '{strategy}' needs the '{module}' package, which is not "
                       f"installed; install it with: pip install -e .[{extra}]")


class ReplayedStrategy(Strategy):
    """Base of library-backed strategies: scalar fitness, state = x0 + told scores, replay."""

    PARAMS = COMMON_PARAMS
    RECOMMENDS = "the search distribution's mean (the optimiser's recommendation)"
    _np_state: dict[str, Any] | tuple[str, np.ndarray, int, int, float]
    """numpy's global generator state of this strategy's library calls."""

    # -- what a library adapter provides ---------------------------------------------------------
    @abc.abstractmethod
    def _make(self, u0: np.ndarray, seed: int) -> Any:
        """A new optimiser starting at ``u0`` (normalised free weights)."""

    @abc.abstractmethod
    def _ask_batch(self, size: int) -> tuple[np.ndarray, Any]:
        """(size, m) normalised candidates and the library's handles for telling them."""

    @abc.abstractmethod
    def _tell_batch(self, handles: Any, losses: np.ndarray) -> None:
        """Tell the losses (1 - score) of the asked candidates, in ask order."""

    @abc.abstractmethod
    def _mean(self) -> np.ndarray:
        """The distribution's mean / the library's recommendation, normalised."""

    def _library_stats(self) -> dict:
        return {}

    def _tell_generation(self, g: int, scores: list[float]) -> None:
        """Tell generation ``g``'s scores to the library (inside its generator; a run and its
        replay both call this, so whatever it adapts is restored by replay)."""
        self._tell_batch(self._next[1], 1.0 - np.asarray(scores, dtype=np.float64))

    # -- construction and replay -----------------------------------------------------------------
    def _initialize(self) -> None:
        if self.params["init"] == "sample":
            self.x0 = self.space.sample(self.rng, 1)[0]
        else:
            self.x0 = self.space.reference_array.copy()
        self.told: list[list[float]] = []
        self._rebuild()

    @property
    def _width(self) -> np.ndarray:
        f = self._free
        return np.maximum(self.space.upper_array[f] - self.space.lower_array[f], 1e-12)

    def _finetune_steps(self) -> np.ndarray:
        """Each free weight's fine-tuning scale (:func:`~evotune.space.finetune_scale`) as a
        share of its bound width: the step a run from earlier weights starts with."""
        f = self._free
        space = self.space
        return finetune_scale(space.reference_array[f], space.lower_array[f],
                              space.upper_array[f]) / self._width

    def _to_unit(self, w: np.ndarray) -> np.ndarray:
        f = self._free
        return np.clip((np.asarray(w, dtype=np.float64)[f] - self.space.lower_array[f])
                       / self._width, 0.0, 1.0)

    def _to_weights(self, u: np.ndarray) -> np.ndarray:
        """Full weight vectors (rows) from normalised free weights: clipped and rounded."""
        u = np.atleast_2d(np.clip(np.asarray(u, dtype=np.float64), 0.0, 1.0))
        x = np.tile(self.space.reference_array, (len(u), 1))
        x[:, self._free] = self.space.lower_array[self._free] + u * self._width
        return self.space.round(np.clip(x, self.space.lower_array, self.space.upper_array))

    @contextlib.contextmanager
    def _library_random(self):
        """numpy's global generator set to this strategy's own state during a library call."""
        saved = np.random.get_state()
        np.random.set_state(self._np_state)
        try:
            yield
        finally:
            self._np_state = np.random.get_state()
            np.random.set_state(saved)

    def _rebuild(self) -> None:
        """Build the optimiser from the seed and replay every told generation."""
        seed = library_seed(self.seed, STREAM_STRATEGY, 1)
        self._np_state = library_random_state(seed).get_state()
        with self._library_random():
            self.opt = self._make(self._to_unit(self.x0), seed)
            self._next = self._ask_batch(self.params["np"])
            for g, scores in enumerate(self.told):
                if len(scores) != self.params["np"]:
                    raise ConfigError(f"strategy '{self.name}': saved generation has "
                                      f"{len(scores)} results for np = {self.params['np']}")
                self._tell_generation(g, scores)
                self._next = self._ask_batch(self.params["np"])
            self._mean_u = np.asarray(self._mean(), dtype=np.float64)
        self.population = self._to_weights(self._next[0])

    # -- ask / tell ------------------------------------------------------------------------------
    def recommended(self, rule: str = "mean") -> np.ndarray:
        """The distribution's mean (the library's recommendation), rounded; for both rules."""
        super().recommended(rule)  # checks the rule
        return self._to_weights(self._mean_u)[0]

    def _plan(self) -> tuple[list[MatchRequest], None]:
        games = self.params["games"]
        if self._mirrored():  # each candidate meets its mirror image
            pop = self.population
            return [MatchRequest(a=as_tuple(pop[j]), b=as_tuple(pop[j + 1]), games=games,
                                 tag=(j, j + 1)) for j in range(0, len(pop), 2)], None
        mean = as_tuple(self.recommended())
        return [MatchRequest(a=as_tuple(w), b=mean, games=games, tag=(j,))
                for j, w in enumerate(self.population)], None

    def _mirrored(self) -> bool:
        """True when candidates come in mirrored pairs (2k, 2k + 1) that play each other."""
        return False

    def _scores(self, outcomes: list[MatchOutcome]) -> list[float]:
        """Each candidate's score (0..1) from its request's outcome: against the mean, against
        its mirror (both sides of the request), or against the gauntlet."""
        if self._mirrored() and all(o.fitness is None for o in outcomes):
            out: list[float] = []
            for o in outcomes:
                a = o.points_a / (2.0 * o.games) if o.games else 0.5
                out.extend((a, 1.0 - a))
            return out
        return [o.fitness if o.fitness is not None
                else o.points_a / (2.0 * o.games) if o.games else 0.5 for o in outcomes]

    def _update(self, requests: list[MatchRequest], plan: None,
                outcomes: list[MatchOutcome]) -> dict:
        scores = self._scores(outcomes)
        self.told.append(scores)
        before = self.recommended()
        with self._library_random():
            self._tell_generation(len(self.told) - 1, scores)
            self._next = self._ask_batch(self.params["np"])
            self._mean_u = np.asarray(self._mean(), dtype=np.float64)
        self.population = self._to_weights(self._next[0])
        return {"score_mean": float(np.mean(scores)), "score_best": float(np.max(scores)),
                "mean_step": float(np.linalg.norm(self.recommended() - before)),
                "diversity": self._diversity(), **self._library_stats()}

    # -- state -----------------------------------------------------------------------------------
    def _extra_state(self) -> dict:
        return {"x0": self.x0.tolist(), "told": [list(map(float, s)) for s in self.told]}

    def _load_extra_state(self, state: dict) -> None:
        self.x0 = np.array(state["x0"], dtype=np.float64)
        if self.x0.shape != (self.space.size,):
            raise ConfigError(f"strategy '{self.name}': saved x0 does not match the weight space")
        self.told = [list(map(float, s)) for s in state["told"]]
        if len(self.told) != self.generation:
            raise ConfigError(f"strategy '{self.name}': saved state has {len(self.told)} told "
                              f"generations for generation {self.generation}")
        stored = np.array(self.population, dtype=np.float64)
        self._rebuild()
        if not np.array_equal(stored, self.population):
            raise ConfigError(f"strategy '{self.name}': replaying the told results does not give "
                              "the stored candidates (another version of the library?); resume "
                              "with the library version the run was started with")
