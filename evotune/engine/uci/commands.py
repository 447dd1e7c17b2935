"""The text of the UCI commands the built-in engine's front end reads, and of the scores it
writes: ``go`` (:class:`GoPlan`, its time planned by :func:`~evotune.engine.uci.timeman.allot`),
``position`` (a board) and ``cp``/``mate`` scores. Pure parsing and formatting, no state:
:class:`~evotune.engine.uci.frontend.UciEngine` acts on what they return."""
from __future__ import annotations

from dataclasses import dataclass

import chess

from ...rules import MATE, MATE_BOUND
from .timeman import allot

MAX_DEPTH = 64
"""Deepest iteration of ``go infinite`` / time-limited searches (a deeper ``go depth`` is
searched to it)."""
MAX_NODES = 10**12
"""= evotune.engine.api.MAX_NODES: the largest ``go nodes``."""
MAX_MS = 10**12
"""The largest number of milliseconds a ``go`` takes (movetime, clocks, increments)."""


@dataclass(frozen=True)
class GoPlan:
    """What a ``go`` command asks for."""

    depth: int
    """Deepest iteration to search."""
    nodes: int
    """Node budget over all iterations (0 = none)."""
    seconds: float
    """Time budget (0 = none)."""
    infinite: bool
    """Search until ``stop`` (bestmove only after it)."""
    clock: float | None = None
    """The side's clock in seconds (None: no clock given)."""
    inc: float = 0.0
    """The side's increment in seconds."""
    movestogo: int | None = None
    """Moves to the next time control (None: sudden death or increment)."""


LEAST = GoPlan(depth=1, nodes=1, seconds=0.0, infinite=False)
"""The plan of a ``go`` that cannot be read: the smallest search (its first iteration or
simulation), so that every ``go`` gets a legal ``bestmove``."""


def _in_range(key: str, value: int) -> int:
    """``value`` of ``go <key>``, ValueError naming the range when it is outside."""
    low, high = {"depth": (1, 10**6), "nodes": (1, MAX_NODES), "movetime": (1, MAX_MS),
                 "mate": (1, MAX_DEPTH)}.get(key, (-MAX_MS, MAX_MS))
    if not low <= value <= high:
        raise ValueError(f"go {key} {value} is out of range; give {low} to {high}")
    return value


def parse_go(tokens: list[str], turn: chess.Color, *, lag: float = 0.0) -> GoPlan:
    """The plan of ``go <tokens>`` for the side ``turn``; ValueError on a malformed number, an
    unknown parameter or a value out of range (``go nodes 0``, ``go movetime 0``: the caller
    searches :data:`LEAST`). No depth, nodes or time: ``infinite`` (search until ``stop``).
    ``lag``: seconds a move is charged beyond the engine's own time (:func:`allot`)."""
    keys = {"depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "mate"}
    vals: dict[str, int] = {}
    infinite = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in keys:
            if i + 1 == len(tokens):
                raise ValueError(f"go {tok} needs a value")
            vals[tok] = _in_range(tok, int(tokens[i + 1]))
            i += 2
            continue
        if tok == "infinite":
            infinite = True
        elif tok == "searchmoves":  # accepted, not supported: the whole move list is searched
            while i + 1 < len(tokens) and tokens[i + 1] not in keys | {"infinite", "ponder"}:
                i += 1
        elif tok != "ponder":
            raise ValueError(f"unknown go parameter '{tok}'")
        i += 1
    depth = vals.get("depth", 0)
    nodes = vals.get("nodes", 0)
    seconds = vals.get("movetime", 0) / 1000.0
    ms = vals.get("wtime" if turn == chess.WHITE else "btime")
    clock = None if ms is None else ms / 1000.0
    inc = max(0, vals.get("winc" if turn == chess.WHITE else "binc", 0)) / 1000.0
    togo = vals.get("movestogo")
    if clock is not None and not seconds:
        seconds = allot(clock, inc, togo, lag=lag)
    if "mate" in vals and not depth:
        depth = 2 * vals["mate"] - 1
    if depth <= 0:
        depth = MAX_DEPTH
        if not (nodes or seconds):
            infinite = True
    return GoPlan(depth=min(depth, MAX_DEPTH), nodes=nodes, seconds=seconds, infinite=infinite,
                  clock=clock, inc=inc, movestogo=togo)


def format_score(score: int) -> str:
    """``cp x`` or ``mate n`` (n > 0: the side to move mates in n moves; n < 0: it is mated)."""
    if score > MATE_BOUND:
        return f"mate {(MATE - score + 1) // 2}"
    if score < -MATE_BOUND:
        return f"mate {-((MATE + score) // 2)}"
    return f"cp {score}"


def parse_position(tokens: list[str], *, current: chess.Board | None = None) -> chess.Board:
    """The board of ``position <tokens>``; ValueError on a bad FEN or an illegal move."""
    if not tokens:
        raise ValueError("position needs 'startpos' or 'fen <FEN>'")
    cut = tokens.index("moves") if "moves" in tokens else len(tokens)
    if tokens[0] == "startpos":
        board = chess.Board()
    elif tokens[0] == "fen":
        board = chess.Board(" ".join(tokens[1:cut]))
        if not board.is_valid():
            raise ValueError(f"illegal position {' '.join(tokens[1:cut])!r}")
    else:
        raise ValueError(f"position needs 'startpos' or 'fen <FEN>', not '{tokens[0]}'")
    for uci in tokens[cut + 1:]:
        board.push_uci(uci)  # ValueError (IllegalMoveError/InvalidMoveError) on a bad move
    return board
