"""The ``shannon`` feature set: the paper's 6 terms, material differences P, N, B, R, Q and the
mobility difference, side to move against the other side (docs/internals.md, "Evaluation")."""
from __future__ import annotations

from numba import njit

from .attacks import KING, KNIGHT, bishop_attacks, rook_attacks
from .bits import ONE, ZERO, lsb, popcount
from .layout import S_SIDE, S_W, U_ALL, U_OCC

SIZE = 6


@njit(cache=True)
def mobility(U, c):
    """(piece, target) pairs of colour ``c``'s N, B, R, Q, K (targets not own-occupied)."""
    o = 6 * c
    own = U[U_OCC + c]
    occ = U[U_ALL]
    notown = ~own
    mob = 0
    bb = U[o + 1]
    while bb != ZERO:
        s = lsb(bb)
        bb &= bb - ONE
        mob += popcount(KNIGHT[s] & notown)
    bb = U[o + 2] | U[o + 4]
    while bb != ZERO:
        s = lsb(bb)
        bb &= bb - ONE
        mob += popcount(bishop_attacks(s, occ) & notown)
    bb = U[o + 3] | U[o + 4]
    while bb != ZERO:
        s = lsb(bb)
        bb &= bb - ONE
        mob += popcount(rook_attacks(s, occ) & notown)
    mob += popcount(KING[lsb(U[o + 5])] & notown)
    return mob


@njit(cache=True)
def phi_shannon(U, S, out, off):
    """phi (side to move's view) into ``out[off:off + 6]``."""
    us = S[S_SIDE]
    a = 6 * us
    b = 6 * (1 - us)
    for k in range(5):
        out[off + k] = popcount(U[a + k]) - popcount(U[b + k])
    out[off + 5] = mobility(U, us) - mobility(U, 1 - us)


@njit(cache=True)
def eval_shannon(U, S):
    """Rounded weights . phi, side to move's view."""
    us = S[S_SIDE]
    a = 6 * us
    b = 6 * (1 - us)
    v = S[S_W + 5] * (mobility(U, us) - mobility(U, 1 - us))
    for k in range(5):
        v += S[S_W + k] * (popcount(U[a + k]) - popcount(U[b + k]))
    return v
