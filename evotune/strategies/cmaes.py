"""CMA-ES (Hansen) through pycma's ask/tell, with a scalar fitness from mini-matches.

Everything but the library calls is :class:`~evotune.strategies.replay.ReplayedStrategy`'s: the
free weights normalised to [0, 1] (pycma's ``BoundTransform`` keeps candidates inside), ``np``
candidates per generation (pycma's lambda), each scored by a mini-match against the current
distribution mean, and resume by replaying the told scores. ``sigma0`` is the initial step size
as a fraction of the bound width; with ``finetune`` (a run from earlier weights) each weight
starts with its own scale (:func:`~evotune.space.finetune_scale`) if smaller. pycma's own
stopping rules are ignored: the run's budget ends the run. Optional: ``pip install -e .[cma]``.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .base import Param
from .replay import COMMON_PARAMS, ReplayedStrategy, missing_library


class CMAES(ReplayedStrategy):
    """CMA-ES (pycma) on the normalised free weights; fitness = score against the mean."""

    name = "cmaes"
    TITLE = "CMA-ES"
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
    }

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
        return cma.CMAEvolutionStrategy(np.asarray(u0, dtype=np.float64), sigma0, opts)

    def _ask_batch(self, size: int):
        xs = self.opt.ask(size)
        return np.array(xs, dtype=np.float64), xs

    def _tell_batch(self, handles, losses: np.ndarray) -> None:
        self.opt.tell(handles, [float(v) for v in losses])

    def _mean(self) -> np.ndarray:
        return np.asarray(self.opt.boundary_handler.transform(self.opt.mean), dtype=np.float64)

    def _library_stats(self) -> dict:
        return {"sigma": float(self.opt.sigma)}
