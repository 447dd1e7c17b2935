"""Perft: leaf counts of the legal move tree (bulk counting at the last ply)."""
from __future__ import annotations

from numba import njit

from .layout import MAXMOVES, S_MOVES, unowned
from .movegen import gen_legal
from .position import make_move, unmake_move


@njit(cache=True)
def perft_rec(U, S, depth, ply):
    """Leaf count of the legal move tree to ``depth`` (bulk counting at the last ply)."""
    n = gen_legal(U, S, ply, depth < 0)
    if depth <= 1:
        return n
    total = 0
    base = S_MOVES + ply * MAXMOVES
    for i in range(n):
        m = S[base + i]
        make_move(U, S, m)
        total += perft_rec(U, S, depth - 1, ply + 1)
        unmake_move(U, S, m)
    return total


@njit(cache=True, nogil=True)
def perft_divide_core(U, S, depth, out):
    """Entry point: ``out[i]`` = leaf count below root move ``S[S_MOVES + i]``; returns moves."""
    # never pass literals into the recursion (numba issue 6061): derive typed values
    ply0 = depth - depth
    n = gen_legal(U, S, ply0, depth < 0)
    for i in range(n):
        m = S[S_MOVES + i]
        if depth <= 1:
            out[i] = 1
        else:
            make_move(U, S, m)
            out[i] = perft_rec(unowned(U), unowned(S), depth - 1, ply0 + 1)
            unmake_move(U, S, m)
    return n
