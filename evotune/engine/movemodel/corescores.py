"""The core's move-model features and scores of a position's legal moves (the trainer's inputs,
``nn info``'s figures, and the side of the exactness tests that is not the reference)."""
from __future__ import annotations

import chess
import numpy as np

from ..api import board_arrays, decode_move, to_board
from ..core import mcts as M
from ..core.game import move_features_core, move_scores_core
from ..core.layout import MAXMOVES
from .modelfile import N_BLOCKS, MoveModel


def move_features(position) -> tuple[list[chess.Move], np.ndarray]:
    """The legal moves of ``position`` (a FEN or board; the core's generation order) and their
    active feature indices from the core, int64 (moves, N_BLOCKS)."""
    U, S = board_arrays(to_board(position), 10)
    moves = np.zeros(MAXMOVES, dtype=np.int64)
    feats = np.zeros(MAXMOVES * N_BLOCKS, dtype=np.int64)
    n = int(move_features_core(U, S, moves, feats))
    return [decode_move(int(m)) for m in moves[:n]], feats[:n * N_BLOCKS].reshape(n, N_BLOCKS)


def move_scores(model: MoveModel, position) -> dict[str, int]:
    """The model's score of every legal move of ``position`` from the core (UCI -> score)."""
    U, S = board_arrays(to_board(position), 10)
    params = np.zeros(M.NP, dtype=np.float64)
    params[M.P_MODEL:] = model.params()
    moves = np.zeros(MAXMOVES, dtype=np.int64)
    out = np.zeros(MAXMOVES, dtype=np.int64)
    n = int(move_scores_core(U, S, params, moves, out))
    return {decode_move(int(m)).uci(): int(s) for m, s in zip(moves[:n], out[:n])}
