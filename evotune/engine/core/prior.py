"""What UCT and probability-limited search share: the move prior (a softmax over the move
ordering's score, or over the move model's: :mod:`.movemodel`) and the logistic curve between
scores and win probabilities (Texel's K)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import (MM_SLOTS, S_HISTORY, S_MB, S_MM, S_LATE, S_MM_ORDER, S_MOVES, S_REDUCE,
                     S_SCORES, S_SIDE)
from .movemodel import N_FEATURES, model_score
from .moves import F_EP, from_to, move_flags, move_from, move_promo, move_to
from .search import ORDER_VALUE, PIECE_ORDER

PRIOR_ORDERING = 1
"""Prior kind (mcts.P_PRIOR): the softmax of the move ordering's score (:func:`prior_score`)."""
PRIOR_MODEL = 2
"""Prior kind: the softmax of the move model's score (weights from the parameters' tail)."""
LOGIT_CLAMP = 1e-4
"""Win probabilities are clamped to [LOGIT_CLAMP, 1 - LOGIT_CLAMP] when turned into scores."""


@njit(cache=True)
def win_probability(score, k):
    """The logistic curve ``1 / (1 + 10 ** (-k score / 400))`` (mate scores give 0 or 1)."""
    x = -k * score / 400.0
    if x > 300.0:
        return 0.0
    if x < -300.0:
        return 1.0
    return 1.0 / (1.0 + 10.0 ** x)


@njit(cache=True)
def probability_score(p, k):
    """The centipawn score whose win probability is ``p`` (the inverse of the curve, clamped)."""
    q = min(max(p, LOGIT_CLAMP), 1.0 - LOGIT_CLAMP)
    return np.int64(round(-400.0 / k * math.log10(1.0 / q - 1.0)))


@njit(cache=True)
def zero_score(k):
    """The score of an even position (typed like :func:`probability_score`)."""
    return probability_score(0.5, k)


@njit(cache=True)
def prior_score(S, m):
    """The move ordering as a score (centipawn-like): captures and promotions by MVV/LVA
    (100 x (victim + promotion) - 10 x attacker, piece values 1, 3, 3, 5, 9), quiet moves by the
    history table (10 log2(1 + history), at most 50)."""
    victim = S[S_MB + move_to(m)]
    promo = move_promo(m)
    ep = (move_flags(m) & F_EP) != 0
    if victim != 0 or promo != 0 or ep:
        vv = PIECE_ORDER[victim] if victim != 0 else (ORDER_VALUE[1] if ep else 0)
        return 100 * (vv + ORDER_VALUE[promo]) - 10 * PIECE_ORDER[S[S_MB + move_from(m)]]
    h = S[S_HISTORY + 4096 * S[S_SIDE] + from_to(m)]
    return min(50, np.int64(10.0 * math.log2(1.0 + h)))


@njit(cache=True)
def move_prior(U, S, m, kind):
    """The prior score of move ``m``: the move model's (``kind`` PRIOR_MODEL) or the ordering's."""
    if kind == PRIOR_MODEL:
        return model_score(U, S, m)
    return prior_score(S, m)


@njit(cache=True)
def load_model(S, params, start):
    """Copy the move model from ``params[start:]`` (float64, whole numbers, laid out as
    spec.movefeatures.MODEL_SLOTS says) into ``S[S_MM:]``: the linear weights, the hidden size,
    the blocks the model reads and as many hidden weights as it has (the last three slots of
    MM_SLOTS are the reductions' settings and the ordering flag)."""
    hidden = np.int64(params[start + N_FEATURES]) if params.size > start + N_FEATURES else 0
    n = min(params.size - start, N_FEATURES + 2 + hidden * (N_FEATURES + 2), MM_SLOTS - 3)
    for i in range(n):
        S[S_MM + i] = np.int64(params[start + i])


@njit(cache=True)
def plain_order(S):
    """History's order and no reductions: the cores of the other searches and of the quiescence
    search start here (alpha-beta's start at :func:`set_ordering`)."""
    S[S_MM_ORDER] = 0
    S[S_REDUCE] = 0
    S[S_LATE] = 0


@njit(cache=True)
def set_ordering(S, params, prior_slot, start, reduce_slot):
    """Alpha-beta: order quiet moves by the move model in ``params[start:]`` when the prior
    kind ``params[prior_slot]`` is PRIOR_MODEL (weights loaded), and reduce those whose score
    is more than ``params[reduce_slot]`` below the node's first quiet move's (0: none); else by
    history. Either order: reduce the quiet moves after the first ``params[reduce_slot + 1]``
    (0: none)."""
    S[S_LATE] = np.int64(params[reduce_slot + 1])
    if params[prior_slot] == PRIOR_MODEL:
        load_model(S, params, start)
        S[S_MM_ORDER] = 1
        S[S_REDUCE] = np.int64(params[reduce_slot])
    else:
        S[S_MM_ORDER] = 0
        S[S_REDUCE] = 0


@njit(cache=True)
def prior_log_norm(U, S, base, n, temp, kind):
    """The move prior's softmax (prior ``kind``) over the moves ``S[base:base+n]`` at
    temperature ``temp``:
    (the largest score, log of the normaliser), so that log P(m) = (score(m) - top) / temp - lz.
    The scores are left in the parallel ordering slots."""
    off = S_SCORES - S_MOVES
    top = -(1 << 40)
    for i in range(n):
        sc = move_prior(U, S, S[base + i], kind)
        S[base + i + off] = sc
        if sc > top:
            top = sc
    z = 0.0
    for i in range(n):
        z += math.exp((S[base + i + off] - top) / temp)
    return top, math.log(z)
