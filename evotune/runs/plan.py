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

from ..enginespec import EngineSpec, load_engine_spec
from ..errors import ConfigError
from ..limits import Limits
from ..paths import resolve_openings_path
from ..space import WeightSpace
from .config import RunConfig
from .identity import run_identity


@dataclass(frozen=True)
class RunPlan:
    """A run's configuration with everything it names resolved."""

    config: RunConfig
    """The run's configuration (as stored in its manifest)."""
    spec: EngineSpec
    """The engine spec the configuration names, read once."""
    space: WeightSpace
    """The spec's weight space with the configuration's initial range."""
    limits: Limits
    """Depth, nodes, time and ply limits and adjudication of the run's games."""
    openings: Path | None
    """The openings file (None: every game from the start position)."""
    identity: dict
    """Hashes of the result-relevant configuration, the engine spec and the openings."""


def plan_run(cfg: RunConfig, *, spec: EngineSpec | None = None) -> RunPlan:
    """Resolve ``cfg``: read its engine spec (unless given), its openings and its identity."""
    spec = load_engine_spec(cfg.engine) if spec is None else spec
    openings = resolve_openings_path(cfg.openings)
    return RunPlan(config=cfg, spec=spec,
                   space=spec.space(init_low=cfg.init_low, init_high=cfg.init_high),
                   limits=cfg.limits, openings=openings,
                   identity=run_identity(cfg, spec, openings))


RESUME_OVERRIDES = ("workers", "backend", "scheduler", "generations", "max_games", "max_seconds")
"""Settings a resumed run may change: where and how long it runs, never what it computes."""


def with_overrides(plan: RunPlan, **changes) -> RunPlan:
    """``plan`` with some of :data:`RESUME_OVERRIDES` changed (the identity stays the same)."""
    bad = sorted(set(changes) - set(RESUME_OVERRIDES))
    if bad:
        raise ConfigError(f"{', '.join(bad)} cannot change when a run continues (it would change "
                          f"its results); only {', '.join(RESUME_OVERRIDES)} can")
    return dataclasses.replace(plan, config=dataclasses.replace(plan.config, **changes))
