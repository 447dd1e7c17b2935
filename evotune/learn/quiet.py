"""Quiescence of positions: static evaluation, quiescence score and the quiescence leaf's phi.

A position is *quiet* when the side to move is not in check and its static evaluation equals
its quiescence score (no capture or promotion sequence changes it). ``evotune datagen`` keeps
only quiet positions; ``evotune texel`` rejects the others, or with ``--qsearch`` replaces each
position by the leaf of its quiescence principal variation.

The search is the core's own quiescence (``evotune.engine.search.quiesce``, full window, with
the engine's rounded weights), called from one small jitted entry point here; phi is the core's
``phi_into`` (side to move's view), folded to the root mover's view for the leaf.
"""
from __future__ import annotations

import chess
import numpy as np
from numba import njit

from ..engine import tables as T
from ..engine.api import _arrays, _rounded, to_board
from ..engine.board import in_check, make_move, unmake_move
from ..engine.search import evaluate, phi_into, quiesce

NPHI = 6


@njit(cache=True, nogil=True)
def _qsearch_core(U, S, stop, out):
    """(static eval, quiescence score, in check) of the root; the leaf phi goes to out[0:6]."""
    zero = out.size - out.size
    inf = zero + T.INF
    S[T.S_NODES] = 0
    S[T.S_STOPPED] = 0
    S[T.S_ITER] = 0
    check = 1 if in_check(U, S) else 0
    static = evaluate(U, S)
    score = quiesce(U, S, stop, -inf, inf, zero)
    ln = S[T.S_PVLEN]
    for j in range(ln):
        make_move(U, S, S[T.S_PV + j])
    phi_into(U, S, out, zero)
    for j in range(ln - 1, -1, -1):
        unmake_move(U, S, S[T.S_PV + j])
    if ln % 2 == 1:
        for k in range(out.size):
            out[k] = -out[k]
    return static, score, check


def qsearch(position, weights) -> tuple[int, int, bool, np.ndarray]:
    """(static eval, quiescence score, in check, leaf phi) of ``position`` (side to move's view).

    The history of a Board is not used (quiescence has no draw checks).
    """
    board = to_board(position)
    board = chess.Board(board.fen()) if board.move_stack else board
    U, S = _arrays(board, 10, reuse=True)
    S[T.S_W:T.S_W + NPHI] = _rounded(weights, "weights")
    out = np.zeros(NPHI, dtype=np.int64)
    static, score, check = _qsearch_core(U, S, np.zeros(1, dtype=np.int64), out)
    return int(static), int(score), bool(check), out


def is_quiet(position, weights) -> bool:
    """Not in check and static evaluation == quiescence score."""
    static, score, check, _ = qsearch(position, weights)
    return not check and static == score
