"""The search of the numba core (docs/internals.md, "Search").

Negamax alpha-beta (fail-soft) with iterative deepening, aspiration windows, a transposition
table that cuts off only at exactly the remaining depth, MVV/LVA with losing captures after the
killers, history (or, when ``S[S_MM_ORDER]`` is set, the move model's score with history as the
tie-break, computed when a node first reaches its quiet moves), mate by distance, quiescence
with evasions in check, and draw detection. No extensions, reductions or pruning besides
alpha-beta (the root score is the exact minimax value of the specified tree, a quiescence
search cut at QNODES nodes excepted: a bound only a flat evaluation reaches), unless
reductions are set: ``S[S_LATE]`` = K reduces the quiet moves after a node's first K,
``S[S_REDUCE]`` = GAP (with the model's order) those whose model score is more than GAP below
the node's first quiet move's; a reduced move is searched a ply shallower first, and again to
the full depth when it beats alpha (:func:`_reduced`).

The node limit and the stop flag end a search from its second iteration on (the first always
completes), except for a network (``FS_NNUE``): an untrained net's quiescence finds few cut-offs
and its first iteration can take minutes, so there they act at once, and a first iteration cut
short leaves the best root move searched so far (else the first legal move) as the PV.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...spec.features import FS_NNUE
from ...rules import INF, MATE
from .attacks import attackers, in_check
from .bits import ZERO
from .evaluate import evaluate
from ...spec.movefeatures import SCORE_CLAMP
from .layout import (MAXMOVES, MAXPLY, S_FSET, S_GEN, S_HALF, S_HISTORY, S_ITER, S_KILL, S_LATE,
                     S_LIMIT, S_MB, S_MM_ORDER, S_MOVES, S_NODES, S_PV, S_PVLEN, S_QROOT,
                     S_REDUCE, S_ROOTPV, S_ROOTPVLEN, S_SCORES, S_SIDE, S_STOPPED, U_ALL, U_HASH)
from .movegen import gen_legal
from .movemodel import model_score
from .moves import F_EP, from_to, move_flags, move_from, move_promo, move_to
from .position import insufficient_material, make_move, repetitions, unmake_move
from .tt import (TT_EXACT, TT_LOWER, TT_UPPER, info_depth, info_flag, info_move, tt_hit, tt_info,
                 tt_prefetch, tt_score, tt_slot, tt_store)

ASPIRATION = 50
ORDER_VALUE = np.array([0, 1, 3, 3, 5, 9, 20], dtype=np.int64)
"""Piece values for MVV/LVA ordering, by type (ordering never changes a score)."""
PIECE_ORDER = np.array([ORDER_VALUE[(p - 1) % 6 + 1] if p else 0 for p in range(13)],
                       dtype=np.int64)
"""ORDER_VALUE by piece (1..12) instead of type, read from the mailbox without a division."""


# ---- helpers ---------------------------------------------------------------------------------

HISTORY_BITS = 21
"""Quiet moves ordered by the move model: (model score + SCORE_CLAMP) << HISTORY_BITS, plus the
history capped below 2^HISTORY_BITS as the tie-break (all below LOSING's 2^33)."""
KILLER = 1 << 34
"""Ordering scores from here up: the hash move, captures and promotions, killers."""
LOSING = 1 << 33
"""Losing captures from here up to KILLER (after the killers, before the quiet moves, whose
history is capped at 2^30)."""


@njit(cache=True)
def _score_moves(U, S, base, n, ply, ttmove):
    """Ordering scores of the moves in slots base..base+n-1: the hash move, captures and
    promotions by MVV/LVA, the killers, quiet moves by history. A losing capture, a piece other
    than the king taking a cheaper one on a square the other side attacks, waits for the killers
    (LOSING + MVV/LVA): to depth 7 with net11 on the bench's positions 0.68 of the nodes of
    captures first (docs/results/move-model.md)."""
    us = S[S_SIDE]
    k1 = S[S_KILL + 2 * ply]
    k2 = S[S_KILL + 2 * ply + 1]
    for i in range(n):
        m = S[base + i]
        promo = move_promo(m)
        victim = S[S_MB + move_to(m)]
        ep = (move_flags(m) & F_EP) != 0
        if m == ttmove:
            sc = 1 << 40
        elif victim != 0 or promo != 0 or ep:
            # victim: the captured piece's value; a pawn for en passant; none for a promotion
            vv = PIECE_ORDER[victim] if victim != 0 else (ORDER_VALUE[1] if ep else 0)
            mover = PIECE_ORDER[S[S_MB + move_from(m)]]
            sc = 64 * (vv + ORDER_VALUE[promo]) - mover
            if (victim != 0 and promo == 0 and vv < mover < ORDER_VALUE[6]
                    and attackers(U, move_to(m), U[U_ALL], 1 - us) != ZERO):
                sc += LOSING
            else:
                sc += 1 << 36
        elif m == k1:
            sc = (1 << 34) + 1
        elif m == k2:
            sc = 1 << 34
        else:
            sc = S[S_HISTORY + 4096 * us + from_to(m)]
        S[base + i + (S_SCORES - S_MOVES)] = sc


@njit(cache=True)
def _model_quiets(U, S, base, i, n):
    """Re-score the moves of slots i..n-1 (all quiet, none a killer: what is left once the
    hash move, captures, promotions, killers and losing captures were tried) by the move model,
    history as the tie-break. Done once per node, when the search first reaches a quiet move, so
    a node cut off earlier never pays for the model."""
    off = S_SCORES - S_MOVES
    for j in range(i, n):
        h = S[base + j + off]
        S[base + j + off] = ((model_score(U, S, S[base + j]) + SCORE_CLAMP) << HISTORY_BITS) \
            + min(h, (1 << HISTORY_BITS) - 1)


QNODES = 1 << 15
"""Nodes of one quiescence search (from where it began, ``S[S_QROOT]``) past which its nodes
stand pat: a flat evaluation (an untrained net) finds no cut-off and its capture trees can run to
millions of nodes, where real evaluations stay far below (the bench's searches at depth 7 with
shannon, pst-pesto and net11 are unchanged with a bound of 16,384, pst-pesto's change at 4,096)."""
REDUCE_DEPTH = 3
"""Reductions act at nodes of this remaining depth or more (a reduced child keeps at least one
ply before the quiescence search)."""


@njit(cache=True)
def _reduced(U, S, quiets, late, key, top, gap):
    """True when the quiet move just made is to be searched a ply shallower: ``quiets`` quiet
    moves came before it at this node and ``late`` > 0 allows no more, or (``gap`` > 0) its
    ordering ``key`` is more than ``gap`` model-score units below ``top``, the node's first
    quiet move's (both model score + SCORE_CLAMP above HISTORY_BITS); never a move that gives
    check."""
    if not ((late > 0 and quiets >= late)
            or (gap > 0 and (top >> HISTORY_BITS) - (key >> HISTORY_BITS) > gap)):
        return False
    return not in_check(U, S[S_SIDE])


@njit(cache=True)
def new_search(S):
    """Start a search: node count, stop flag and root PV cleared, killers and history
    forgotten, a new transposition-table generation (every search of the core starts here)."""
    S[S_NODES] = 0
    S[S_STOPPED] = 0
    S[S_GEN] += 1
    S[S_ROOTPVLEN] = 0
    for i in range(2 * MAXPLY):
        S[S_KILL + i] = 0
    for i in range(2 * 4096):
        S[S_HISTORY + i] = 0


@njit(cache=True)
def remember_cutoff(S, ply, m, us, bonus):
    """Move ``m`` of side ``us`` cut off at ``ply``: a quiet one becomes the ply's first killer
    and gains ``bonus``^2 of history (capped at 2^30); captures, promotions, castling and en
    passant are ordered by other means."""
    if S[S_MB + move_to(m)] == 0 and move_promo(m) == 0 and move_flags(m) == 0:
        k = S_KILL + 2 * ply
        if S[k] != m:
            S[k + 1] = S[k]
            S[k] = m
        hi = S_HISTORY + 4096 * us + from_to(m)
        S[hi] = min(S[hi] + bonus * bonus, 1 << 30)


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
    if S[S_ITER] > 1 or (S[S_FSET] == FS_NNUE and S[S_ITER] == 1):
        if (S[S_LIMIT] > 0 and nodes >= S[S_LIMIT]) or ((nodes & 1023) == 0 and stop[0] != 0):
            S[S_STOPPED] = 1


# ---- quiescence and negamax --------------------------------------------------------------------

@njit(cache=True)
def quiesce(U, S, stop, alpha, beta, ply):
    """Captures and promotions (all evasions in check); stand pat when not in check. Past
    QNODES nodes of the quiescence search begun at ``S[S_QROOT]`` (set by its caller) and at
    the deepest plies a node is its evaluation."""
    _count_node(S, stop)
    S[S_PVLEN + ply] = ply
    if S[S_STOPPED] != 0:
        return 0
    if ply >= MAXPLY - 2 or S[S_NODES] - S[S_QROOT] > QNODES:
        return evaluate(U, S)
    check = in_check(U, S[S_SIDE])
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
    _score_moves(U, S, base, n, ply, ply - ply)
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
    if ply > 0 and (S[S_HALF] >= 100 or insufficient_material(U)
                    or repetitions(U, S, 1) > 0):
        return 0
    if depth <= 0:
        S[S_QROOT] = S[S_NODES]
        return quiesce(U, S, stop, alpha, beta, ply)
    # transposition table: cut only at exactly this depth and only outside the window
    h = U[U_HASH]
    slot = tt_slot(S, h)
    ttmove = 0
    if tt_hit(U, S, slot, h):
        info = tt_info(S, slot)
        ttmove = info_move(info)
        if ply > 0 and info_depth(info) == depth:
            flag = info_flag(info)
            ts = tt_score(S, slot, ply)
            if flag != TT_UPPER and ts >= beta:
                return ts
            if flag != TT_LOWER and ts <= alpha:
                return ts
    n = gen_legal(U, S, ply, depth < 0)
    if n == 0:
        if in_check(U, S[S_SIDE]):
            return -(MATE - ply)
        return 0
    base = S_MOVES + ply * MAXMOVES
    _score_moves(U, S, base, n, ply, ttmove)
    alpha0 = alpha
    best = -INF
    bestmove = 0
    us = S[S_SIDE]
    staged = S[S_MM_ORDER] != 0
    deep = depth >= REDUCE_DEPTH
    late = S[S_LATE] if deep else 0
    gap = S[S_REDUCE] if deep and staged else 0
    reducing = late > 0 or gap > 0
    quiets = 0
    top = 0
    for i in range(n):
        m = _pick(S, base, i, n)
        if staged and S[base + i + (S_SCORES - S_MOVES)] < LOSING:
            staged = False  # the first quiet move: order the rest by the move model
            _model_quiets(U, S, base, i, n)
            m = _pick(S, base, i, n)
        key = S[base + i + (S_SCORES - S_MOVES)]
        reduce = False
        if reducing and key < LOSING:
            if quiets == 0:  # the first quiet move: none in check
                top = key
                reducing = not in_check(U, us)
            else:
                reduce = True
            quiets += 1
        make_move(U, S, m)
        if depth > 1:  # the child probes the table
            tt_prefetch(U, S, U[U_HASH])
        if reduce and _reduced(U, S, quiets - 1, late, key, top, gap):
            s = -negamax(U, S, stop, depth - 2, -beta, -alpha, ply + 1)
            if s > alpha and S[S_STOPPED] == 0:
                s = -negamax(U, S, stop, depth - 1, -beta, -alpha, ply + 1)
        else:
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
                    remember_cutoff(S, ply, m, us, depth)
                    break
    if best <= alpha0:
        flag = TT_UPPER
    elif best >= beta:
        flag = TT_LOWER
    else:
        flag = TT_EXACT
    tt_store(U, S, slot, h, best, ply, bestmove, depth, flag)
    return best


@njit(cache=True)
def _first_cut_short(U, S):
    """The root PV after a stopped first iteration: the best root move searched to the end (its
    PV), else the first legal move."""
    ln = S[S_PVLEN]
    if ln == 0:
        if gen_legal(U, S, ln, False) > 0:
            S[S_ROOTPV] = S[S_MOVES]
            S[S_ROOTPVLEN] = 1
        return
    S[S_ROOTPVLEN] = ln
    for j in range(ln):
        S[S_ROOTPV + j] = S[S_PV + j]


@njit(cache=True)
def search_iteration(U, S, stop, d, score, done):
    """Iteration ``d`` of :func:`search_root` (a full window at depth 1, else an aspiration
    window around ``score``, the last completed iteration's, widened to full on a fail); returns
    ``(score, done)`` after it: its score and ``d`` when it completed (its PV then in
    ``S[S_ROOTPV:]``), else the ones given (a net's first iteration cut short leaves the best
    root move searched so far as the PV)."""
    S[S_ITER] = d
    inf = score - score + INF
    if d == 1:
        a, b = -inf, inf
    else:
        a, b = score - ASPIRATION, score + ASPIRATION
    zero = score - score
    s = negamax(U, S, stop, d, a, b, zero)
    if S[S_STOPPED] == 0 and (s <= a or s >= b):
        s = negamax(U, S, stop, d, -inf, inf, zero)
    if S[S_STOPPED] != 0:
        if done == 0:  # a net's first iteration, cut short
            _first_cut_short(U, S)
        return score, done
    ln = S[S_PVLEN]
    S[S_ROOTPVLEN] = ln
    for j in range(ln):
        S[S_ROOTPV + j] = S[S_PV + j]
    return s, d


@njit(cache=True)
def search_root(U, S, stop, max_depth):
    """Iterative deepening 1..max_depth with aspiration windows (:func:`search_iteration`);
    returns the root score.

    The root PV of the deepest completed iteration is left in ``S[S_ROOTPV:]`` (length
    ``S[S_ROOTPVLEN]``); ``S[S_ITER]`` ends as the deepest completed depth.
    """
    new_search(S)
    # never pass literals into the recursion (numba issue 6061): derive typed values
    zero = max_depth - max_depth
    score = zero
    done = zero
    for d in range(1, max_depth + 1):
        score, done = search_iteration(U, S, stop, d, score, done)
        if S[S_STOPPED] != 0:
            break
    S[S_ITER] = done
    return score
