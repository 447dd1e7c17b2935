"""The match runner: plays fixtures in rounds on local processes (joblib) and scores them.

Determinism: a game's opening comes from a generator addressed by (generation, fixture, pair)
(see :mod:`evotune.match.openings`), the engines are deterministic, and stop rules are applied
per fixture in game order. A fixture's result therefore depends only on its own games: results
are identical for 1 and N workers and whatever the execution order.

Scheduling, round by round: every undecided fixture submits the games it certainly needs next
(stop 'none': all its games; 'decisive': the games before which the verdict cannot be settled,
:func:`~evotune.match.fixtures.games_before_verdict`; 'sprt': whole pairs, a few at once when
workers would otherwise idle, any pair past the stopping point being discarded). All of a
round's games run in parallel through :func:`map_games`, the single place where parallel
execution happens (a Dask cluster plugs in there through joblib's 'dask' backend).
"""
from __future__ import annotations

import logging
import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import joblib

from ..engine import compile_estimate, core_is_compiled, play_game, record_compile
from ..errors import ConfigError, StoreError
from ..limits import Limits
from ..players import PlayerSpec
from ..players.external import close_all
from ..players.gameloop import play_players_game
from ..players.nets import evaluation
from ..reaper import children_ignore_ctrl_c, quiet_pool_threads, worker_ignores_ctrl_c
from ..space import SHANNON_REFERENCE
from .fixtures import Fixture, GameTask, MatchSettings, decisive_settled, game_task, games_before_verdict
from .gamerecord import GameRecord, leaf_array
from .journal import Journal
from .openings import Opening, draw_opening, opening_generator
from .scoring import MatchResult, SprtParams, match_result, pentanomial_from_records, sprt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameProgress:
    """Progress event, sent after each finished game."""

    done: int
    """Games finished so far in this call."""
    scheduled: int
    """Games submitted so far (grows round by round)."""
    planned: int
    """Upper bound: the sum of the fixtures' games (stop rules may end matches earlier)."""
    fixture: tuple[int, int]
    """Key of the finished game's fixture."""
    record: GameRecord
    """The finished game."""
    stored: bool = False
    """True for a game the match's journal held (played by an earlier, stopped call)."""


# ---- one game ------------------------------------------------------------------------------------

def _engine_label(p: PlayerSpec) -> str:
    return "" if p.is_builtin else " ".join(p.command)


def play_task(task: GameTask) -> GameRecord:
    """Play one game (in whatever process this runs) and return its record."""
    lim = task.settings.limits
    board = task.opening.board()
    t0 = time.perf_counter()
    timed = (lim.movetime > 0 or lim.tc is not None) \
        and not (task.white.search.is_alphabeta and task.black.search.is_alphabeta)
    if task.white.is_builtin and task.black.is_builtin and not timed:
        out = play_game(board, evaluation(task.white), evaluation(task.black), limits=lim,
                        features=(task.white.features, task.black.features),
                        settings=(task.white.search, task.black.search),
                        boards=task.record_boards)
        last_visits = out.last_visits
    else:
        out = play_players_game(task.white, task.black, board, lim)
        last_visits = ()
    seconds = time.perf_counter() - t0
    leaves = task.record_leaves
    return GameRecord(
        key=task.key, white_name=task.white.name, black_name=task.black.name,
        white_weights=tuple(task.white.weights), black_weights=tuple(task.black.weights),
        opening=task.opening, moves=tuple(out.moves), result=out.result,
        termination=out.termination, nodes=int(out.nodes), seconds=seconds,
        white_engine=_engine_label(task.white), black_engine=_engine_label(task.black),
        scores=tuple(int(x) for x in out.scores),
        depths=None if out.depths is None else tuple(int(x) for x in out.depths),
        move_ms=None if out.move_seconds is None
        else tuple(round(1000 * float(x)) for x in out.move_seconds),
        leaf_phi=leaf_array(out.leaf_phi) if leaves else None,
        predicted=tuple(bool(x) for x in out.predicted) if leaves else None,
        notes=tuple(out.notes), boards=out.boards, last_visits=last_visits,
    )


_WARM = False
_COMPILED_AT = 0.0


def compile_ended() -> float:
    """``time.monotonic()`` when a compilation of the core in this process ended (0.0: none):
    progress displays measure their rate from it, so the time left excludes the compile."""
    return _COMPILED_AT


def warm_up() -> None:
    """Compile (or load from the cache) the engine core in this process, once. A compilation
    (the first command of an install, or after the core changed) is said before it begins, with
    the time it takes (the last one's on this machine), since the command is silent meanwhile;
    its time is recorded for the next estimate."""
    global _WARM, _COMPILED_AT
    if _WARM:
        return
    compiling = not core_is_compiled()
    if compiling:
        log.warning("compiling the engine core, about %.0f s, once (later commands load it "
                    "from the cache)", compile_estimate())
    t0 = time.perf_counter()
    play_game(Opening().board(), SHANNON_REFERENCE, SHANNON_REFERENCE,
              limits=Limits(depth=1, max_plies=2))
    _WARM = True
    if compiling:
        record_compile(time.perf_counter() - t0)
        _COMPILED_AT = time.monotonic()
    log.debug("engine warm-up took %.2f s", time.perf_counter() - t0)


# ---- parallel execution --------------------------------------------------------------------------

def _play_in_worker(index: int, task: GameTask, command_pid: int) -> tuple[int, GameRecord]:
    """:func:`play_task` in a pool's worker, which leaves Ctrl-C to the command; with the
    task's index (records arrive as they finish)."""
    worker_ignores_ctrl_c(command_pid)
    return index, play_task(task)


def map_games(tasks: Sequence[GameTask], *, workers: int = 1, backend: str = "loky",
              on_result: Callable[[GameRecord], None] | None = None) -> list[GameRecord]:
    """Play ``tasks`` and return their records in task order (the only parallel code path).

    workers=1 plays in this process; more workers use ``joblib.Parallel(n_jobs=workers,
    backend=backend)`` ('loky' local processes; 'dask' inside a ``dask.distributed`` client).
    ``on_result`` is called with each record as it arrives (as games finish, so that a match
    stopped by Ctrl-C has handed on every game finished before it; local processes), the list
    returned is in task order. A game's notes (an engine's forfeit) are logged here, when it
    arrives: a game cut off by a shutdown never does, and its engines killed by the shutdown are
    not reported.
    """
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    got: dict[int, GameRecord] = {}

    def arrived(index: int, rec: GameRecord) -> None:
        for note in rec.notes:
            log.warning("%s", note)
        got[index] = rec
        if on_result is not None:
            on_result(rec)

    if any(t.white.is_builtin or t.black.is_builtin for t in tasks):
        warm_up()  # compiled (and said so) before the first game; on disk before workers load it
    if workers == 1 or len(tasks) <= 1:
        for i, t in enumerate(tasks):
            arrived(i, play_task(t))
        return [got[i] for i in range(len(tasks))]

    close_all()  # the workers play: engines this process started (its spec checks) are idle
    try:  # parallel_config also registers joblib's external backends ('dask')
        config = joblib.parallel_config(backend=backend, n_jobs=workers)
    except ValueError as exc:
        raise ConfigError(f"joblib backend {backend!r}: {exc}; use 'loky' (local processes) "
                          "or 'dask' (inside a dask.distributed Client)") from None
    with config:
        games = None
        try:
            with children_ignore_ctrl_c():  # a Ctrl-C inside is raised when it ends
                games = joblib.Parallel(return_as="generator_unordered" if backend == "loky"
                                        else "generator")(
                    joblib.delayed(_play_in_worker)(i, t, os.getpid())
                    for i, t in enumerate(tasks))
            for index, rec in games:
                arrived(index, rec)
        except BaseException:
            quiet_pool_threads()  # the abort below races with the pool's threads
            raise
        finally:
            # stopped early (Ctrl-C, an error): abort the pool's tasks now, without joblib's
            # warning that tasks were not used or were cancelled (printed when the generator
            # was collected, after the command's one line)
            if games is not None:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*adjusting the input task "
                                            "iterator", category=UserWarning)
                    games.close()
    return [got[i] for i in range(len(tasks))]



# ---- fixtures in rounds --------------------------------------------------------------------------

class _FixtureRun:
    """Mutable bookkeeping of one fixture during :func:`run_fixtures` (parent process only)."""

    def __init__(self, fixture: Fixture, settings: MatchSettings, seed: int) -> None:
        self.fixture = fixture
        self.settings = settings
        self.seed = seed
        self.records: dict[int, GameRecord] = {}
        self.settled = 0          # games accepted, in game order
        self.submitted = 0        # games submitted so far
        self.done = False
        self.stopped_early = False
        self._openings: dict[int, Opening] = {}

    def opening(self, pair: int) -> Opening:
        op = self._openings.get(pair)
        if op is None:
            g, f = self.fixture.openings_key or self.fixture.key
            s = self.settings
            op = draw_opening(s.openings, opening_generator(self.seed, g, f, pair),
                              kind=s.openings_kind, book_plies=s.book_plies)
            self._openings[pair] = op
        return op

    def next_tasks(self, *, pairs_ahead: int) -> list[GameTask]:
        fx = self.fixture
        left = fx.games - self.submitted
        if self.done or left <= 0:
            return []
        if fx.stop == "none":
            n = left
        elif fx.stop == "decisive":
            pts = [self.records[i].points_a() for i in range(self.settled)]
            pa = sum(pts)
            n = games_before_verdict(pa, 2 * len(pts) - pa, fx.games - self.settled)
        else:
            n = min(left, 2 * max(1, pairs_ahead))
        first = self.submitted
        self.submitted += n
        return [game_task(fx, i, self.opening(i // 2), self.settings)
                for i in range(first, first + n)]

    def add(self, rec: GameRecord) -> None:
        self.records[rec.key[3]] = rec

    def settle(self) -> None:
        """Accept finished games in game order, applying the stop rule after each."""
        fx = self.fixture
        while not self.done and self.settled in self.records:
            self.settled += 1
            n = self.settled
            if fx.stop == "decisive":
                pa = sum(self.records[i].points_a() for i in range(n))
                if n < fx.games and decisive_settled(pa, 2 * n - pa, fx.games - n):
                    self._stop()
            elif fx.stop == "sprt" and fx.sprt is not None and n % 2 == 0 and n < fx.games:
                recs = [self.records[i] for i in range(n)]
                if sprt(pentanomial_from_records(recs), fx.sprt).verdict is not None:
                    self._stop()
            if self.settled >= fx.games:
                self.done = True

    def _stop(self) -> None:
        self.done = self.stopped_early = True
        for i in [i for i in self.records if i >= self.settled]:
            del self.records[i]  # speculative sprt pairs past the stopping point

    def result(self) -> MatchResult:
        recs = [self.records[i] for i in range(self.settled)]
        return match_result(recs, sprt_params=self.fixture.sprt, stopped_early=self.stopped_early)


def run_fixtures(fixtures: Sequence[Fixture], *, settings: MatchSettings, seed: int,
                 workers: int = 1, backend: str = "loky",
                 progress: Callable[[GameProgress], None] | None = None,
                 journal: Journal | None = None) -> list[MatchResult]:
    """Play every fixture and return their results, in fixture order. With a ``journal``
    (:mod:`evotune.match.journal`) the games it holds are taken from it instead of played
    (reported first, as ``stored``) and every new game is handed to it as it finishes: a
    stopped call continued with the same journal returns exactly what one uninterrupted call
    returns."""
    keys = [tuple(fx.key) for fx in fixtures]
    if len(set(keys)) != len(keys):
        raise ConfigError("run_fixtures: two fixtures share a key (generation, index); keys "
                          "address the openings' seeds and must be unique")
    runs = [_FixtureRun(fx, settings, int(seed)) for fx in fixtures]
    by_key = {fx.key: r for fx, r in zip(fixtures, runs)}
    planned = sum(fx.games for fx in fixtures)
    counters = {"done": 0, "scheduled": 0}

    def on_result(rec: GameRecord, stored: bool = False) -> None:
        if journal is not None and not stored:
            journal.keep(rec)
        counters["done"] += 1
        if progress is not None:
            progress(GameProgress(done=counters["done"], scheduled=counters["scheduled"],
                                  planned=planned, fixture=rec.key[:2], record=rec,
                                  stored=stored))

    while True:
        active = [r for r in runs if not r.done]
        if not active:
            break
        n_sprt = sum(1 for r in active if r.fixture.stop == "sprt")
        pairs_ahead = math.ceil(workers / (2 * n_sprt)) if n_sprt else 1
        tasks: list[GameTask] = []
        for r in active:
            tasks.extend(r.next_tasks(pairs_ahead=pairs_ahead))
        counters["scheduled"] += len(tasks)
        log.debug("round: %d games for %d fixtures", len(tasks), len(active))
        todo = []
        for task in tasks:
            rec = journal.stored(task.key) if journal is not None else None
            if rec is None:
                todo.append(task)
                continue
            check_stored(rec, task)
            by_key[rec.key[:2]].add(rec)
            on_result(rec, stored=True)
        for rec in map_games(todo, workers=workers, backend=backend, on_result=on_result):
            by_key[rec.key[:2]].add(rec)
        for r in active:
            r.settle()
    return [r.result() for r in runs]


def check_stored(rec: GameRecord, task: GameTask) -> None:
    """StoreError when a journal's game at a task's address was not played by the task's
    players (a journal of another match: its identity should have refused it)."""
    if (rec.white_name, rec.black_name) != (task.white.name, task.black.name) \
            or rec.white_weights != tuple(task.white.weights) \
            or rec.black_weights != tuple(task.black.weights) \
            or rec.opening != task.opening:
        raise StoreError(f"the journal's game {list(rec.key)} ({rec.white_name} - "
                         f"{rec.black_name}) is not this match's game there ({task.white.name} "
                         f"- {task.black.name}); it belongs to another match: continue that "
                         "match, or give this one a folder of its own")


def play_match(a: PlayerSpec, b: PlayerSpec, *, games: int, settings: MatchSettings,
               seed: int, workers: int = 1, stop: str = "none", sprt: SprtParams | None = None,
               progress: Callable[[GameProgress], None] | None = None,
               backend: str = "loky", journal: Journal | None = None) -> MatchResult:
    """One match between A and B (fixture key (0, 0)); ``journal``: as :func:`run_fixtures`."""
    fixture = Fixture(key=(0, 0), a=a, b=b, games=games, stop=stop, sprt=sprt)
    return run_fixtures([fixture], settings=settings, seed=seed, workers=workers,
                        backend=backend, progress=progress, journal=journal)[0]
