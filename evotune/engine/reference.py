"""The reference engine: the evaluation and search of docs/internals.md written plainly on python-chess.

This module is the specification in code. It is slow (python-chess makes and unmakes every
move) and has no transposition table, no killers and no aspiration windows; it exists

* as the test oracle: the numba core must give the same ``features``, the same ``evaluate``
  and the same root score of ``search(..., depth=d)`` as this module, and
* as the speed baseline that ``evotune bench`` compares the core with.

Semantics (docs/internals.md, "Search"):

* ``negamax(depth, alpha, beta, ply)``: draw checks at ply > 0 (halfmove clock >= 100,
  insufficient material, repetition of an earlier position of the game history or the search
  path, i.e. python-chess ``board.is_repetition(2)``); then ``depth <= 0`` -> quiescence; no
  legal move -> ``-(MATE - ply)`` in check, else 0; otherwise fail-soft alpha-beta.
* ``quiesce(alpha, beta, ply)``: no draw checks. In check all legal evasions are searched (none:
  ``-(MATE - ply)``), no stand-pat. Otherwise stand pat on the evaluation, then the legal
  captures (en passant included) and every promotion (quiet ones too, to every piece).
* Every call of negamax or quiesce counts one node. The root is searched with the full window,
  so the root score is the exact minimax value of that tree.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import chess
import numpy as np

from ..errors import ConfigError, PositionError
from ..rules import INF, MATE, MATE_BOUND  # noqa: F401  (MATE_BOUND: part of this module's API)
from ..space import check_weights

logger = logging.getLogger(__name__)

PIECE_TYPES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
"""The material terms phi[0..4], in weight order."""
MOBILE_TYPES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
"""The pieces whose attacks count as mobility (pawns never do)."""
MVV_LVA_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
                 chess.KING: 100}
"""Fixed piece values used only to order captures (ordering never changes the score)."""


@dataclass(frozen=True)
class ReferenceResult:
    """What the reference search returns."""

    move: str
    """Best move in UCI ('' when the root has no legal move)."""
    score: int
    """Root score, side to move, engine units (mate scores as in docs/internals.md)."""
    nodes: int
    """negamax + quiesce calls."""
    pv: tuple[str, ...]
    """Principal variation, UCI."""


# ---- evaluation ---------------------------------------------------------------------------------

def to_board(position: chess.Board | str) -> chess.Board:
    """A copy of ``position`` (a Board keeps its move stack, the game history) or a Board from FEN."""
    if isinstance(position, chess.Board):
        return position.copy(stack=True)
    try:
        board = chess.Board(str(position))
    except ValueError as exc:
        raise PositionError(f"invalid FEN {position!r}: {exc}; give a FEN like "
                            "'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'") from None
    serious = board.status() & (chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
                                | chess.STATUS_TOO_MANY_KINGS | chess.STATUS_PAWNS_ON_BACKRANK
                                | chess.STATUS_OPPOSITE_CHECK)
    if serious:
        raise PositionError(f"illegal position {position!r} (python-chess status {serious!r}); "
                            "give a legal position with one king per side")
    return board


def mobility(board: chess.Board, color: chess.Color) -> int:
    """Mobility of ``color``: (N, B, R, Q, K, target) pairs, targets not occupied by ``color``."""
    own = board.occupied_co[color]
    total = 0
    for piece_type in MOBILE_TYPES:
        for square in chess.scan_forward(board.pieces_mask(piece_type, color)):
            total += chess.popcount(board.attacks_mask(square) & ~own)
    return total


def features(board: chess.Board) -> np.ndarray:
    """phi: int64 (6,), side to move minus the other side: P, N, B, R, Q counts, mobility."""
    us, them = board.turn, not board.turn
    phi = np.zeros(6, dtype=np.int64)
    for i, piece_type in enumerate(PIECE_TYPES):
        phi[i] = (chess.popcount(board.pieces_mask(piece_type, us))
                  - chess.popcount(board.pieces_mask(piece_type, them)))
    phi[5] = mobility(board, us) - mobility(board, them)
    return phi


def rounded_weights(weights) -> tuple[int, ...]:
    """The weights as the engine uses them: validated, then rounded with ``np.rint``."""
    return tuple(int(v) for v in np.rint(check_weights(weights)))


def evaluate(board: chess.Board, weights) -> int:
    """``round(weights) . phi(board)``, side to move."""
    return _evaluate(board, rounded_weights(weights))


def _evaluate(board: chess.Board, w: tuple[int, ...]) -> int:
    return int(sum(wi * int(fi) for wi, fi in zip(w, features(board))))


# ---- search -------------------------------------------------------------------------------------

class _Search:
    """One reference search: the board being searched, the rounded weights and the node count."""

    def __init__(self, board: chess.Board, w: tuple[int, ...]) -> None:
        self.board = board
        self.w = w
        self.nodes = 0

    def is_draw(self) -> bool:
        """The draw checks of the main search (used at ply > 0 only)."""
        board = self.board
        return (board.halfmove_clock >= 100 or board.is_insufficient_material()
                or board.is_repetition(2))

    def ordered(self, moves) -> list[chess.Move]:
        """Captures first (most valuable victim, then least valuable attacker), promotions with them."""
        board = self.board

        def key(move: chess.Move) -> int:
            victim = chess.PAWN if board.is_en_passant(move) else board.piece_type_at(move.to_square)
            gain = (1000 * MVV_LVA_VALUE[victim] if victim else 0) \
                + (100 * MVV_LVA_VALUE[move.promotion] if move.promotion else 0)
            if not gain:
                return 0
            return MVV_LVA_VALUE[board.piece_type_at(move.from_square)] - gain

        return sorted(moves, key=key)

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> tuple[int, list[chess.Move]]:
        """Fail-soft alpha-beta; returns (score, principal variation from this node)."""
        self.nodes += 1
        board = self.board
        if ply > 0 and self.is_draw():
            return 0, []
        if depth <= 0:
            return self.quiesce(alpha, beta, ply)
        moves = list(board.legal_moves)
        if not moves:
            return (-(MATE - ply) if board.is_check() else 0), []
        best, best_pv = -INF, []
        for move in self.ordered(moves):
            board.push(move)
            score, pv = self.negamax(depth - 1, -beta, -alpha, ply + 1)
            board.pop()
            score = -score
            if score > best:
                best, best_pv = score, [move] + pv
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best, best_pv

    def quiesce(self, alpha: int, beta: int, ply: int) -> tuple[int, list[chess.Move]]:
        """Quiescence: evasions in check, else stand pat + captures and promotions."""
        self.nodes += 1
        board = self.board
        if board.is_check():
            moves = list(board.legal_moves)
            if not moves:
                return -(MATE - ply), []
            best, best_pv = -INF, []
        else:
            stand = _evaluate(board, self.w)
            if stand >= beta:
                return stand, []
            alpha = max(alpha, stand)
            best, best_pv = stand, []
            moves = [m for m in board.legal_moves if m.promotion or board.is_capture(m)]
        for move in self.ordered(moves):
            board.push(move)
            score, pv = self.quiesce(-beta, -alpha, ply + 1)
            board.pop()
            score = -score
            if score > best:
                best, best_pv = score, [move] + pv
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best, best_pv


def search(position: chess.Board | str, weights, *, depth: int) -> ReferenceResult:
    """Plain full-window negamax of ``depth`` plies + quiescence (the exact tree of internals.md).

    ``position`` is a FEN or a Board (its move stack is the game history for repetitions; the
    Board given is not modified).
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth <= 0:
        raise ConfigError(f"depth must be a positive integer, got {depth!r}")
    board = to_board(position)
    run = _Search(board, rounded_weights(weights))
    score, pv = run.negamax(int(depth), -INF, INF, 0)
    uci = tuple(m.uci() for m in pv)
    logger.debug("reference depth %d: score %d nodes %d pv %s", depth, score, run.nodes, uci)
    return ReferenceResult(move=uci[0] if uci else "", score=int(score), nodes=run.nodes, pv=uci)
