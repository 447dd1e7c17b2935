"""phi and quiescence of many positions in one call: FENs parsed inside the core, output as CSR
rows.

Only the board part and the side to move of a FEN matter to phi; castling, en passant and the
clocks are read by python-chess at the boundary when they matter (they never do for phi).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .evaluate import phi_into
from .game import quiescence_core
from .layout import S_CASTLE, S_EP, S_FSET, S_HALF, S_MB, S_NHIST, S_SIDE, U_ALL, U_OCC

# FEN piece letters -> piece codes (P N B R Q K = 1..6, lower case + 6)
PIECE_OF = np.zeros(128, dtype=np.int64)
for _i, _ch in enumerate("PNBRQK"):
    PIECE_OF[ord(_ch)] = _i + 1
    PIECE_OF[ord(_ch.lower())] = _i + 7


@njit(cache=True)
def parse_board(buf, start, end, U, S):
    """Set the pieces and the side to move of the FEN ``buf[start:end]`` (bytes); returns False
    when the board part is malformed or a side has not exactly one king."""
    for i in range(U_ALL + 1):
        U[i] = 0
    for sq in range(64):
        S[S_MB + sq] = 0
    rank = 7
    file = 0
    i = start
    while i < end:
        ch = buf[i]
        i += 1
        if ch == 32:  # ' '
            break
        if ch == 47:  # '/'
            if file != 8 or rank == 0:
                return False
            rank -= 1
            file = 0
        elif 49 <= ch <= 56:  # '1'..'8'
            file += ch - 48
            if file > 8:
                return False
        else:
            p = PIECE_OF[ch] if ch < 128 else 0
            if p == 0 or file > 7:
                return False
            sq = 8 * rank + file
            b = np.uint64(1) << np.uint64(sq)
            U[p - 1] |= b
            U[U_OCC + (p - 1) // 6] |= b
            S[S_MB + sq] = p
            file += 1
    if rank != 0 or file != 8 or i >= end:
        return False
    U[U_ALL] = U[U_OCC] | U[U_OCC + 1]
    if buf[i] == 119:  # 'w'
        S[S_SIDE] = 0
    elif buf[i] == 98:  # 'b'
        S[S_SIDE] = 1
    else:
        return False
    for k in (5, 11):
        x = U[k]
        if x == 0 or (x & (x - np.uint64(1))) != 0:
            return False
    return True


@njit(cache=True, nogil=True)
def phi_batch_core(buf, offsets, U, S, fset, width, scratch, indptr, indices, data, bad):
    """phi_int of the FENs ``buf[offsets[i]:offsets[i + 1]]`` as CSR rows (indptr, indices,
    data; capacity len(indices)). Returns the number of non-zeros, or -1 - i for the first
    malformed FEN i (``bad[0] = i`` too)."""
    S[S_FSET] = fset
    nnz = 0
    n = offsets.size - 1
    indptr[0] = 0
    for i in range(n):
        if not parse_board(buf, offsets[i], offsets[i + 1], U, S):
            bad[0] = i
            return -1 - i
        phi_into(U, S, scratch, 0)
        for k in range(width):
            v = scratch[k]
            if v != 0:
                indices[nnz] = k
                data[nnz] = v
                nnz += 1
        indptr[i + 1] = nnz
    return nnz


@njit(cache=True, nogil=True)
def qsearch_batch_core(buf, offsets, U, S, stop, scratch, res, indptr, indices, data):
    """:func:`game.quiescence_core` of every FEN of ``buf`` (board and side to move; no castling,
    en passant or history): ``res[i] = (static, score, check)``, the leaf phi_int as CSR rows.
    Returns the number of non-zeros, or -1 - i for the first malformed FEN i."""
    nnz = 0
    n = offsets.size - 1
    indptr[0] = 0
    for i in range(n):
        if not parse_board(buf, offsets[i], offsets[i + 1], U, S):
            return -1 - i
        S[S_EP] = -1
        S[S_CASTLE] = 0
        S[S_HALF] = 0
        S[S_NHIST] = 0
        static, score, check = quiescence_core(U, S, stop, scratch)
        res[i, 0] = static
        res[i, 1] = score
        res[i, 2] = check
        for k in range(scratch.size):
            v = scratch[k]
            if v != 0:
                indices[nnz] = k
                data[nnz] = v
                nnz += 1
        indptr[i + 1] = nnz
    return nnz
