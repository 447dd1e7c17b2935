"""Whole games inside one numba call, plus the other jitted entry points of the core.

Entry points (the only functions Python calls; few, to keep the cache small and quick to load):
``perft_divide_core`` (perft.py), ``phi_batch_core`` and ``qsearch_batch_core`` (batch.py),
``search_core``, ``uct_core``, ``probability_core``, ``eval_core``, ``eval_line_core``,
``phi_core``, ``qsearch_core``, ``quiescence_core``, ``play_game_core`` and the move model's
``move_features_core``, ``move_scores_core`` and ``ordering_core``. Jitted code outside
the core must call these instead of compiling core functions into its own cache, which numba
keys on that module's source only. The game rules
(result and termination codes, adjudication) are those of ``evotune/rules.py``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...rules import (INF, R_BLACK, R_DRAW, R_WHITE, T_ADJ_DRAW, T_CHECKMATE, T_FIFTY, T_MATERIAL,
                      T_NONE, T_PLYCAP, T_REPETITION, T_RESIGN, T_STALEMATE)
from .attacks import in_check
from .evaluate import evaluate, phi_into, prepare
from .layout import (B_CAPTURE, B_CASTLE, B_CHECK, B_EP, B_FLAGS, B_FULL, B_HALF, B_PROMO, B_SIDE,
                     S_CASTLE, S_EP, S_FSET, S_FULLMOVE, S_HALF, S_ITER, S_LIMIT, S_MB, S_MOVES,
                     S_NHIST, S_NODES, S_PV, S_PVLEN, S_QROOT, S_ROOTPV, S_ROOTPVLEN, S_SIDE,
                     S_STOPPED, S_W, unowned)
from .mcts import (ALGO_ALPHABETA, ALGO_UCT, M_USED, P_ALGO, P_FACTOR, P_MODEL, P_PRIOR, P_REDUCE,
                   P_REUSE, P_TEMP, reroot, uct_search)
from .movegen import gen_legal
from .movemodel import N_BLOCKS, model_score, move_features
from .moves import F_EP, move_flags, move_promo, move_to
from .prior import PRIOR_MODEL, load_model, plain_order, set_ordering
from .position import (compact_history, insufficient_material, make_move, repetitions,
                       unmake_move)
from .probability import MAX_ITERATIONS, probability_root
from .search import new_search, quiesce, search_iteration, search_root

COMPACT_AT = 600  # history entries kept between moves before the reversible window is compacted


@njit(cache=True, nogil=True)
def phi_core(U, S, out):
    """Entry point: phi_int of the position (side to move's view, feature set ``S[S_FSET]``) into
    ``out[0:size]``."""
    zero = out.size - out.size
    phi_into(U, S, out, zero)


@njit(cache=True, nogil=True)
def eval_core(U, S):
    """Entry point: the evaluation with the weights in ``S[S_W:]`` (side to move's view)."""
    prepare(S)
    return evaluate(U, S)


@njit(cache=True, nogil=True)
def eval_line_core(U, S, moves, out):
    """Entry point: the evaluation of the loaded position and after each of ``moves`` (legal,
    played in turn, kept incrementally by make_move) into ``out[0:len(moves) + 1]``, each from
    its side to move's view."""
    prepare(S)
    out[0] = evaluate(U, S)
    for j in range(moves.size):
        make_move(U, S, moves[j])
        out[j + 1] = evaluate(U, S)


@njit(cache=True, nogil=True)
def move_features_core(U, S, moves, feats):
    """Entry point: the legal moves of the loaded position into ``moves`` (generation order)
    and the move model's active feature indices of each, N_BLOCKS per move, into ``feats``;
    returns their number."""
    n = gen_legal(U, S, moves.size - moves.size, False)
    for i in range(n):
        m = S[S_MOVES + i]
        moves[i] = m
        move_features(U, S, m, feats, N_BLOCKS * i)
    return n


@njit(cache=True, nogil=True)
def move_scores_core(U, S, params, moves, out):
    """Entry point: the move model's scores (weights in ``params[P_MODEL:]``) of the legal
    moves of the loaded position into ``out``, the moves into ``moves``; returns their number."""
    load_model(S, params, P_MODEL)
    n = gen_legal(U, S, moves.size - moves.size, False)
    for i in range(n):
        m = S[S_MOVES + i]
        moves[i] = m
        out[i] = model_score(U, S, m)
    return n


@njit(cache=True, nogil=True)
def ordering_core(S, params):
    """Entry point: alpha-beta's quiet-move ordering for the next searches, by the move model of
    ``params`` (mcts.P_*) when its prior kind is PRIOR_MODEL, else by history."""
    set_ordering(S, params, P_PRIOR, P_MODEL, P_REDUCE)


@njit(cache=True, nogil=True)
def search_core(U, S, stop, depth, nodes):
    """Entry point: one iterative-deepening search with the weights in ``S[S_W:]`` (quiet moves
    by the move model when ``S[S_MM_ORDER]`` is set: :func:`ordering_core`)."""
    S[S_LIMIT] = nodes
    prepare(S)
    return search_root(unowned(U), unowned(S), unowned(stop), depth)


@njit(cache=True, nogil=True)
def iteration_core(U, S, stop, depth, nodes, score, done):
    """Entry point: iteration ``depth`` of an iterative-deepening search, continued on the
    state its earlier iterations left (``score``, ``done``: the last completed one's, as
    :func:`.search.search_iteration` returns them); depth 1 starts the search (node limit
    ``nodes`` for the whole search, the evaluation prepared, killers and history forgotten).
    Iterations 1..d called one by one give exactly :func:`search_core`'s search to depth d.
    Returns (score, done); ``S[S_ITER]`` ends as ``done``."""
    if depth == 1:
        S[S_LIMIT] = nodes
        prepare(S)
        new_search(S)
    score, done = search_iteration(unowned(U), unowned(S), unowned(stop), depth, score, done)
    S[S_ITER] = done
    return score, done


@njit(cache=True, nogil=True)
def uct_core(U, S, stop, TI, TF, meta, params, sims, path, npath):
    """Entry point: a UCT search of ``sims`` simulations with the weights in ``S[S_W:]`` and the
    parameters ``params`` (mcts.P_*), in the tree ``TI``/``TF``/``meta``: with tree reuse its
    root moves along ``path[:npath]`` (the moves played since its last search), else the tree
    starts empty. A move model's weights ride in ``params[P_MODEL:]``."""
    prepare(S)
    plain_order(S)
    if params[P_PRIOR] == PRIOR_MODEL:
        load_model(S, params, P_MODEL)
    if params[P_REUSE] != 0:
        reroot(TI, TF, meta, path, npath)
    else:
        meta[M_USED] = 0
    return uct_search(unowned(U), unowned(S), unowned(stop), TI, TF, meta, params, sims)


@njit(cache=True, nogil=True)
def probability_core(U, S, stop, params, nodes):
    """Entry point: a probability-limited search (node limit ``nodes``, 0: none) with the
    weights in ``S[S_W:]`` and the parameters ``params`` (mcts.P_*; a move model's weights in
    ``params[P_MODEL:]``)."""
    S[S_LIMIT] = nodes
    prepare(S)
    plain_order(S)
    if params[P_PRIOR] == PRIOR_MODEL:
        load_model(S, params, P_MODEL)
    return probability_root(unowned(U), unowned(S), unowned(stop), params[P_FACTOR],
                            np.int64(params[P_PRIOR]), max(params[P_TEMP], 1e-9),
                            nodes - nodes + MAX_ITERATIONS)


@njit(cache=True, nogil=True)
def qsearch_core(U, S, stop, out):
    """Entry point: quiescence search of the position with the weights in ``S[S_W:]`` (full
    window); its PV is left in ``S[S_PV:]`` (length ``S[S_PVLEN]``), the phi_int of the PV's leaf
    (root mover's view) in ``out``. Returns the score."""
    S[S_NODES] = 0
    S[S_STOPPED] = 0
    S[S_ITER] = 0
    S[S_LIMIT] = 0
    plain_order(S)
    prepare(S)
    # never pass literals into the recursion (numba issue 6061): derive typed values
    zero = S[S_NODES]
    inf = zero + INF
    S[S_QROOT] = zero
    score = quiesce(unowned(U), unowned(S), unowned(stop), -inf, inf, zero)
    ln = S[S_PVLEN]
    for j in range(ln):
        make_move(U, S, S[S_PV + j])
    phi_into(U, S, out, zero)
    for j in range(ln - 1, -1, -1):
        unmake_move(U, S, S[S_PV + j])
    if ln % 2 == 1:
        for k in range(out.size):
            out[k] = -out[k]
    return score


@njit(cache=True, nogil=True)
def quiescence_core(U, S, stop, out):
    """Entry point: (static evaluation, quiescence score, 1 if in check else 0) of the position,
    side to move's view, with the weights in ``S[S_W:]``; the leaf phi as in :func:`qsearch_core`.
    """
    score = qsearch_core(U, S, stop, out)
    return evaluate(U, S), score, 1 if in_check(U, S[S_SIDE]) else 0


@njit(cache=True)
def _leaf_phi(U, S, out, off, width):
    """phi of the root PV's leaf, from the root mover's point of view."""
    ln = S[S_ROOTPVLEN]
    for j in range(ln):
        make_move(U, S, S[S_ROOTPV + j])
    phi_into(U, S, out, off)
    for j in range(ln - 1, -1, -1):
        unmake_move(U, S, S[S_ROOTPV + j])
    if ln % 2 == 1:
        for k in range(width):
            out[off + k] = -out[off + k]


@njit(cache=True)
def _record_board(U, S, boards, row, n, fullmove):
    """The position before the move of ply ``row`` into ``boards[row]`` (its ``n`` legal moves
    are at ply 0 of the move lists); the move's flags are added once it is chosen."""
    for sq in range(64):
        boards[row, sq] = S[S_MB + sq]
    boards[row, B_SIDE] = S[S_SIDE]
    boards[row, B_CASTLE] = S[S_CASTLE]
    ep = -1
    for i in range(n):
        if move_flags(S[S_MOVES + i]) & F_EP:
            ep = S[S_EP]
    boards[row, B_EP] = ep
    boards[row, B_HALF] = S[S_HALF]
    boards[row, B_FULL] = fullmove
    boards[row, B_FLAGS] = B_CHECK if in_check(U, S[S_SIDE]) else 0


@njit(cache=True, nogil=True)
def play_game_core(U, S, stop, fsets, weights, depth, nodes, max_plies, adj,
                   moves, scores, depths, leaf_phi, predicted, info, params, budgets, TI, TF,
                   meta, boards):
    """Entry point: play a whole game from the loaded position.

    fsets: int64 (2,), the feature set of white and black. weights: int64 (2, width), row 0
    white, row 1 black (rounded, zero-padded to the wider set). adj: int64 (5,) = resign_score,
    resign_moves, draw_score, draw_moves, draw_start_ply. Outputs (length >= max_plies):
    moves, scores, depths (the search's ``S[S_ITER]``: alpha-beta's deepest completed depth,
    UCT's PV length, probability's iterations), leaf_phi (max_plies, width) flattened
    row-major (phi_int, zero-padded), predicted (0/1). info <- result, termination, plies
    played, total nodes. boards: int64 (max_plies, B_WIDTH), the position before each move and
    the move's flags (B_* columns), or (0, B_WIDTH): none recorded.
    params: float64 (2, mcts.NP), the search of white and black (alpha-beta: depth and nodes;
    uct: ``budgets[side]`` simulations in the tree TI[side], TF[side], meta[side], reused from
    the side's previous move when its parameters say so; probability: ``budgets[side]`` nodes).
    """
    width = weights.shape[1]
    plies = 0
    total = 0
    result = R_DRAW
    term = T_NONE
    resign0 = 0
    resign1 = 0
    last0 = 0
    last1 = 0
    have0 = False
    have1 = False
    drawn = 0
    expect = -1
    last_search = np.full(2, -1, dtype=np.int64)  # the ply of each side's previous search
    record = boards.shape[0] > 0
    side0 = S[S_SIDE]
    while True:
        side = S[S_SIDE]
        if S[S_NHIST] > COMPACT_AT:
            compact_history(U, S)
        n = gen_legal(U, S, depth - depth, depth < 0)
        if n == 0:
            if in_check(U, side):
                term = T_CHECKMATE
                result = R_BLACK if side == 0 else R_WHITE
            else:
                term = T_STALEMATE
            break
        if insufficient_material(U):
            term = T_MATERIAL
            break
        if S[S_HALF] >= 100:
            term = T_FIFTY
            break
        if repetitions(U, S, 2) >= 2:
            term = T_REPETITION
            break
        if plies >= max_plies:
            term = T_PLYCAP
            break
        if record:
            _record_board(U, S, boards, plies, n, S[S_FULLMOVE] + (plies + side0) // 2)
        S[S_FSET] = fsets[side]
        for k in range(width):
            S[S_W + k] = weights[side, k]
        algo = np.int64(params[side, P_ALGO])
        if algo == ALGO_ALPHABETA:
            set_ordering(S, params[side], P_PRIOR, P_MODEL, P_REDUCE)
            score = search_core(U, S, stop, depth, nodes)
        elif algo == ALGO_UCT:
            since = last_search[side]
            if since < 0:
                meta[side, M_USED] = 0
                since = plies
            last_search[side] = plies
            score = uct_core(U, S, stop, TI[side], TF[side], meta[side], params[side],
                             budgets[side], moves[since:plies], plies - since)
        else:
            score = probability_core(U, S, stop, params[side], budgets[side])
        total += S[S_NODES]
        depths[plies] = S[S_ITER]
        if S[S_ROOTPVLEN] == 0:  # cannot happen with a legal move; keep the game well-formed
            S[S_ROOTPV] = S[S_MOVES]
            S[S_ROOTPVLEN] = 1
        m = S[S_ROOTPV]
        _leaf_phi(U, S, leaf_phi, width * plies, width)
        if plies > 0:
            predicted[plies - 1] = 1 if m == expect else 0
        expect = S[S_ROOTPV + 1] if S[S_ROOTPVLEN] >= 2 else -1
        if record:
            if S[S_MB + move_to(m)] != 0 or move_flags(m) & F_EP:
                boards[plies, B_FLAGS] |= B_CAPTURE
            if move_promo(m) != 0:
                boards[plies, B_FLAGS] |= B_PROMO
        make_move(U, S, m)
        moves[plies] = m
        scores[plies] = score
        plies += 1
        # adjudication
        if adj[0] > 0 and adj[1] > 0:
            if side == 0:
                if score <= -adj[0] and have1 and last1 >= adj[0]:
                    resign0 += 1
                else:
                    resign0 = 0
                if resign0 >= adj[1]:
                    term = T_RESIGN
                    result = R_BLACK
            else:
                if score <= -adj[0] and have0 and last0 >= adj[0]:
                    resign1 += 1
                else:
                    resign1 = 0
                if resign1 >= adj[1]:
                    term = T_RESIGN
                    result = R_WHITE
        if side == 0:
            last0 = score
            have0 = True
        else:
            last1 = score
            have1 = True
        if term == T_NONE and adj[2] > 0 and adj[3] > 0:
            if plies - 1 >= adj[4] and abs(score) <= adj[2]:
                drawn += 1
            else:
                drawn = 0
            if drawn >= 2 * adj[3]:
                term = T_ADJ_DRAW
                result = R_DRAW
        if term != T_NONE:
            break
    if plies > 0:
        predicted[plies - 1] = 0
    info[0] = result
    info[1] = term
    info[2] = plies
    info[3] = total
