"""The ``extended`` feature set: ``pst`` plus classical terms, each tapered (docs/internals.md,
"Feature sets", defines every term; evotune/spec/features.py fixes their order).

The raw terms (White minus Black) are computed from bitboards into the scratch slots
``S[S_RAW:S_RAW + N_RAW]``; material and PST come from the incremental sums of eval_pst.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...spec.features import (EXT_EG_INDEX, EXT_MG_INDEX, N_RAW, PHASE_MAX, R_BACKWARD,
                            R_BISHOP_PAIR, R_DOUBLED, R_ISOLATED, R_KING_ATTACK, R_MOBILITY,
                            R_PASSED, R_ROOK_OPEN, R_ROOK_SEMIOPEN, R_SHELTER_FAR,
                            R_SHELTER_NEAR, R_TEMPO)
from .attacks import BIT, KING, KNIGHT, PAWN_ATT, bishop_attacks, rook_attacks
from .bits import ONE, ZERO, lsb, popcount
from .eval_pst import phase, phi_pst, taper
from .layout import S_EGSUM, S_MGSUM, S_RAW, S_SIDE, S_W, U_ALL, U_OCC

MG_INDEX = np.array(EXT_MG_INDEX, dtype=np.int64)
EG_INDEX = np.array(EXT_EG_INDEX, dtype=np.int64)


def _masks():
    """Pawn-structure and shelter masks, [colour, square] (files / relative ranks)."""
    files = np.zeros(8, dtype=np.uint64)
    adjacent = np.zeros(8, dtype=np.uint64)
    passed = np.zeros((2, 64), dtype=np.uint64)
    support = np.zeros((2, 64), dtype=np.uint64)
    near = np.zeros((2, 64), dtype=np.uint64)
    far = np.zeros((2, 64), dtype=np.uint64)

    def bb(pred):
        return np.uint64(sum(1 << s for s in range(64) if pred(s % 8, s // 8)))

    for f in range(8):
        files[f] = bb(lambda ff, r: ff == f)
        adjacent[f] = bb(lambda ff, r: abs(ff - f) == 1)
    for c in range(2):
        for s in range(64):
            f, r = s % 8, s // 8
            rel = r if c == 0 else 7 - r

            def relr(rr):
                return rr if c == 0 else 7 - rr

            passed[c, s] = bb(lambda ff, rr: abs(ff - f) <= 1 and relr(rr) > rel)
            support[c, s] = bb(lambda ff, rr: abs(ff - f) == 1 and relr(rr) <= rel)
            near[c, s] = bb(lambda ff, rr: abs(ff - f) <= 1 and relr(rr) == rel + 1)
            far[c, s] = bb(lambda ff, rr: abs(ff - f) <= 1 and relr(rr) == rel + 2)
    return files, adjacent, passed, support, near, far


FILE_BB, ADJACENT_FILES, PASSED_MASK, SUPPORT_MASK, SHELTER_NEAR, SHELTER_FAR = _masks()
FILE_A = np.uint64(0x0101010101010101)
BYTE = np.uint64(0xFF)
U8 = np.uint64(8)
U16 = np.uint64(16)
U32 = np.uint64(32)


@njit(cache=True)
def _side_terms(U, S, c, sign):
    """Add ``sign`` x the raw terms of colour ``c`` to the scratch slots."""
    o = 6 * c
    them = 1 - c
    own = U[U_OCC + c]
    notown = ~own
    occ = U[U_ALL]
    pawns = U[o]
    enemy = U[6 * them]
    r = S_RAW
    if popcount(U[o + 2]) >= 2:
        S[r + R_BISHOP_PAIR] += sign
    # pawn structure: files with own pawns as one byte
    x = pawns | (pawns >> U32)
    x |= x >> U16
    x |= x >> U8
    files = x & BYTE
    S[r + R_DOUBLED] += sign * (popcount(pawns) - popcount(files))
    lonely = files & ~((files << ONE) | (files >> ONE))
    S[r + R_ISOLATED] += sign * popcount(pawns & (lonely * FILE_A))
    fwd = 8 if c == 0 else -8
    bb = pawns
    while bb != ZERO:
        s = lsb(bb)
        bb &= bb - ONE
        if (PASSED_MASK[c, s] & enemy) == ZERO:
            rel = (s >> 3) if c == 0 else 7 - (s >> 3)
            S[r + R_PASSED + rel - 1] += sign
        if (ADJACENT_FILES[s & 7] & pawns) != ZERO and (SUPPORT_MASK[c, s] & pawns) == ZERO \
                and (PAWN_ATT[c, s + fwd] & enemy) != ZERO:
            S[r + R_BACKWARD] += sign
    # pieces: mobility, attackers of the enemy king zone, rooks on (semi-)open files
    ek = lsb(U[6 * them + 5])
    zone = KING[ek] | BIT[ek]
    allpawns = pawns | enemy
    for t in range(2, 6):
        bb = U[o + t - 1]
        while bb != ZERO:
            s = lsb(bb)
            bb &= bb - ONE
            if t == 2:
                att = KNIGHT[s]
            elif t == 3:
                att = bishop_attacks(s, occ)
            elif t == 4:
                att = rook_attacks(s, occ)
                fb = FILE_BB[s & 7]
                if (fb & allpawns) == ZERO:
                    S[r + R_ROOK_OPEN] += sign
                elif (fb & pawns) == ZERO:
                    S[r + R_ROOK_SEMIOPEN] += sign
            else:
                att = bishop_attacks(s, occ) | rook_attacks(s, occ)
            S[r + R_MOBILITY + t - 2] += sign * popcount(att & notown)
            if (att & zone) != ZERO:
                S[r + R_KING_ATTACK + t - 2] += sign
    k = lsb(U[o + 5])
    S[r + R_SHELTER_NEAR] += sign * popcount(SHELTER_NEAR[c, k] & pawns)
    S[r + R_SHELTER_FAR] += sign * popcount(SHELTER_FAR[c, k] & pawns)


@njit(cache=True)
def raw_terms(U, S):
    """The raw terms, White minus Black, into ``S[S_RAW:S_RAW + N_RAW]``."""
    for k in range(N_RAW):
        S[S_RAW + k] = 0
    _side_terms(U, S, 0, 1)
    _side_terms(U, S, 1, -1)
    S[S_RAW + R_TEMPO] = 1 if S[S_SIDE] == 0 else -1


@njit(cache=True)
def eval_extended(U, S):
    """The tapered evaluation of the extended set, side to move's view."""
    raw_terms(U, S)
    mg = S[S_MGSUM]
    eg = S[S_EGSUM]
    for k in range(N_RAW):
        v = S[S_RAW + k]
        if v != 0:
            mg += S[S_W + MG_INDEX[k]] * v
            eg += S[S_W + EG_INDEX[k]] * v
    return taper(S, mg, eg, phase(U))


@njit(cache=True)
def phi_extended(U, S, out, off):
    """phi_int of the extended set into ``out[off:off + 824]`` (24 x phi)."""
    phi_pst(U, S, out, off)
    raw_terms(U, S)
    ph = phase(U)
    s = 1 if S[S_SIDE] == 0 else -1
    for k in range(N_RAW):
        v = S[S_RAW + k]
        out[off + MG_INDEX[k]] = s * v * ph
        out[off + EG_INDEX[k]] = s * v * (PHASE_MAX - ph)
