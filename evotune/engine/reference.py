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
from ..spec import features as fsets
from .net.network import Net, evaluate_reference

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
    stopped: bool = False
    """The node limit ended the search (move, score and pv are then meaningless)."""


class _Stopped(Exception):
    """The node limit of a reference search was reached."""


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


def features(board: chess.Board, features: str = "shannon") -> np.ndarray:
    """phi_int of ``board``, int64, side to move's view: for shannon P, N, B, R, Q count
    differences and the mobility difference; for the tapered sets 24 x phi (docs/internals.md)."""
    if features == "shannon":
        us, them = board.turn, not board.turn
        phi = np.zeros(6, dtype=np.int64)
        for i, piece_type in enumerate(PIECE_TYPES):
            phi[i] = (chess.popcount(board.pieces_mask(piece_type, us))
                      - chess.popcount(board.pieces_mask(piece_type, them)))
        phi[5] = mobility(board, us) - mobility(board, them)
        return phi
    names = fsets.feature_names(features)   # ConfigError for an unknown set
    raw = dict(_pst_raw(board))             # {(mg index, eg index): White minus Black}
    if features == "extended":
        raw.update(_extended_raw(board))
    phase = game_phase(board)
    s = 1 if board.turn == chess.WHITE else -1
    phi = np.zeros(len(names), dtype=np.int64)
    for (mg, eg), value in raw.items():
        phi[mg] = s * value * phase
        phi[eg] = s * value * (fsets.PHASE_MAX - phase)
    return phi


def phi(board: chess.Board, features: str = "shannon") -> np.ndarray:
    """The learning vector phi_int / denominator (float64)."""
    return features_of(board, features) / float(fsets.denominator(features))


def game_phase(board: chess.Board) -> int:
    """min(24, knights + bishops + 2 rooks + 4 queens), both sides."""
    count = sum(len(board.pieces(t, c)) * v for c in chess.COLORS
                for t, v in ((chess.KNIGHT, 1), (chess.BISHOP, 1), (chess.ROOK, 2),
                             (chess.QUEEN, 4)))
    return min(fsets.PHASE_MAX, count)


def _pst_raw(board: chess.Board):
    """((mg index, eg index), White count minus Black count) of material and table entries."""
    raw: dict[tuple[int, int], int] = {}
    for i in range(5):
        raw[(fsets.MAT_MG + i, fsets.MAT_EG + i)] = 0
    for square, piece in board.piece_map().items():
        sign = 1 if piece.color == chess.WHITE else -1
        rel = square if piece.color == chess.WHITE else chess.square_mirror(square)
        t = piece.piece_type
        if t != chess.KING:
            key = (fsets.MAT_MG + t - 1, fsets.MAT_EG + t - 1)
            raw[key] += sign
        key = (fsets.PST_MG + 64 * (t - 1) + rel, fsets.PST_EG + 64 * (t - 1) + rel)
        raw[key] = raw.get(key, 0) + sign
    return raw.items()


def _relative_rank(square: int, color: chess.Color) -> int:
    r = chess.square_rank(square)
    return r if color == chess.WHITE else 7 - r


def _side_terms(board: chess.Board, c: chess.Color) -> dict[tuple[str, str], int]:
    """The raw classical terms of colour ``c`` (docs/internals.md, "Feature sets")."""
    t: dict[tuple[str, str], int] = {k: 0 for k in fsets.EXT_RAW}
    own_pawns = board.pieces(chess.PAWN, c)
    enemy_pawns = board.pieces(chess.PAWN, not c)
    t[("bishop_pair", "")] = 1 if len(board.pieces(chess.BISHOP, c)) >= 2 else 0
    on_file = [sum(1 for p in own_pawns if chess.square_file(p) == f) for f in range(8)]
    t[("doubled", "")] = sum(max(0, n - 1) for n in on_file)
    for p in own_pawns:
        f, rel = chess.square_file(p), _relative_rank(p, c)
        neighbours = [q for q in own_pawns if abs(chess.square_file(q) - f) == 1]
        if not neighbours:
            t[("isolated", "")] += 1
        if not any(abs(chess.square_file(q) - f) <= 1 and _relative_rank(q, c) > rel
                   for q in enemy_pawns):
            t[("passed", f"rank{rel + 1}")] += 1
        stop = p + 8 if c == chess.WHITE else p - 8
        if neighbours and not any(_relative_rank(q, c) <= rel for q in neighbours) \
                and any(board.attacks_mask(q) & chess.BB_SQUARES[stop] for q in enemy_pawns):
            t[("backward", "")] += 1
    own = board.occupied_co[c]
    king = board.king(not c)
    assert king is not None  # the positions evaluated are legal: both kings are on the board
    zone = chess.BB_KING_ATTACKS[king] | chess.BB_SQUARES[king]
    names = {chess.KNIGHT: "knight", chess.BISHOP: "bishop", chess.ROOK: "rook",
             chess.QUEEN: "queen"}
    for piece_type, name in names.items():
        for sq in board.pieces(piece_type, c):
            attacks = board.attacks_mask(sq)
            t[("mobility", name)] += chess.popcount(attacks & ~own)
            if attacks & zone:
                t[("king_attack", name)] += 1
            if piece_type == chess.ROOK:
                f = chess.square_file(sq)
                if not any(chess.square_file(q) == f for q in own_pawns | enemy_pawns):
                    t[("rook_open", "")] += 1
                elif not any(chess.square_file(q) == f for q in own_pawns):
                    t[("rook_semiopen", "")] += 1
    k = board.king(c)
    assert k is not None
    kf, kr = chess.square_file(k), _relative_rank(k, c)
    for p in own_pawns:
        if abs(chess.square_file(p) - kf) <= 1:
            if _relative_rank(p, c) == kr + 1:
                t[("shelter", "near")] += 1
            elif _relative_rank(p, c) == kr + 2:
                t[("shelter", "far")] += 1
    return t


def _extended_raw(board: chess.Board):
    """((mg index, eg index), White minus Black) of the classical terms, tempo included."""
    white, black = _side_terms(board, chess.WHITE), _side_terms(board, chess.BLACK)
    out = {}
    for k, key in enumerate(fsets.EXT_RAW):
        value = white[key] - black[key]
        if key == ("tempo", ""):
            value = 1 if board.turn == chess.WHITE else -1
        out[(fsets.EXT_MG_INDEX[k], fsets.EXT_EG_INDEX[k])] = value
    return out.items()


def rounded_weights(weights, features: str = "shannon"):
    """The weights as the engine uses them: validated, then rounded with ``np.rint`` (for
    ``nnue``: the Net itself)."""
    if features == fsets.NNUE:
        if not isinstance(weights, Net):
            raise ConfigError("the nnue evaluation takes a network (a Net)")
        return weights
    names = fsets.feature_names(features)
    return tuple(int(v) for v in np.rint(check_weights(weights, size=len(names),
                                                       names=names[:8])))


def evaluate(board: chess.Board, weights, features: str = "shannon") -> int:
    """``round(weights) . phi_int(board)`` (tapered sets: that / 24 rounded toward zero), side to
    move."""
    return _evaluate(board, rounded_weights(weights, features), features)


def _evaluate(board: chess.Board, w, features: str = "shannon") -> int:
    if features == fsets.NNUE:
        return evaluate_reference(w, board, clamp=True)
    total = int(sum(wi * int(fi) for wi, fi in zip(w, features_of(board, features))))
    return div_toward_zero(total, fsets.denominator(features))


def div_toward_zero(x: int, d: int) -> int:
    """x / d rounded toward zero (C integer division), for integers."""
    return -((-x) // d) if x < 0 else x // d


features_of = features


# ---- search -------------------------------------------------------------------------------------

class Search:
    """One reference search: the board being searched, the rounded weights and the node count."""

    def __init__(self, board: chess.Board, w, features: str = "shannon") -> None:
        self.board = board
        self.w = w
        self.features = features
        self.nodes = 0
        self.limit = 0
        """Stop once this many nodes were searched (0: no limit; for speed measurements)."""

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
            mover = board.piece_type_at(move.from_square)
            assert mover is not None  # a legal move's square holds the mover
            return MVV_LVA_VALUE[mover] - gain

        return sorted(moves, key=key)

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> tuple[int, list[chess.Move]]:
        """Fail-soft alpha-beta; returns (score, principal variation from this node)."""
        self.nodes += 1
        if self.nodes == self.limit:
            raise _Stopped
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
        if self.nodes == self.limit:
            raise _Stopped
        board = self.board
        best_pv: list[chess.Move] = []
        if board.is_check():
            moves = list(board.legal_moves)
            if not moves:
                return -(MATE - ply), []
            best = -INF
        else:
            stand = _evaluate(board, self.w, self.features)
            if stand >= beta:
                return stand, []
            alpha = max(alpha, stand)
            best = stand
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


def search(position: chess.Board | str, weights, *, depth: int, features: str = "shannon",
           nodes: int = 0) -> ReferenceResult:
    """Plain full-window negamax of ``depth`` plies + quiescence (the exact tree of internals.md).

    ``position`` is a FEN or a Board (its move stack is the game history for repetitions; the
    Board given is not modified). ``nodes`` > 0: stop there (speed measurements only: the result
    is then ``stopped``, without a score).
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth <= 0:
        raise ConfigError(f"depth must be a positive integer, got {depth!r}")
    board = to_board(position)
    run = Search(board, rounded_weights(weights, features), features)
    run.limit = int(nodes)
    try:
        score, pv = run.negamax(int(depth), -INF, INF, 0)
    except _Stopped:
        return ReferenceResult(move="", score=0, nodes=run.nodes, pv=(), stopped=True)
    uci = tuple(m.uci() for m in pv)
    logger.debug("reference depth %d: score %d nodes %d pv %s", depth, score, run.nodes, uci)
    return ReferenceResult(move=uci[0] if uci else "", score=int(score), nodes=run.nodes, pv=uci)
