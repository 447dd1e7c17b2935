"""DE/rand/1/bin (Storn & Price 1997) with selection by mini-match.

One generation: for every target i, draw r1, r2, r3 distinct and different from i, form the
mutant v = x_r1 + F (x_r2 - x_r3) from the frozen population, cross it binomially with the target
over the FREE weights (each with probability CR, plus one forced index j_rand), repair it into
the bounds and round it. The trial then meets the target and replaces it by the run's selection
rule (:mod:`evotune.strategies.selection`): the paper's decisive mini-match (strictly more
points; a tie keeps the target), a race (game pairs until a GSPRT says the trial is better;
an undecided race keeps the target) or the rating model over every game (the trial is rated
above the target by ``model_z`` standard errors).

Bound rule: 'reflect' by default (mirror at the violated bound): it needs no random draw and,
unlike 'clip', does not pile trials up on the bounds. Any of ``evotune.space.BOUND_RULES`` may be
chosen ('midpoint' uses the target as base, as in Price, Storn & Lampinen's bounce-back).

Ranking (for ``recommended('better-half')``): each individual keeps the points and games of the
selection matches it has played since it entered the population (as the winning trial or as a
defending target); the better half is the one with the highest Laplace-smoothed score
(points + 1) / (2 games + 2), ties by index. With ``selection = 'model'`` each individual also
keeps the model's rating as last told (``recommended('rated')`` takes the highest).
"""
from __future__ import annotations

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


def draw_donors(rng: np.random.Generator, size: int) -> np.ndarray:
    """(size, 3) indices r1, r2, r3: distinct in each row and different from the row index."""
    out = np.empty((size, 3), dtype=np.int64)
    for i in range(size):
        r = rng.choice(size - 1, size=3, replace=False)
        out[i] = r + (r >= i)
    return out


def rand1_mutants(pop: np.ndarray, donors: np.ndarray, F: np.ndarray) -> np.ndarray:
    """DE/rand/1 mutants: x_r1 + F_i (x_r2 - x_r3), one row per target."""
    r1, r2, r3 = donors[:, 0], donors[:, 1], donors[:, 2]
    return pop[r1] + F[:, None] * (pop[r2] - pop[r3])


def binomial_masks(rng: np.random.Generator, size: int, n_free: int, CR: np.ndarray
                   ) -> np.ndarray:
    """(size, n_free) crossover masks: True with probability CR_i, plus one forced j_rand per row."""
    u = rng.random((size, n_free))
    j_rand = rng.integers(n_free, size=size)
    mask = u < CR[:, None]
    mask[np.arange(size), j_rand] = True
    return mask


def binomial_crossover(targets: np.ndarray, mutants: np.ndarray, mask: np.ndarray,
                       free: np.ndarray) -> np.ndarray:
    """Trials: the target with the masked free weights taken from the mutant."""
    trials = targets.copy()
    sub = trials[:, free]
    sub[mask] = mutants[:, free][mask]
    trials[:, free] = sub
    return trials


class DE(Strategy):
    """DE/rand/1/bin; a trial replaces its target by the run's selection rule (paper or race)."""

    name = "de"
    TITLE = "DE"
    ABOUT = "differential evolution, DE/rand/1/bin"
    RANKED_BY = "the points of each individual's selection matches"
    PARAMS = {
        "np": Param(20, "int", low=4, doc="population size NP (DE/rand/1: three distinct "
                                            "partners besides the target)"),
        "F": Param(0.5, "float", low=0.0, high=2.0, low_open=True, doc="differential weight"),
        "CR": Param(0.9, "float", low=0.0, high=1.0, doc="crossover probability"),
        "games": Param(4, "int", low=2, even=True, doc="games per selection match (even)"),
        "bound_rule": Param("reflect", "choice", choices=BOUND_RULES,
                            doc="how out-of-bounds trials are repaired"),
        **POPULATION_INIT_PARAMS,
        **SELECTION_PARAMS,
    }

    def _initialize(self) -> None:
        size = self.params["np"]
        self.population = self._initial_population(size)
        self.record = np.zeros((size, 2), dtype=np.int64)  # points, games in the population
        self.rating = np.full(size, np.nan)  # the model's Elo as last told (selection=model)

    # hooks for jDE ------------------------------------------------------------------------------
    def _controls(self) -> tuple[np.ndarray, np.ndarray]:
        """F and CR used for each target this generation."""
        size = len(self.population)
        return np.full(size, self.params["F"]), np.full(size, self.params["CR"])

    def _on_replace(self, i: int, plan: dict) -> None:
        """Called when trial i replaced its target."""

    def _control_stats(self, plan: dict) -> dict:
        return {"F_mean": float(self.params["F"]), "CR_mean": float(self.params["CR"])}

    # ask / tell ---------------------------------------------------------------------------------
    def make_trials(self) -> dict:
        """Draw this generation's trials (donors, masks, repaired trials) from the frozen population."""
        pop = self.population
        size = len(pop)
        F, CR = self._controls()
        donors = draw_donors(self.rng, size)
        mutants = rand1_mutants(pop, donors, F)
        mask = binomial_masks(self.rng, size, self._free.size, CR)
        raw = binomial_crossover(pop, mutants, mask, self._free)
        trials = self._repair_rows(raw, rule=self.params["bound_rule"], base=pop)
        return {"F": F, "CR": CR, "donors": donors, "mask": mask, "trials": trials}

    def _plan(self) -> tuple[list[MatchRequest], dict]:
        plan = self.make_trials()
        requests = [comparison(as_tuple(t), as_tuple(x), self.params, tag=(i,))
                    for i, (t, x) in enumerate(zip(plan["trials"], self.population))]
        return requests, plan

    def _update(self, requests: list[MatchRequest], plan: dict,
                outcomes: list[MatchOutcome]) -> dict:
        replaced = 0
        for i, out in enumerate(outcomes):
            won = challenger_wins(out, self.params)
            if won:
                self.population[i] = plan["trials"][i]
                self.record[i] = (out.points_a, out.games)
                self._on_replace(i, plan)
                replaced += 1
            else:
                self.record[i] += (out.points_b, out.games)
            if out.rated is not None:
                self.rating[i] = out.rated[0] if won else out.rated[1]
        size = len(self.population)
        return {"replacements": replaced, "replacement_rate": replaced / size,
                **self._control_stats(plan), "diversity": self._diversity()}

    def ranking(self) -> np.ndarray:
        score = (self.record[:, 0] + 1.0) / (2.0 * self.record[:, 1] + 2.0)
        return np.lexsort((np.arange(len(score)), -score))

    def rated(self) -> np.ndarray | None:
        return self.rating.copy() if rates(self.params) else None

    def rating_model(self) -> ModelRequest | None:
        return selection_model(self.params, tuple(float(x) for x in self.space.reference))

    def _extra_state(self) -> dict:
        extra: dict = {"record": self.record.tolist()}
        if rates(self.params):  # only then: the states of other runs stay as they were
            extra["rating"] = [None if np.isnan(v) else float(v) for v in self.rating]
        return extra

    def _load_extra_state(self, state: dict) -> None:
        self.record = np.array(state["record"], dtype=np.int64).reshape(-1, 2)
        if len(self.record) != len(self.population):
            raise ConfigError(f"strategy '{self.name}': saved state has {len(self.record)} "
                              f"records for {len(self.population)} individuals")
        rating = state.get("rating", [None] * len(self.population))
        self.rating = np.array([np.nan if v is None else float(v) for v in rating])
        if len(self.rating) != len(self.population):
            raise ConfigError(f"strategy '{self.name}': saved state has {len(self.rating)} "
                              f"ratings for {len(self.population)} individuals")
