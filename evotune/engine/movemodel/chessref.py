"""The python-chess reference of the move model: the active feature indices of a legal move and
the model's score of every legal move, computed plainly (the test oracle of the core's
``move_features`` and ``move_scores``, engine/movemodel/corescores.py), and the core's ordering
prior of root moves (the move model's baseline)."""
from __future__ import annotations

import chess
import numpy as np

from ...spec.movefeatures import BLOCK_START, SCORE_CLAMP
from .modelfile import MoveModel


def _least_valuable(board: chess.Board, mask: int, colour: bool) -> int:
    for t in range(1, 7):
        if mask & board.pieces_mask(t, colour):
            return t
    return 0


def reference_features(board: chess.Board, move: chess.Move) -> tuple[int, ...]:
    """The active feature indices of the legal ``move`` on ``board`` (one per block of
    :data:`BLOCKS`, feature set 2's included), computed with python-chess: the test oracle of
    the core's ``move_features``."""
    us = board.turn
    them = not us
    flip = 0 if us == chess.WHITE else 56
    f, t = move.from_square, move.to_square
    kind = int(board.piece_type_at(f) or 0) - 1
    victim = board.piece_type_at(t)
    cap = 1 if board.is_en_passant(move) else (victim or 0)
    promo = move.promotion - 1 if move.promotion else 0
    lifted = board.copy(stack=False)
    lifted.remove_piece_at(f)
    to_att = _least_valuable(lifted, lifted.attackers_mask(them, t), them)
    defended = 1 if lifted.attackers_mask(us, t) else 0
    from_att = _least_valuable(board, board.attackers_mask(them, f), them)
    o = BLOCK_START
    return (o[0] + 64 * kind + (t ^ flip), o[1] + 64 * kind + (f ^ flip), o[2] + 6 * cap + kind,
            o[3] + promo, o[4] + int(board.gives_check(move)), o[5] + 6 * to_att + kind,
            o[6] + defended, o[7] + 6 * from_att + kind) + _reference_around(
                board, move, kind=kind, cap=cap, to_att=to_att, from_att=from_att)


def _reference_around(board: chess.Board, move: chess.Move, *, kind: int, cap: int,
                      to_att: int, from_att: int) -> tuple[int, ...]:
    """The feature-set-2 blocks' indices of ``move`` (python-chess, on the board after it)."""
    us = board.turn
    them = not us
    flip = 0 if us == chess.WHITE else 56
    f, t = move.from_square, move.to_square
    from_def = 1 if board.attackers_mask(us, f) else 0
    after = board.copy(stack=False)
    after.push(move)
    att = after.attacks_mask(t)
    most = next((k for k in range(6, 0, -1) if att & after.pieces_mask(k, them)), 0)
    heavy = att & after.occupied_co[them] & ~after.pieces_mask(chess.PAWN, them)
    fork = 1 if chess.popcount(heavy) >= 2 else 0
    ksq = after.king(them)
    assert ksq is not None
    zone = min(chess.popcount(att & chess.BB_KING_ATTACKS[ksq]), 3)
    dist = chess.square_distance(t, ksq)
    mob = min(chess.popcount(att & ~after.occupied_co[us]), 15) // 2
    phase = sum(chess.popcount(board.pieces_mask(pt, c)) * v for c in chess.COLORS
                for pt, v in ((chess.KNIGHT, 1), (chess.BISHOP, 1), (chess.ROOK, 2),
                              (chess.QUEEN, 4)))
    rank = chess.square_rank(t ^ flip)
    pawn = 0
    if kind == 0:
        ahead = [p for p in after.pieces(chess.PAWN, them)
                 if abs(chess.square_file(p) - chess.square_file(t)) <= 1
                 and chess.square_rank(p ^ flip) > rank]
        pawn = 1 + 8 * (0 if ahead else 1) + rank
    o = BLOCK_START
    return (o[8] + 6 * (2 * from_att + from_def) + kind, o[9] + 6 * (7 * cap + to_att) + kind,
            o[10] + 6 * (2 * most + fork) + kind, o[11] + 6 * zone + kind,
            o[12] + 6 * dist + kind, o[13] + 6 * mob + kind,
            o[14] + 8 * (6 * min(phase // 6, 3) + kind) + rank, o[15] + pawn)


def reference_scores(model: MoveModel, board: chess.Board) -> dict[str, int]:
    """The model's score of every legal move of ``board`` (UCI -> score), from
    :func:`reference_features`."""
    moves = list(board.legal_moves)
    if not moves:
        return {}
    scores = model.scores(np.array([reference_features(board, mv) for mv in moves]))
    return {mv.uci(): min(max(int(s), -SCORE_CLAMP), SCORE_CLAMP) for mv, s in zip(moves, scores)}


_ORDER_VALUE = (0, 1, 3, 3, 5, 9, 20)


def ordering_scores(board: chess.Board, moves) -> np.ndarray:
    """The core's ordering prior (``prior.prior_score``) of ``moves`` at the root of a search
    (empty history): captures and promotions 100 x (victim + promotion) - 10 x attacker (piece
    values 1, 3, 3, 5, 9, king 20), every quiet move 0. The baseline of the move model."""
    out = np.zeros(len(moves), dtype=np.int64)
    for i, mv in enumerate(moves):
        victim = board.piece_type_at(mv.to_square) or (1 if board.is_en_passant(mv) else 0)
        if victim or mv.promotion:
            out[i] = (100 * (_ORDER_VALUE[victim] + _ORDER_VALUE[mv.promotion or 0])
                      - 10 * _ORDER_VALUE[board.piece_type_at(mv.from_square) or 0])
    return out
