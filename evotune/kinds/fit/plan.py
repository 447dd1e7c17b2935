"""A fit's frozen plan (:class:`FitPlan`): its config with everything resolved from it once,
before anything is written: the engine spec (read once), the feature set it fits, its weight
space and the start (the spec's reference values or the ``--init`` file's weights, clipped into
the bounds). The solver (:mod:`.solver`) and the data (:mod:`evotune.learn.fitdata`) take these
values and never read the spec again (``tests/test_fit_plan.py`` counts the parses)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...engine.evaluation import Evaluation
from ...errors import ConfigError
from ...fileio import check_input_file
from ...learn import texel as tx
from ...learn.fitdata import initial_weights
from ...learn.phirows import fit_evaluation
from ...space import WeightSpace
from ...spec.file import load_engine_spec
from ...spec.model import EngineSpec
from .config import TexelConfig


@dataclass(frozen=True)
class FitPlan:
    """A fit resolved once: what :func:`.solver.new_fit` and :func:`.solver.execute_fit` run."""

    config: TexelConfig
    """The fit's settings (stored as the run's config)."""
    spec: EngineSpec
    """Its engine spec, read once."""
    evaluation: Evaluation
    """The linear evaluation the spec evaluates with, resolved once (checked: a built-in spec
    without search weights)."""
    space: WeightSpace
    """The spec's weight space (every weight fitted but the fixed ones)."""
    start: tuple[float, ...]
    """The initial weights: the reference values or ``--init``'s, clipped into the bounds."""

    @property
    def w0(self) -> np.ndarray:
        """The start as a fresh float64 array."""
        return np.array(self.start, dtype=np.float64)


def check_fit_inputs(cfg: TexelConfig) -> None:
    """ConfigError (one line) for a data file that cannot be read or an ``--init`` that is
    neither 'reference' nor a file; before the plan reads them."""
    for p in cfg.data:
        check_input_file(p, "data file")
    if cfg.init != "reference" and not Path(cfg.init).is_file():
        raise ConfigError(f"--init {cfg.init}: give 'reference' or a weights JSON file")


def plan_fit(cfg: TexelConfig) -> FitPlan:
    """The plan of ``cfg``: its spec read once, its feature set and free weights checked, its
    start read (ConfigError, one line, for any of them); writes nothing."""
    check_fit_inputs(cfg)
    tx.require_scipy()
    spec = load_engine_spec(cfg.engine)
    evaluation = fit_evaluation(spec)
    space = spec.space()
    space.require_free("texel")
    w0 = initial_weights(spec, cfg.init)
    return FitPlan(config=cfg, spec=spec, evaluation=evaluation, space=space,
                   start=tuple(float(v) for v in w0))
