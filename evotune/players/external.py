"""A live external UCI engine, driven by python-chess's engine protocol (``chess.engine``).

:func:`engine_for` returns the engine of a :class:`PlayerSpec` from a per-process cache, started
and configured once, so games do not pay a start-up each. :meth:`ExternalEngine.move` (or ``play``) asks for
one move under a depth / nodes / movetime limit and a hard wall-clock timeout. An engine that
crashes, hangs past the timeout or answers an illegal move raises :class:`Forfeit` to the game
loop; the engine is killed and dropped from the cache, so the next game starts a fresh one.
"""
from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from dataclasses import dataclass

import chess
import chess.engine

from ..errors import EngineError
from ..rules import MATE
from . import PlayerSpec

log = logging.getLogger(__name__)

START_TIMEOUT = 10.0
"""Seconds an engine has to answer ``uci`` with ``uciok`` (and to accept options)."""
MOVE_TIMEOUT = 60.0
"""Hard per-move wall-clock limit when the move limit has no time component."""
TIMEOUT_MARGIN = 2.0
"""Seconds granted past ``movetime`` before a move counts as a hang."""

QUIT_TIMEOUT = 1.0
"""Seconds an engine has to exit after ``quit`` before it is killed."""

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
    """Hard wall-clock limit per move; None: movetime + TIMEOUT_MARGIN, or MOVE_TIMEOUT."""

    def to_chess(self) -> chess.engine.Limit:
        """The python-chess limit (``go depth d nodes n movetime ms``; only the non-zero parts)."""
        return chess.engine.Limit(depth=self.depth or None, nodes=self.nodes or None,
                                  time=self.movetime or None)

    @property
    def hard_timeout(self) -> float:
        if self.timeout is not None:
            return float(self.timeout)
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




def _score_cp(score: chess.engine.PovScore | None, turn: chess.Color) -> int | None:
    if score is None:
        return None
    s = score.pov(turn)
    mate = s.mate()
    if mate is None:
        return int(s.score())
    # mate in n moves for the mover = mate at ply 2n-1; mated in n = at ply 2n
    return MATE - (2 * mate - 1) if mate > 0 else -(MATE - 2 * (-mate))


def _describe(command: tuple[str, ...]) -> str:
    return " ".join(command)


class ExternalEngine:
    """One running UCI engine process started from a 'uci' PlayerSpec."""

    def __init__(self, spec: PlayerSpec, *, start_timeout: float = START_TIMEOUT) -> None:
        if spec.kind != "uci" or not spec.command:
            raise EngineError(f"player '{spec.name}' is not an external UCI engine with a command; "
                              "give kind='uci' and command=(path, args...)")
        self.spec = spec
        cmd = _describe(spec.command)
        try:
            self._engine = chess.engine.SimpleEngine.popen_uci(list(spec.command), timeout=start_timeout)
        except (TimeoutError, asyncio.TimeoutError):  # before OSError: TimeoutError is one
            raise EngineError(f"engine command '{cmd}' did not answer 'uci' with 'uciok' within "
                              f"{start_timeout:g} s; is it a UCI engine?") from None
        except (OSError, ValueError) as exc:
            raise EngineError(f"engine command '{cmd}' did not start: {exc}; check the path and "
                              "that the file is an executable UCI engine") from None
        except chess.engine.EngineTerminatedError as exc:
            raise EngineError(f"engine command '{cmd}' exited during the UCI handshake ({exc}); "
                              "run it by hand and type 'uci' to see why") from None
        except chess.engine.EngineError as exc:
            raise EngineError(f"engine command '{cmd}' failed the UCI handshake: {exc}") from None
        try:
            self._configure(dict(spec.options))
        except BaseException:
            self.close(quick=True)
            raise
        self.name = self._engine.id.get("name", cmd)
        self._game = 0
        log.info("started engine %r (%s)", self.name, cmd)

    def _configure(self, options: dict) -> None:
        known = self._engine.options
        unknown = [k for k in options if k not in known]
        if unknown:
            raise EngineError(f"engine '{_describe(self.spec.command)}' has no UCI option(s) "
                              f"{', '.join(repr(k) for k in unknown)}; it offers "
                              f"{', '.join(sorted(known)) or '(none)'}")
        try:
            self._engine.configure(options)
        except chess.engine.EngineError as exc:
            raise EngineError(f"engine '{_describe(self.spec.command)}': cannot set options "
                              f"{options}: {exc}") from None
        except (TimeoutError, asyncio.TimeoutError):
            raise EngineError(f"engine '{_describe(self.spec.command)}' did not accept its options "
                              "in time") from None

    @property
    def options(self):
        """The engine's declared UCI options (python-chess ``Option`` objects, case-insensitive)."""
        return self._engine.options

    @property
    def alive(self) -> bool:
        return not self._engine.returncode.done()

    def new_game(self) -> None:
        """Mark the start of a new game (python-chess then sends ``ucinewgame``)."""
        self._game += 1

    def move(self, board: chess.Board, limit: MoveLimit) -> chess.Move:
        """The engine's move in ``board`` (history included) under ``limit``; Forfeit on a fault."""
        return self.play(board, limit).move

    def play(self, board: chess.Board, limit: MoveLimit) -> EngineMove:
        """Like :meth:`move`, with the score, nodes and PV the engine reported."""
        turn = board.turn
        timeout = limit.hard_timeout
        what = f"engine '{self.name}'"
        try:
            protocol = self._engine.protocol
            coro = asyncio.wait_for(
                protocol.play(board, limit.to_chess(), game=(id(self), self._game),
                              info=chess.engine.INFO_SCORE | chess.engine.INFO_PV), timeout)
            future = asyncio.run_coroutine_threadsafe(coro, protocol.loop)
            # the inner wait_for is the limit; the outer one only guards a stuck event loop
            result = future.result(timeout + 5.0)
        except (TimeoutError, asyncio.TimeoutError):
            raise Forfeit("timeout", f"{what} gave no move within {timeout:g} s") from None
        except chess.engine.EngineTerminatedError as exc:
            raise Forfeit("crash", f"{what} died: {exc}") from None
        except chess.engine.EngineError as exc:  # before RuntimeError: it is one
            raise Forfeit("illegal-move", f"{what} answered an illegal move: {exc}") from None
        except RuntimeError as exc:  # event loop closed: the engine is gone
            raise Forfeit("crash", f"{what} is not running: {exc}") from None
        if result.move is None or result.move not in board.legal_moves:
            raise Forfeit("illegal-move", f"{what} answered {result.move} in {board.fen()}, "
                          "which is not a legal move")
        info = result.info
        return EngineMove(move=result.move, score=_score_cp(info.get("score"), turn),
                          nodes=int(info.get("nodes", 0) or 0),
                          pv=tuple(m.uci() for m in info.get("pv", ())))

    def close(self, *, quick: bool = False) -> None:
        """Stop the engine: ``quit`` then kill (only kill when ``quick`` or it does not answer)."""
        if not quick and self.alive:
            try:
                self._engine.timeout = QUIT_TIMEOUT
                self._engine.quit()
            except Exception:  # noqa: BLE001 - already dead, hung or shutting down: kill below
                pass
        self._engine.close()
        try:  # let the event loop see the exit before it closes (else asyncio logs a warning)
            self._engine.returncode.result(timeout=2.0)
        except Exception:  # noqa: BLE001 - a process that will not die is the OS's business now
            pass


# ---- the per-process cache of live engines --------------------------------------------------------

_LIVE: dict[tuple, ExternalEngine] = {}
_LOCK = threading.Lock()


def _key(spec: PlayerSpec) -> tuple:
    return (spec.command, tuple((str(k), repr(v)) for k, v in spec.options))


def engine_for(spec: PlayerSpec) -> ExternalEngine:
    """The live engine of ``spec`` in this process (started on first use, restarted if it died)."""
    key = _key(spec)
    with _LOCK:
        eng = _LIVE.get(key)
        if eng is not None and not eng.alive:
            eng.close(quick=True)
            eng = None
        if eng is None:
            eng = ExternalEngine(spec)
            _LIVE[key] = eng
        return eng


def discard(spec: PlayerSpec) -> None:
    """Kill the engine of ``spec`` (after a forfeit) so the next game starts a fresh one."""
    with _LOCK:
        eng = _LIVE.pop(_key(spec), None)
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


def _register_close_all() -> None:
    # python-chess runs each engine's event loop in a non-daemon thread, and the interpreter joins
    # non-daemon threads BEFORE atexit handlers run: close_all must run before that join (as
    # concurrent.futures does), else a process with a live engine never exits.
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        register(close_all)
    else:  # pragma: no cover - every supported Python has it
        atexit.register(close_all)


_register_close_all()
