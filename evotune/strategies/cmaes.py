"""CMA-ES (Hansen) through pycma's ask/tell, with a scalar fitness from mini-matches.

Everything but the library calls is :class:`~evotune.strategies.replay.ReplayedStrategy`'s: the
free weights normalised to [0, 1] (pycma's ``BoundTransform`` keeps candidates inside), ``np``
candidates per generation (pycma's lambda), each scored by a mini-match against the current
distribution mean, and resume by replaying the told scores. ``sigma0`` is the initial step size
as a fraction of the bound width; with ``finetune`` (a run from earlier weights) each weight
starts with its own scale (:func:`~evotune.space.finetune_scale`) if smaller. pycma's own
stopping rules are ignored: the run's budget ends the run. Optional: ``pip install -e .[cma]``.

``noise = true`` is UH-CMA-ES (Hansen, Niederberger, Guzzella & Koumoutsakos 2009, "A method
for handling uncertainty in evolutionary optimization"), measured by pycma's ``NoiseHandler``:
each generation the matches of its first candidates are played a second time (fresh games), the
rank changes between the two results measure the noise, and while it is high the games per
candidate are raised by ``alphaevals`` (up to ``max_evals`` times ``games``), falling back by
``alphaevals^-1/4`` when it is low. pycma also raises the step size by ``alphasigma`` on noise;
here that is ``noise_sigma = 1`` (the factor's exponent), off by default: a tune's differences of
a few Elo stay noisy at any step, so the step grew without end (-1,400 Elo in the simulator).
The second results are stored beside the first (state key ``retold``), so replay restores the
handler with the optimiser.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..errors import ConfigError
from .base import MatchOutcome, MatchRequest, Param
from .replay import COMMON_PARAMS, ReplayedStrategy, missing_library


class CMAES(ReplayedStrategy):
    """CMA-ES (pycma) on the normalised free weights; fitness = score against the mean."""

    name = "cmaes"
    TITLE = "CMA-ES"
    ABOUT = "pycma's CMA-ES"
    STEP = ("sigma",)
    PARAMS = {
        **COMMON_PARAMS,
        "sigma0": Param(0.2, "float", low=0.0, high=1.0, low_open=True,
                        doc="initial step size, as a fraction of each weight's bound width"),
        "finetune": Param(False, "bool",
                          doc="each weight's initial step its own scale, |v| / 10 within 1/200 "
                              "and sigma0 of its width, as SPSA's finetune perturbs (set by a "
                              "run from earlier weights)"),
        "cmean": Param(1.0, "float", low=0.0, high=1.0, low_open=True,
                       doc="learning rate of the mean (pycma's CMA_cmean)"),
        "rank_mu": Param(True, "bool", doc="covariance learning (False: pycma's CMA_on = 0)"),
        "mirrored": Param(False, "bool",
                          doc="candidates in mirrored pairs m + d, m - d that play each other "
                              "(pycma's CMA_mirrors, unconditional): the evaluation's curvature "
                              "cancels in each pair, as in SPSA's; np must be even"),
        "noise": Param(False, "bool",
                       doc="uncertainty handling (UH-CMA-ES, pycma's NoiseHandler): replay the "
                           "first candidates' matches each generation; on noise raise sigma "
                           "and the games per candidate"),
        "reevals": Param(0, "int", low=0,
                         doc="candidates replayed a generation with noise = true (0: pycma's "
                             "2 + np / 20; mirrored: their pairs)"),
        "noise_sigma": Param(0.0, "float", low=0.0,
                             doc="with noise = true, the exponent of the handler's step-size "
                                 "factor (pycma's noise_change_sigma_exponent, 1 there; 0: only "
                                 "the games per candidate adapt, as measured best here)"),
        "max_evals": Param(4, "int", low=1,
                           doc="with noise = true, the most games per candidate, as a multiple "
                               "of games"),
    }
    _noise: Any = None
    """pycma's NoiseHandler (noise = true), rebuilt with the optimiser and restored by replay."""

    @classmethod
    def _check_params(cls, params: dict) -> None:
        if params["mirrored"] and params["np"] % 2:
            raise ConfigError(f"strategy 'cmaes': mirrored = true (the default of a run from "
                              f"earlier weights) needs an even --np (pairs), got {params['np']}; "
                              "give an even --np or --param mirrored=false")

    def _mirrored(self) -> bool:
        return bool(self.params["mirrored"])

    def _make(self, u0: np.ndarray, seed: int):
        try:
            import cma
        except ImportError:
            raise missing_library(self.name, "cma", "cma") from None
        never = 10 ** 12
        opts = {"popsize": self.params["np"], "bounds": [0.0, 1.0], "seed": seed,
                "verbose": -9, "tolfun": 0, "tolfunhist": 0, "tolx": 0, "tolflatfitness": never,
                "tolstagnation": never, "maxiter": never, "maxfevals": never,
                "tolconditioncov": False}
        opts["CMA_cmean"] = self.params["cmean"]
        if self.params["mirrored"]:
            opts["CMA_mirrors"] = self.params["np"] // 2
            opts["CMA_mirrormethod"] = 0
        if not self.params["rank_mu"]:
            opts["CMA_on"] = 0
        sigma0 = self.params["sigma0"]
        if self.params["finetune"]:  # pycma's step of weight i is sigma0 x CMA_stds[i]
            opts["CMA_stds"] = np.minimum(1.0, self._finetune_steps() / sigma0).tolist()
        es = cma.CMAEvolutionStrategy(np.asarray(u0, dtype=np.float64), sigma0, opts)
        self._noise = (cma.NoiseHandler(es.N, maxevals=[1, 1, self.params["max_evals"]])
                       if self.params["noise"] else None)
        return es

    def _ask_batch(self, size: int):
        xs = self.opt.ask(size)
        return np.array(xs, dtype=np.float64), xs

    def _tell_batch(self, handles, losses: np.ndarray) -> None:
        self.opt.tell(handles, [float(v) for v in losses])

    def _mean(self) -> np.ndarray:
        return np.asarray(self.opt.boundary_handler.transform(self.opt.mean), dtype=np.float64)

    def _library_stats(self) -> dict:
        return {"sigma": float(self.opt.sigma)}

    # -- uncertainty handling (noise = true) -----------------------------------------------------
    def _initialize(self) -> None:
        self.retold: list[list[float]] = []
        super()._initialize()

    def _games_now(self) -> int:
        """Games per candidate this generation: ``games`` times the handler's evaluations,
        rounded up to an even number."""
        games = self.params["games"]
        if self._noise is None:
            return games
        return int(2 * math.ceil(games * float(self._noise.evaluations) / 2))

    def _replayed(self, requests: int) -> int:
        """How many of a generation's first requests are played again."""
        k = self.params["reevals"] or int(2 + self.params["np"] / 20)
        return min(requests, -(-k // 2) if self._mirrored() else k)

    def _plan(self) -> tuple[list[MatchRequest], int | None]:  # type: ignore[override]
        requests, _ = super()._plan()
        if self._noise is None:
            return requests, None
        games = self._games_now()
        requests = [dataclasses.replace(r, games=games) for r in requests]
        return requests + requests[:self._replayed(len(requests))], len(requests)

    def _update(self, requests: list[MatchRequest], plan: int | None,
                outcomes: list[MatchOutcome]) -> dict:
        if plan is None:
            return super()._update(requests, None, outcomes)
        self.retold.append(self._scores(outcomes[plan:]))
        stats = super()._update(requests[:plan], None, outcomes[:plan])
        nh = self._noise
        return {**stats, "noise": float(nh.noiseS),
                "evaluations": float(nh.evaluations)}

    def _tell_generation(self, g: int, scores: list[float]) -> None:
        super()._tell_generation(g, scores)
        nh = self._noise
        if nh is None:
            return
        # the replayed candidates are the first ones (a pair's two with mirrored sampling),
        # as in Hansen et al.; the handler's own measure and treatment of the rank changes
        fit = [1.0 - s for s in scores]
        again = list(fit)
        for i, s in enumerate(self.retold[g]):
            again[i] = 1.0 - s
        nh.fit, nh.fitre, nh.idx = fit, again, np.arange(len(self.retold[g]))
        nh.update_measure()
        self.opt.sigma *= nh.treat() ** self.params["noise_sigma"]

    def _extra_state(self) -> dict:
        state = super()._extra_state()
        if self.params["noise"]:
            state["retold"] = [list(map(float, s)) for s in self.retold]
        return state

    def _load_extra_state(self, state: dict) -> None:
        self.retold = [list(map(float, s)) for s in state.get("retold", [])]
        if self.params["noise"] and len(self.retold) != len(state["told"]):
            raise ConfigError(f"strategy '{self.name}': saved state has {len(self.retold)} "
                              f"replayed results for {len(state['told'])} generations")
        super()._load_extra_state(state)
