"""The move model in the core: a score over one-hot features of a legal move, whose softmax
over the legal moves is the move prior of UCT/PUCT and probability-limited search when a spec
says ``prior = "model:FILE"`` (docs/engine.md, "The move model").

Every move activates exactly one feature of each block of :data:`BLOCKS`, so its linear score is
the sum of :data:`N_BLOCKS` integer weights (``S[S_MM + index]``). A model with H hidden units
(``S[S_MM_H]``, 0 for the linear model) adds, per unit j, its output weight times its
accumulator (bias plus the move's features' hidden weights) clipped to [0, 64], the sum shifted
right by ACT_SHIFT (integers throughout: ``engine/movemodel.py``'s numpy reference gives the same
numbers). The score is clamped to +-:data:`SCORE_CLAMP`.
Squares are seen from the side to move (a black move's squares are mirrored, ``sq ^ 56``); piece
types are python-chess's minus one (pawn 0 .. king 5). The blocks are defined in one place,
``spec/movefeatures.py`` (plain Python, compiled in: the core's cache key covers it), which
``engine/movemodel.py``, the python-chess reference of the same indices, reads too (the tests
compare them on every legal move of thousands of positions).
"""
from __future__ import annotations

from numba import njit

from .attacks import BIT, KNIGHT, PAWN_ATT, attackers, bishop_attacks, rook_attacks
from .bits import ZERO, lsb
from .layout import MM_SLOTS, S_MB, S_MM, S_SIDE, U_ALL
from .moves import F_CASTLE, F_EP, move_flags, move_from, move_promo, move_to
from ...spec.movefeatures import ACT_SHIFT, BLOCK_START, MODEL_SLOTS, N_BLOCKS, N_FEATURES, SCORE_CLAMP

assert MODEL_SLOTS < MM_SLOTS - 1  # the last slot is the ordering flag (layout.S_MM_ORDER)
S_MM_H = S_MM + N_FEATURES
"""The hidden units of the model loaded (0: linear); its hidden weights follow (feature-major,
H per feature), then H biases, then H output weights."""
S_MM_W1 = S_MM_H + 1
ACT_ONE = 1 << ACT_SHIFT

O_TO, O_FROM, O_CAP, O_PROMO, O_CHECK, O_TOATT, O_TODEF, O_FROMATT = BLOCK_START


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
    """The :data:`N_BLOCKS` active feature indices of the legal move ``m``, as a tuple."""
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


@njit(cache=True)
def move_features(U, S, m, out, o):
    """The :data:`N_BLOCKS` active feature indices of the legal move ``m`` into
    ``out[o:o + N_BLOCKS]``."""
    ix = _indices(U, S, m)
    for b in range(N_BLOCKS):
        out[o + b] = ix[b]


@njit(cache=True)
def model_score(U, S, m):
    """The move model's score of the legal move ``m`` (weights in ``S[S_MM:]``, hidden units
    when ``S[S_MM_H]`` is not 0), clamped."""
    a, b, c, d, e, f, g, h = _indices(U, S, m)
    s = (S[S_MM + a] + S[S_MM + b] + S[S_MM + c] + S[S_MM + d] + S[S_MM + e] + S[S_MM + f]
         + S[S_MM + g] + S[S_MM + h])
    nh = S[S_MM_H]
    if nh != 0:
        bias = S_MM_W1 + N_FEATURES * nh
        out = bias + nh
        a, b, c, d = S_MM_W1 + nh * a, S_MM_W1 + nh * b, S_MM_W1 + nh * c, S_MM_W1 + nh * d
        e, f, g, h = S_MM_W1 + nh * e, S_MM_W1 + nh * f, S_MM_W1 + nh * g, S_MM_W1 + nh * h
        acc = 0
        for j in range(nh):
            x = (S[bias + j] + S[a + j] + S[b + j] + S[c + j] + S[d + j] + S[e + j] + S[f + j]
                 + S[g + j] + S[h + j])
            acc += S[out + j] * min(max(x, 0), ACT_ONE)
        s += acc >> ACT_SHIFT
    return min(max(s, -SCORE_CLAMP), SCORE_CLAMP)
