"""The built-in engine as a UCI engine (``evotune uci``), so GUIs and tools can play it.

Commands: ``uci``, ``isready``, ``setoption name <Option> value <v>``, ``ucinewgame``,
``position startpos|fen <fen> [moves ...]``, ``go [depth d] [nodes n] [movetime ms]
[wtime/btime/winc/binc/movestogo ...] [infinite]``, ``stop``, ``quit`` (plus ``debug``, ignored).
Every weight of the engine spec (engines/shannon.toml) is a spin option named by its ``option``
field, with the reference value as default and the bounds as min/max (the fixed pawn weight has
min = max = 100). An ``nnue`` spec's net is the string option ``EvalFile`` (the file's path;
``setoption name EvalFile value <path>`` loads another); its spin options are its search's
weights, if any (a UCT or probability-limited spec's). The search runs in a
thread: iterative deepening calls ``evotune.engine.search(depth=d)`` for d = 1, 2, ... and
prints one ``info`` line per completed depth, then ``bestmove``; ``stop``, a node budget or a
timer (movetime, clock) sets the core's stop flag. Unknown or malformed input is answered with
``info string`` and otherwise ignored, except a ``go``: every one gets a ``bestmove`` (a bad one
the smallest search). ``isready`` is answered at once during a search, also behind a command
that waits for one. Every output line is flushed.

This module is the engine's state and its protocol loop (commands in, a search thread, lines
out); the text of ``go`` and ``position`` is read by :mod:`evotune.engine.uci.commands`, the
options are declared and checked by :mod:`evotune.engine.uci.engineoptions`.
"""
from __future__ import annotations

import collections
import logging
import queue
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import IO

import chess
import numpy as np

from ... import __version__
from ...errors import ConfigError, EvotuneError
from ...spec.file import load_engine_spec
from ...spec.model import EngineSpec
from ...weightsio import load_weights_file
from ..api import iterate, search
from ..evaluation import evaluation_of
from ..net.network import Net, read_net
from ..searches import SearchTree
from .commands import LEAST, MAX_NODES, GoPlan, format_score, parse_go, parse_position
from .engineoptions import EVAL_FILE, SpinOptions, option_lines, parse_setoption
from .timeman import LAG_WEIGHT

log = logging.getLogger(__name__)

ENGINE_NAME = "evotune"
AUTHOR = "the evotune authors"
SWITCH_INTERVAL = 0.001
"""Seconds between the GIL's hand-overs while ``evotune uci`` runs (Python's default: 0.005)."""


class UciEngine:
    """The UCI state machine: feed it lines with :meth:`handle`; it writes to ``out``."""

    def __init__(self, *, weights=None, spec: EngineSpec | None = None, out: IO[str] | None = None,
                 warm: bool = True, net: str | Path | None = None) -> None:
        self.spec = spec or load_engine_spec("shannon")
        space = self.spec.space()
        self.net_path = ""
        if evaluation_of(self.spec.features).reads_file:  # a net: the file named or the spec's
            self.net_path = str(net or self.spec.net)
            if not self.net_path:
                raise ConfigError(f"engine spec '{self.spec.name}' names no net; give "
                                  f"{self.spec.name}:FILE")
            self.net: Net | None = read_net(self.net_path)
            # the spec's weights are its search's (a net's spec evaluates with the file)
            self.weights = space.reference_array
        else:
            self.net = None
            self.weights = space.reference_array if weights is None else space.validate(weights)
        self._options = SpinOptions(self.spec)
        self.out = out or sys.stdout
        self.board = chess.Board()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = np.zeros(1, dtype=np.int64)
        self._stop_event = threading.Event()
        self._timer: threading.Timer | None = None
        self._infinite = False
        self._stops_queued = 0  # 'stop'/'quit' lines read but not handled yet
        self._readies_queued = 0  # 'isready' lines read but not handled yet ...
        self._readies_early = 0  # ... and those of them answered while a command waited
        self._go_arrivals: collections.deque[float] = collections.deque()  # when 'go' lines came in
        self._tree: SearchTree | None = None  # a UCT spec's tree, kept between moves
        self._moves: list[str] = []  # the move list of the last 'position' command
        self._head: list[str] = ["startpos"]  # ... and what came before it
        self._lag = 0.0
        self._last: dict[bool, list] = {}  # colour -> [clock, inc, seconds to bestmove] of its last go
        self._warm_stop = np.zeros(1, dtype=np.int64)  # set by 'go': the warm-up's search ends
        self._warm = threading.Thread(target=self._warm_up, name="evotune-warm-up", daemon=True)
        if warm:
            self._warm.start()

    # -- output ----------------------------------------------------------------------------------
    def say(self, line: str) -> None:
        """Write one line and flush (thread-safe)."""
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def info_string(self, text: str) -> None:
        self.say("info string " + " ".join(text.split()))

    # -- engine loading ----------------------------------------------------------------------------
    def _warm_up(self) -> None:
        """Import the core and load (or compile) its numba cache: alpha-beta's entry point and,
        for another search, the spec's own, so that the first 'go' does not spend its time
        loading code. The searches are the smallest that run that code (depth 1; 64 nodes, a
        UCT budget counted in nodes, so that no leaf search outgrows it) and read
        ``_warm_stop``, so the warm-up is the loading of the code and never a search."""
        list(iterate(chess.STARTING_FEN, np.array([100, 300, 330, 500, 900, 10],
                                                  dtype=np.float64), depth=1, nodes=64,
                     stop=self._warm_stop))
        if not self.spec.search.is_alphabeta:
            n = self.spec.eval_size
            evaluation = self.weights[:n] if self.net is None else self.net
            try:  # best effort: a 'go' reports what goes wrong in its own search
                settings = replace(self.spec.search.with_weights(self.weights[n:]),
                                   budget_unit="nodes", reuse=False)
                search(chess.STARTING_FEN, evaluation, nodes=64, features=self.spec.features,
                       settings=settings, stop=self._warm_stop)
            except Exception:  # noqa: BLE001
                log.debug("warm-up search failed", exc_info=True)

    def _ready(self) -> None:
        """Wait for the warm-up: the core's code loaded (seconds from the cache; numba compiles
        it on the first run after an install, minutes)."""
        if self._warm.ident is None:
            self._warm.start()
        self._warm.join()

    # -- commands ------------------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Process one input line; False after ``quit``. Never raises for bad input."""
        tokens = line.split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        if cmd in ("stop", "quit") and self._stops_queued:
            with self._lock:
                self._stops_queued -= 1
        try:
            if cmd == "quit":
                self.stop()
                return False
            handler = getattr(self, f"_cmd_{cmd}", None)
            if handler is None:
                self.info_string(f"unknown command '{line.strip()[:80]}' ignored")
            else:
                handler(args)
        except (ValueError, EvotuneError) as exc:
            self.info_string(f"error: {exc} (in '{line.strip()[:80]}')")
        except Exception as exc:  # noqa: BLE001 - a UCI engine must survive any input line
            log.exception("command %r failed", line)
            self.info_string(f"error: {type(exc).__name__}: {exc} (in '{line.strip()[:80]}')")
        return True

    def _cmd_uci(self, args: list[str]) -> None:
        self.say(f"id name {ENGINE_NAME} {self._version()}")
        self.say(f"id author {AUTHOR}")
        for line in option_lines(self.spec, self.weights, self.net_path):
            self.say(line)
        self.say("uciok")

    @staticmethod
    def _version() -> str:
        return __version__

    def _cmd_debug(self, args: list[str]) -> None:
        pass

    def _cmd_isready(self, args: list[str]) -> None:
        with self._lock:
            early = self._readies_early > 0
            if early:  # answered while the command before it waited for a search
                self._readies_early -= 1
            elif self._readies_queued:
                self._readies_queued -= 1
        if not early:
            self._ready()
            self.say("readyok")

    def _answer_queued_readies(self) -> None:
        """Answer the 'isready' lines read while a command waits for the running search (UCI:
        at once, even while the engine searches); :meth:`_cmd_isready` skips them later."""
        while True:
            with self._lock:
                if not self._readies_queued:
                    return
                self._readies_queued -= 1
                self._readies_early += 1
            self.say("readyok")

    def _cmd_setoption(self, args: list[str]) -> None:
        name, value_tokens = parse_setoption(args)
        if self.net_path and name.lower() == EVAL_FILE.lower():
            path = " ".join(value_tokens)
            net = read_net(path)  # NetError: answered as an info string, the net in use stays
            self._finish()
            self.net, self.net_path = net, path
            return
        # checked before waiting for a running search to end
        i, value = self._options.value(name, value_tokens)
        self._finish()
        self.weights = np.asarray(self.weights).copy()
        self.weights[i] = value

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._finish()
        self.board = chess.Board()
        self._head, self._moves = ["startpos"], []
        self._last.clear()
        self._tree = None

    def _cmd_position(self, args: list[str]) -> None:
        cut = args.index("moves") if "moves" in args else len(args)
        head, moves = args[:cut], args[cut + 1:]
        known = len(self._moves)
        if head == self._head and moves[:known] == self._moves and known:
            self._finish()
            # the same game a few moves on (what a GUI sends every move): push only the new
            # moves, so a long game is not replayed from its start before each search
            pushed = 0
            try:
                for uci in moves[known:]:
                    self.board.push_uci(uci)
                    pushed += 1
            except ValueError:
                for _ in range(pushed):
                    self.board.pop()
                raise
        else:
            board = parse_position(args)
            self._finish()
            self.board, self._head = board, head
        self._moves = moves

    def _cmd_go(self, args: list[str]) -> None:
        # the clock runs from the moment the line came in, not from when it is handled
        arrived = self._go_arrivals.popleft() if self._go_arrivals else time.perf_counter()
        turn = self.board.turn
        try:
            plan = parse_go(args, turn)
        except ValueError as exc:  # every 'go' gets its bestmove: the smallest search
            self.info_string(f"error: {exc} (in 'go {' '.join(args)[:80]}'); searching depth 1, "
                             "nodes 1 instead")
            args, plan = [], LEAST
        self._finish()
        if plan.clock is not None and plan.movestogo is None:
            self._measure_lag(self._last.get(turn), plan.clock)
            plan = parse_go(args, turn, lag=self._lag)
            self._last[turn] = [plan.clock, plan.inc, None]
        else:
            self._last.pop(turn, None)
        self._warm_stop[0] = 1
        self._ready()
        self._stop[0] = 0
        self._stop_event.clear()
        self._infinite = plan.infinite
        # the history the search needs is the reversible tail (repetitions): copying a long
        # game's whole move stack for every iteration would cost the clock milliseconds a move
        reuse = self.spec.search.algorithm == "uct" and self.spec.search.reuse
        board = self.board.copy(stack=True if reuse else self.board.halfmove_clock)
        weights = self.weights.copy()
        if plan.seconds > 0:
            left = plan.seconds - (time.perf_counter() - arrived)
            if left <= 0:  # nothing left to plan with: the first iteration only
                self._set_stop()
            else:  # started before the search, which holds the GIL until it enters the core
                self._timer = threading.Timer(left, self._set_stop)
                self._timer.daemon = True
                self._timer.start()
        self._thread = threading.Thread(target=self._search,
                                        args=(board, weights, self.net, plan, arrived,
                                              self._last.get(turn)),
                                        name="evotune-search", daemon=True)
        self._thread.start()

    def _cmd_stop(self, args: list[str]) -> None:
        self.stop()

    def _cmd_ponderhit(self, args: list[str]) -> None:
        pass

    # -- searching -------------------------------------------------------------------------------
    def _set_stop(self) -> None:
        self._stop[0] = 1
        self._stop_event.set()

    def stop(self) -> None:
        """Stop a running search and wait for its ``bestmove``."""
        thread = self._thread
        if thread is None:
            return
        self._set_stop()
        thread.join()
        self._thread = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _finish(self) -> None:
        """Before a command that changes the state: let a finite search end, stop an infinite one
        (a GUI sends these only after ``bestmove``; a script piping commands expects each
        ``go`` to complete)."""
        if not self._infinite:
            self.wait()
        self.stop()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the running search to end on its own (tests, scripted use), or until a
        'stop'/'quit' waits in the input behind the current command."""
        thread, end = self._thread, None if timeout is None else time.perf_counter() + timeout
        while thread is not None and thread.is_alive():
            if self._stops_queued:
                self._set_stop()
            self._answer_queued_readies()
            left = 0.05 if end is None else min(0.05, end - time.perf_counter())
            if left <= 0:
                return
            thread.join(left)

    def _measure_lag(self, last: list | None, clock: float) -> None:
        """Update :meth:`lag` from the clock of this ``go`` and the side's previous one."""
        if last is None or last[2] is None:
            return
        prev, inc, seconds = last
        sample = prev - seconds + inc - clock  # what the GUI charged beyond our own time
        if -0.1 < sample < 1.0:  # else not the same game's next move (a new game, a reset clock)
            self._lag += LAG_WEIGHT * (max(0.0, sample) - self._lag)

    def lag(self) -> float:
        """Seconds the GUI charges a move beyond the engine's own time from reading ``go`` to
        writing ``bestmove`` (pipes, its reading, scheduling): a moving average over the moves
        of a side under a clock with increment (the clock at a ``go`` against the one before,
        less the time taken, plus the increment). :func:`~evotune.engine.uci.timeman.allot` keeps it
        off the plan."""
        return self._lag

    def _search(self, board: chess.Board, weights: np.ndarray, net: Net | None, plan: GoPlan,
                arrived: float = 0.0, last: list | None = None) -> None:
        try:
            best = self._iterate(board, weights, net, plan)
        except Exception as exc:  # noqa: BLE001 - the GUI must get a bestmove whatever happens
            log.exception("search failed")
            self.info_string(f"error: search failed: {exc}")
            best = ""
        if plan.infinite:
            self._stop_event.wait()  # UCI: no bestmove before 'stop' in infinite mode
        if not best:
            legal = list(board.legal_moves)
            best = legal[0].uci() if legal else "(none)"
        if last is not None:
            last[2] = time.perf_counter() - arrived
        self.say(f"bestmove {best}")

    def _iterate(self, board: chess.Board, weights: np.ndarray, net: Net | None,
                 plan: GoPlan) -> str:
        """The search of ``go``: with ``weights`` (the spec's: the evaluation's, then the
        search's) or, for a net's spec, with ``net`` and the search's ``weights``."""
        if not self.spec.search.is_alphabeta:
            return self._search_other(board, weights, net, plan)
        evaluation = weights if net is None else net
        best = ""
        # one iterative-deepening search, an info line per completed iteration
        for res in iterate(board, evaluation, depth=plan.depth, nodes=plan.nodes,
                           stop=self._stop, features=self.spec.features,
                           settings=self.spec.search):
            if not res.move:  # no legal move: mated or stalemate
                self.say(f"info depth 0 score {format_score(res.score)}")
                return ""
            best = res.move
            secs = max(res.seconds, 1e-6)
            pv = " ".join(res.pv) if res.pv else res.move
            self.say(f"info depth {res.depth} score {format_score(res.score)} nodes {res.nodes} "
                     f"nps {int(res.nodes / secs)} time {int(secs * 1000)} pv {pv}")
        return best

    def _search_other(self, board: chess.Board, weights: np.ndarray, net: Net | None,
                      plan: GoPlan) -> str:
        """One UCT or probability-limited search: ``go nodes`` is its budget in nodes, as UCI
        says ("search x nodes only"; UCT then counts every node of its leaf searches, whatever
        the spec's ``budget`` unit, so that one deep leaf cannot outgrow ``go nodes 1``), ``go
        movetime``, a clock or ``go infinite`` stop it through the stop flag, and otherwise
        (``go depth``) the spec's default budget applies."""
        n = self.spec.eval_size
        settings = self.spec.search.with_weights(weights[n:])
        if plan.nodes and settings.algorithm == "uct":
            settings = replace(settings, budget_unit="nodes")
        budget = plan.nodes or (MAX_NODES if plan.seconds or plan.infinite else 0)
        if settings.algorithm == "uct" and settings.reuse and self._tree is None:
            self._tree = SearchTree(settings.tree)
        res = search(board, weights[:n] if net is None else net, nodes=budget, stop=self._stop,
                     features=self.spec.features, settings=settings, tree=self._tree)
        if not res.move:
            self.say(f"info depth 0 score {format_score(res.score)}")
            return ""
        secs = max(res.seconds, 1e-6)
        pv = " ".join(res.pv) if res.pv else res.move
        self.say(f"info depth {max(res.depth, 1)} score {format_score(res.score)} nodes "
                 f"{res.nodes} nps {int(res.nodes / secs)} time {int(secs * 1000)} pv {pv}")
        if res.simulations:
            self.info_string(f"simulations {res.simulations}")
        return res.move

    # -- main loop ---------------------------------------------------------------------------------
    def _lines(self, stdin: IO[str]):
        """Input lines, read in a thread: a queued 'stop' or 'quit' stops the running search
        while a command before it waits for that search (e.g. 'go depth 64' then 'position
        ...'), so it always gets its bestmove. None ends the input."""
        lines: queue.Queue = queue.Queue()

        def read() -> None:
            try:
                for line in stdin:
                    first = line.split()[:1]
                    if first in (["stop"], ["quit"]):
                        with self._lock:
                            self._stops_queued += 1
                    elif first == ["isready"]:
                        with self._lock:
                            self._readies_queued += 1
                    elif first == ["go"]:
                        self._go_arrivals.append(time.perf_counter())
                    lines.put(line)
            finally:
                lines.put(None)

        threading.Thread(target=read, name="evotune-uci-input", daemon=True).start()
        while True:
            line = lines.get()
            yield line
            if line is None:
                return

    def run(self, stdin: IO[str] | None = None) -> None:
        """Read commands until ``quit`` or end of input (which is ``quit``: a running search
        stops at once and answers its ``bestmove``)."""
        # the input, timer and search threads take turns on the GIL: switch every millisecond
        # (Python's default is 5 ms), so that a 'go' line or the timer is not kept waiting
        sys.setswitchinterval(SWITCH_INTERVAL)
        if stdin is None:
            stdin = sys.stdin
            if hasattr(stdin, "reconfigure"):
                stdin.reconfigure(errors="replace")  # undecodable bytes become garbage, not a crash
        for line in self._lines(stdin):
            if line is None:  # end of input is 'quit' (as Stockfish): a GUI that closed the pipe
                self.stop()  # waits for no answer, and 'go depth 64' must not search for ever
                break
            if not self.handle(line):
                break
        if self._timer is not None:
            self._timer.cancel()


def run(*, weights_file: str | Path | None = None, engine: str | EngineSpec = "shannon",
        stdin: IO[str] | None = None, stdout: IO[str] | None = None,
        net: str | Path | None = None) -> None:
    """``evotune uci``: speak UCI on stdin/stdout with a builtin engine spec's options (every
    weight of the spec is a spin option; default shannon; an nnue spec plays ``net``, default
    the spec's)."""
    spec = engine if isinstance(engine, EngineSpec) else load_engine_spec(engine)
    if spec.kind != "builtin":
        raise ConfigError(f"evotune uci plays the built-in engine; '{spec.name}' is a "
                           f"'{spec.kind}' spec")
    if weights_file and evaluation_of(spec.features).reads_file:
        raise ConfigError("--weights: an nnue engine has no weights; give its net as "
                          "--engine nnue:FILE")
    weights = load_weights_file(weights_file, spec) if weights_file else None
    UciEngine(weights=weights, spec=spec, out=stdout, net=net).run(stdin)
