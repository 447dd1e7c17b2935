"""Python API of the numba core (docs/internals.md, "Python API").

python-chess is the boundary: positions come in as FEN strings or ``chess.Board`` objects (the
move stack is the game history used for repetitions), moves go out as UCI strings. All checks of
user input happen here; the jitted code trusts its arguments.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import chess
import chess.polyglot
import numpy as np

from ..errors import ConfigError, PositionError
from ..space import check_weights
from . import tables as T
from .board import perft_divide_core
from .game import phi_core, play_game_core, search_core

logger = logging.getLogger(__name__)

MATE = T.MATE
DEFAULT_TT_BITS = 18
MAX_DEPTH = 64
MAX_NODES = 10**12
"""Node limits above this are refused (the core counts nodes in int64)."""
TERMINATIONS = ("", "checkmate", "stalemate", "repetition", "fifty-move", "insufficient-material",
                "ply-cap", "adjudication-resign", "adjudication-draw")
RESULTS = ("1-0", "0-1", "1/2-1/2")


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one search."""

    move: str
    """Best move, UCI ('' when the position has no legal move)."""
    score: int
    """Root score, side to move's view (mate scores: +-(MATE - plies))."""
    depth: int
    """Deepest completed iteration."""
    nodes: int
    """Nodes searched (every negamax or quiescence call counts one)."""
    seconds: float
    """Wall time of the search."""
    pv: tuple[str, ...]
    """Principal variation, UCI."""


@dataclass(frozen=True)
class Adjudication:
    """When a game is stopped early (0 disables a rule)."""

    resign_score: int = 0
    """> 0: a side whose score is <= -resign_score for resign_moves consecutive own moves, while
    the opponent's latest score is >= +resign_score, loses."""
    resign_moves: int = 0
    """Consecutive own moves for the resign rule."""
    draw_score: int = 0
    """> 0: |score| <= draw_score for draw_moves consecutive moves of both sides (2 * draw_moves
    plies), counted from ply draw_start_ply, is a draw."""
    draw_moves: int = 0
    """Consecutive moves of each side for the draw rule."""
    draw_start_ply: int = 0
    """First core ply (0-based) that counts towards the draw rule."""


@dataclass(frozen=True)
class GameOutcome:
    """A game played by the core."""

    moves: tuple[str, ...]
    """UCI moves played by the core from the start position."""
    result: str
    """'1-0', '0-1' or '1/2-1/2'."""
    termination: str
    """'checkmate', 'stalemate', 'repetition', 'fifty-move', 'insufficient-material', 'ply-cap',
    'adjudication-resign' or 'adjudication-draw'."""
    nodes: int
    """Nodes searched over the whole game."""
    scores: np.ndarray = field(repr=False, compare=False)
    """int64 (plies,): each move's root score, mover's view."""
    leaf_phi: np.ndarray = field(repr=False, compare=False)
    """int64 (plies, 6): phi of each search's PV leaf, mover's view."""
    predicted: np.ndarray = field(repr=False, compare=False)
    """bool (plies,): the move at ply t+1 is the reply the PV of ply t predicted (last: False)."""
    seconds: float
    """Wall time of the game."""


# ---- boundary helpers ----------------------------------------------------------------------

def to_board(position) -> chess.Board:
    """A validated copy of ``position`` (FEN string or chess.Board)."""
    if isinstance(position, chess.Board):
        board = position.copy()
    elif isinstance(position, str):
        try:
            board = chess.Board(position.strip())
        except ValueError as exc:
            raise PositionError(f"malformed FEN '{position}': {exc}; give a FEN such as "
                                f"'{chess.STARTING_FEN}'") from None
    else:
        raise PositionError(f"position must be a FEN string or a chess.Board, got "
                            f"{type(position).__name__}")
    # STATUS_IMPOSSIBLE_CHECK is python-chess being stricter than the rules need (e.g. perft's
    # double checks by two bishops); the core plays such positions correctly.
    if board.chess960 or board.status() & ~chess.STATUS_IMPOSSIBLE_CHECK:
        raise PositionError(f"illegal position '{board.fen()}': {board.status()!r}; give a legal "
                            "standard-chess position")
    return board


def _rounded(weights, what: str) -> np.ndarray:
    return np.rint(check_weights(weights, what=what)).astype(np.int64)


def _check_limits(depth: int, nodes: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) \
            or not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth {depth!r} is invalid; give an integer from 1 to {MAX_DEPTH}")
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) \
            or not 0 <= nodes <= MAX_NODES:
        raise ConfigError(f"nodes {nodes!r} is invalid; give 0 (no limit) or a positive integer "
                          f"up to {MAX_NODES}")


_contexts = threading.local()


def _arrays(board: chess.Board, tt_bits: int, *,
            reuse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The core's state arrays (U, S) for ``board``, history from its move stack.

    ``reuse``: take this thread's arrays of the same TT size from the previous call (their pages
    are already mapped; TT entries of earlier searches are invisible through the generation tag,
    so results do not depend on them).
    """
    if isinstance(tt_bits, bool) or not isinstance(tt_bits, (int, np.integer)) \
            or not 10 <= tt_bits <= 26:
        raise ConfigError(f"tt_bits {tt_bits!r} is invalid; give 10..26 (2^bits TT entries)")
    size = 1 << tt_bits
    cached = getattr(_contexts, "arrays", None) if reuse else None
    if cached is not None and cached[1].size == T.S_SIZE + 2 * size:
        U, S = cached
        gen = S[T.S_GEN]
        U[:T.U_TT] = 0
        S[:T.S_MOVES] = 0
        S[T.S_GEN] = gen
    else:
        U = np.zeros(T.U_SIZE + size, dtype=np.uint64)
        S = np.zeros(T.S_SIZE + 2 * size, dtype=np.int64)
        if reuse:
            _contexts.arrays = (U, S)
    for sq, piece in board.piece_map().items():
        p = piece.piece_type + (0 if piece.color == chess.WHITE else 6)
        b = np.uint64(1 << sq)
        U[p - 1] |= b
        U[T.U_OCC + (p - 1) // 6] |= b
        S[T.S_MB + sq] = p
    U[T.U_ALL] = U[T.U_OCC] | U[T.U_OCC + 1]
    cr = board.clean_castling_rights()
    S[T.S_CASTLE] = ((1 if cr & chess.BB_H1 else 0) | (2 if cr & chess.BB_A1 else 0)
                     | (4 if cr & chess.BB_H8 else 0) | (8 if cr & chess.BB_A8 else 0))
    S[T.S_SIDE] = 0 if board.turn == chess.WHITE else 1
    S[T.S_EP] = -1 if board.ep_square is None else board.ep_square
    S[T.S_HALF] = board.halfmove_clock
    S[T.S_FULLMOVE] = board.fullmove_number
    S[T.S_TTMASK] = size - 1
    U[T.U_HASH] = np.uint64(chess.polyglot.zobrist_hash(board))
    # earlier positions of the game, within the reversible window
    keep = min(board.halfmove_clock, len(board.move_stack), T.MAXHIST - T.MAXPLY - 1)
    if keep:
        b = board.copy()
        hashes = []
        for _ in range(keep):
            b.pop()
            hashes.append(chess.polyglot.zobrist_hash(b))
        U[T.U_HIST:T.U_HIST + keep] = np.array(hashes[::-1], dtype=np.uint64)
    S[T.S_NHIST] = keep
    return U, S


def decode_move(m: int) -> chess.Move:
    """A core move int as a python-chess move."""
    promo = (m >> 12) & 7
    return chess.Move(m & 63, (m >> 6) & 63, promo or None)


def _uci(moves) -> tuple[str, ...]:
    return tuple(decode_move(int(m)).uci() for m in moves)


# ---- API ------------------------------------------------------------------------------------------

def perft_divide(fen, depth: int) -> dict[str, int]:
    """Leaf counts of the legal move tree to ``depth`` below each root move (UCI -> nodes)."""
    board = to_board(fen)
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) \
            or not 1 <= depth <= MAX_DEPTH:  # the core's stacks hold MAX_DEPTH plies
        raise ConfigError(f"perft depth {depth!r} is invalid; give an integer from 1 to "
                          f"{MAX_DEPTH}")
    U, S = _arrays(board, 10)
    out = np.zeros(T.MAXMOVES, dtype=np.int64)
    n = perft_divide_core(U, S, np.int64(depth), out)
    moves = _uci(S[T.S_MOVES:T.S_MOVES + n])
    return {mv: int(c) for mv, c in zip(moves, out[:n])}


def perft(fen, depth: int) -> int:
    """Number of leaves of the legal move tree to ``depth`` (exact)."""
    return sum(perft_divide(fen, depth).values())


def features(position) -> np.ndarray:
    """phi(position): int64 (6,), material differences P,N,B,R,Q and mobility difference,
    side to move against the other side."""
    board = to_board(position)
    U, S = _arrays(board, 10)
    out = np.zeros(6, dtype=np.int64)
    phi_core(U, S, out)
    return out


def evaluate(position, weights) -> int:
    """round(weights) . phi(position), side to move's view."""
    w = _rounded(weights, "weights")
    return int(w @ features(position))


def search(position, weights, *, depth: int = 3, nodes: int = 0, stop: np.ndarray | None = None,
           tt_bits: int = DEFAULT_TT_BITS) -> SearchResult:
    """Search ``position`` to ``depth`` (and at most about ``nodes`` nodes when > 0).

    ``stop`` is an int64 array of length >= 1; setting ``stop[0] = 1`` from another thread ends
    the search like the node limit (the first iteration always completes). ``tt_bits``: the
    transposition table holds 2**tt_bits entries (16 bytes each).
    """
    w = _rounded(weights, "weights")
    _check_limits(depth, nodes)
    board = to_board(position)
    if stop is None:
        stop = np.zeros(1, dtype=np.int64)
    elif not (isinstance(stop, np.ndarray) and stop.dtype == np.int64 and stop.ndim == 1
              and stop.size >= 1 and stop.flags.c_contiguous):
        raise ConfigError("stop must be a contiguous 1-d int64 numpy array of length >= 1")
    U, S = _arrays(board, tt_bits, reuse=True)
    S[T.S_W:T.S_W + 6] = w
    if not _contexts.__dict__.get("warm"):
        # the first jitted call of a process initialises numba's JIT (~0.5 s): keep it out of
        # the search's timing
        phi_core(U, S, np.zeros(6, dtype=np.int64))
        _contexts.warm = True
    t0 = time.perf_counter()
    score = search_core(U, S, stop, np.int64(depth), np.int64(nodes))
    seconds = time.perf_counter() - t0
    pv = _uci(S[T.S_ROOTPV:T.S_ROOTPV + S[T.S_ROOTPVLEN]])
    return SearchResult(move=pv[0] if pv else "", score=int(score), depth=int(S[T.S_ITER]),
                        nodes=int(S[T.S_NODES]), seconds=seconds, pv=pv)


def play_game(position, white, black, *, depth: int = 3, nodes: int = 0, max_plies: int = 400,
              adjudication: Adjudication = Adjudication(),
              tt_bits: int = DEFAULT_TT_BITS) -> GameOutcome:
    """Play a whole game from ``position`` inside one core call; ``white``/``black`` are weights.

    Every move is an independent search (fresh TT generation, killers, history), so each move's
    score equals ``search()`` on that position and the game is deterministic.
    """
    ww = _rounded(white, "white weights")
    wb = _rounded(black, "black weights")
    _check_limits(depth, nodes)
    if isinstance(max_plies, bool) or not isinstance(max_plies, (int, np.integer)) \
            or max_plies < 0:
        raise ConfigError(f"max_plies {max_plies!r} is invalid; give a non-negative integer")
    a = adjudication
    adj = np.array([a.resign_score, a.resign_moves, a.draw_score, a.draw_moves,
                    a.draw_start_ply], dtype=np.int64)
    if (adj < 0).any():
        raise ConfigError(f"adjudication values must be >= 0, got {a}")
    board = to_board(position)
    U, S = _arrays(board, tt_bits, reuse=True)
    cap = max(int(max_plies), 1)
    moves = np.zeros(cap, dtype=np.int64)
    scores = np.zeros(cap, dtype=np.int64)
    phi = np.zeros(6 * cap, dtype=np.int64)
    pred = np.zeros(cap, dtype=np.int64)
    info = np.zeros(4, dtype=np.int64)
    stop = np.zeros(1, dtype=np.int64)
    t0 = time.perf_counter()
    play_game_core(U, S, stop, np.stack([ww, wb]), np.int64(depth), np.int64(nodes),
                   np.int64(max_plies), adj, moves, scores, phi, pred, info)
    seconds = time.perf_counter() - t0
    n = int(info[2])
    return GameOutcome(moves=_uci(moves[:n]), result=RESULTS[int(info[0])],
                       termination=TERMINATIONS[int(info[1])], nodes=int(info[3]),
                       scores=scores[:n].copy(), leaf_phi=phi[:6 * n].reshape(n, 6).copy(),
                       predicted=pred[:n].astype(bool), seconds=seconds)


# ---- perft suites (EPD lines "FEN ;D1 20 ;D2 400 ...") --------------------------------------------

@dataclass(frozen=True)
class PerftCheck:
    """One ``;D<n> <count>`` entry of a perft suite, checked."""

    fen: str
    """The position."""
    depth: int
    """Perft depth."""
    expected: int
    """Count given by the suite."""
    got: int
    """Count computed by the core."""

    @property
    def ok(self) -> bool:
        return self.expected == self.got


def perft_suite(path, *, max_nodes: int = 1_000_000) -> list[PerftCheck]:
    """Check every entry of an EPD perft suite whose expected count is <= ``max_nodes``."""
    from pathlib import Path

    from ..textfile import read_text

    p = Path(path)
    text = read_text(p, "perft suite")
    checks = []
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = [t.strip() for t in line.strip().split(";")]
        if not parts[0]:
            continue
        for entry in parts[1:]:
            tokens = entry.split()
            if len(tokens) != 2 or not tokens[0][:1] in ("D", "d") or not tokens[0][1:].isdigit() \
                    or not tokens[1].isdigit():
                raise ConfigError(f"{p}:{lineno}: bad perft entry ';{entry}'; expected ';D<depth> "
                                  "<count>'")
            depth, expected = int(tokens[0][1:]), int(tokens[1])
            if expected <= max_nodes:
                try:
                    got = perft(parts[0], depth)
                except PositionError as exc:
                    raise PositionError(f"{p}:{lineno}: {exc}") from None
                checks.append(PerftCheck(parts[0], depth, expected, got))
    if not checks:
        raise ConfigError(f"perft suite {p} has no entry to check (with --max-nodes "
                          f"{max_nodes}); give lines like 'FEN ;D1 20 ;D2 400'")
    return checks
