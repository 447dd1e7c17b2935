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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .config import RunConfig, build_run_config
from .errors import ConfigError
from .store import Store

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

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("nan")


def _run_to_end(cfg: RunConfig, *, out_dir: str | Path, run_id: str,
                progress: Callable | None) -> Store:
    """Run ``cfg`` as ``run_id``; resume it when unfinished; reuse it when finished."""
    from .study import execute, new_run, open_run

    root = Path(out_dir) / run_id
    if (root / "manifest.json").exists():
        store, stored = open_run(run_id, out_dir=out_dir)
        if stored.identity_dict() != cfg.identity_dict():
            raise ConfigError(f"run '{run_id}' exists in {out_dir}/ with another configuration; "
                              "remove it or give another --out")
        state = store.read_state()
        if state and state.finished and state.generation >= (cfg.generations or 0) \
                and state.games >= cfg.max_games:
            log.info("reusing finished run %s", run_id)
            return store
        import dataclasses
        execute(store, dataclasses.replace(stored, workers=cfg.workers, backend=cfg.backend,
                                           scheduler=cfg.scheduler, generations=cfg.generations,
                                           max_games=cfg.max_games), progress=progress)
        return store
    store = new_run(cfg, out_dir=out_dir, run_id=run_id)
    execute(store, cfg, progress=progress)
    return store


def _outcome(store: Store, verify: dict | None = None) -> RunOutcome:
    gens = store.generations()
    first, last = gens[0], gens[-1]
    state = store.current_state()
    cfg = store.manifest().config
    return RunOutcome(run_id=store.run_id, strategy=cfg.strategy, seed=cfg.seed,
                      games=last.games_total, seconds=state.seconds if state else 0.0,
                      names=first.names, initial_mean=first.mean, initial_std=first.std,
                      final_mean=last.mean, final_std=last.std, verify=verify)


def paper_config(*, seed: int, workers: int = 0, backend: str = "local",
                 scheduler: str = "") -> RunConfig:
    """The paper's set-up (the run defaults) with a seed."""
    return build_run_config(strategy="de", np=20, generations=50, games=4, depth=3, seed=seed,
                            openings="book", workers=workers, backend=backend,
                            scheduler=scheduler, params={"F": 0.5, "CR": 0.9})


def reproduce_de_paper(*, seeds: int = 1, first_seed: int = 1, workers: int = 0,
                       backend: str = "local", scheduler: str = "",
                       out_dir: str | Path = "populations", reports_dir: str | Path = "reports",
                       progress: Callable | None = None) -> list[RunOutcome]:
    """Run the paper's experiment once per seed; write plots and a report for each run."""
    from .reporting import load_run
    from .reporting.plots import write_plots
    from .reporting.report import write_report

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


def compare_strategies(*, strategies: tuple[str, ...], games_budget: int, seeds: int = 1,
                       first_seed: int = 1, np_: int = 20, depth: int = 3, workers: int = 0,
                       backend: str = "local", scheduler: str = "",
                       verify_games: int = 200, out_dir: str | Path = "populations",
                       progress: Callable | None = None) -> list[RunOutcome]:
    """Each strategy with the same game budget (and seeds), each verified on held-out openings."""
    from .reporting.verify import VerifySettings, verify_run

    if games_budget < 1:
        raise ConfigError(f"--games-budget must be at least 1, got {games_budget}")
    if verify_games < 2 or verify_games % 2:
        raise ConfigError(f"--verify-games {verify_games}: give an even number >= 2 (each "
                          "opening is played twice, colours swapped)")
    outcomes = []
    for strategy in strategies:
        for seed in range(first_seed, first_seed + seeds):
            cfg = build_run_config(strategy=strategy, np=np_, generations=0,
                                   max_games=games_budget, games=4, depth=depth, seed=seed,
                                   workers=workers, backend=backend, scheduler=scheduler)
            run_id = f"compare-{strategy}-b{games_budget}-s{seed}"
            store = _run_to_end(cfg, out_dir=out_dir, run_id=run_id, progress=progress)
            doc = store.read_document("verify")
            if doc is None or doc.get("games") != verify_games \
                    or doc.get("generation") != store.current_state().generation:
                doc = verify_run(store, settings=VerifySettings(
                    games=verify_games, workers=workers, backend=backend, scheduler=scheduler),
                    runs_dir=out_dir)
            outcomes.append(_outcome(store, doc))
    return outcomes


def distance_to_reference(o: RunOutcome, reference: tuple[float, ...],
                          fixed: tuple[bool, ...]) -> float:
    """Euclidean distance (engine units) of the final means from the reference, free weights."""
    d = [(m - r) for m, r, f in zip(o.final_mean, reference, fixed) if not f]
    return float(math.sqrt(sum(x * x for x in d)))


def compare_table(outcomes: list[RunOutcome]) -> str:
    """strategy, games, Elo vs reference (95% error), distance from the reference, wall time."""
    from .config import load_engine_spec

    space = load_engine_spec("shannon").space()
    lines = [f"{'strategy':<9}{'seed':>5}{'games':>7}{'Elo vs reference':>22}"
             f"{'distance':>10}{'wall s':>9}   final means"]
    for o in outcomes:
        m = next((x for x in (o.verify or {}).get("matches", [])
                  if x.get("opponent") == "reference"), None)
        if m is None:
            elo = "n/a"
        else:
            e, err = m.get("elo"), m.get("elo_error")
            elo = (f"{e:+.0f} +- {err:.0f}" if e is not None and err is not None
                   and math.isfinite(e) and math.isfinite(err) else f"score {m['score']:.3f}")
        dist = distance_to_reference(o, space.reference, space.fixed)
        means = " ".join(f"{v:.0f}" for v, f in zip(o.final_mean, space.fixed) if not f)
        lines.append(f"{o.strategy:<9}{o.seed:>5}{o.games:>7}{elo:>22}{dist:>10.0f}"
                     f"{o.seconds:>9.0f}   {means}")
    return "\n".join(lines)
