"""Monte-Carlo tree search with UCT, in preallocated arrays (docs/engine.md, "UCT").

The tree lives in three arrays the caller owns: ``TI`` (int64, rows x NI), ``TF`` (float64, rows
x NF) and ``meta`` (int64, NM). A node is a row; the children of a node are one contiguous block
of rows, made when the node is first selected after its own first visit. A node's ``F_VALUE`` is
the sum of the results of the simulations through it from the view of the side that moved into
it (1 win, 0.5 draw, 0 loss), so a parent selects among its children by their own values.

One cycle (one simulation): from the root, select children by UCT = v/n + c sqrt(ln N / n)
(an unvisited child is valued 1; ties are broken at random by the seeded generator) or, with the
prior, by PUCT = Q + c P sqrt(N) / (1 + n) (an unvisited child's Q is its parent's mean value
from the mover's view; the value 1 of an unvisited UCT child is a parameter, inf visits every
child once before any twice); stop at the first node never visited before (the one node this cycle
adds), at a terminal node or at a proven one; value it by the simulation policy from the view of
its side to move; back-propagate 1 - r, r, 1 - r, ... up to the root. The final move is the
most-visited root child (ties: the better mean value, then the generator).

Simulation policies: random (random legal moves to the end of the game, at most a ply cap; a
capped game is valued by the evaluation through the logistic curve), eval (the logistic curve of
the evaluation, ``1 / (1 + 10 ** (-K s / 400))``, Texel's K), qsearch (of the quiescence score),
alphabeta (of a depth-D alpha-beta score). Solver (MCTS-Solver): a checkmate is a proven win for
the side that gave it; a node with a child proven won for its mover is proven lost for the side
that moved into it, one whose children are all proven lost is proven won; proven-lost children
are not selected, a proven-won one is at once, and the search ends when the root is proven.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...rules import INF, MATE
from .attacks import in_check
from .evaluate import evaluate
from .layout import (MAXHIST, MAXMOVES, MAXPLY, S_HALF, S_ITER, S_LIMIT,
                     S_MOVES, S_NHIST, S_NODES, S_QROOT, S_ROOTPV, S_ROOTPVLEN, S_SCORES, S_SIDE,
                     S_STOPPED, U_HASH)
from .movegen import gen_legal
from .position import insufficient_material, make_move, repetitions, unmake_move
from .movemodel import MODEL_SLOTS
from .prior import prior_log_norm, probability_score, win_probability, zero_score
from .search import negamax, new_search, quiesce

# tree columns (TI, int64)
I_PARENT = 0   # parent row (-1: the root)
I_MOVE = 1     # the move into the node
I_FIRST = 2    # first child row (-1: children not made yet)
I_NCH = 3      # number of children
I_VISITS = 4   # simulations through the node
I_PROVEN = 5   # solver: 1 won, -1 lost for the side that moved into the node, 0 unknown
I_TERM = 6     # -1 unknown, 0 not terminal, 1 draw, 2 the side to move is mated
I_NEW = 7      # scratch of the tree reuse: the row the node moves to
NI = 8
# tree columns (TF, float64)
F_VALUE = 0    # sum of the results, view of the side that moved into the node
F_PRIOR = 1    # prior probability of the move into the node
NF = 2
# meta (int64)
M_ROOT = 0     # the root row
M_USED = 1     # rows in use (0: empty tree)
M_RNG = 2      # generator state
M_SEED = 3     # the seed
M_SIMS = 4     # simulations of the last search
M_DEPTH = 5    # deepest selection of the last search
M_REUSED = 6   # root visits kept from earlier searches (tree reuse)
NM = 8
# parameters (float64), shared with probability-limited search
P_ALGO = 0     # ALGO_*
P_POLICY = 1   # POLICY_*
P_DEPTH = 2    # alpha-beta depth of the alphabeta policy
P_C = 3        # exploration constant
P_K = 4        # logistic K
P_PRIOR = 5    # prior kind (prior.PRIOR_*): PUCT with it (probability: the prior split); 0 none
P_TEMP = 6     # softmax temperature of the prior, centipawns of prior score
P_SOLVER = 7   # 1: solver rule
P_REUSE = 8    # 1: keep the subtree of the position reached between searches
P_PLYCAP = 9   # random policy: plies per simulation
P_FACTOR = 10  # probability: threshold factor per iteration
P_UNVISITED = 11  # UCT: the value of an unvisited child (the seed's 1; inf: each child once first)
P_NODE_BUDGET = 12  # UCT: 1 when the budget counts nodes (positions) instead of simulations
P_REDUCE = 13  # alpha-beta with a move model: reduce quiet moves this far below the first
P_LATE = 14    # alpha-beta: reduce the quiet moves after this many (0: none)
P_MODEL = 15   # the move model (PRIOR_MODEL), movemodel.MODEL_SLOTS values at most
NP = P_MODEL + MODEL_SLOTS
ALGO_ALPHABETA = 0
ALGO_UCT = 1
ALGO_PROBABILITY = 2
POLICY_RANDOM = 0
POLICY_EVAL = 1
POLICY_QSEARCH = 2
POLICY_ALPHABETA = 3

PRIOR_SLOT = MAXPLY - 1   # move-list slot of expansions and random playouts
MAX_TREE_DEPTH = MAXPLY - 8
"""Deepest node the selection expands (the history also keeps room for a leaf search)."""


# ---- the seeded generator (splitmix64) ---------------------------------------------------------

@njit(cache=True)
def next_random(meta):
    """The next 64-bit draw of the generator in ``meta[M_RNG]`` (splitmix64)."""
    s = np.uint64(meta[M_RNG]) + np.uint64(0x9E3779B97F4A7C15)
    meta[M_RNG] = np.int64(s)
    z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def random_below(meta, k):
    """A uniform integer in 0..k-1."""
    return np.int64((next_random(meta) >> np.uint64(11)) % np.uint64(k))


# ---- the tree ----------------------------------------------------------------------------------

@njit(cache=True)
def new_node(TI, TF, row, parent, move, prior):
    TI[row, I_PARENT] = parent
    TI[row, I_MOVE] = move
    TI[row, I_FIRST] = -1
    TI[row, I_NCH] = 0
    TI[row, I_VISITS] = 0
    TI[row, I_PROVEN] = 0
    TI[row, I_TERM] = -1
    TF[row, F_VALUE] = 0.0
    TF[row, F_PRIOR] = prior


@njit(cache=True)
def expand(U, S, TI, TF, meta, node, use_prior, temp):
    """Make the children of ``node`` (the current position): their count, 0 when there is no
    legal move, -1 when the arena is full."""
    n = gen_legal(U, S, PRIOR_SLOT, False)
    used = meta[M_USED]
    if used + n > TI.shape[0]:
        return -1
    base = S_MOVES + PRIOR_SLOT * MAXMOVES
    if use_prior and n > 0:
        top, lz = prior_log_norm(U, S, base, n, temp, use_prior)
        off = S_SCORES - S_MOVES
        for i in range(n):
            p = math.exp((S[base + i + off] - top) / temp - lz)
            new_node(TI, TF, used + i, node, S[base + i], p)
    else:
        for i in range(n):
            new_node(TI, TF, used + i, node, S[base + i], 1.0 / n)
    TI[node, I_FIRST] = used
    TI[node, I_NCH] = n
    meta[M_USED] = used + n
    return n


@njit(cache=True)
def status(U, S, TI, node, solver):
    """Terminal status of ``node`` (the current position), computed on its first visit: 0 not
    terminal, 1 draw (stalemate, fifty moves, insufficient material, a repetition), 2 mated."""
    t = TI[node, I_TERM]
    if t >= 0:
        return t
    n = gen_legal(U, S, PRIOR_SLOT, False)
    if n == 0:
        t = 2 if in_check(U, S[S_SIDE]) else 1
    elif S[S_HALF] >= 100 or insufficient_material(U) or repetitions(U, S, 1) > 0:
        t = 1
    else:
        t = 0
    TI[node, I_TERM] = t
    if t == 2 and solver:
        TI[node, I_PROVEN] = 1
    return t


@njit(cache=True)
def select(TI, TF, meta, node, params):
    """The child of ``node`` to descend into (see the module docstring)."""
    first = TI[node, I_FIRST]
    nch = TI[node, I_NCH]
    visits = TI[node, I_VISITS]
    solver = params[P_SOLVER] != 0
    c = params[P_C]
    puct = params[P_PRIOR] != 0
    log_n = math.log(max(visits, 1))
    sqrt_n = math.sqrt(max(visits, 1))
    fpu = 1.0 - TF[node, F_VALUE] / visits if visits > 0 else 0.5
    unvisited = params[P_UNVISITED]
    best = -1
    best_u = -1e300
    ties = 0
    for j in range(first, first + nch):
        if solver:
            p = TI[j, I_PROVEN]
            if p == 1:
                return j
            if p == -1:
                continue
        nj = TI[j, I_VISITS]
        if puct:
            q = TF[j, F_VALUE] / nj if nj > 0 else fpu
            u = q + c * TF[j, F_PRIOR] * sqrt_n / (1.0 + nj)
        elif nj == 0:
            u = unvisited
        else:
            u = TF[j, F_VALUE] / nj + c * math.sqrt(log_n / nj)
        if u > best_u:
            best = j
            best_u = u
            ties = 1
        elif u == best_u:
            ties += 1
            if random_below(meta, ties) == 0:
                best = j
    return first if best < 0 else best


@njit(cache=True)
def best_child(TI, TF, meta, node, solver):
    """The final choice at ``node``: a proven win first, never a proven loss when another child
    is left, then the most visits, then the better mean value, then the generator. -1 when the
    node has no child."""
    first = TI[node, I_FIRST]
    if first < 0:
        return -1
    best = -1
    bk = -2
    bn = -1
    bq = -1.0
    ties = 0
    for j in range(first, first + TI[node, I_NCH]):
        k = TI[j, I_PROVEN] if solver else 0
        nj = TI[j, I_VISITS]
        q = TF[j, F_VALUE] / nj if nj > 0 else 0.0
        better = k > bk or (k == bk and (nj > bn or (nj == bn and q > bq)))
        if better:
            best, bk, bn, bq, ties = j, k, nj, q, 1
        elif k == bk and nj == bn and q == bq:
            ties += 1
            if random_below(meta, ties) == 0:
                best = j
    return best


@njit(cache=True)
def backpropagate(TI, TF, node, r, solver):
    """Add the result ``r`` (view of ``node``'s side to move) to ``node`` and its ancestors, and
    apply the solver rule on the way up."""
    val = 1.0 - r
    child = -1
    while node >= 0:
        TI[node, I_VISITS] += 1
        TF[node, F_VALUE] += val
        if solver and child >= 0 and TI[node, I_PROVEN] == 0:
            pc = TI[child, I_PROVEN]
            if pc == 1:
                TI[node, I_PROVEN] = -1
            elif pc == -1:
                lost = True
                first = TI[node, I_FIRST]
                for j in range(first, first + TI[node, I_NCH]):
                    if TI[j, I_PROVEN] != -1:
                        lost = False
                        break
                if lost:
                    TI[node, I_PROVEN] = 1
        val = 1.0 - val
        child = node
        node = TI[node, I_PARENT]


@njit(cache=True)
def reroot(TI, TF, meta, path, npath):
    """Keep the subtree reached by the moves ``path[:npath]`` from the root, moved to the front
    of the arena (the root at row 0); an empty tree when a move is not in the tree."""
    if meta[M_USED] == 0:
        return
    node = meta[M_ROOT]
    for i in range(npath):
        first = TI[node, I_FIRST]
        found = -1
        if first >= 0:
            for j in range(first, first + TI[node, I_NCH]):
                if TI[j, I_MOVE] == path[i]:
                    found = j
                    break
        if found < 0:
            meta[M_USED] = 0
            return
        node = found
    # new rows in the order of the old ones: a row only moves down, a block stays a block
    used = meta[M_USED]
    cnt = 0
    for i in range(node, used):
        p = TI[i, I_PARENT]
        if i == node or (p >= node and TI[p, I_NEW] >= 0):
            TI[i, I_NEW] = cnt
            cnt += 1
        else:
            TI[i, I_NEW] = -1
    for i in range(node, used):
        j = TI[i, I_NEW]
        if j < 0:
            continue
        first = TI[i, I_FIRST]
        nfirst = TI[first, I_NEW] if first >= 0 else -1
        if first >= 0:
            for k in range(first, first + TI[i, I_NCH]):
                TI[k, I_PARENT] = j
        for col in range(NI):
            TI[j, col] = TI[i, col]
        for col in range(NF):
            TF[j, col] = TF[i, col]
        TI[j, I_FIRST] = nfirst
        if i == node:
            TI[j, I_PARENT] = -1
    meta[M_ROOT] = 0
    meta[M_USED] = cnt


# ---- simulation ---------------------------------------------------------------------------------

@njit(cache=True)
def playout(U, S, meta, cap, k, moves):
    """Random legal moves until the game ends or ``cap`` plies; the result from the view of the
    side to move at the start (a capped game: the logistic curve of the evaluation)."""
    played = 0
    r = -1.0
    while True:
        n = gen_legal(U, S, PRIOR_SLOT, False)
        if n == 0:
            r = 0.0 if in_check(U, S[S_SIDE]) else 0.5
            break
        if S[S_HALF] >= 100 or insufficient_material(U) or repetitions(U, S, 2) >= 2:
            r = 0.5
            break
        if played >= cap or S[S_NHIST] >= MAXHIST - 2:
            break
        m = S[S_MOVES + PRIOR_SLOT * MAXMOVES + random_below(meta, n)]
        make_move(U, S, m)
        S[S_NODES] += 1
        moves[played] = m
        played += 1
    if r < 0.0:
        r = win_probability(evaluate(U, S), k)
    for i in range(played - 1, -1, -1):
        unmake_move(U, S, moves[i])
    return r if played % 2 == 0 else 1.0 - r


@njit(cache=True)
def simulate(U, S, stop, meta, params, moves):
    """The value of the current (not terminal) position for its side to move, by the policy;
    -1.0 when ``stop[0]`` cut the leaf's alpha-beta search short (a deep ``alphabeta:D`` leaf
    can take millions of nodes: the clock must not wait for it)."""
    policy = np.int64(params[P_POLICY])
    k = params[P_K]
    if policy == POLICY_RANDOM:
        return playout(U, S, meta, np.int64(params[P_PLYCAP]), k, moves)
    if policy == POLICY_EVAL:
        S[S_NODES] += 1
        return win_probability(evaluate(U, S), k)
    # never pass literals into the recursion (numba issue 6061): derive typed values
    zero = S[S_NODES] - S[S_NODES]
    inf = zero + INF
    S[S_STOPPED] = 0
    S[S_ITER] = 2  # the leaf search reads the stop flag (every 1024 nodes), as a search does
    if policy == POLICY_QSEARCH:
        S[S_QROOT] = S[S_NODES]
        s = quiesce(U, S, stop, -inf, inf, zero)
    else:
        s = negamax(U, S, stop, zero + np.int64(params[P_DEPTH]), -inf, inf, zero)
    S[S_ITER] = 0
    if S[S_STOPPED] != 0:
        S[S_STOPPED] = 0
        return -1.0
    return win_probability(s, k)


# ---- the search ---------------------------------------------------------------------------------

@njit(cache=True)
def uct_search(U, S, stop, TI, TF, meta, params, sims):
    """``sims`` simulations, or simulations until ``sims`` nodes when ``params[P_NODE_BUDGET]``
    (fewer when ``stop[0]`` is set or the root is proven; at least one)
    from the current position into the tree of ``TI``/``TF``/``meta`` (empty or reused). Leaves
    the principal line (the final-choice rule from the root) in ``S[S_ROOTPV:]``; returns the
    root score: the best child's mean value as centipawns (the inverse logistic curve), or a mate
    score when the solver proved the root."""
    new_search(S)
    S[S_ITER] = 0
    by_nodes = params[P_NODE_BUDGET] != 0
    S[S_LIMIT] = sims if by_nodes else sims - sims  # a node budget binds the leaf searches too
    meta[M_RNG] = meta[M_SEED] ^ np.int64(U[U_HASH])
    meta[M_SIMS] = 0
    meta[M_DEPTH] = 0
    solver = params[P_SOLVER] != 0
    use_prior = np.int64(params[P_PRIOR])
    temp = max(params[P_TEMP], 1e-9)
    k = params[P_K]
    if meta[M_USED] == 0:
        new_node(TI, TF, 0, -1, 0, 1.0)
        meta[M_ROOT] = 0
        meta[M_USED] = 1
    root = meta[M_ROOT]
    meta[M_REUSED] = TI[root, I_VISITS]
    TI[root, I_TERM] = 0
    if TI[root, I_FIRST] < 0:
        if expand(U, S, TI, TF, meta, root, use_prior, temp) <= 0:
            # no legal move (a full arena cannot happen at an empty root: rows >= MAXMOVES)
            meta[M_USED] = 0
            return -MATE if in_check(U, S[S_SIDE]) else 0
    moves = np.empty(MAXHIST, dtype=np.int64)
    sim = 0
    while True:
        if by_nodes:
            if sim > 0 and S[S_NODES] >= sims:
                break
        elif sim >= sims:
            break
        if sim > 0 and stop[0] != 0:
            break
        if solver and TI[root, I_PROVEN] != 0:
            break
        node = root
        d = 0
        r = -1.0
        while True:
            if node != root:
                t = status(U, S, TI, node, solver)
                if t == 2:
                    r = 0.0
                    break
                if t == 1:
                    r = 0.5
                    break
                p = TI[node, I_PROVEN]
                if p != 0:
                    r = 0.0 if p == 1 else 1.0
                    break
                if TI[node, I_VISITS] == 0:
                    break
                if TI[node, I_FIRST] < 0:
                    if d >= MAX_TREE_DEPTH or S[S_NHIST] + MAXPLY + 4 >= MAXHIST:
                        break
                    if expand(U, S, TI, TF, meta, node, use_prior, temp) < 0:
                        break
            child = select(TI, TF, meta, node, params)
            m = TI[child, I_MOVE]
            make_move(U, S, m)
            S[S_NODES] += 1
            moves[d] = m
            d += 1
            node = child
        cut = False
        if r < 0.0:
            r = simulate(U, S, stop, meta, params, moves[d:])
            if r < 0.0:  # stopped inside the leaf: its score is no value
                cut = True
                r = win_probability(evaluate(U, S), k)  # the first simulation's stand-in
        for i in range(d - 1, -1, -1):
            unmake_move(U, S, moves[i])
        if cut and sim > 0:
            break  # the stopped simulation is dropped
        if d > meta[M_DEPTH]:
            meta[M_DEPTH] = d
        backpropagate(TI, TF, node, r, solver)
        sim += 1
    meta[M_SIMS] = sim
    # the principal line
    node = root
    ln = 0
    first = -1
    while ln < MAXPLY - 2:
        c = best_child(TI, TF, meta, node, solver)
        if c < 0 or TI[c, I_VISITS] == 0:
            break
        if ln == 0:
            first = c
        S[S_ROOTPV + ln] = TI[c, I_MOVE]
        ln += 1
        node = c
    S[S_ROOTPVLEN] = ln
    S[S_ITER] = ln
    if solver and TI[root, I_PROVEN] == -1:
        return MATE - ln
    if solver and TI[root, I_PROVEN] == 1:
        return -(MATE - ln)
    if first < 0:
        return zero_score(k)
    return probability_score(TF[first, F_VALUE] / TI[first, I_VISITS], k)
