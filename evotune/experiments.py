"""Named experiments built from runs, reports and verification matches.

- ``reproduce_de_paper``: the differential-evolution chess-tuning paper's set-up (DE/rand/1/bin,
  NP 20, F 0.5, CR 0.9, 4-game colour-balanced matches at depth 3 with early termination, pawn
  fixed at 100, initial weights uniform in [0, 1000], 50 generations, the Polyglot book), one run
  per seed, with the paper's table beside this run's.
- ``compare_strategies``: every strategy with the same budget of games, each result verified
  against the reference weights on held-out openings.

Runs are ordinary stored runs (``populations/<run-id>/``): an experiment that is interrupted
resumes its unfinished runs and reuses the finished ones when called again.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ConfigError, FieldError
from .kinds.games.config import RunConfig, build_run_config
from .kinds.games.lifecycle import new_run, open_run, with_budget
from .kinds.games.plan import with_overrides
from .kinds.games.solver import execute
from .match.scoring import uninformative
from .reporting import load_run
from .reporting.compare import (
    WITHIN_ELO,
    curve_summary,
    games_within,
    match_elo,
    mean_band,
    write_compare_plot,
)
from .reporting.plots import write_plots
from .reporting.report import write_report
from .runs.store import Store
from .spec.file import load_engine_spec
from .verify.curve import recommended_at, verify_checkpoints
from .verify.run import VerifySettings, verify_run

log = logging.getLogger(__name__)

# The paper's tables (knight, bishop, rook, queen, mobility; pawn fixed at 100): 50 generations,
# 3,070 games.
PAPER_WEIGHTS = ("knight", "bishop", "rook", "queen", "mobility")
PAPER_TABLE = {
    "initial mean": (474.35, 396.45, 552.9, 539.75, 618.0),
    "initial std": (321.626, 264.45, 321.214, 260.143, 267.447),
    "final mean": (310.4, 341.4, 454.4, 931.45, 4.8),
    "final std": (68.34, 40.53, 53.19, 64.68, 1.79),
}
PAPER_GAMES = 3070


@dataclass(frozen=True)
class RunOutcome:
    """One finished run of an experiment, with the numbers its tables need."""

    run_id: str
    """The stored run's id."""
    strategy: str
    """Strategy name."""
    seed: int
    """The run's seed."""
    games: int
    """Games played in the run."""
    seconds: float
    """Wall time of the run (all sessions)."""
    names: tuple[str, ...]
    """Weight names."""
    initial_mean: tuple[float, ...]
    """Population mean of gen-0000, per weight."""
    initial_std: tuple[float, ...]
    """Population standard deviation of gen-0000, per weight."""
    final_mean: tuple[float, ...]
    """Population mean of the last generation, per weight."""
    final_std: tuple[float, ...]
    """Population standard deviation of the last generation, per weight."""
    verify: dict | None = None
    """The verification document (verify.json), when verified."""
    recommended: tuple[float, ...] = ()
    """The recommended weights of the last generation (population mean when not stored)."""
    curve: dict | None = None
    """The checkpoint verifications (verify-curve.json), with --verify-every."""

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("nan")


def _run_to_end(cfg: RunConfig, *, out_dir: str | Path, run_id: str,
                progress: Callable | None) -> Store:
    """Run ``cfg`` as ``run_id``; resume it when unfinished; reuse it when finished."""
    root = Path(out_dir) / run_id
    if (root / "manifest.json").exists():
        store, plan = open_run(run_id, out_dir=out_dir)
        if plan.config.identity_dict() != cfg.identity_dict():
            raise ConfigError(f"run '{run_id}' exists in {out_dir}/ with another configuration; "
                              "remove it or give another --out")
        state = store.read_state()
        budget = cfg.budget
        if state and state.finished and state.generation >= (budget.generations or 0) \
                and state.games >= budget.max_games:
            log.info("reusing finished run %s", run_id)
            return store
        cluster = cfg.cluster
        execute(store, with_overrides(plan, workers=cluster.workers, backend=cluster.backend,
                                      scheduler=cluster.scheduler, generations=budget.generations,
                                      max_games=budget.max_games), progress=progress)
        return store
    store, plan = new_run(cfg, out_dir=out_dir, run_id=run_id)
    execute(store, plan, progress=progress)
    return store


def _outcome(store: Store, verify: dict | None = None, curve: dict | None = None) -> RunOutcome:
    gens = store.generations()
    first, last = gens[0], gens[-1]

    rec = recommended_at(store, last)
    state = store.current_state()
    cfg = store.manifest().config
    return RunOutcome(run_id=store.run_id, strategy=cfg.strategy, seed=cfg.seed,
                      games=last.games_total, seconds=state.seconds if state else 0.0,
                      names=first.names, initial_mean=first.mean, initial_std=first.std,
                      final_mean=last.mean, final_std=last.std, verify=verify,
                      recommended=tuple(float(v) for v in rec), curve=curve)


def paper_config(*, seed: int, workers: int = 0, backend: str = "local",
                 scheduler: str = "") -> RunConfig:
    """The paper's set-up (the run defaults) with a seed."""
    return build_run_config(strategy="de", population=20, generations=50, games=4, depth=3,
                            seed=seed, openings="book", workers=workers, backend=backend,
                            scheduler=scheduler, params={"F": 0.5, "CR": 0.9})


def reproduce_de_paper(*, seeds: int = 1, first_seed: int = 1, workers: int = 0,
                       backend: str = "local", scheduler: str = "",
                       out_dir: str | Path = "populations", reports_dir: str | Path = "reports",
                       progress: Callable | None = None) -> list[RunOutcome]:
    """Run the paper's experiment once per seed; write plots and a report for each run."""

    if seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {seeds}")
    outcomes = []
    for seed in range(first_seed, first_seed + seeds):
        cfg = paper_config(seed=seed, workers=workers, backend=backend, scheduler=scheduler)
        store = _run_to_end(cfg, out_dir=out_dir, run_id=f"de-paper-s{seed}", progress=progress)
        write_report(store, out_dir=reports_dir, runs_dir=out_dir)
        outcomes.append(_outcome(store))
    if len(outcomes) > 1:
        write_plots([load_run(Store(Path(out_dir) / o.run_id)) for o in outcomes],
                    out_dir=reports_dir)
    return outcomes


def paper_table(outcomes: list[RunOutcome]) -> str:
    """The paper's table beside this experiment's (mean over seeds), as aligned text."""
    idx = [outcomes[0].names.index(n) for n in PAPER_WEIGHTS]
    rows = []
    head = f"{'':<22}" + "".join(f"{n:>10}" for n in PAPER_WEIGHTS)
    rows.append(head)
    for label in ("initial mean", "initial std", "final mean", "final std"):
        attr = label.replace(" ", "_")
        ours = np.mean([[getattr(o, attr)[i] for i in idx] for o in outcomes], axis=0)
        rows.append(f"{'paper ' + label:<22}" + "".join(f"{v:>10.2f}" for v in PAPER_TABLE[label]))
        rows.append(f"{'evotune ' + label:<22}" + "".join(f"{v:>10.2f}" for v in ours))
    games = np.mean([o.games for o in outcomes])
    rows.append(f"{'games played':<22}{'paper':>10} {PAPER_GAMES:<8} evotune {games:.0f}"
                + (f" (mean of {len(outcomes)} seeds)" if len(outcomes) > 1 else ""))
    return "\n".join(rows)


def compare_run_id(strategy: str, games_budget: int, seed: int, engine: str = "shannon",
                   init: str = "sample") -> str:
    """The stored run of one (strategy, budget, seed[, engine][, init]) of a comparison."""
    name = strategy.replace(":", "-")
    return f"compare-{name}-b{games_budget}-s{seed}{_compare_tail(engine, init)}"


def _compare_tail(engine: str, init: str) -> str:
    """What a comparison's run ids and plot folder add for a non-default engine and start."""
    return (("" if engine == "shannon" else "-" + Path(str(engine)).stem)
            + ("" if init == "sample" else "-iref"))


def compare_config(strategy: str, *, games_budget: int, seed: int, population: int = 20,
                   depth: int = 3, engine: str = "shannon", workers: int = 0,
                   backend: str = "local", scheduler: str = "", init: str = "sample"
                   ) -> RunConfig:
    """The run of one strategy and seed in a comparison (budget fixed in its params).
    ``init='reference'`` starts every strategy from the spec's reference values (the population
    strategies around them, see ``POPULATION_INIT_PARAMS``)."""

    if init not in ("sample", "reference"):
        raise ConfigError(f"--init must be 'sample' or 'reference', not {init!r}")
    params = {"init": "reference"} if init == "reference" else None
    cfg = build_run_config(
        strategy=strategy, population=population, generations=0, max_games=games_budget, games=4,
        depth=depth, seed=seed, engine=engine, workers=workers, backend=backend,
        scheduler=scheduler, params=params)
    return with_budget(cfg, load_engine_spec(cfg.engine))


def compare_strategies(*, strategies: tuple[str, ...], games_budget: int, seeds: int = 1,
                       first_seed: int = 1, population: int = 20, depth: int = 3,
                       engine: str = "shannon", workers: int = 0,
                       backend: str = "local", scheduler: str = "",
                       verify_games: int = 200, verify_every: int = 0,
                       out_dir: str | Path = "populations", init: str = "sample",
                       progress: Callable | None = None) -> list[RunOutcome]:
    """Each strategy with the same game budget (and seeds), each verified on held-out openings;
    with ``verify_every`` G, also the recommended weights after every G games (not counted in
    the budget). ``progress`` gets the runs' events (:class:`~evotune.kinds.games.solver.RunProgress`)
    and then the verification games' (:class:`~evotune.match.runner.GameProgress`)."""

    if games_budget < 1:
        raise FieldError("games_budget", f"must be at least 1, got {games_budget}")
    if verify_games < 2 or verify_games % 2:
        raise ConfigError(f"--verify-games {verify_games}: give an even number >= 2 (each "
                          "opening is played twice, colours swapped)")
    if verify_every < 0:
        raise ConfigError(f"--verify-every must be >= 0 (0 = only at the end), got {verify_every}")
    ids = [compare_run_id(s, games_budget, first_seed, engine, init) for s in strategies]
    twice = sorted({s for s, i in zip(strategies, ids) if ids.count(i) > 1})
    if twice:
        raise ConfigError(f"--strategies names {', '.join(twice)} more than once; each strategy "
                          "is one run per seed (use --seeds for repeats)")
    # every run's config is checked before the first one starts
    plans = [(compare_config(strategy, games_budget=games_budget, seed=seed,
                             population=population, depth=depth, engine=engine,
                             workers=workers, backend=backend, scheduler=scheduler, init=init),
              compare_run_id(strategy, games_budget, seed, engine, init))
             for seed in range(first_seed, first_seed + seeds) for strategy in strategies]
    outcomes = []
    for cfg, run_id in plans:
        _run_to_end(cfg, out_dir=out_dir, run_id=run_id, progress=progress)
    for strategy in strategies:
        for seed in range(first_seed, first_seed + seeds):
            store = Store(Path(out_dir) / compare_run_id(strategy, games_budget, seed, engine,
                                                         init))
            doc = store.read_document("verify")
            state = store.current_state()
            if doc is None or doc.get("games") != verify_games \
                    or doc.get("generation") != (state.generation if state else None):
                doc = verify_run(store, settings=VerifySettings(
                    games=verify_games, workers=workers, backend=backend, scheduler=scheduler),
                    runs_dir=out_dir, progress=progress)
            curve = None
            if verify_every:
                curve = verify_checkpoints(store, every=verify_every, games=verify_games,
                                           workers=workers, backend=backend,
                                           scheduler=scheduler, progress=progress)
            outcomes.append(_outcome(store, doc, curve))
    return outcomes


def distance_to_reference(o: RunOutcome, reference: tuple[float, ...],
                          fixed: tuple[bool, ...]) -> float:
    """Euclidean distance (engine units) of the recommended weights from the reference, over
    the free weights."""
    w = o.recommended or o.final_mean
    d = [(m - r) for m, r, f in zip(w, reference, fixed) if not f]
    return float(math.sqrt(sum(x * x for x in d)))


def _reference_match(o: RunOutcome) -> dict | None:
    return next((x for x in (o.verify or {}).get("matches", [])
                 if x.get("opponent") in ("reference", "start")), None)


def _elo_text(m: dict | None) -> str:
    if m is None:
        return "n/a"
    if uninformative(m.get("pentanomial", ())):
        return "no information"
    e, err = m.get("elo"), m.get("elo_error")
    if e is not None and err is not None and math.isfinite(e) and math.isfinite(err):
        return f"{e:+.0f} +- {err:.0f}"
    return f"score {m['score']:.3f}"


def compare_table(outcomes: list[RunOutcome], *, engine: str = "shannon") -> str:
    """Per strategy (over seeds): Elo vs reference with its 95% interval, distance from the
    reference, tuning games, verification games, wall time, games to come within 20 Elo; then
    one line per run."""

    space = load_engine_spec(engine).space()
    strategies = list(dict.fromkeys(o.strategy for o in outcomes))
    lines = [f"{'strategy':<12}{'seeds':>6}{'games':>7}{'Elo vs reference':>20}"
             f"{'distance':>14}{'wall s':>8}{'verify games':>14}"
             f"{f'games to -{WITHIN_ELO:.0f} Elo':>18}"]
    for name in strategies:
        runs = [o for o in outcomes if o.strategy == name]
        elos = [match_elo(m) for m in map(_reference_match, runs) if m is not None]
        if len(runs) == 1:
            elo = _elo_text(_reference_match(runs[0]))
        elif elos:
            m, b = mean_band(elos)
            elo = f"{m:+.0f} +- {b:.0f}"
        else:
            elo = "n/a"
        d = [distance_to_reference(o, space.reference, space.fixed) for o in runs]
        dist = f"{np.mean(d):.0f} +- {np.std(d, ddof=1) if len(d) > 1 else 0:.0f}"
        vgames = sum(sum(m.get("games", 0) for m in (o.verify or {}).get("matches", []))
                     + (o.curve or {}).get("verification_games", 0) for o in runs) / len(runs)
        within = [games_within(o.curve) for o in runs if o.curve is not None]
        if not within:
            reach = "n/a"
        else:
            hit = sorted(w for w in within if w is not None)
            reach = (f"{int(np.median(hit)) if len(hit) == len(within) else '>budget'}"
                     f" ({len(hit)}/{len(within)})")
        lines.append(f"{name:<12}{len(runs):>6}{np.mean([o.games for o in runs]):>7.0f}"
                     f"{elo:>20}{dist:>14}{np.mean([o.seconds for o in runs]):>8.0f}"
                     f"{vgames:>14.0f}{reach:>18}")
    lines.append("")
    lines.append(f"{'run':<32}{'games':>7}{'Elo vs reference':>20}{'distance':>10}"
                 f"{'wall s':>8}   recommended (free weights)")
    for o in outcomes:
        distance = distance_to_reference(o, space.reference, space.fixed)
        w = o.recommended or o.final_mean
        rec = " ".join(f"{v:.0f}" for v, f in zip(w, space.fixed) if not f)
        if len(rec) > 60:
            rec = rec[:57] + "..."
        lines.append(f"{o.run_id:<32}{o.games:>7}{_elo_text(_reference_match(o)):>20}"
                     f"{distance:>10.0f}{o.seconds:>8.0f}   {rec}")
    return "\n".join(lines)


def write_compare_plots(outcomes: list[RunOutcome], *, reports_dir: str | Path,
                        games_budget: int, engine: str = "shannon", init: str = "sample"
                        ) -> tuple[Path, Path]:
    """The Elo-vs-games plot of a comparison (REPORTS/compare-b<budget>[-engine][-iref]/)."""

    curves = []
    for name in dict.fromkeys(o.strategy for o in outcomes):
        docs = [o.curve for o in outcomes if o.strategy == name and o.curve]
        if docs:
            curves.append(curve_summary(name, docs))
    return write_compare_plot(curves, Path(reports_dir) / f"compare-b{games_budget}"
                                                        f"{_compare_tail(engine, init)}",
                              title=f"{engine}: Elo vs reference as tuning games are spent "
                                    "(mean over seeds, 95% band)")
