"""Any nevergrad optimiser by name (``ng:NGOpt``, ``ng:TBPSA``, ``ng:OnePlusOne``, ...).

The optimiser works on the free weights normalised to [0, 1] (an ``ng.p.Array`` with those
bounds, its random state seeded from the run's seed), with ``budget`` = the planned games /
``games`` evaluations and ``num_workers`` = ``np``: a generation asks ``np`` candidates, each
plays a mini-match against the optimiser's current recommendation (its estimate of the best
point, the "mean" of its search), and the scores are told back in ask order. Resume replays the
told scores (:class:`~evotune.strategies.replay.ReplayedStrategy`). Optional:
``pip install -e .[nevergrad]``.

The optimiser's step is nevergrad's default for a bounded array, a sixth of each weight's width
(333 units of a material weight bounded by 2,000: TBPSA so moved material by +200 to +600 from a
good start, docs/results/finetune-study.md), unless ``finetune`` (set by a run from earlier
weights) starts each weight at its fine-tuning scale, as CMA-ES's and SPSA's fine-tuning do.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import ConfigError
from ..seeding import library_random_state
from .base import Param
from .replay import COMMON_PARAMS, ReplayedStrategy, missing_library

PREFIX = "ng:"


def import_nevergrad(strategy: str):
    try:
        import nevergrad
    except ImportError:
        raise missing_library(strategy, "nevergrad", "nevergrad") from None
    return nevergrad


class Nevergrad(ReplayedStrategy):
    """A nevergrad optimiser (``optimizer``) on the normalised free weights."""

    name = "ng"
    optimizer = ""
    PARAMS = {
        **COMMON_PARAMS,
        "finetune": Param(False, "bool",
                          doc="start each weight's step at its fine-tuning scale (|v| / 10, "
                              "at least 1/200 and at most 1/6 of its width) instead of nevergrad's "
                              "sixth of the width (set by a run from earlier weights)"),
    }

    def _make(self, u0: np.ndarray, seed: int):
        ng = import_nevergrad(self.name)
        param = ng.p.Array(init=np.asarray(u0, dtype=np.float64), lower=0.0, upper=1.0)
        if self.params["finetune"]:  # nevergrad's own step of a bounded array: 1/6 of it
            param.set_mutation(sigma=np.minimum(1 / 6, self._finetune_steps()))
        param.random_state = library_random_state(seed)
        np_ = self.params["np"]
        evals = max(np_, -(-(self.params["budget"] // self.params["games"]) // np_) * np_)
        return ng.optimizers.registry[self.optimizer](parametrization=param, budget=evals,
                                                      num_workers=np_)

    def _ask_batch(self, size: int):
        cands = [self.opt.ask() for _ in range(size)]
        return np.array([c.value for c in cands], dtype=np.float64), cands

    def _tell_batch(self, handles, losses: np.ndarray) -> None:
        for cand, loss in zip(handles, losses):
            self.opt.tell(cand, float(loss))

    def _mean(self) -> np.ndarray:
        return np.asarray(self.opt.provide_recommendation().value, dtype=np.float64)


def nevergrad_class(name: str) -> type[Nevergrad]:
    """The strategy class for ``ng:OPTIMIZER`` (ConfigError for an unknown optimiser)."""
    return optimizer_class(name[len(PREFIX):] if name.startswith(PREFIX) else name)


@functools.cache
def optimizer_class(opt: str) -> type[Nevergrad]:
    """The class of nevergrad optimiser ``opt``, made once (``optimizer_class.cache_clear()``
    forgets them, e.g. after nevergrad was installed)."""
    ng = import_nevergrad(f"{PREFIX}{opt}")
    if opt not in ng.optimizers.registry:
        close = sorted(k for k in ng.optimizers.registry if k.lower() == opt.lower())
        hint = f"did you mean {PREFIX}{close[0]}? " if close else ""
        raise ConfigError(f"unknown nevergrad optimiser '{opt}'; {hint}use one of "
                          f"{PREFIX}NGOpt, {PREFIX}TBPSA, {PREFIX}OnePlusOne, {PREFIX}CMA, ... "
                          "(nevergrad.optimizers.registry)")
    return type(f"Nevergrad_{opt}", (Nevergrad,), {"name": f"{PREFIX}{opt}", "optimizer": opt,
                                                   "__doc__": f"nevergrad's {opt} (see Nevergrad)."})

