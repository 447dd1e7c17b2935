"""A run's plan: everything a command needs about a run, resolved once at the edge.

:func:`plan_run` reads the engine spec (the only TOML parse of the spec in a command), builds the
weight space and the limits, resolves the openings file and hashes the run's identity. The plan is
frozen and passed inward: the loop, verify, compare and experiments take it, and nothing below
re-reads a file or re-validates what the plan holds.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ...engine.evaluation import Evaluation, spec_evaluation
from ...errors import ConfigError
from ...limits import Limits
from ...paths import held_out_openings, resolve_openings_path
from ...runs.runspec import load_run_engine
from ...space import WeightSpace
from ...spec.model import EngineSpec
from .config import FINAL_CHECK_HELD_OUT, FINAL_CHECK_OWN_OPENINGS, RunConfig
from .identity import run_identity
from .settings import SETTINGS


@dataclass(frozen=True)
class RunPlan:
    """A run's configuration with everything it names resolved."""

    config: RunConfig
    """The run's configuration (as stored in its manifest)."""
    spec: EngineSpec
    """The engine spec the configuration names, read once."""
    space: WeightSpace
    """The spec's weight space with the configuration's initial range."""
    evaluation: Evaluation | None
    """The spec's evaluation, resolved once (None: an external engine evaluates its own way)."""
    limits: Limits
    """Depth, nodes, time and ply limits and adjudication of the run's games."""
    openings: Path | None
    """The openings file (None: every game from the start position)."""
    identity: dict
    """Hashes of the result-relevant configuration, the engine spec and the openings."""
    final_check_openings: Path | None
    """The openings of the final check (:func:`final_check_openings_path`)."""


def plan_run(cfg: RunConfig, *, spec: EngineSpec | None = None) -> RunPlan:
    """Resolve ``cfg``: read its engine spec (unless given), its openings and its identity."""
    spec = load_run_engine(cfg.engine) if spec is None else spec
    openings = resolve_openings_path(cfg.play.openings)
    return RunPlan(config=cfg, spec=spec,
                   space=spec.space(init_low=cfg.start.low, init_high=cfg.start.high),
                   evaluation=spec_evaluation(spec), limits=cfg.play.limits, openings=openings,
                   identity=run_identity(cfg, spec, openings),
                   final_check_openings=final_check_openings_path(cfg))


def final_check_openings_path(cfg: RunConfig) -> Path | None:
    """The final check's openings file (None: the start position): ``held-out``, openings the
    run does not tune on (:func:`~evotune.paths.held_out_openings`); ``run``, the run's own;
    else the openings named, as ``--openings`` reads them."""
    if cfg.final_check.openings == FINAL_CHECK_HELD_OUT:
        return held_out_openings(cfg.play.openings)[0]
    if cfg.final_check.openings == FINAL_CHECK_OWN_OPENINGS:
        return resolve_openings_path(cfg.play.openings)
    try:
        return resolve_openings_path(cfg.final_check.openings)
    except ConfigError as exc:
        raise ConfigError(f"--final-check-openings: {exc} (or '{FINAL_CHECK_HELD_OUT}', "
                          f"'{FINAL_CHECK_OWN_OPENINGS}')") from None


RESUME_OVERRIDES = ("workers", "backend", "scheduler", "generations", "max_games", "max_seconds")
"""Settings a resumed run may change: where and how long it runs, never what it computes (flat
names, as the resume flags give them: the config's cluster and budget records' fields)."""


def with_overrides(plan: RunPlan, **changes) -> RunPlan:
    """``plan`` with some of :data:`RESUME_OVERRIDES` changed (the identity stays the same):
    the flat names (the resume flags') put in the config's cluster and budget records."""
    bad = sorted(set(changes) - set(RESUME_OVERRIDES))
    if bad:
        raise ConfigError(f"{', '.join(bad)} cannot change when a run continues (it would change "
                          f"its results); only {', '.join(RESUME_OVERRIDES)} can")
    cluster = {SETTINGS[k][1]: v for k, v in changes.items() if SETTINGS[k][0] == "cluster"}
    budget = {SETTINGS[k][1]: v for k, v in changes.items() if SETTINGS[k][0] == "budget"}
    cfg = plan.config.with_cluster(**cluster).with_budget(**budget)
    return dataclasses.replace(plan, config=cfg)
