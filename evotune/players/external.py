"""A live external UCI engine, driven over plain pipes, reused across games and weight vectors.

:func:`engine_for` returns the engine of a :class:`PlayerSpec` for one side (``slot``) from a
per-process cache: one process per command, start-up options and side, started once. Between
games the same process gets the candidate's values with ``setoption`` (only the options that
changed), then ``ucinewgame`` and ``isready`` (:meth:`ExternalEngine.new_game`), so a generation
of weight vectors costs no start-ups. :meth:`ExternalEngine.play` sends ``position`` and ``go``
(depth / nodes / movetime, or real clocks ``wtime btime winc binc``) and reads lines until
``bestmove`` or a hard wall-clock deadline. An engine that crashes, hangs past the deadline or
answers an illegal move raises :class:`Forfeit` to the game loop; its whole process group is
killed (it runs in a process group of its own) and it is dropped from the cache, so the next game starts a
fresh one. The protocol is spoken directly (no event loop, no thread per engine): the only
per-move work besides the engine's own is writing two lines and reading its answer.
"""
from __future__ import annotations

import atexit
import logging
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import chess

from ..errors import EngineError
from . import PlayerSpec
from .uciproto import (
    UciOption,
    info_depth,
    info_nodes_pv,
    parse_info_score,
    parse_option,
    position_command,
)

log = logging.getLogger(__name__)

START_TIMEOUT = 10.0
"""Seconds an engine has to answer ``uci`` with ``uciok`` (and ``isready`` with ``readyok``
after ``ucinewgame``)."""
READY_TIMEOUT = 60.0
"""Seconds an engine has to answer its first ``isready``: where UCI engines do their heavy
start-up (a net loaded, tables built; ``evotune uci`` loads its compiled core there, 12 to 25 s
from its start on this project's loaded 2-core machine, docs/results/search-latency.md)."""
MOVE_TIMEOUT = 60.0
"""Hard per-move wall-clock limit when the move limit has no time component."""
TIMEOUT_MARGIN = 2.0
"""Seconds granted past ``movetime`` (or the clock) before a move counts as a hang."""
QUIT_TIMEOUT = 1.0
"""Seconds an engine has to exit after ``quit`` before its process group is killed."""

FORFEIT_REASONS = ("crash", "timeout", "illegal-move")


class Forfeit(EngineError):
    """An engine lost the game by misbehaving: ``reason`` is 'crash', 'timeout' or 'illegal-move'."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class MoveLimit:
    """How long an external engine may think about one move."""

    depth: int = 0
    """Search depth in plies (0 = no depth limit)."""
    nodes: int = 0
    """Node limit (0 = none)."""
    movetime: float = 0.0
    """Seconds per move (0 = none)."""
    timeout: float | None = None
    """Hard wall-clock limit per move; None: movetime (or the mover's clock) + TIMEOUT_MARGIN,
    else MOVE_TIMEOUT."""
    wtime: float | None = None
    """White's clock in seconds (a real time control: ``go wtime btime winc binc``)."""
    btime: float | None = None
    """Black's clock in seconds."""
    winc: float = 0.0
    """White's increment per move in seconds."""
    binc: float = 0.0
    """Black's increment per move in seconds."""

    def go_command(self) -> str:
        """The ``go`` line (only the non-zero parts; clocks in whole milliseconds)."""
        parts = ["go"]
        if self.wtime is not None and self.btime is not None:
            parts += ["wtime", str(max(0, int(self.wtime * 1000))),
                      "btime", str(max(0, int(self.btime * 1000))),
                      "winc", str(int(round(self.winc * 1000))),
                      "binc", str(int(round(self.binc * 1000)))]
        if self.depth:
            parts += ["depth", str(int(self.depth))]
        if self.nodes:
            parts += ["nodes", str(int(self.nodes))]
        if self.movetime:
            parts += ["movetime", str(max(1, int(round(self.movetime * 1000))))]
        if len(parts) == 1:
            parts.append("infinite")  # never sent by evotune: every limit has a part
        return " ".join(parts)

    def hard_timeout(self, turn: chess.Color = chess.WHITE) -> float:
        """Seconds after ``go`` past which the engine is treated as hung and killed."""
        if self.timeout is not None:
            return float(self.timeout)
        clock = self.wtime if turn == chess.WHITE else self.btime
        if clock is not None:
            return max(0.0, clock) + TIMEOUT_MARGIN
        return self.movetime + TIMEOUT_MARGIN if self.movetime > 0 else MOVE_TIMEOUT


@dataclass(frozen=True)
class EngineMove:
    """One move of an external engine with what it reported about it."""

    move: chess.Move
    """The move (legal in the position asked)."""
    score: int | None
    """Score in centipawns from the mover's view (mates as +-(MATE - plies)); None if not sent."""
    nodes: int
    """Nodes the engine reported (0 if not sent)."""
    pv: tuple[str, ...]
    """Principal variation it reported, UCI (may be empty)."""
    seconds: float = 0.0
    """Wall time from sending ``go`` to reading ``bestmove``."""
    depth: int = 0
    """The depth of the last ``info`` line with a score (0 if not sent)."""


def _describe(command: tuple[str, ...]) -> str:
    return " ".join(command)


class ExternalEngine:
    """One running UCI engine process started from a 'uci' PlayerSpec."""

    def __init__(self, spec: PlayerSpec, *, start_timeout: float = START_TIMEOUT,
                 ready_timeout: float = READY_TIMEOUT) -> None:
        if spec.kind != "uci" or not spec.command:
            raise EngineError(f"player '{spec.name}' is not an external UCI engine with a command; "
                              "give kind='uci' and command=(path, args...)")
        self.spec = spec
        self.command = _describe(spec.command)
        if not all(str(part).isprintable() for part in spec.command):
            raise EngineError(f"engine command {self.command!r} holds a line break or another "
                              "control character; rename or move the engine (its command is "
                              "written into each game's PGN headers)")
        _STARTS[0] += 1
        self._buffer = b""
        self._values: dict[str, str] = {}   # lower-case name -> value last sent
        self.options: dict[str, UciOption] = {}
        self.name = self.command
        try:
            self._proc = subprocess.Popen(list(spec.command), stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          process_group=0)
        except (OSError, ValueError) as exc:
            raise EngineError(f"engine command '{self.command}' did not start: {exc}; check the "
                              "path and that the file is an executable UCI engine") from None
        try:
            self._handshake(start_timeout)
            self.configure(dict(spec.options))
            self.configure(dict(spec.weight_options))
            self._ready(ready_timeout)
        except BaseException as exc:
            self.close(quick=True)
            if isinstance(exc, Forfeit):
                raise EngineError(f"engine command '{self.command}' {exc.args[0]} during start-up; "
                                  "run it by hand and type 'uci' to see why") from None
            raise
        log.info("started engine %r (%s)", self.name, self.command)

    # -- the pipes -------------------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write one line to the engine; Forfeit('crash') when its input is closed."""
        assert self._proc.stdin is not None  # started with stdin=PIPE
        try:
            os.write(self._proc.stdin.fileno(), (line + "\n").encode())
        except (BrokenPipeError, OSError, ValueError):
            raise Forfeit("crash", f"engine '{self.name}' exited (exit code "
                                   f"{self._proc.poll()}); it no longer reads its input") from None

    def read_line(self, deadline: float) -> str:
        """The next output line; Forfeit('timeout') past ``deadline`` (perf_counter), 'crash' at
        end of output."""
        assert self._proc.stdout is not None  # started with stdout=PIPE
        fd = self._proc.stdout.fileno()
        while True:
            nl = self._buffer.find(b"\n")
            if nl >= 0:
                line, self._buffer = self._buffer[:nl], self._buffer[nl + 1:]
                return line.decode(errors="replace").strip()
            wait = deadline - time.perf_counter()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise Forfeit("timeout", f"engine '{self.name}' did not answer in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                code: int | str | None = self._proc.poll()
                if code is None:
                    try:
                        code = self._proc.wait(0.2)
                    except subprocess.TimeoutExpired:
                        code = "unknown"
                raise Forfeit("crash", f"engine '{self.name}' died (exit code {code})")
            self._buffer += chunk

    # -- protocol --------------------------------------------------------------------------------
    def _handshake(self, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        try:
            self.send("uci")
            while True:
                line = self.read_line(deadline)
                if line == "uciok":
                    return
                if line.startswith("id name "):
                    self.name = line[8:].strip() or self.command
                elif line.startswith("option "):
                    opt = parse_option(line)
                    if opt is not None:
                        self.options[opt.name.lower()] = opt
        except Forfeit as exc:
            if exc.reason == "timeout":
                raise EngineError(f"engine command '{self.command}' did not answer 'uci' with "
                                  f"'uciok' within {timeout:g} s; is it a UCI engine?") from None
            raise EngineError(f"engine command '{self.command}' exited during the UCI handshake "
                              f"({exc}); run it by hand and type 'uci' to see why") from None

    def _ready(self, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        self.send("isready")
        while self.read_line(deadline) != "readyok":
            pass

    def option(self, name: str) -> UciOption:
        """The declared option ``name`` (case-insensitive); EngineError naming what it offers."""
        opt = self.options.get(name.lower())
        if opt is None:
            offered = ", ".join(sorted(o.name for o in self.options.values())) or "(none)"
            raise EngineError(f"engine '{self.command}' has no UCI option '{name}'; it offers "
                              f"{offered}")
        return opt

    def configure(self, options: dict) -> None:
        """Send ``setoption`` for each option whose value differs from the last one sent."""
        for name, value in options.items():
            opt = self.option(name)
            text = opt.parse(value)
            key = opt.name.lower()
            if self._values.get(key) != text:
                self.send(f"setoption name {opt.name} value {text}")
                self._values[key] = text

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def new_game(self, values: dict | None = None) -> None:
        """Set ``values`` (only what changed), then ``ucinewgame`` and wait for ``readyok``;
        Forfeit when the engine crashes or does not answer within START_TIMEOUT."""
        if values:
            self.configure(values)
        self.send("ucinewgame")
        try:
            self._ready(START_TIMEOUT)
        except Forfeit as exc:
            if exc.reason == "timeout":
                self.kill()
            raise

    def move(self, board: chess.Board, limit: MoveLimit) -> chess.Move:
        """The engine's move in ``board`` (history included) under ``limit``; Forfeit on a fault."""
        return self.play(board, limit).move

    def play(self, board: chess.Board, limit: MoveLimit, *, position: str | None = None) -> EngineMove:
        """Like :meth:`move`, with the score, nodes and PV the engine reported and its time.

        ``position`` is the ``position`` line when the caller keeps it (the game loop does, so
        that no move list is rebuilt from the board each move).
        """
        if position is None:
            position = position_command(board)
        timeout = limit.hard_timeout(board.turn)
        self.send(position)
        t0 = time.perf_counter()
        self.send(limit.go_command())
        deadline = t0 + timeout
        last_info = ""
        try:
            while True:
                line = self.read_line(deadline)
                if line.startswith("bestmove"):
                    seconds = time.perf_counter() - t0
                    break
                if line.startswith("info") and " score " in line:
                    last_info = line
        except Forfeit as exc:
            if exc.reason == "timeout":
                self.kill()
                raise Forfeit("timeout", f"engine '{self.name}' gave no move within "
                                         f"{timeout:g} s") from None
            raise
        tokens = line.split()
        text = tokens[1] if len(tokens) > 1 else "(none)"
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            move = None
        if move is None or not board.is_legal(move):
            raise Forfeit("illegal-move", f"engine '{self.name}' answered '{text}' in "
                                          f"{board.fen()}, which is not a legal move")
        nodes, pv = info_nodes_pv(last_info) if last_info else (0, ())
        return EngineMove(move=move, score=parse_info_score(last_info) if last_info else None,
                          nodes=nodes, pv=pv, seconds=seconds,
                          depth=info_depth(last_info) if last_info else 0)

    def kill(self) -> None:
        """Kill the engine's whole process group right away.

        The engine leads a process group of its own (``setpgid``), not a session: a session of
        its own would put it in its own scheduler autogroup on Linux, which made engines ~25%
        slower than in the caller's session on a loaded machine (benchmarks/bench_external.py)."""
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def close(self, *, quick: bool = False) -> None:
        """Stop the engine: ``quit`` (unless ``quick``), then kill whatever of its process group
        is left, so that no child it started survives it."""
        if not quick and self.alive:
            try:
                self.send("quit")
                self._proc.wait(QUIT_TIMEOUT)
            except (Forfeit, subprocess.TimeoutExpired):
                pass
        self.kill()
        try:
            self._proc.wait(2.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
            pass
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


# ---- the per-process cache of live engines --------------------------------------------------------

_LIVE: dict[tuple, ExternalEngine] = {}
_STARTS = [0]
_LOCK = threading.Lock()


def _key(spec: PlayerSpec, slot: int) -> tuple:
    # per thread too: a Dask worker with several threads plays several games at once
    return (spec.command, tuple((str(k), repr(v)) for k, v in spec.options), int(slot),
            threading.get_ident())


def shares_process(a: PlayerSpec, b: PlayerSpec) -> bool:
    """True when ``a`` and ``b`` are served by the same cached process (same command and
    start-up options): a game between them needs two processes, one per slot; otherwise each
    plays from slot 0, so a worker holds one process per engine."""
    return _key(a, 0) == _key(b, 0)


def engine_for(spec: PlayerSpec, slot: int = 0) -> ExternalEngine:
    """The live engine of ``spec`` for side ``slot`` in this process and thread (started on
    first use, restarted if it died). The cache key is the command, the start-up options, the
    slot and the thread, not the weight options: one process serves every weight vector."""
    key = _key(spec, slot)
    with _LOCK:
        eng = _LIVE.get(key)
        if eng is not None and not eng.alive:
            eng.close(quick=True)
            eng = None
        if eng is None:
            eng = ExternalEngine(spec)
            _LIVE[key] = eng
        return eng


def discard(spec: PlayerSpec, slot: int = 0) -> None:
    """Kill the engine of ``spec`` (after a forfeit) so the next game starts a fresh one."""
    with _LOCK:
        eng = _LIVE.pop(_key(spec, slot), None)
    if eng is not None:
        eng.close(quick=True)


def close_all() -> None:
    """Quit every live engine of this process (registered at exit)."""
    with _LOCK:
        engines = list(_LIVE.values())
        _LIVE.clear()
    for eng in engines:
        eng.close()


def live_count() -> int:
    """Number of live cached engines in this process."""
    return len(_LIVE)


def started_count() -> int:
    """Engines started in this process so far (tests check that engines are reused)."""
    return _STARTS[0]


atexit.register(close_all)
