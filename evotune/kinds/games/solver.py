"""The run loop as a solver: one generation per :meth:`Solver.step`.

A generation k (1-based) is: the strategy's requests (built from the frozen population) are
scored by the run's :class:`~evotune.tuning.fitness.Fitness` (games played in parallel, seeds
addressed by position); the outcomes go back to the strategy; games, the generation file and the
state are stored in that order. ``gen-0000`` holds the initial population. Resume restores the
strategy from the stored state and drops any games of an unfinished generation, so a resumed run
equals an uninterrupted one, for any number of workers.

As scipy's ``DifferentialEvolutionSolver`` exposes ``__next__``, a :class:`Solver` can be stepped
by the caller or run to its stop condition with :func:`execute`. Opening one checks and repairs
the store and writes generation 0 (:meth:`Solver.open`); it is a context manager that writes the
PGN still being made and stops its process on exit, an exception's included::

    with Solver.open(store, plan) as solver:
        for generation in solver:   # each a stored Generation record
            ...
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ...engine.evaluation import SHANNON
from ...errors import EvotuneError, StoreError
from ...limits import Limits, resolve_workers
from ...match import GameRecord, write_pgn_text
from ...match.cluster import backend_session
from ...match.gauntlet import opponent_players
from ...players.spec import player_from_engine_spec
from ...reaper import children_ignore_ctrl_c
from ...runs.finalcheck import FinalCheck
from ...runs.records import Generation
from ...runs.store import Store
from ...strategies import make_strategy, strategy_class
from ...tuning.fitness import Fitness, GauntletFitness, MatchFitness, match_settings
from ...tuning.rated import RatedEvidence, model_scale
from .finalmatch import current_final_check, play_final_check
from .lifecycle import tuning_games
from .plan import RunPlan

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunProgress:
    """A progress event for progress bars (the CLI renders it)."""

    kind: str
    """'game' (a game finished), 'generation' (a generation was stored) or 'final-check' (a game of
    the final check finished)."""
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
    """The run's recommended weights: the strategy's (its population mean, theta or
    distribution mean), or the start when the final check found them not better."""
    final_check: FinalCheck | None = None
    """The final check of a run from given weights (None: the run has none)."""


def pgn_text(record_dicts: list[dict], limits: Limits | None = None) -> str:
    """PGN text of game records given as dicts (runs in the PGN process), with the run's limits
    in its TimeControl tags."""
    return write_pgn_text((GameRecord.from_dict(r) for r in record_dicts), limits=limits)


def _rows(pop: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(x) for x in row) for row in pop)


def _generation(g: int, strategy, names, pop: np.ndarray, **fields) -> Generation:
    """Generation ``g``'s record: the population as it is after the generation."""
    return Generation(generation=g, strategy=strategy, names=tuple(names), population=_rows(pop),
                      mean=tuple(float(x) for x in pop.mean(axis=0)),
                      std=tuple(float(x) for x in pop.std(axis=0)), **fields)


class Solver:
    """One run being played: the strategy, its fitness, the counters and the PGN writer.

    :meth:`open` checks the whole stored history (repairing only what a crash leaves behind),
    restores the strategy (or makes it and stores generation 0) and returns the Solver; each
    :meth:`step` plays, tells and stores one generation. Use it as a context manager (``with
    Solver.open(store, plan) as solver:``): leaving it calls :meth:`close`. The caller holds the
    run's writer lock (:func:`execute` does).
    """

    def __init__(self, store: Store, plan: RunPlan, *,
                 progress: Callable[[RunProgress], None] | None = None,
                 backend: str = "loky", workers: int = 1) -> None:
        """The run's fitness and settings; reads and writes nothing, and has no strategy until
        :meth:`open` (which makes it) restores or starts one from the store."""
        cfg = plan.config
        self.store, self.plan, self.cfg, self.progress = store, plan, cfg, progress
        self.backend, self.workers = backend, workers
        self.spec, self.space = plan.spec, plan.space
        # the plan's limits and openings file, resolved once
        settings = match_settings(cfg, limits=plan.limits,
                                  openings=None if plan.openings is None else str(plan.openings))
        self.fitness: Fitness
        if cfg.play.opponents:
            self.fitness = GauntletFitness(self.player, opponent_players(cfg.play.opponents),
                                           games=cfg.play.games, settings=settings, seed=cfg.seed)
        else:
            # the denominator of the evaluation's phi (td's leaves); a net's is 1 (no phi); an
            # external engine records no phi (shannon's, as a spec's default features)
            self.fitness = MatchFitness(self.player, settings=settings, seed=cfg.seed,
                                        denominator=(plan.evaluation or SHANNON).denominator)
        self.games_total, self.seconds_before = 0, 0.0
        self.t_session = time.perf_counter()
        # PGN text (python-chess SAN export, ~3 ms a game) is made in a separate process while
        # the next generation plays: in a thread it would hold the GIL the run loop needs between
        # games. The game log is written first and is the source of truth; a run killed before
        # its PGN caught up gets it rebuilt on resume (Store.prepare_resume). The process starts
        # with the first generation's PGN.
        self.pgn_pool: ProcessPoolExecutor | None = None
        self.pgn_jobs: list = []

    @classmethod
    def open(cls, store: Store, plan: RunPlan, *,
             progress: Callable[[RunProgress], None] | None = None,
             backend: str = "loky", workers: int = 1) -> Solver:
        """The solver of ``store``'s run: the whole stored history checked (a crash's leftovers
        repaired) and the strategy restored from the stored state, or, for a run with no
        generation yet, made and stored as generation 0."""
        solver = cls(store, plan, progress=progress, backend=backend, workers=workers)
        solver._restore()
        return solver

    def _restore(self) -> None:
        cfg, store = self.cfg, self.store
        params = cfg.strategy_params()
        # the whole stored history is checked (and a crash's leftovers repaired) first
        point = store.prepare_resume(to_pgn=functools.partial(pgn_text,
                                                              limits=self.plan.limits))
        for note in point.notes:
            log.warning("run %s: %s", store.run_id, note)
        state = point.state
        if state is None:
            self.strategy = make_strategy(cfg.strategy, self.space, params=params, seed=cfg.seed)
            pop = np.asarray(self.strategy.population, dtype=float)
            gen0 = _generation(0, cfg.strategy, self.space.names, pop, games=0, games_total=0,
                               stats={"recommended": [float(v) for v in
                                                      self.strategy.recommended()]},
                               state=self.strategy.state())
            store.write_generation(gen0)
            store.write_state(gen0.as_state())
        else:
            try:
                restore = strategy_class(cfg.strategy)
            except EvotuneError as exc:
                raise StoreError(f"stored strategy '{cfg.strategy}' cannot be restored: "
                                 f"{exc}") from None
            self.strategy = restore.from_state(
                self.space, params=params, seed=cfg.seed, state=state.strategy)
            self.games_total = state.games
            self.seconds_before = state.seconds
        # the rating model a strategy selects or proposes by: every stored game, read again (a
        # resume holds the same)
        self.evidence: RatedEvidence | None = None
        request = self.strategy.rating_model()
        if request is not None:
            self.evidence = RatedEvidence(store.read_games() if state is not None else (),
                                          request=request, scale=model_scale(self.space))
        self.t_session = time.perf_counter()

    def __enter__(self) -> Solver:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def player(self, weights, name: str):
        """The run's engine (built-in or the spec's UCI engine) playing ``weights``, checked
        once, in the plan's weight space."""
        return player_from_engine_spec(
            self.spec, self.space.weights(weights, what=f"{self.spec.name} weights"), name=name)

    def flush_pgn(self, *, wait: bool) -> None:
        """Append the PGN of finished generations to games.pgn, in generation order."""
        while self.pgn_jobs and (wait or self.pgn_jobs[0].done()):
            self.store.append_pgn(self.pgn_jobs.pop(0).result())

    def close(self) -> None:
        """Write the PGN still being made and stop its process (leaving a ``with`` block calls
        it, an exception's or Ctrl-C's too)."""
        try:
            self.flush_pgn(wait=True)
        finally:
            if self.pgn_pool is not None:
                self.pgn_pool.shutdown(wait=True, cancel_futures=True)
                self.pgn_pool = None

    def elapsed(self) -> float:
        """Wall time of the whole run so far (earlier sessions included)."""
        return self.seconds_before + time.perf_counter() - self.t_session

    def stop_reached(self) -> bool:
        """True when a stop condition (generations, games, wall time) holds."""
        cfg = self.cfg
        budget = cfg.budget
        return bool((budget.generations and self.strategy.generation >= budget.generations)
                    or (budget.max_games and self.games_total >= tuning_games(cfg))
                    or (budget.max_seconds and self.elapsed() >= budget.max_seconds))

    def final_check(self) -> FinalCheck | None:
        """The final check of the run's recommendation against its start (played once per
        recommendation; a resumed run whose check is stored reads it), or None without one."""
        if self.cfg.final_check.games <= 0:
            return None
        g = self.strategy.generation
        tuned = self.space.round(np.asarray(self.strategy.recommended("mean"), dtype=float))
        stored = current_final_check(self.store, g, tuned)
        if stored is not None:
            return stored
        return play_final_check(self.store, self.plan, tuned, generation=g, player=self.player,
                                backend=self.backend, workers=self.workers,
                                progress=self._game_events("final-check", g))

    def _game_events(self, kind: str, g: int) -> Callable:
        """The runner's per-game callback: a :class:`RunProgress` of ``kind`` for each game of
        generation ``g`` (or of its final check)."""
        done = [0]

        def on_game(event) -> None:
            done[0] += 1
            if self.progress is not None:
                self.progress(RunProgress(kind=kind, generation=g,
                                          games_total=self.games_total + done[0],
                                          games_in_generation=done[0],
                                          games_scheduled=int(getattr(event, "scheduled", 0))))

        return on_game

    def __iter__(self) -> Solver:
        return self

    def __next__(self) -> Generation:
        if self.stop_reached():
            raise StopIteration
        return self.step()

    def step(self) -> Generation:
        """Play, tell and store one generation; return its record as stored (its ``stats``: the
        strategy's statistics with the recommended weights)."""
        store, cfg, strategy = self.store, self.cfg, self.strategy
        g = strategy.generation + 1
        t0 = time.perf_counter()
        requests = strategy.ask()
        ev = self.fitness.evaluate(g, requests, backend=self.backend, workers=self.workers,
                                   progress=self._game_events("game", g))
        records = [rec for r in ev.results for rec in r.records]
        outcomes = ev.outcomes if self.evidence is None else \
            self.evidence.told(records, requests, ev.outcomes)
        stats = strategy.tell(outcomes, model=None if self.evidence is None
                              else self.evidence.view())
        stats["recommended"] = [float(v) for v in strategy.recommended()]  # for compare's curves
        games_gen = sum(int(r.games) for r in ev.results)
        self.games_total += games_gen
        store.append_games(records)
        self.flush_pgn(wait=False)
        if self.pgn_pool is None:
            self.pgn_pool = ProcessPoolExecutor(max_workers=1,
                                                mp_context=multiprocessing.get_context("spawn"))
        with children_ignore_ctrl_c():  # the first submit starts the PGN process
            self.pgn_jobs.append(self.pgn_pool.submit(pgn_text, [rec.to_dict() for rec in records],
                                                      self.plan.limits))
        pop = np.asarray(strategy.population, dtype=float)
        seconds_total = self.elapsed()
        gen = _generation(g, cfg.strategy, self.space.names, pop, matches=tuple(ev.summaries),
                          gauntlet=ev.gauntlet, stats=stats, games=games_gen,
                          games_total=self.games_total, seconds=time.perf_counter() - t0,
                          seconds_total=seconds_total, state=strategy.state())
        store.write_generation(gen)
        store.write_state(gen.as_state())
        if self.progress is not None:
            self.progress(RunProgress(kind="generation", generation=g,
                                      games_total=self.games_total,
                                      games_in_generation=games_gen,
                                      stats={**stats, "mean": pop.mean(axis=0).tolist()}))
        return gen


def execute(store: Store, plan: RunPlan, *,
            progress: Callable[[RunProgress], None] | None = None) -> RunSummary:
    """Run (or continue) ``store``'s run until a stop condition; every generation is stored.
    The caller becomes the run's only writer for the call (refused while another holds it)."""
    cfg = plan.config
    store.lock()
    try:
        # where games run ('local' processes or a Dask cluster), opened once per run
        with backend_session(cfg.cluster.backend, cfg.cluster.scheduler,
                             workers=resolve_workers(cfg.cluster.workers)) as session:
            with Solver.open(store, plan, progress=progress, backend=session.backend,
                             workers=session.workers) as solver:
                for _ in solver:
                    pass
                check = solver.final_check()
        seconds_total = solver.elapsed()
        state = store.read_state()
        assert state is not None  # the solver wrote one before its first generation
        games = solver.games_total + (check.games if check else 0)
        store.write_state(dataclasses.replace(state, finished=True, seconds=seconds_total))
        recommended = check.recommended if check else solver.strategy.recommended("mean")
        return RunSummary(run_id=store.run_id, generation=solver.strategy.generation,
                          games=games, seconds=seconds_total, finished=True,
                          recommended=tuple(float(x) for x in recommended), final_check=check)
    finally:
        store.unlock()
