"""The move model in the core: a score over one-hot features of a legal move, whose softmax
over the legal moves is the move prior of UCT/PUCT and probability-limited search when a spec
says ``prior = "model:FILE"`` (docs/engine.md, "The move model").

Every move activates exactly one feature of each block of :data:`BLOCKS`, so its linear score is
the sum of one integer weight per block the model reads (``S[S_MM + index]``; ``S[S_MM_NB]``
blocks: 8 for feature set 1, whose model never computes the other blocks, 16 for set 2). A
model with H hidden units (``S[S_MM_H]``, 0 for the linear model) adds, per unit j, its output
weight times its accumulator (bias plus the move's features' hidden weights) clipped to [0, 64],
the sum shifted right by ACT_SHIFT (integers throughout: ``engine/movemodel.py``'s numpy
reference gives the same numbers). The score is clamped to +-:data:`SCORE_CLAMP`.
Squares are seen from the side to move (a black move's squares are mirrored, ``sq ^ 56``); piece
types are python-chess's minus one (pawn 0 .. king 5). The blocks are defined in one place,
``spec/movefeatures.py`` (plain Python, compiled in: the core's cache key covers it), which
``engine/movemodel.py``, the python-chess reference of the same indices, reads too (the tests
compare them on every legal move of thousands of positions).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .attacks import BIT, KING, KNIGHT, PAWN_ATT, attackers, bishop_attacks, rook_attacks
from .bits import ZERO, lsb, popcount
from .layout import MM_SLOTS, S_MB, S_MM, S_SIDE, U_ALL, U_OCC
from .moves import F_CASTLE, F_EP, move_flags, move_from, move_promo, move_to
from ...spec.movefeatures import (
    ACT_SHIFT,
    BLOCK_START,
    HIDDEN_MAX,
    MODEL_SLOTS,
    N_BLOCKS,
    N_FEATURES,
    SCORE_CLAMP,
    SET_BLOCKS,
)

S_MM_ACC = S_MM + MM_SLOTS - 3 - HIDDEN_MAX
"""Scratch slots before the reductions' settings and the ordering flag: one move's hidden
accumulators."""
assert MODEL_SLOTS <= S_MM_ACC - S_MM  # the last three: layout.S_LATE, S_REDUCE, S_MM_ORDER
S_MM_H = S_MM + N_FEATURES
"""The hidden units of the model loaded (0: linear); after it the blocks it reads, then its
hidden weights (feature-major, H per feature), H biases and H output weights."""
S_MM_NB = S_MM_H + 1
S_MM_W1 = S_MM_NB + 1
ACT_ONE = 1 << ACT_SHIFT
NB1 = SET_BLOCKS[1]
assert N_BLOCKS == 2 * NB1

(O_TO, O_FROM, O_CAP, O_PROMO, O_CHECK, O_TOATT, O_TODEF, O_FROMATT, O_FTHREAT, O_CAPSAFE,
 O_THREAT, O_KZONE, O_KDIST, O_MOB, O_PHASE, O_PAWN) = BLOCK_START


@njit(cache=True, inline="always")
def _least_valuable(U, att, side):
    """0 when ``att`` holds no piece of ``side``, else 1 + the type of its least valuable one."""
    for t in range(6):
        if att & U[6 * side + t] != ZERO:
            return t + 1
    return 0


@njit(cache=True)
def gives_check(U, S, m):
    """Whether the legal move ``m`` of the side to move checks the enemy king (direct, by the
    castling rook, discovered, or through an en passant capture's cleared squares)."""
    us = S[S_SIDE]
    them = 1 - us
    f = move_from(m)
    t = move_to(m)
    ksq = lsb(U[6 * them + 5])
    kb = BIT[ksq]
    occ = (U[U_ALL] & ~BIT[f]) | BIT[t]
    flags = move_flags(m)
    if flags & F_EP:
        occ &= ~BIT[t - 8 if us == 0 else t + 8]
    rq = (U[6 * us + 3] | U[6 * us + 4]) & ~BIT[f]
    bq = (U[6 * us + 2] | U[6 * us + 4]) & ~BIT[f]
    promo = move_promo(m)
    kind = promo - 1 if promo != 0 else (S[S_MB + f] - 1) % 6
    if flags & F_CASTLE:
        rfrom = f + 3 if t > f else f - 4
        rto = f + 1 if t > f else f - 1
        occ = (occ & ~BIT[rfrom]) | BIT[rto]
        rq &= ~BIT[rfrom]
        if rook_attacks(rto, occ) & kb != ZERO:
            return True
    elif kind == 0:
        if PAWN_ATT[us, t] & kb != ZERO:
            return True
    elif kind == 1:
        if KNIGHT[t] & kb != ZERO:
            return True
    elif kind == 2:
        if bishop_attacks(t, occ) & kb != ZERO:
            return True
    elif kind == 3:
        if rook_attacks(t, occ) & kb != ZERO:
            return True
    elif kind == 4:
        if (rook_attacks(t, occ) | bishop_attacks(t, occ)) & kb != ZERO:
            return True
    return (rook_attacks(ksq, occ) & rq) | (bishop_attacks(ksq, occ) & bq) != ZERO


@njit(cache=True, inline="always")
def _indices(U, S, m):
    """The first :data:`NB1` active feature indices of the legal move ``m`` (feature set 1: the
    move itself), as a tuple."""
    us = S[S_SIDE]
    them = 1 - us
    f = move_from(m)
    t = move_to(m)
    flip = 56 if us == 1 else 0
    kind = (S[S_MB + f] - 1) % 6
    victim = S[S_MB + t]
    cap = (victim - 1) % 6 + 1 if victim != 0 else (1 if move_flags(m) & F_EP else 0)
    promo = move_promo(m)
    lifted = U[U_ALL] & ~BIT[f]
    own = attackers(U, t, lifted, us) & ~BIT[f]
    return (O_TO + 64 * kind + (t ^ flip),
            O_FROM + 64 * kind + (f ^ flip),
            O_CAP + 6 * cap + kind,
            O_PROMO + (promo - 1 if promo != 0 else 0),
            O_CHECK + (1 if gives_check(U, S, m) else 0),
            O_TOATT + 6 * _least_valuable(U, attackers(U, t, lifted, them), them) + kind,
            O_TODEF + (1 if own != ZERO else 0),
            O_FROMATT + 6 * _least_valuable(U, attackers(U, f, U[U_ALL], them), them) + kind)


@njit(cache=True, inline="always")
def _piece_attacks(kind, side, sq, occ):
    """The squares a piece of type ``kind`` (pawn 0 .. king 5) of ``side`` on ``sq`` attacks."""
    if kind == 0:
        return PAWN_ATT[side, sq]
    if kind == 1:
        return KNIGHT[sq]
    if kind == 2:
        return bishop_attacks(sq, occ)
    if kind == 3:
        return rook_attacks(sq, occ)
    if kind == 4:
        return bishop_attacks(sq, occ) | rook_attacks(sq, occ)
    return KING[sq]


@njit(cache=True, inline="always")
def _indices2(U, S, m):
    """The last :data:`NB1` active feature indices of the legal move ``m`` (feature set 2: the
    position around the move), as a tuple."""
    us = S[S_SIDE]
    them = 1 - us
    f = move_from(m)
    t = move_to(m)
    flags = move_flags(m)
    flip = 56 if us == 1 else 0
    kind = (S[S_MB + f] - 1) % 6
    victim = S[S_MB + t]
    cap = (victim - 1) % 6 + 1 if victim != 0 else (1 if flags & F_EP else 0)
    promo = move_promo(m)
    everyone = U[U_ALL]
    lifted = everyone & ~BIT[f]
    from_att = _least_valuable(U, attackers(U, f, everyone, them), them)
    from_def = 1 if attackers(U, f, everyone, us) != ZERO else 0
    to_att = _least_valuable(U, attackers(U, t, lifted, them), them)
    # the board after the move: occupancy, the enemy's pieces, our own
    gone = BIT[t]
    if flags & F_EP:
        gone = BIT[t - 8 if us == 0 else t + 8]
    occ = (lifted & ~gone) | BIT[t]
    mine = (U[U_OCC + us] & ~BIT[f]) | BIT[t]
    if flags & F_CASTLE:
        rfrom = f + 3 if t > f else f - 4
        rto = f + 1 if t > f else f - 1
        occ = (occ & ~BIT[rfrom]) | BIT[rto]
        mine = (mine & ~BIT[rfrom]) | BIT[rto]
    att = _piece_attacks(promo - 1 if promo != 0 else kind, us, t, occ)
    most = 0
    for k in range(5, -1, -1):
        if att & U[6 * them + k] & ~gone != ZERO:
            most = k + 1
            break
    heavy = att & (U[U_OCC + them] & ~U[6 * them]) & ~gone
    fork = 1 if popcount(heavy) >= 2 else 0
    ksq = lsb(U[6 * them + 5])
    zone = min(popcount(att & KING[ksq]), 3)
    dist = max(abs((t & 7) - (ksq & 7)), abs((t >> 3) - (ksq >> 3)))
    mob = min(popcount(att & ~mine), 15) // 2
    phase = 0
    for c in range(2):
        phase += (popcount(U[6 * c + 1]) + popcount(U[6 * c + 2]) + 2 * popcount(U[6 * c + 3])
                  + 4 * popcount(U[6 * c + 4]))
    rank = (t ^ flip) >> 3
    pawn = 0
    if kind == 0:
        passed = 1
        enemy = U[6 * them] & ~gone
        while enemy != ZERO:
            p = lsb(enemy)
            enemy &= enemy - np.uint64(1)
            if abs((p & 7) - (t & 7)) <= 1 and ((p ^ flip) >> 3) > rank:
                passed = 0
                break
        pawn = 1 + 8 * passed + rank
    return (O_FTHREAT + 6 * (2 * from_att + from_def) + kind,
            O_CAPSAFE + 6 * (7 * cap + to_att) + kind,
            O_THREAT + 6 * (2 * most + fork) + kind,
            O_KZONE + 6 * zone + kind,
            O_KDIST + 6 * dist + kind,
            O_MOB + 6 * mob + kind,
            O_PHASE + 8 * (6 * min(phase // 6, 3) + kind) + rank,
            O_PAWN + pawn)


@njit(cache=True)
def move_features(U, S, m, out, o):
    """The :data:`N_BLOCKS` active feature indices of the legal move ``m`` into
    ``out[o:o + N_BLOCKS]``."""
    ix = _indices(U, S, m)
    for b in range(NB1):
        out[o + b] = ix[b]
    ix = _indices2(U, S, m)
    for b in range(NB1):
        out[o + NB1 + b] = ix[b]


@njit(cache=True, inline="always")
def _hidden(S, nh, a, b, c, d, e, f, g, h, ix2, wide):
    """The hidden units' part of a move's score, its features ``a`` .. ``h`` (and ``ix2`` when
    ``wide``): each feature's row of ``nh`` weights is contiguous, so the accumulators are
    summed row by row into the scratch slots (unsigned offsets: no negative-index test per
    element, so the sums vectorise), then clipped and weighted in a second pass."""
    w1 = S_MM_W1
    a, b, c, d = (np.uint64(w1 + nh * a), np.uint64(w1 + nh * b), np.uint64(w1 + nh * c),
                  np.uint64(w1 + nh * d))
    e, f, g, h = (np.uint64(w1 + nh * e), np.uint64(w1 + nh * f), np.uint64(w1 + nh * g),
                  np.uint64(w1 + nh * h))
    hu = np.uint64(nh)
    bias = np.uint64(S_MM_W1 + N_FEATURES * nh)
    acc = np.uint64(S_MM_ACC)
    for j in range(hu):
        S[acc + j] = (S[bias + j] + S[a + j] + S[b + j] + S[c + j] + S[d + j] + S[e + j]
                      + S[f + j] + S[g + j] + S[h + j])
    if wide:
        i0, i1 = np.uint64(w1 + nh * ix2[0]), np.uint64(w1 + nh * ix2[1])
        i2, i3 = np.uint64(w1 + nh * ix2[2]), np.uint64(w1 + nh * ix2[3])
        i4, i5 = np.uint64(w1 + nh * ix2[4]), np.uint64(w1 + nh * ix2[5])
        i6, i7 = np.uint64(w1 + nh * ix2[6]), np.uint64(w1 + nh * ix2[7])
        for j in range(hu):
            S[acc + j] += (S[i0 + j] + S[i1 + j] + S[i2 + j] + S[i3 + j] + S[i4 + j]
                           + S[i5 + j] + S[i6 + j] + S[i7 + j])
    out = bias + hu
    tot = 0
    for j in range(hu):
        tot += S[out + j] * min(max(S[acc + j], 0), ACT_ONE)
    return tot >> ACT_SHIFT


@njit(cache=True)
def model_score(U, S, m):
    """The move model's score of the legal move ``m`` (weights in ``S[S_MM:]``, the set-2
    blocks when ``S[S_MM_NB]`` says so, hidden units when ``S[S_MM_H]`` is not 0), clamped."""
    a, b, c, d, e, f, g, h = _indices(U, S, m)
    s = (S[S_MM + a] + S[S_MM + b] + S[S_MM + c] + S[S_MM + d] + S[S_MM + e] + S[S_MM + f]
         + S[S_MM + g] + S[S_MM + h])
    nh = S[S_MM_H]
    wide = S[S_MM_NB] > NB1
    ix2 = _indices2(U, S, m) if wide else (O_FTHREAT, O_CAPSAFE, O_THREAT, O_KZONE, O_KDIST,
                                           O_MOB, O_PHASE, O_PAWN)
    if wide:
        for k in range(NB1):
            s += S[S_MM + ix2[k]]
    if nh != 0:
        s += _hidden(S, nh, a, b, c, d, e, f, g, h, ix2, wide)
    return min(max(s, -SCORE_CLAMP), SCORE_CLAMP)
