"""Probability-limited alpha-beta (docs/engine.md, "Probability-limited search").

Giraffe's search: the root has probability 1 and a node's probability is split among its
children, uniformly (1 / number of legal moves) or by the move prior (the softmax over the move
ordering's or the move model's score, :mod:`.prior`); a node whose probability is below the
threshold is a leaf (the quiescence search), so forcing lines (few replies) are searched deeper
than wide ones. Iterated like iterative deepening, with the threshold multiplied by a factor
(< 1) each iteration. The rest is the alpha-beta of :mod:`.search`: fail-soft negamax, the same
draw rules and mate scores, MVV/LVA, killers and history. The transposition table gives the move
to try first, and a bound when its entry was searched with at least the log-probability budget
left at the node (``log p - log threshold``, stored in half-nats rounded down, compared rounded
up, so a cut-off never uses a smaller search). Probabilities are kept as logarithms.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...rules import INF, MATE
from .attacks import in_check
from .layout import (MAXMOVES, S_HALF, S_ITER, S_MOVES, S_NODES, S_PV, S_PVLEN, S_QROOT,
                     S_ROOTPV, S_ROOTPVLEN, S_SCORES, S_STOPPED, S_SIDE, U_HASH)
from .movegen import gen_legal
from .position import insufficient_material, make_move, repetitions, unmake_move
from .prior import move_prior
from .search import (_count_node, _pick, _pv_update, _score_moves, new_search, quiesce,
                     remember_cutoff)
from .tt import (TT_EXACT, TT_LOWER, TT_UPPER, info_depth, info_flag, info_move, tt_hit, tt_info,
                 tt_score, tt_slot, tt_store)

MAX_PLIES = 64
"""Deepest node of the main search (a line of single replies keeps its probability)."""
MAX_ITERATIONS = 64
"""Iterations of one search at most."""
TT_STEPS = 2.0
"""Steps per nat of the budget stored in an entry's depth field (0: no budget, 255: capped)."""
PRIOR_BITS = 4096
PRIOR_OFFSET = 2048
"""A prior score (-200..1800) + PRIOR_OFFSET fits below PRIOR_BITS."""


@njit(cache=True)
def pnegamax(U, S, stop, logp, logt, alpha, beta, ply, use_prior, temp):
    """Fail-soft alpha-beta below a node of log-probability ``logp``; a node under the
    log-threshold ``logt`` (or MAX_PLIES deep) is a leaf searched by quiescence."""
    _count_node(S, stop)
    S[S_PVLEN + ply] = ply
    if S[S_STOPPED] != 0:
        return 0
    if ply > 0 and (S[S_HALF] >= 100 or insufficient_material(U)
                    or repetitions(U, S, 1) > 0):
        return 0
    if ply > 0 and (logp < logt or ply >= MAX_PLIES):
        S[S_QROOT] = S[S_NODES]
        return quiesce(U, S, stop, alpha, beta, ply)
    h = U[U_HASH]
    slot = tt_slot(S, h)
    ttmove = 0
    left = logp - logt
    if tt_hit(U, S, slot, h):
        info = tt_info(S, slot)
        ttmove = info_move(info)
        stored = info_depth(info) - 1
        if ply > 0 and 0 <= stored < 254 and stored >= math.ceil(left * TT_STEPS):
            flag = info_flag(info)
            ts = tt_score(S, slot, ply)
            if flag != TT_UPPER and ts >= beta:
                return ts
            if flag != TT_LOWER and ts <= alpha:
                return ts
    n = gen_legal(U, S, ply, False)
    if n == 0:
        if in_check(U, S[S_SIDE]):
            return -(MATE - ply)
        return 0
    base = S_MOVES + ply * MAXMOVES
    off = S_SCORES - S_MOVES
    _score_moves(U, S, base, n, ply, ttmove)
    top = -PRIOR_OFFSET
    lz = 0.0
    if use_prior:
        # the prior score rides in the low bits of the ordering score (which it cannot reorder
        # but among equals), so it moves with its move when the ordering picks
        for i in range(n):
            p = move_prior(U, S, S[base + i], use_prior)
            S[base + i + off] = S[base + i + off] * PRIOR_BITS + p + PRIOR_OFFSET
            top = max(top, p)
        z = 0.0
        for i in range(n):
            z += math.exp(((S[base + i + off] & (PRIOR_BITS - 1)) - PRIOR_OFFSET - top) / temp)
        lz = math.log(z)
    uniform = -math.log(n)
    alpha0 = alpha
    best = -INF
    bestmove = 0
    us = S[S_SIDE]
    for i in range(n):
        m = _pick(S, base, i, n)
        if use_prior:
            p = (S[base + i + off] & (PRIOR_BITS - 1)) - PRIOR_OFFSET
            child = logp + (p - top) / temp - lz
        else:
            child = logp + uniform
        make_move(U, S, m)
        s = -pnegamax(U, S, stop, child, logt, -beta, -alpha, ply + 1, use_prior, temp)
        unmake_move(U, S, m)
        if S[S_STOPPED] != 0:
            return 0
        if s > best:
            best = s
            bestmove = m
            if s > alpha:
                alpha = s
                _pv_update(S, ply, m)
                if s >= beta:
                    # the history bonus: the log-probability left
                    remember_cutoff(S, ply, m, us, 1 + np.int64(logp - logt))
                    break
    if best <= alpha0:
        flag = TT_UPPER
    elif best >= beta:
        flag = TT_LOWER
    else:
        flag = TT_EXACT
    budget = min(254, np.int64(math.floor(left * TT_STEPS))) + 1
    tt_store(U, S, slot, h, best, ply, bestmove, budget, flag)
    return best


@njit(cache=True)
def probability_root(U, S, stop, factor, use_prior, temp, max_iterations):
    """Iterations with the threshold factor, factor^2, ... until the node limit, the stop flag
    or ``max_iterations``; returns the score of the last completed one (the first always
    completes). Its PV is left in ``S[S_ROOTPV:]``, ``S[S_ITER]`` ends as its number."""
    new_search(S)
    zero = max_iterations - max_iterations
    inf = zero + INF
    score = zero
    done = zero
    logt = 0.0
    step = math.log(factor)
    for it in range(1, max_iterations + 1):
        S[S_ITER] = it
        logt += step
        s = pnegamax(U, S, stop, 0.0, logt, -inf, inf, zero, use_prior, temp)
        if S[S_STOPPED] != 0:
            break
        score = s
        done = it
        ln = S[S_PVLEN]
        S[S_ROOTPVLEN] = ln
        for j in range(ln):
            S[S_ROOTPV + j] = S[S_PV + j]
        if abs(s) > MATE - MAX_PLIES and ln > 0:
            break
    S[S_ITER] = done
    return score
