"""Attack sets: knight, king and pawn tables, rays for sliders, squares between and on a line,
built once with numpy at import; slider attacks, attackers of a square and check.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ZERO, lsb, msb
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


@njit(cache=True, inline="always")
def _ray_up(d, sq, occ):
    a = RAYS[d, sq]
    b = a & occ
    if b != ZERO:
        a ^= RAYS[d, lsb(b)]
    return a


@njit(cache=True, inline="always")
def _ray_down(d, sq, occ):
    a = RAYS[d, sq]
    b = a & occ
    if b != ZERO:
        a ^= RAYS[d, msb(b)]
    return a


@njit(cache=True)
def rook_attacks(sq, occ):
    """Rook attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _ray_up(0, sq, occ) | _ray_up(1, sq, occ) | _ray_down(4, sq, occ) | _ray_down(5, sq, occ)


@njit(cache=True)
def bishop_attacks(sq, occ):
    """Bishop attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _ray_up(2, sq, occ) | _ray_up(3, sq, occ) | _ray_down(6, sq, occ) | _ray_down(7, sq, occ)


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
