"""The run loop: ask -> fixtures -> games -> scores -> tell -> store; reports progress.

A generation k (1-based) is: the strategy's requests (built from the frozen population) become
fixtures keyed (k, i); the runner plays them (in parallel, seeds addressed by position); the
outcomes go back to the strategy; games, the generation file and the state are stored in that
order. ``gen-0000`` holds the initial population. Resume restores the strategy from the stored
state and drops any games of an unfinished generation, so a resumed run equals an uninterrupted
one, for any number of workers.
"""
from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .config import (RunConfig, config_differences, load_engine_spec, resolve_openings_path,
                     run_identity)
from .errors import ConfigError, EvotuneError, StoreError
from .featuresets import denominator
from .match.cluster import backend_session
from .players.spec import check_engine_spec, player_from_engine_spec
from .store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunProgress:
    """A progress event for progress bars (the CLI renders it)."""

    kind: str
    """'game' (a game finished) or 'generation' (a generation was stored)."""
    generation: int
    """The generation being played (1-based) or just stored."""
    games_total: int
    """Games played in the whole run so far."""
    games_in_generation: int = 0
    """Games finished in the current generation."""
    games_scheduled: int = 0
    """Games scheduled so far in the current generation (early stops lower the final count)."""
    stats: dict = field(default_factory=dict)
    """Generation statistics (kind 'generation'): replacement rate, means, ..."""


@dataclass(frozen=True)
class RunSummary:
    """What a call of :func:`execute` did."""

    run_id: str
    """The run's id (its folder name)."""
    generation: int
    """Generations completed."""
    games: int
    """Games played in the whole run."""
    seconds: float
    """Wall time of the whole run (all sessions)."""
    finished: bool
    """True when a stop condition (generations, games, wall time) was reached."""
    recommended: tuple[float, ...]
    """The strategy's recommended weights (population mean)."""


def resolve_workers(workers: int) -> int:
    return workers if workers > 0 else max(1, os.cpu_count() or 1)


def strategy_params(cfg: RunConfig) -> dict:
    """The parameters the run gives its strategy: ``[params]`` plus np, games and the budget
    where the strategy has them."""
    from .strategies import strategy_params as params_for

    return params_for(cfg.strategy, np=cfg.np, games=cfg.games, budget=cfg.max_games,
                      params=cfg.params_dict())


def with_budget(cfg: RunConfig) -> RunConfig:
    """``cfg`` with the planned game budget fixed in its params, for strategies whose schedule
    depends on it (SPSA's N, nevergrad's budget): --max-games, or else --generations times the
    games of one generation. Fixed at the start, so raising a limit on resume keeps the schedule.
    """
    import dataclasses

    from .strategies import make_strategy, strategy_class

    params = cfg.params_dict()
    if "budget" not in strategy_class(cfg.strategy).PARAMS or "budget" in params:
        return cfg
    budget = cfg.max_games
    if not budget:
        space = load_engine_spec(cfg.engine).space(init_low=cfg.init_low, init_high=cfg.init_high)
        probe = make_strategy(cfg.strategy, space, params=strategy_params(cfg), seed=cfg.seed)
        budget = cfg.generations * sum(r.games for r in probe.ask())
    params["budget"] = int(budget)
    return dataclasses.replace(cfg, params=tuple(sorted(params.items())))


def default_run_id(cfg: RunConfig, identity: dict) -> str:
    name = cfg.strategy.replace(":", "-")  # ng:NAME -> ng-NAME
    return f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"


def check_run_players(cfg: RunConfig) -> None:
    """Before anything is written: the run's engine (and gauntlet opponents) can play it.

    A strategy that learns from the evaluation's features (td) needs the built-in engine; a
    'uci' engine spec is started once and its options checked (every option the spec names must
    be declared, every weight's bounds must map into the option's range). Raises an
    EvotuneError with one line naming what is wrong.
    """
    from .strategies import strategy_class

    spec = load_engine_spec(cfg.engine)
    if spec.kind == "uci" and strategy_class(cfg.strategy).NEEDS_FEATURES:
        raise ConfigError(f"strategy '{cfg.strategy}' learns from the evaluation's feature vector, "
                          f"which the UCI engine of '{cfg.engine}' does not expose; tune it with "
                          "de, jde or ea, or use a builtin engine spec")
    check_engine_spec(spec)
    if cfg.opponents:
        from .match.gauntlet import check_opponents

        if strategy_class(cfg.strategy).NEEDS_FEATURES:
            raise ConfigError(f"strategy '{cfg.strategy}' learns from self-play; --opponents "
                              "applies to de, jde, ea, spsa, cmaes and ng:NAME")
        check_opponents(cfg.opponents)


def preflight(cfg: RunConfig) -> None:
    """Everything a run needs, checked before anything is created: the engine spec and that the
    engine accepts its weights, an initial range that meets every free weight's bounds, the
    strategy and its parameters, the openings, and a reachable Dask scheduler."""
    from .match.openings import check_openings
    from .strategies import make_strategy

    spec = load_engine_spec(cfg.engine)
    space = spec.space(init_low=cfg.init_low, init_high=cfg.init_high)
    for name, lo, hi, fixed in zip(space.names, space.lower, space.upper, space.fixed):
        if not fixed and (cfg.init_high < lo or cfg.init_low > hi):
            raise ConfigError(f"the initial range [{cfg.init_low:g}, {cfg.init_high:g}] misses "
                              f"the bounds [{lo:g}, {hi:g}] of weight '{name}'; give init_low "
                              "and init_high that overlap the weights' bounds")
    check_run_players(cfg)  # the engine (and gauntlet opponents) can play these weights
    if spec.kind == "builtin":
        try:
            player_from_engine_spec(spec)
        except EvotuneError as exc:
            raise ConfigError(f"engine spec {spec.path}: the built-in engine cannot play its "
                              f"weights ({exc})") from None
    make_strategy(cfg.strategy, space, params=strategy_params(cfg), seed=cfg.seed)
    check_openings(resolve_openings_path(cfg.openings), book_plies=cfg.book_plies)
    check_backend(cfg)


def check_workers(workers: int) -> None:
    """Local worker processes: 0 (one per core) up to 4 per core of this machine."""
    cores = os.cpu_count() or 1
    if not 0 <= workers <= 4 * cores:
        raise ConfigError(f"--workers {workers}: give 0 (one per core) up to {4 * cores} (4 per "
                          f"core on this machine)")


def check_backend(cfg: RunConfig) -> None:
    """Local workers a machine can start (at most 4 per core); a Dask backend's scheduler
    reachable with workers."""
    if cfg.backend == "local":
        check_workers(cfg.workers)
    if cfg.backend == "dask":
        with backend_session(cfg.backend, cfg.scheduler, workers=1):
            pass


def new_run(cfg: RunConfig, *, out_dir: str | Path = "populations",
            run_id: str | None = None) -> Store:
    """Create the run directory of a new run (refusing an existing id, saying what differs)
    after :func:`preflight` found everything it needs."""
    from .store import check_run_id

    if run_id is not None:
        check_run_id(run_id)
    cfg = with_budget(cfg)
    preflight(cfg)
    identity = run_identity(cfg)
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
    return Store.create(out_dir, run_id, config=cfg.to_dict(), identity=identity)


def open_run(run: str | Path, *, out_dir: str | Path = "populations") -> tuple[Store, RunConfig]:
    """Open a stored run and check that its identity (config, engine spec, openings) holds."""
    store = Store.open(run, out_dir)
    manifest = store.manifest()
    store.lock()  # one writer per run: refused while another process runs it
    store.prepare_resume(check_only=True)  # the whole history, before anything is written
    cfg = manifest.config
    now = run_identity(cfg)
    stored = manifest.identity
    changed = [k for k in ("config", "engine_spec", "openings") if stored.get(k) != now.get(k)]
    if changed:
        what = {"config": "the resolved configuration",
                "engine_spec": f"the engine spec file ({cfg.engine})",
                "openings": f"the openings file ({cfg.openings})"}
        raise StoreError(f"run '{store.run_id}' cannot be resumed: "
                         + ", ".join(what[k] for k in changed)
                         + " changed since it started; restore it or start a new run")
    check_run_players(cfg)
    return store, cfg


def match_settings(cfg: RunConfig, **overrides):
    """The MatchSettings of a run's games (limits, time control, adjudication, openings);
    ``overrides`` replace fields (verify plays other openings, maybe at another depth)."""
    from .match import MatchSettings
    from .players.clock import parse_tc

    values = dict(depth=cfg.depth, nodes=cfg.nodes, movetime=cfg.movetime, max_plies=cfg.max_plies,
                  openings=_openings_arg(cfg), book_plies=cfg.book_plies, tc=parse_tc(cfg.tc),
                  time_margin=cfg.time_margin, adjudication=cfg.adjudication())
    values.update(overrides)
    return MatchSettings(**values)


def _openings_arg(cfg: RunConfig):
    path = resolve_openings_path(cfg.openings)
    return None if path is None else str(path)


def _population_stats(pop: np.ndarray) -> dict:
    return {"mean": pop.mean(axis=0).tolist(), "std": pop.std(axis=0).tolist()}


def _outcome(result, request, denominator: int = 1):
    from .strategies.base import MatchOutcome

    leaves = ()
    if request.record_leaves:
        leaves = tuple(_leaves(rec, request, denominator) for rec in result.records)
    return MatchOutcome(points_a=int(result.points_a), points_b=int(result.points_b),
                        games=int(result.games), leaves=leaves)


def _leaves(rec, request, denominator: int = 1):
    """The strategy's view of a game: phi = the record's phi_int / the set's denominator."""
    from .strategies.base import GameLeaves

    white_score = {"1-0": 1.0, "0-1": 0.0}.get(rec.result, 0.5)
    white_first = rec.opening.board().turn  # chess.WHITE is True
    movers = tuple(int((i % 2 == 0) == white_first) for i in range(len(rec.moves)))
    return GameLeaves(a_white=rec.a_white, result=white_score, movers=movers,
                      scores=tuple(int(s) for s in rec.scores or ()),
                      leaf_phi=tuple(tuple(int(x) / denominator for x in row)
                                     for row in rec.leaf_phi or ()),
                      predicted=tuple(bool(p) for p in rec.predicted or ()))


def pgn_text(record_dicts: list[dict]) -> str:
    """PGN text of game records given as dicts (runs in the PGN process)."""
    from .match import GameRecord, write_pgn_text

    return write_pgn_text(GameRecord.from_dict(r) for r in record_dicts)


def execute(store: Store, cfg: RunConfig, *,
            progress: Callable[[RunProgress], None] | None = None) -> RunSummary:
    """Run (or continue) ``store``'s run until a stop condition; every generation is stored.
    The caller becomes the run's only writer for the call (refused while another holds it)."""
    store.lock()
    try:
        return _execute(store, cfg, progress)
    finally:
        store.unlock()


def _execute(store: Store, cfg: RunConfig, progress) -> RunSummary:
    loop = _RunLoop(store, cfg, progress)
    try:
        # where games run ('local' processes or a Dask cluster), opened once per run
        with backend_session(cfg.backend, cfg.scheduler,
                             workers=resolve_workers(cfg.workers)) as session:
            while not loop.stop_reached():
                loop.generation(backend=session.backend, workers=session.workers)
        loop.flush_pgn(wait=True)
    finally:
        loop.pgn_pool.shutdown(wait=True, cancel_futures=True)
    seconds_total = loop.elapsed()
    store.write_state(dataclasses.replace(store.read_state(), finished=True,
                                          seconds=seconds_total))
    return RunSummary(run_id=store.run_id, generation=loop.strategy.generation,
                      games=loop.games_total, seconds=seconds_total, finished=True,
                      recommended=tuple(float(x) for x in loop.strategy.recommended("mean")))


class _RunLoop:
    """The state of one :func:`execute` call: the strategy, counters, the PGN writer."""

    def __init__(self, store: Store, cfg: RunConfig,
                 progress: Callable[[RunProgress], None] | None) -> None:
        from .match import GameRecord, write_pgn_text
        from .strategies import make_strategy, strategy_class

        self.store, self.cfg, self.progress = store, cfg, progress
        self.spec = load_engine_spec(cfg.engine)
        self.space = self.spec.space(init_low=cfg.init_low, init_high=cfg.init_high)
        self.settings = match_settings(cfg)
        self.opponents = ()
        if cfg.opponents:
            from .match.gauntlet import opponent_players

            self.opponents = opponent_players(cfg.opponents)
        params = strategy_params(cfg)
        # the whole stored history is checked (and a crash's leftovers repaired) first
        point = store.prepare_resume(
            to_pgn=lambda recs: write_pgn_text(GameRecord.from_dict(r) for r in recs))
        for note in point.notes:
            log.warning("run %s: %s", store.run_id, note)
        state = point.state
        if state is None:
            self.strategy = make_strategy(cfg.strategy, self.space, params=params, seed=cfg.seed)
            self.games_total, self.seconds_before = 0, 0.0
            pop = np.asarray(self.strategy.population, dtype=float)
            store.write_generation(0, {"generation": 0, "strategy": cfg.strategy,
                                       "names": list(self.space.names),
                                       "population": pop.tolist(), **_population_stats(pop),
                                       "games": 0, "games_total": 0, "matches": [],
                                       "stats": {"recommended": [float(v) for v in
                                                                 self.strategy.recommended()]},
                                       "seconds": 0.0, "seconds_total": 0.0,
                                       "state": self.strategy.state()})
            store.write_state({"generation": 0, "games": 0, "seconds": 0.0, "finished": False,
                               "strategy": self.strategy.state()})
        else:
            try:
                cls = strategy_class(cfg.strategy)
            except EvotuneError as exc:
                raise StoreError(f"stored strategy '{cfg.strategy}' cannot be restored: "
                                 f"{exc}") from None
            self.strategy = cls.from_state(
                self.space, params=params, seed=cfg.seed, state=state.strategy)
            self.games_total = state.games
            self.seconds_before = state.seconds
        self.t_session = time.perf_counter()
        # PGN text (python-chess SAN export, ~3 ms a game) is made in a separate process while
        # the next generation plays: in a thread it would hold the GIL the run loop needs between
        # games. The game log is written first and is the source of truth; a run killed before
        # its PGN caught up gets it rebuilt on resume (Store.repair).
        self.pgn_pool = ProcessPoolExecutor(max_workers=1,
                                            mp_context=multiprocessing.get_context("spawn"))
        self.pgn_jobs: list = []

    def player(self, weights, name: str):
        """The run's engine (built-in or the spec's UCI engine) playing ``weights``."""
        return player_from_engine_spec(self.spec, weights, name=name)

    def flush_pgn(self, *, wait: bool) -> None:
        """Append the PGN of finished generations to games.pgn, in generation order."""
        while self.pgn_jobs and (wait or self.pgn_jobs[0].done()):
            self.store.append_pgn(self.pgn_jobs.pop(0).result())

    def elapsed(self) -> float:
        """Wall time of the whole run so far (earlier sessions included)."""
        return self.seconds_before + time.perf_counter() - self.t_session

    def stop_reached(self) -> bool:
        cfg = self.cfg
        return bool((cfg.generations and self.strategy.generation >= cfg.generations)
                    or (cfg.max_games and self.games_total >= cfg.max_games)
                    or (cfg.max_seconds and self.elapsed() >= cfg.max_seconds))

    def generation(self, *, backend: str, workers: int) -> None:
        """Play, tell and store one generation."""
        store, cfg, strategy = self.store, self.cfg, self.strategy
        g = strategy.generation + 1
        t0 = time.perf_counter()
        requests = strategy.ask()
        done = [0]

        def on_game(event) -> None:
            done[0] += 1
            if self.progress is not None:
                self.progress(RunProgress(kind="game", generation=g,
                                          games_total=self.games_total + done[0],
                                          games_in_generation=done[0],
                                          games_scheduled=int(getattr(event, "scheduled", 0))))

        play = self._play_gauntlet if self.opponents else self._play_matches
        outcomes, results, summaries, extra = play(g, requests, backend=backend, workers=workers,
                                                   progress=on_game)
        stats = strategy.tell(outcomes)
        stats["recommended"] = [float(v) for v in strategy.recommended()]  # for compare's curves
        games_gen = sum(int(r.games) for r in results)
        self.games_total += games_gen
        dicts = [rec.to_dict() for r in results for rec in r.records]
        store.append_games(dicts)
        self.flush_pgn(wait=False)
        self.pgn_jobs.append(self.pgn_pool.submit(pgn_text, dicts))
        pop = np.asarray(strategy.population, dtype=float)
        seconds_total = self.elapsed()
        store.write_generation(g, {
            "generation": g, "strategy": cfg.strategy, "names": list(self.space.names),
            "population": pop.tolist(), **_population_stats(pop),
            "matches": summaries, **extra,
            "stats": stats, "games": games_gen, "games_total": self.games_total,
            "seconds": time.perf_counter() - t0, "seconds_total": seconds_total,
            "state": strategy.state(),
        })
        store.write_state({"generation": g, "games": self.games_total,
                           "seconds": seconds_total, "finished": False,
                           "strategy": strategy.state()})
        if self.progress is not None:
            self.progress(RunProgress(kind="generation", generation=g,
                                      games_total=self.games_total,
                                      games_in_generation=games_gen,
                                      stats={**stats, "mean": pop.mean(axis=0).tolist()}))

    def _play_matches(self, g: int, requests, **kw):
        """The paper's fitness: each request is a mini-match of A against B."""
        from .match import Fixture, run_fixtures

        player = self.player
        fixtures = [Fixture(key=(g, i), a=player(req.a, f"g{g}-m{i}-A"),
                            b=player(req.b, f"g{g}-m{i}-B"), games=req.games,
                            stop=req.stop, record_leaves=req.record_leaves)
                    for i, req in enumerate(requests)]
        results = run_fixtures(fixtures, settings=self.settings, seed=self.cfg.seed, **kw)
        den = denominator(self.spec.features)
        outcomes = [_outcome(r, q, den) for r, q in zip(results, requests)]
        return outcomes, results, [_match_summary(r, q) for r, q in zip(results, requests)], {}

    def _play_gauntlet(self, g: int, requests, **kw):
        """Gauntlet fitness: every distinct weight vector of the requests plays the opponents
        (the same openings for all); a request's A and B are compared by their gauntlet scores
        (the generation's games are the gauntlet's; the requests' are not played)."""
        from .match.gauntlet import play_gauntlet
        from .strategies.base import MatchOutcome

        vectors: dict[tuple, int] = {}
        for req in requests:
            for w in (req.a, req.b):
                vectors.setdefault(tuple(float(x) for x in w), len(vectors))
        candidates = [self.player(w, f"g{g}-c{k}") for w, k in vectors.items()]
        scores = play_gauntlet(candidates, self.opponents, games=self.cfg.games,
                               settings=self.settings, seed=self.cfg.seed, generation=g, **kw)
        outcomes, summaries = [], []
        for req in requests:
            a = scores[vectors[tuple(float(x) for x in req.a)]]
            b = scores[vectors[tuple(float(x) for x in req.b)]]
            # the request's verdict is the gauntlet's: the side with the higher score takes
            # the request's points (equal scores split them), so DE replaces a target only
            # when the trial scored strictly more against the opponents
            pa = 2 * req.games if a.score > b.score else req.games if a.score == b.score else 0
            # scalar-fitness strategies (cmaes, ng:NAME) take A's own score against the gauntlet
            outcomes.append(MatchOutcome(points_a=pa, points_b=2 * req.games - pa,
                                         games=req.games, fitness=float(a.score)))
            summaries.append({"a": list(req.a), "b": list(req.b), "tag": list(req.tag),
                              "points_a": pa, "points_b": 2 * req.games - pa,
                              "games": req.games, "gauntlet_points_a": a.total_points,
                              "gauntlet_points_b": b.total_points,
                              "gauntlet_games": a.total_games})
        gauntlet = {"opponents": [p.name for p in self.opponents],
                    "candidates": [{"weights": list(w), **scores[k].to_dict()}
                                   for w, k in vectors.items()]}
        results = [r for sc in scores for r in sc.results]
        return outcomes, results, summaries, {"gauntlet": gauntlet}


def _match_summary(result, request) -> dict:
    return {"a": list(request.a), "b": list(request.b), "tag": list(request.tag),
            "points_a": int(result.points_a), "points_b": int(result.points_b),
            "games": int(result.games), "wins": int(result.wins), "draws": int(result.draws),
            "losses": int(result.losses), "stopped_early": bool(result.stopped_early)}
