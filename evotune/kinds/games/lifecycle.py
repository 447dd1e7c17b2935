"""A run's life: checked before anything is written (:func:`preflight`), created
(:func:`new_run`), reopened with its identity checked (:func:`open_run`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ...engine.evaluation import spec_evaluation
from ...errors import ConfigError, EvotuneError, StoreError
from ...limits import check_workers
from ...match.cluster import backend_session
from ...match.gauntlet import check_opponents
from ...match.openings import check_openings
from ...match.resolve import check_clock_applies, resolve_player_list
from ...players.spec import check_engine_spec, player_from_engine_spec
from ...runs.manifest import StartFrom, check_run_id, check_runs_folder
from ...runs.runspec import SPEC_FILE, load_run_engine, run_engine_spec, store_engine_spec
from ...runs.store import Store
from ...spec.model import EngineSpec
from ...spec.start import start_checksum
from ...strategies import make_strategy, strategy_class, strategy_names
from .config import RunConfig
from .identity import config_differences, default_run_id
from .plan import RunPlan, plan_run


def starts_at_reference(spec: EngineSpec) -> bool:
    """A run of ``spec`` starts from its reference values unless its params say otherwise: a
    'uci' engine's (its options' defaults) and a net's output layer (the file's, the net's
    training)."""
    evaluation = spec_evaluation(spec)
    return evaluation is None or evaluation.reads_file


def with_start(cfg: RunConfig, spec: EngineSpec) -> RunConfig:
    """``cfg`` with the start fixed in its params: a 'uci' engine's run, a net's (its output
    layer: :func:`starts_at_reference`), and a run that starts from earlier weights
    (``spec.start_values``: --init-from RUN, --engine SPEC:WEIGHTS), start from the spec's
    reference values (``init = "reference"``; a population around them) unless
    its params choose ``init``; a builtin engine's run keeps the strategy's default (a uniform
    draw). A run from earlier weights, and a 'uci' engine's run from its defaults (values its
    developer tuned), is a fine-tuning (``finetune = true`` unless its params choose): SPSA
    without a table takes c_end and r_end from each weight's scale, DE, jDE and the EA draw
    their first population within it, CMA-ES and nevergrad start with it as each weight's step
    (:func:`evotune.space.finetune_scale`)."""
    params = cfg.params_dict()
    declared = strategy_class(cfg.strategy).PARAMS
    good_start = bool(spec.start_values) or spec.kind == "uci"
    if (starts_at_reference(spec) or spec.start_values) and "init" in declared \
            and "init" not in params:
        params["init"] = "reference"
    if good_start and "finetune" in declared and "finetune" not in params \
            and not params.get("table"):
        params["finetune"] = True
    if good_start and not cfg.play.opponents:  # selection under noise (docs/usage/builtin.md)
        for key, value in FINETUNE_SELECTION.items():
            if key in declared and key not in params:
                params[key] = value
    if params == cfg.params_dict():
        return cfg
    return dataclasses.replace(cfg, params=tuple(sorted(params.items())))


FINETUNE_SELECTION: dict[str, object] = {"selection": "race", "mirrored": True, "cmean": 0.1}
"""The strategy parameters a run from earlier weights gets unless its params choose: DE, jDE
and the EA replace on a race's evidence (:mod:`evotune.strategies.selection`), CMA-ES plays
mirrored pairs against each other and moves its mean by a tenth of pycma's step
(docs/results/finetune-study.md measured each)."""

FINAL_CHECK_SHARE = 0.1
"""Share of the planned games a final check takes by default ..."""
FINAL_CHECK_MIN, FINAL_CHECK_MAX = 200, 4000
"""... within these bounds (and at most half the budget)."""


def resolve_final_check(cfg: RunConfig, planned: int) -> int:
    """The final check's games of a new run: ``cfg.final_check.games`` unless auto (-1); auto is
    :data:`FINAL_CHECK_SHARE` of ``planned`` games within [:data:`FINAL_CHECK_MIN`,
    :data:`FINAL_CHECK_MAX`] and at most half of them, even; 0 for a run without a start
    (:attr:`RunConfig.starts_from_given`)."""
    if cfg.final_check.games >= 0:
        return cfg.final_check.games
    if not cfg.starts_from_given or planned <= 0:
        return 0
    games = min(FINAL_CHECK_MAX, max(FINAL_CHECK_MIN, round(FINAL_CHECK_SHARE * planned)),
                planned // 2)
    return max(2, games - games % 2)


def tuning_games(cfg: RunConfig) -> int:
    """The games the tuning may play before its final check: --max-games less the check's
    (0 = no games limit)."""
    if not cfg.budget.max_games:
        return 0
    return max(1, cfg.budget.max_games - max(cfg.final_check.games, 0))


def with_budget(cfg: RunConfig, spec: EngineSpec) -> RunConfig:
    """``cfg`` with its start (:func:`with_start`) and the planned game budget fixed in its
    params, for strategies whose schedule depends on it (SPSA's N, nevergrad's budget):
    --max-games (less the final check's games, :func:`resolve_final_check`, resolved here), or else
    --generations times the games of one generation. Fixed at the start, so raising a limit on
    resume keeps the schedule.
    """
    cfg = with_start(cfg, spec)
    planned = cfg.budget.max_games
    if not planned:
        space = spec.space(init_low=cfg.start.low, init_high=cfg.start.high)
        probe = make_strategy(cfg.strategy, space, params=cfg.strategy_params(), seed=cfg.seed)
        planned = cfg.budget.generations * sum(r.games for r in probe.ask())
    if cfg.final_check.games < 0:
        cfg = dataclasses.replace(cfg, final_check=dataclasses.replace(
            cfg.final_check, games=resolve_final_check(cfg, planned)))
    params = cfg.params_dict()
    if "budget" not in strategy_class(cfg.strategy).PARAMS or "budget" in params:
        return cfg
    params["budget"] = int(tuning_games(cfg) if cfg.budget.max_games else planned)
    return dataclasses.replace(cfg, params=tuple(sorted(params.items())))


def check_run_players(plan: RunPlan) -> None:
    """Before anything is written: the run's engine (and gauntlet opponents) can play it.

    A strategy that learns from the evaluation's features (td) needs the built-in engine; a
    'uci' engine spec is started once and its options checked (every option the spec names must
    be declared, every weight's bounds must map into the option's range). Raises an
    EvotuneError with one line naming what is wrong.
    """
    cfg, spec = plan.config, plan.spec
    evaluation = spec_evaluation(spec)
    if evaluation is not None and not evaluation.phi_width \
            and strategy_class(cfg.strategy).NEEDS_FEATURES:
        raise ConfigError(f"strategy '{cfg.strategy}' learns a linear evaluation from its "
                          f"features; the net of '{cfg.engine}' has none: tune its output layer "
                          f"with {strategy_names(needs_features=False)}")
    if spec.kind == "uci" and strategy_class(cfg.strategy).NEEDS_FEATURES:
        raise ConfigError(f"strategy '{cfg.strategy}' learns from the evaluation's feature vector, "
                          f"which the UCI engine of '{cfg.engine}' does not expose; tune it with "
                          f"{strategy_names(needs_features=False)}, or use a builtin engine spec")
    searched = spec.search.weight_names()
    if searched and strategy_class(cfg.strategy).NEEDS_FEATURES:
        raise ConfigError(f"strategy '{cfg.strategy}' learns the evaluation from its features; "
                          f"the search weights of '{cfg.engine}' ({', '.join(searched)}) are "
                          f"not features: tune them with {strategy_names(needs_features=False)}")
    check_engine_spec(spec)
    if cfg.play.opponents and cfg.strategy_params().get("selection") == "race":
        raise ConfigError("selection = race compares a trial with its target in a match of "
                          "their own; with --opponents candidates are compared by their gauntlet "
                          "scores: use --param selection=paper or leave --opponents out")
    if cfg.play.opponents:
        cls = strategy_class(cfg.strategy)
        if cls.NEEDS_FEATURES or not cls.GAUNTLET:
            why = "learns from self-play" if cls.NEEDS_FEATURES else \
                "compares its own candidates, each against another"
            raise ConfigError(f"strategy '{cfg.strategy}' {why}; --opponents applies to "
                              f"{strategy_names(joiner='and', needs_features=False, gauntlet=True)}")
        check_opponents(cfg.play.opponents)


def preflight(plan: RunPlan) -> None:
    """Everything a run needs, checked before anything is created: the engine spec and that the
    engine accepts its weights, an initial range that meets every free weight's bounds, the
    strategy and its parameters, the openings (the final check's too), and a reachable Dask
    scheduler."""
    cfg, spec, space = plan.config, plan.spec, plan.space
    sampled = cfg.strategy_params().get("init", "sample") == "sample"  # from the initial range
    for name, lo, hi, fixed in zip(space.names, space.lower, space.upper, space.fixed):
        if sampled and not fixed and (cfg.start.high < lo or cfg.start.low > hi):
            raise ConfigError(f"the initial range [{cfg.start.low:g}, {cfg.start.high:g}] misses "
                              f"the bounds [{lo:g}, {hi:g}] of weight '{name}'; give init_low "
                              "and init_high that overlap the weights' bounds")
    check_run_players(plan)  # the engine (and gauntlet opponents) can play these weights
    if spec.kind == "builtin":
        try:
            player = player_from_engine_spec(spec)
        except EvotuneError as exc:
            raise ConfigError(f"engine spec {spec.path}: the built-in engine cannot play its "
                              f"weights ({exc})") from None
        opponents = resolve_player_list(cfg.play.opponents) if cfg.play.opponents else ()
        check_clock_applies(cfg.play.limits, (player, *opponents))
    make_strategy(cfg.strategy, space, params=cfg.strategy_params(), seed=cfg.seed)
    check_openings(plan.openings, book_plies=cfg.play.book_plies)
    try:  # read now, whether or not the final check plays: not after the whole budget
        check_openings(plan.final_check_openings, book_plies=cfg.play.book_plies)
    except EvotuneError as exc:
        raise ConfigError(f"--final-check-openings: {exc}") from None
    check_backend(cfg)


def check_backend(cfg: RunConfig) -> None:
    """Local workers a machine can start (at most 4 per core); a Dask backend's scheduler
    reachable with workers."""
    if cfg.cluster.backend == "local":
        check_workers(cfg.cluster.workers)
    if cfg.cluster.backend == "dask":
        with backend_session(cfg.cluster.backend, cfg.cluster.scheduler, workers=1):
            pass


def new_run(cfg: RunConfig, *, out_dir: str | Path = "populations",
            run_id: str | None = None, spec: EngineSpec | None = None,
            init_from: StartFrom | None = None) -> tuple[Store, RunPlan]:
    """Create the run directory of a new run (refusing an existing id, saying what differs)
    after :func:`preflight` found everything it needs; return it with the run's plan. The
    engine spec is read here unless given (``spec``); a spec with start values comes with
    ``init_from``, the record of where they came from (the manifest keeps it)."""
    if run_id is not None:
        check_run_id(run_id)
    spec = load_run_engine(cfg.engine) if spec is None else spec
    if bool(spec.start_values) != (init_from is not None) or (
            init_from is not None and init_from.weights_sha256 != start_checksum(
                spec.start_values)):
        raise ConfigError("a run that starts from earlier weights needs the spec with those "
                          "weights and the record of where they came from (init_from), both")
    plan = plan_run(with_budget(cfg, spec), spec=spec)
    cfg, identity = plan.config, plan.identity
    preflight(plan)
    check_runs_folder(out_dir)
    run_id = run_id or default_run_id(cfg, identity)
    existing = Path(out_dir) / run_id / "manifest.json"
    if existing.exists():
        old_store = Store(existing.parent)
        old_store.lock()  # a live run: refused naming its writer's PID
        old_store.unlock()
        old = old_store.manifest()
        diff = config_differences(old.config.to_dict(), cfg.to_dict())
        if diff:
            raise StoreError(f"run '{run_id}' exists with another configuration ("
                             + "; ".join(diff) + "); choose another --run-id")
        raise StoreError(f"run '{run_id}' already exists; continue it with "
                         f"'evotune resume {run_id}' or choose another --run-id")
    store = Store.create(out_dir, run_id, config=cfg, identity=identity, init_from=init_from)
    store_engine_spec(store.root, spec)
    return store, plan


def open_run(run: str | Path, *, out_dir: str | Path = "populations") -> tuple[Store, RunPlan]:
    """Open a stored run for writing, check that its identity (config, engine spec, openings)
    holds, and return it with its plan."""
    store = Store.open(run, out_dir)
    manifest = store.manifest()
    cfg = manifest.config
    if not isinstance(cfg, RunConfig):
        raise StoreError(f"run '{store.run_id}' is a {manifest.kind} run, not a tuning run by "
                         "games; continue it with 'evotune resume'")
    store.lock()  # one writer per run: refused while another process runs it
    store.prepare_resume(check_only=True)  # the whole history, before anything is written
    plan = plan_run(cfg, spec=run_engine_spec(store.root, cfg))
    now = plan.identity
    stored = manifest.identity
    changed = [k for k in ("config", "engine_spec", "openings") if stored.get(k) != now.get(k)]
    if changed:
        what = {"config": "the resolved configuration",
                "engine_spec": f"the engine spec ({cfg.engine}, or the copy in {SPEC_FILE})",
                "openings": f"the openings file ({cfg.play.openings})"}
        raise StoreError(f"run '{store.run_id}' cannot be resumed: "
                         + ", ".join(what[k] for k in changed)
                         + " changed since it started; restore it or start a new run")
    check_run_players(plan)
    return store, plan
