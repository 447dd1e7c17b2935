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
from .selection import (
    SELECTION_PARAMS,
    challenger_wins,
    check_selection_params,
    comparison,
    rates,
    selection_model,
)

MUTATIONS = ("rand1", "peak")
"""``mutation``: how DE forms its mutants."""


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


def peak_mutants(pop: np.ndarray, donors: np.ndarray, F: np.ndarray, toward: np.ndarray
                 ) -> np.ndarray:
    """DE/current-to-best/1 mutants with the rating model's peak as the best:
    x_i + F_i (toward - x_i) + F_i (x_r1 - x_r2), one row per target (r1, r2: the first two
    donors)."""
    r1, r2 = donors[:, 0], donors[:, 1]
    return pop + F[:, None] * (toward[None, :] - pop) + F[:, None] * (pop[r1] - pop[r2])


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
    RANKED_BY = "the points of each individual's selection matches"
    PARAMS = {
        "np": Param(20, "int", low=4, doc="population size NP (DE/rand/1: three distinct "
                                            "partners besides the target)"),
        "F": Param(0.5, "float", low=0.0, high=2.0, low_open=True, doc="differential weight"),
        "CR": Param(0.9, "float", low=0.0, high=1.0, doc="crossover probability"),
        "games": Param(4, "int", low=2, even=True, doc="games per selection match (even)"),
        "bound_rule": Param("reflect", "choice", choices=BOUND_RULES,
                            doc="how out-of-bounds trials are repaired"),
        "mutation": Param("rand1", "choice", choices=MUTATIONS,
                          doc="'rand1' (x_r1 + F (x_r2 - x_r3), the paper's) or 'peak' "
                              "(x_i + F (p - x_i) + F (x_r1 - x_r2), p the rating model's "
                              "peak: DE/current-to-best/1 with the model's best estimate as "
                              "best; needs selection=model, model_form=quadratic)"),
        "screen": Param(1, "int", low=1, high=1000,
                        doc="selection=model, a linear or quadratic form: draw this many trials "
                            "per target and play the one the model rates highest (surrogate "
                            "pre-screening; 1: none)"),
        "peak_radius": Param(4.0, "float", low=0.0, high=1000.0, low_open=True,
                             doc="mutation=peak: how far p may lie from the start, in "
                                 "fine-tuning units (quad's 'radius')"),
        "peak_min_curvature": Param(0.1, "float", low=0.0, high=1000.0, low_open=True,
                                    doc="mutation=peak: the least curvature p is computed "
                                        "with (quad's 'min_curvature')"),
        **POPULATION_INIT_PARAMS,
        **SELECTION_PARAMS,
    }

    @classmethod
    def _check_params(cls, params: dict) -> None:
        check_selection_params(cls.name, params)
        if params["mutation"] == "peak" and (params["selection"] != "model"
                                             or params["model_form"] != "quadratic"):
            raise ConfigError(f"strategy '{cls.name}': mutation=peak moves towards the rating "
                              f"model's peak; it needs selection=model and "
                              f"model_form=quadratic")

    def _initialize(self) -> None:
        size = self.params["np"]
        self.population = self._initial_population(size)
        self.record = np.zeros((size, 2), dtype=np.int64)  # points, games in the population
        self.rating = np.full(size, np.nan)  # the model's Elo as last told (selection=model)
        # mutation=peak: the model's peak as last told (the start before any game)
        self.toward = self.space.reference_array.astype(np.float64)

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
        K = self.params["screen"] if self.model is not None else 1
        best = None
        for _ in range(K):
            donors = draw_donors(self.rng, size)
            if self.params["mutation"] == "peak":
                mutants = peak_mutants(pop, donors, F, self.toward)
            else:
                mutants = rand1_mutants(pop, donors, F)
            mask = binomial_masks(self.rng, size, self._free.size, CR)
            raw = binomial_crossover(pop, mutants, mask, self._free)
            trials = self._repair_rows(raw, rule=self.params["bound_rule"], base=pop)
            if K == 1:
                best = (donors, mask, trials)
                break
            m = self.model
            u = (trials - np.asarray(m.anchor)) / np.asarray(m.scale)
            score = u @ np.asarray(m.slope) - 0.5 * (u * u) @ np.asarray(m.curvature)
            if best is None:
                best = (donors, mask, trials, score)
            else:
                take = score > best[3]
                best = (np.where(take[:, None], donors, best[0]), np.where(take[:, None], mask, best[1]),
                        np.where(take[:, None], trials, best[2]), np.where(take, score, best[3]))
        donors, mask, trials = best[:3]
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
        if self.params["mutation"] == "peak" and self.model is not None:
            self._move_peak()
        return {"replacements": replaced, "replacement_rate": replaced / size,
                **self._control_stats(plan), "diversity": self._diversity()}

    def _move_peak(self) -> None:
        """The peak of the model just told, within the bounds (mutation=peak)."""
        model = self.model
        assert model is not None
        if len(model.slope) != self.space.size:
            raise ValueError(f"strategy '{self.name}': the model told is not of this run's "
                             f"weights")
        top = model.peak(radius=self.params["peak_radius"],
                         min_curvature=self.params["peak_min_curvature"])
        f = self._free
        self.toward = self.space.reference_array.astype(np.float64)
        self.toward[f] = np.clip(top[f], self.space.lower_array[f], self.space.upper_array[f])

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
        if self.params["mutation"] == "peak":
            extra["toward"] = self.toward.tolist()
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
        if self.params["mutation"] == "peak":
            toward = np.array(state.get("toward", ()), dtype=np.float64)
            if toward.shape != (self.space.size,):
                raise ConfigError(f"strategy '{self.name}': saved state has no model peak of "
                                  f"{self.space.size} weights (mutation=peak)")
            self.toward = toward
