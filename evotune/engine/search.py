"""Evaluation and search of the numba core (docs/internals.md, "Evaluation" and "Search").

Negamax alpha-beta (fail-soft) with iterative deepening, aspiration windows, a transposition
table that cuts off only at exactly the remaining depth, MVV/LVA, killers, history, mate by
distance, quiescence with evasions in check, and draw detection. No extensions, reductions or
pruning besides alpha-beta: the root score is the exact minimax value of the specified tree.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ONE, ZERO, lsb, popcount
from .board import (bishop_attacks, gen_legal, in_check, insufficient_material, make_move,
                    rook_attacks, unmake_move, window_start_is_twin)
from .tables import (F_EP, INF, KING, KNIGHT, MATE, MATE_BOUND, MAXMOVES, MAXPLY, ORDER_VALUE,
                     S_GEN, S_HALF, S_HISTORY, S_ITER, S_KILL, S_LIMIT, S_MB, S_MOVES, S_NHIST,
                     S_NODES, S_PV, S_PVLEN, S_ROOTPV, S_ROOTPVLEN, S_SCORES, S_SIDE, S_STOPPED,
                     S_TT, S_TTMASK, S_W, U_ALL, U_HASH, U_HIST, U_OCC, U_TT)

TT_EXACT = 0
TT_LOWER = 1
TT_UPPER = 2
ASPIRATION = 50


# ---- evaluation ---------------------------------------------------------------------------------

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
def phi_into(U, S, out, off):
    """Write phi (side to move's view) into ``out[off:off + 6]``."""
    us = S[S_SIDE]
    a = 6 * us
    b = 6 * (1 - us)
    for k in range(5):
        out[off + k] = popcount(U[a + k]) - popcount(U[b + k])
    out[off + 5] = mobility(U, us) - mobility(U, 1 - us)


@njit(cache=True)
def evaluate(U, S):
    """Rounded weights . phi, side to move's view."""
    us = S[S_SIDE]
    a = 6 * us
    b = 6 * (1 - us)
    v = S[S_W + 5] * (mobility(U, us) - mobility(U, 1 - us))
    for k in range(5):
        v += S[S_W + k] * (popcount(U[a + k]) - popcount(U[b + k]))
    return v


# ---- helpers ---------------------------------------------------------------------------------

@njit(cache=True)
def is_repetition(U, S):
    """The position equals an earlier one (same side to move) within the reversible window."""
    n = S[S_NHIST]
    h = U[U_HASH]
    lim = min(S[S_HALF], n)
    k = 2
    while k <= lim:
        if U[U_HIST + n - k] == h:
            return True
        k += 2
    return window_start_is_twin(U, S)


@njit(cache=True)
def _score_moves(S, base, n, ply, ttmove):
    us = S[S_SIDE]
    k1 = S[S_KILL + 2 * ply]
    k2 = S[S_KILL + 2 * ply + 1]
    for i in range(n):
        m = S[base + i]
        t = (m >> 6) & 63
        promo = (m >> 12) & 7
        victim = S[S_MB + t]
        if m == ttmove:
            sc = 1 << 40
        elif victim != 0 or promo != 0 or ((m >> 15) & F_EP) != 0:
            vt = (victim - 1) % 6 + 1 if victim != 0 else 1
            if promo != 0 and victim == 0 and ((m >> 15) & F_EP) == 0:
                vt = 0
            att = (S[S_MB + (m & 63)] - 1) % 6 + 1
            sc = (1 << 36) + 64 * (ORDER_VALUE[vt] + ORDER_VALUE[promo]) - ORDER_VALUE[att]
        elif m == k1:
            sc = (1 << 34) + 1
        elif m == k2:
            sc = 1 << 34
        else:
            sc = S[S_HISTORY + 4096 * us + (m & 4095)]
        S[base + i + (S_SCORES - S_MOVES)] = sc


@njit(cache=True)
def _pick(S, base, i, n):
    """Move the best-scored of moves i..n-1 to slot i and return it."""
    off = S_SCORES - S_MOVES
    best = i
    bs = S[base + i + off]
    for j in range(i + 1, n):
        if S[base + j + off] > bs:
            bs = S[base + j + off]
            best = j
    if best != i:
        m = S[base + best]
        S[base + best] = S[base + i]
        S[base + i] = m
        S[base + best + off] = S[base + i + off]
        S[base + i + off] = bs
    return S[base + i]


@njit(cache=True)
def _pv_update(S, ply, m):
    row = S_PV + ply * MAXPLY
    nxt = S_PV + (ply + 1) * MAXPLY
    S[row + ply] = m
    end = S[S_PVLEN + ply + 1]
    for j in range(ply + 1, end):
        S[row + j] = S[nxt + j]
    S[S_PVLEN + ply] = end


@njit(cache=True)
def _count_node(S, stop):
    nodes = S[S_NODES] + 1
    S[S_NODES] = nodes
    if S[S_ITER] > 1:
        if (S[S_LIMIT] > 0 and nodes >= S[S_LIMIT]) or ((nodes & 1023) == 0 and stop[0] != 0):
            S[S_STOPPED] = 1


# ---- quiescence and negamax --------------------------------------------------------------------

@njit(cache=True)
def quiesce(U, S, stop, alpha, beta, ply):
    """Captures and promotions (all evasions in check); stand pat when not in check."""
    _count_node(S, stop)
    S[S_PVLEN + ply] = ply
    if S[S_STOPPED] != 0:
        return 0
    if ply >= MAXPLY - 2:
        return evaluate(U, S)
    check = in_check(U, S)
    if check:
        best = -INF
    else:
        best = evaluate(U, S)
        if best >= beta:
            return best
        if best > alpha:
            alpha = best
    n = gen_legal(U, S, ply, not check)
    if check and n == 0:
        return -(MATE - ply)
    base = S_MOVES + ply * MAXMOVES
    _score_moves(S, base, n, ply, ply - ply)
    for i in range(n):
        m = _pick(S, base, i, n)
        make_move(U, S, m)
        s = -quiesce(U, S, stop, -beta, -alpha, ply + 1)
        unmake_move(U, S, m)
        if S[S_STOPPED] != 0:
            return 0
        if s > best:
            best = s
            if s > alpha:
                alpha = s
                _pv_update(S, ply, m)
                if s >= beta:
                    break
    return best


@njit(cache=True)
def negamax(U, S, stop, depth, alpha, beta, ply):
    """Fail-soft alpha-beta to ``depth`` plies; see docs/internals.md for the exact tree."""
    _count_node(S, stop)
    S[S_PVLEN + ply] = ply
    if S[S_STOPPED] != 0:
        return 0
    if ply > 0 and (S[S_HALF] >= 100 or insufficient_material(U) or is_repetition(U, S)):
        return 0
    if depth <= 0:
        return quiesce(U, S, stop, alpha, beta, ply)
    # transposition table: cut only at exactly this depth and only outside the window
    h = U[U_HASH]
    slot = np.int64(h & np.uint64(S[S_TTMASK]))
    ttmove = 0
    gen = S[S_GEN]
    if U[U_TT + slot] == h and (S[S_TT + 2 * slot + 1] >> 32) == gen:
        info = S[S_TT + 2 * slot + 1]
        ttmove = info & 0xFFFFF
        if ply > 0 and ((info >> 20) & 0xFF) == depth:
            flag = (info >> 28) & 3
            ts = S[S_TT + 2 * slot]
            if ts > MATE_BOUND:
                ts -= ply
            elif ts < -MATE_BOUND:
                ts += ply
            if flag != TT_UPPER and ts >= beta:
                return ts
            if flag != TT_LOWER and ts <= alpha:
                return ts
    n = gen_legal(U, S, ply, depth < 0)
    if n == 0:
        if in_check(U, S):
            return -(MATE - ply)
        return 0
    base = S_MOVES + ply * MAXMOVES
    _score_moves(S, base, n, ply, ttmove)
    alpha0 = alpha
    best = -INF
    bestmove = 0
    us = S[S_SIDE]
    for i in range(n):
        m = _pick(S, base, i, n)
        make_move(U, S, m)
        s = -negamax(U, S, stop, depth - 1, -beta, -alpha, ply + 1)
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
                    t = (m >> 6) & 63
                    if S[S_MB + t] == 0 and (m >> 12) == 0:
                        k = S_KILL + 2 * ply
                        if S[k] != m:
                            S[k + 1] = S[k]
                            S[k] = m
                        hi = S_HISTORY + 4096 * us + (m & 4095)
                        S[hi] = min(S[hi] + depth * depth, 1 << 30)
                    break
    if best <= alpha0:
        flag = TT_UPPER
    elif best >= beta:
        flag = TT_LOWER
    else:
        flag = TT_EXACT
    ts = best
    if ts > MATE_BOUND:
        ts += ply
    elif ts < -MATE_BOUND:
        ts -= ply
    U[U_TT + slot] = h
    S[S_TT + 2 * slot] = ts
    S[S_TT + 2 * slot + 1] = bestmove | (depth << 20) | (flag << 28) | (gen << 32)
    return best


@njit(cache=True)
def search_root(U, S, stop, max_depth):
    """Iterative deepening 1..max_depth with aspiration windows; returns the root score.

    The root PV of the deepest completed iteration is left in ``S[S_ROOTPV:]`` (length
    ``S[S_ROOTPVLEN]``); ``S[S_ITER]`` ends as the deepest completed depth.
    """
    S[S_NODES] = 0
    S[S_STOPPED] = 0
    S[S_GEN] += 1
    S[S_ROOTPVLEN] = 0
    for i in range(2 * MAXPLY):
        S[S_KILL + i] = 0
    for i in range(2 * 4096):
        S[S_HISTORY + i] = 0
    # never pass literals into the recursion (numba issue 6061): derive typed values
    zero = max_depth - max_depth
    inf = zero + INF
    score = zero
    done = zero
    for d in range(1, max_depth + 1):
        S[S_ITER] = d
        if d == 1:
            a, b = -inf, inf
        else:
            a, b = score - ASPIRATION, score + ASPIRATION
        s = negamax(U, S, stop, d, a, b, zero)
        if S[S_STOPPED] == 0 and (s <= a or s >= b):
            s = negamax(U, S, stop, d, -inf, inf, zero)
        if S[S_STOPPED] != 0:
            break
        score = s
        done = d
        ln = S[S_PVLEN]
        S[S_ROOTPVLEN] = ln
        for j in range(ln):
            S[S_ROOTPV + j] = S[S_PV + j]
    S[S_ITER] = done
    return score
