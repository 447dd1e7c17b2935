"""A run's life: checked before anything is written (:func:`preflight`), created
(:func:`new_run`), reopened with its identity checked (:func:`open_run`)."""
from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

from ..engine.evaluation import spec_evaluation
from ..errors import ConfigError, EvotuneError, NetError, StoreError
from ..fileio import atomic_write_json
from ..limits import check_workers
from ..match.cluster import backend_session
from ..match.gauntlet import check_opponents
from ..match.openings import check_openings
from ..match.resolve import check_clock_applies, resolve_player_list
from ..players.nets import output_weights
from ..players.spec import check_engine_spec, player_from_engine_spec
from ..spec.file import engine_spec_from_text, resolve_command
from ..spec.model import EngineSpec
from ..spec.start import start_checksum
from ..strategies import make_strategy, strategy_class, strategy_names
from .config import RunConfig
from .identity import config_differences, default_run_id
from .manifest import StartFrom, check_run_id, check_runs_folder
from .plan import RunPlan, load_run_engine, plan_run
from .recordio import read_json
from .registry import WeightsConfig
from .store import Store


def resolve_workers(workers: int) -> int:
    return workers if workers > 0 else max(1, os.cpu_count() or 1)


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


SPEC_FILE = "engine-spec.json"
"""The copy of its engine spec a run keeps: the spec file's text, its reference file's, the
command resolved to absolute paths, the spec's digest and where it was read; for a run that
starts from earlier weights also those weights (``start_values``) and their source."""


def store_engine_spec(root: Path, spec: EngineSpec) -> None:
    """Keep a copy of ``spec`` in the run folder ``root`` (see :data:`SPEC_FILE`), so that the
    run is read, verified, exported and resumed from any working directory."""
    if not spec.text:  # a spec made in code, not read from a file: runs name it by path
        return
    atomic_write_json(Path(root) / SPEC_FILE, {
        "source": spec.path, "digest": spec.file_digest, "text": spec.text,
        "reference_text": spec.reference_text if spec.reference_file else None,
        "command": list(resolve_command(spec.command)),
        **({"start_values": spec.start_values, "start_source": spec.start_source}
           if spec.start_values else {})})


class RunNetError(StoreError):
    """The net file a run's engine spec plays is missing, unreadable or not the bytes the run
    started with (they are part of its identity): no command reads such a run."""


def _check_run_net(root: Path, spec: EngineSpec) -> None:
    """RunNetError when ``spec`` (read from the run's copy) plays a net whose bytes changed since
    the run started: the spec's digest, which holds the net's, differs from the manifest's."""
    try:
        stored = read_json(root / "manifest.json", "manifest")["identity"]["engine_spec"]
    except (EvotuneError, KeyError, TypeError):
        return  # the manifest's own readers refuse it, naming it
    if stored != spec.digest:
        files = ([f"net file {spec.net}"] if spec.net else []) + (
            [f"move-model file {spec.search.model}"] if spec.search.model else [])
        what = " or ".join(files)
        raise RunNetError(f"run '{root.name}': its {what} changed since the run started (the "
                          "run's identity holds the file's bytes); restore the file the run "
                          "was started with")


def check_run_net(root: str | Path, cfg: RunConfig) -> None:
    """RunNetError when the run in ``root`` plays a net that is missing or changed since it
    started (as :func:`run_engine_spec` finds); any other trouble with its spec is left to the
    commands that need the spec (``status`` shows the stored numbers without it)."""
    try:
        run_engine_spec(root, cfg)
    except RunNetError:
        raise
    except EvotuneError:
        pass


def run_engine_spec(root: str | Path, cfg: WeightsConfig,
                    engine: str | Path | None = None) -> EngineSpec:
    """The engine spec of the run in ``root``: ``engine`` when given (a name or path), else the
    copy the run keeps, else (a run made before runs kept one) ``cfg.engine`` as a path. A net
    the copy plays must be the file the run started with (:class:`RunNetError`)."""
    path = Path(root) / SPEC_FILE
    if engine is not None or not path.is_file():
        return load_run_engine(cfg.engine if engine is None else engine)
    doc = read_json(path, "engine spec copy")
    text, digest, ref = doc.get("text"), doc.get("digest"), doc.get("reference_text")
    command = doc.get("command")
    start, start_source = doc.get("start_values", ""), doc.get("start_source", "")
    if not (isinstance(text, str) and isinstance(digest, str) and isinstance(command, list)
            and all(isinstance(c, str) for c in command) and isinstance(ref, (str, type(None)))
            and isinstance(start, str) and isinstance(start_source, str)
            and digest in (hashlib.sha256(t.encode()).hexdigest() for t in (text, "\ufeff" + text))):
        raise StoreError(f"{path} is damaged; restore it, or delete it to read the spec from "
                         f"{doc.get('source') or cfg.engine}")
    try:
        spec = engine_spec_from_text(text, where=str(doc.get("source") or cfg.engine),
                                     digest=digest, reference_text=ref, command=tuple(command),
                                     start_values=start, start_source=start_source,
                                     net_weights=output_weights)
    except NetError as exc:
        raise RunNetError(f"run '{Path(root).name}': {exc}; put back the net file the run was "
                          "started with") from None
    except ConfigError as exc:
        if not start:
            raise
        raise StoreError(f"{path} is damaged ({exc}); restore it (the run's start weights are "
                         "kept there only)") from None
    if spec.net or spec.search.model:  # their bytes are in the spec's digest
        _check_run_net(Path(root), spec)
    return dataclasses.replace(spec, path=f"{doc.get('source')} (copy kept in {path})")


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
