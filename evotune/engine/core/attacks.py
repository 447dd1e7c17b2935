"""Attack sets: knight, king and pawn tables, rays, squares between and on a line, built once with
numpy at import; slider attacks (kindergarten bitboards), attackers of a square and check.
"""
from __future__ import annotations

import chess
import numpy as np
from numba import njit

from .bits import ZERO, lsb
from .layout import U_ALL


def _bb(squares) -> np.uint64:
    v = 0
    for s in squares:
        v |= 1 << s
    return np.uint64(v)


def _on(f: int, r: int) -> bool:
    return 0 <= f < 8 and 0 <= r < 8


BIT = np.array([np.uint64(1 << s) for s in range(64)], dtype=np.uint64)

KNIGHT = np.zeros(64, dtype=np.uint64)
KING = np.zeros(64, dtype=np.uint64)
PAWN_ATT = np.zeros((2, 64), dtype=np.uint64)
# ray directions: 0..3 increase the square index (N, E, NE, NW), 4..7 decrease it (S, W, SW, SE)
_DIRS = ((0, 1), (1, 0), (1, 1), (-1, 1), (0, -1), (-1, 0), (-1, -1), (1, -1))
RAYS = np.zeros((8, 64), dtype=np.uint64)
BETWEEN = np.zeros((64, 64), dtype=np.uint64)
LINE = np.zeros((64, 64), dtype=np.uint64)

for _s in range(64):
    _f, _r = _s % 8, _s // 8
    KNIGHT[_s] = _bb(8 * (_r + dr) + _f + df
                     for df, dr in ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1),
                                    (-1, 2)) if _on(_f + df, _r + dr))
    KING[_s] = _bb(8 * (_r + dr) + _f + df for df in (-1, 0, 1) for dr in (-1, 0, 1)
                   if (df or dr) and _on(_f + df, _r + dr))
    PAWN_ATT[0, _s] = _bb(8 * (_r + 1) + _f + df for df in (-1, 1) if _on(_f + df, _r + 1))
    PAWN_ATT[1, _s] = _bb(8 * (_r - 1) + _f + df for df in (-1, 1) if _on(_f + df, _r - 1))
    for _d, (df, dr) in enumerate(_DIRS):
        sq = []
        f, r = _f + df, _r + dr
        while _on(f, r):
            sq.append(8 * r + f)
            f, r = f + df, r + dr
        RAYS[_d, _s] = _bb(sq)
        for i, t in enumerate(sq):
            BETWEEN[_s, t] = _bb(sq[:i])
            back = []
            f, r = _f - df, _r - dr
            while _on(f, r):
                back.append(8 * r + f)
                f, r = f - df, r - dr
            LINE[_s, t] = _bb(sq + back + [_s])


# ---- slider attacks: kindergarten bitboards ---------------------------------------------------
# One multiplication gathers the occupancy of a line's 6 inner squares into the top 6 bits of a
# word, which index a small table of the attacks along that line: per rook or bishop two
# branch-free lookups instead of four ray scans. The tables are filled here from python-chess's
# own attack tables through the same index formulas, and tests compare every square with
# python-chess on random occupancies.

B_FILE = np.uint64(0x0202020202020202)   # gathers a rank or a diagonal into the top byte
A_FILE = np.uint64(0x0101010101010101)
C2H7 = np.uint64(0x0080402010080400)     # gathers the a-file into the top byte
RANK = RAYS[1] | RAYS[5]                 # the lines through a square, without it
DIAG = RAYS[2] | RAYS[6]                 # a1-h8 direction
ANTI = RAYS[3] | RAYS[7]                 # h1-a8 direction
FILL_UP = np.zeros((8, 64), dtype=np.uint64)    # [file][inner occupancy]: rank attacks, all ranks
FILE_ATT = np.zeros((8, 64), dtype=np.uint64)   # [rank][inner occupancy]: a-file attacks

_M64 = (1 << 64) - 1
for _i in range(8):
    for _o in range(64):
        _rank_occ = (_o << 1) & chess.BB_RANK_MASKS[_i]
        FILL_UP[_i, _o] = np.uint64(
            chess.BB_RANK_ATTACKS[_i][_rank_occ] * 0x0101010101010101 & _M64)
        _file_occ = sum(1 << (8 * (k + 1)) for k in range(6) if _o >> k & 1)
        _idx = ((_file_occ * int(C2H7)) & _M64) >> 58
        FILE_ATT[_i, _idx] = np.uint64(
            chess.BB_FILE_ATTACKS[8 * _i][_file_occ & chess.BB_FILE_MASKS[8 * _i]])


@njit(cache=True, inline="always")
def _line(mask, sq, occ):
    """Attacks along a rank or diagonal ``mask`` (through ``sq``, without it)."""
    return FILL_UP[sq & 7, ((mask & occ) * B_FILE) >> np.uint64(58)] & mask


@njit(cache=True, inline="always")
def _file(sq, occ):
    f = np.uint64(sq & 7)
    idx = ((A_FILE & (occ >> f)) * C2H7) >> np.uint64(58)
    return FILE_ATT[sq >> 3, idx] << f


@njit(cache=True)
def rook_attacks(sq, occ):
    """Rook attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _line(RANK[sq], sq, occ) | _file(sq, occ)


@njit(cache=True)
def bishop_attacks(sq, occ):
    """Bishop attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _line(DIAG[sq], sq, occ) | _line(ANTI[sq], sq, occ)


@njit(cache=True)
def attackers(U, sq, occ, by):
    """Pieces of colour ``by`` attacking ``sq`` given occupancy ``occ``."""
    o = 6 * by
    rq = U[o + 3] | U[o + 4]
    bq = U[o + 2] | U[o + 4]
    return ((PAWN_ATT[1 - by, sq] & U[o]) | (KNIGHT[sq] & U[o + 1]) | (KING[sq] & U[o + 5])
            | (rook_attacks(sq, occ) & rq) | (bishop_attacks(sq, occ) & bq))


@njit(cache=True)
def in_check(U, side):
    """True when ``side``'s king is attacked."""
    ksq = lsb(U[6 * side + 5])
    return attackers(U, ksq, U[U_ALL], 1 - side) != ZERO
