"""The network evaluation (feature-set code ``FS_NNUE``): accumulators kept by make_move and the
integer output layer, identical to ``engine/netfile.evaluate_reference`` (docs/formats.md).

State. The net's int16 arrays and the accumulators live in the tail of ``S`` behind the TT (its
start, ``tail16``, follows from ``S[S_TTMASK]``) and are read through an int16 view of ``S``. The
weights slots ``S[S_W:]`` hold the net's header (the ``N_*`` offsets below): hidden size H,
activation, qa, qa * qb, scale, the output biases, the net's, the accumulator stack's and the
Finny table's offsets in the tail (int16 units), their absolute offsets in the view (set by
:func:`refresh`), whether the output layer may run in 16/32-bit integers (:func:`dot16_exact`),
the king buckets K and their map, and the output buckets N.

A net block is l0w (768 K x H, row 768 b + f = feature f in king bucket b), l0b (H), l1w
(N x 2 H). The accumulator stack has one slot of 2 H int16 per position of the history: slot
``S[S_NHIST]`` is the current position, White's perspective first. make_move writes slot n + 1
from slot n (copy-make: unmake has nothing to undo); :func:`refresh` (at the root of every search
and evaluation) computes the current slot from the board. The net's validation (no accumulator
can leave int16) makes the int16 arithmetic exact.

King buckets (K >= 2; engine/netinputs.py states bullet's conventions): each perspective's
features are those of its own king's bucket, mirrored (``square ^ 7``) when that king is on
files e-h. A king move that changes its perspective's bucket or side of the board refreshes that
perspective from the Finny table: for each perspective, bucket and side, the accumulator of the
board it was last made for and that board's 12 bitboards; the refresh applies the pieces that
differ between the two boards and stores the result (cost proportional to the difference). Every
:func:`refresh` resets the table to empty boards (accumulator = bias).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...spec.features import NNUE_EVAL_LIMIT
from .bits import ONE, ZERO, lsb, popcount
from .layout import MAXHIST, S_MB, S_NHIST, S_SIDE, S_TT, S_TTMASK, S_W, U_ALL

N_HIDDEN = 0
N_ACT = 1        # 0 screlu, 1 crelu
N_QA = 2
N_QAQB = 3
N_SCALE = 4
N_L1B = 5        # the output bias of output bucket 0 (all N: N_L1BS)
N_NET = 6        # the net block's offset in the tail (int16 units)
N_ACC = 7        # the accumulator stack's offset in the tail (int16 units)
N_NET_ABS = 8    # the same two, absolute in the int16 view of S (set by refresh)
N_ACC_ABS = 9
N_DOT16 = 10     # 1: the output layer's products fit int16 and its sums int32 (dot16_exact)
N_KB = 11        # K: king buckets (1: none, plain Chess768)
N_OB = 12        # N: output buckets
N_ODIV = 13      # ceil(32 / N): MaterialCount's divisor
N_FIN = 14       # the Finny table's offset in the tail (int16 units, a multiple of 4)
N_FIN_ABS = 15   # the same, absolute in the int16 view of S (set by refresh)
N_L1BS = 16      # 8 slots: the output bias of each output bucket
N_KVIEW = 24     # 128 slots, [perspective][king square]: 8 x bucket + flip (0 or 7)
HEADER = 152
"""Header slots at S[S_W:]."""
INPUTS = 768
BOARDS = 12
"""Bitboards of a Finny entry's board (pieces 1..12)."""
ACC_SLOTS = MAXHIST + 1
"""Accumulator slots: one per position of the history (S_NHIST < MAXHIST)."""

# FEAT[perspective, piece, square]: the Chess768 feature of a piece (1..12) on a square
FEAT = np.zeros((2, 13, 64), dtype=np.int64)
for _p in range(1, 13):
    _t, _c = (_p - 1) % 6, (_p - 1) // 6
    for _sq in range(64):
        FEAT[0, _p, _sq] = 384 * _c + 64 * _t + _sq
        FEAT[1, _p, _sq] = 384 * (1 - _c) + 64 * _t + (_sq ^ 56)


def dot16_exact(qa: int, l1w: np.ndarray) -> bool:
    """Whether the output layer may run in 16- and 32-bit integers (:func:`_dot16`) for a net
    with this ``qa`` and these output weights: every clamp(acc, 0, qa) * w fits int16
    (qa * max|w| <= 32767), and every sum of clamp^2 * w fits int32 (qa^2 * sum|w| < 2^31, the
    sum over both perspectives' weights). The trainer's clip keeps the first (255 * 127 =
    32,385), and the second holds for every H up to 130; the study's nets use 8-17% of it."""
    w = np.abs(np.asarray(l1w, dtype=np.int64))
    return qa * int(w.max(initial=0)) <= 32767 and qa * qa * int(w.sum()) < 2 ** 31


def net_block(hidden: int, king_buckets: int = 1, output_buckets: int = 1) -> int:
    """int16 values of one net block (l0w, l0b, l1w), rounded up to 64 bytes."""
    n = INPUTS * king_buckets * hidden + hidden + 2 * hidden * output_buckets
    return -(-n // 32) * 32


def finny_size(hidden: int, king_buckets: int) -> int:
    """int16 values of the Finny table of a net with K >= 2 king buckets (0 for K = 1): 4 K
    entries (perspective x bucket x side), each 12 bitboards (48 int16) and an accumulator (H),
    rounded up to 64 bytes."""
    if king_buckets < 2:
        return 0
    n = 4 * king_buckets * (4 * BOARDS + hidden)
    return -(-n // 32) * 32


def stack_size(hidden: int) -> int:
    """int16 values of an accumulator stack for nets of hidden size up to ``hidden``."""
    return ACC_SLOTS * 2 * hidden


@njit(cache=True, inline="always")
def tail16(S):
    """Where the tail behind the TT starts, in the int16 view of S."""
    return 4 * (S_TT + 2 * (S[S_TTMASK] + 1))


@njit(cache=True, inline="always")
def _tdiv(a, b):
    """a / b rounded toward zero (b > 0)."""
    return a // b if a >= 0 else -((-a) // b)


@njit(cache=True, inline="always")
def king_view(S, persp, ksq):
    """(bucket, flip) of perspective ``persp`` (0 White, 1 Black) with its king on ``ksq``: the
    bucket of the mirrored square in the perspective's view, and 7 on files e-h (else 0); one
    load from the header's table (netstate.king_views)."""
    v = S[S_W + N_KVIEW + 64 * persp + ksq]
    return v >> 3, v & 7


@njit(cache=True)
def finny_refresh(U, S, persp, dst):
    """The accumulator of perspective ``persp`` for the board whose piece bitboards are
    ``U[0:12]`` (the current one) into ``A[dst:dst + H]``, from its Finny entry (the bucket and
    side of the board of its king): apply the rows of the pieces that differ between the entry's
    board and this one, store the board and copy the result. Intermediate sums may wrap in int16;
    the result is exact (arithmetic mod 2^16 ending within int16, by the net's validation)."""
    A = S.view(np.int16)
    B = S.view(np.uint64)
    h = S[S_W + N_HIDDEN]
    k = S[S_W + N_KB]
    ksq = lsb(U[5 + 6 * persp])
    b, flip = king_view(S, persp, ksq)
    e = (persp * k + b) * 2 + (1 if flip else 0)
    fin = S[S_W + N_FIN_ABS]
    bd = (fin >> 2) + e * BOARDS
    acc = np.uint64(fin + 4 * k * 4 * BOARDS + e * h)
    base = S[S_W + N_NET_ABS] + INPUTS * b * h
    hu = np.uint64(h)
    for pc in range(BOARDS):
        cur = U[pc]
        old = B[bd + pc]
        gone = old & ~cur
        came = cur & ~old
        while gone != ZERO:
            sq = lsb(gone)
            gone &= gone - ONE
            r = np.uint64(base + (FEAT[persp, pc + 1, sq] ^ flip) * h)
            for i in range(hu):
                A[acc + i] -= A[r + i]
        while came != ZERO:
            sq = lsb(came)
            came &= came - ONE
            r = np.uint64(base + (FEAT[persp, pc + 1, sq] ^ flip) * h)
            for i in range(hu):
                A[acc + i] += A[r + i]
        B[bd + pc] = cur
    d = np.uint64(dst)
    for i in range(hu):
        A[d + i] = A[acc + i]


@njit(cache=True)
def refresh(S):
    """Set the absolute offsets and compute the current position's accumulators from scratch
    (with king buckets: reset the Finny table, then refresh both perspectives from it, with the
    piece bitboards made from the mailbox)."""
    A = S.view(np.int16)
    h = S[S_W + N_HIDDEN]
    base = tail16(S)
    w = base + S[S_W + N_NET]
    acc = base + S[S_W + N_ACC]
    S[S_W + N_NET_ABS] = w
    S[S_W + N_ACC_ABS] = acc
    slot = acc + S[S_NHIST] * 2 * h
    k = S[S_W + N_KB]
    bias = A[w + INPUTS * k * h:w + INPUTS * k * h + h]
    if k > 1:
        fin = base + S[S_W + N_FIN]
        S[S_W + N_FIN_ABS] = fin
        B = S.view(np.uint64)
        for e in range(4 * k):
            for pc in range(BOARDS):
                B[(fin >> 2) + e * BOARDS + pc] = ZERO
            a = fin + 4 * k * 4 * BOARDS + e * h
            for i in range(h):
                A[a + i] = bias[i]
        bb = np.zeros(BOARDS, dtype=np.uint64)
        for sq in range(64):
            p = S[S_MB + sq]
            if p != 0:
                bb[p - 1] |= ONE << np.uint64(sq)
        for persp in range(2):
            finny_refresh(bb, S, persp, slot + persp * h)
        return
    for persp in range(2):
        d = slot + persp * h
        dst = A[d:d + h]
        for i in range(h):
            dst[i] = bias[i]
        for sq in range(64):
            p = S[S_MB + sq]
            if p != 0:
                r = w + FEAT[persp, p, sq] * h
                row = A[r:r + h]
                for i in range(h):
                    dst[i] += row[i]


@njit(cache=True)
def acc_move(U, S, n, p, f, q, t, cp, csq, rp, rf, rt):
    """Slot n + 1 = slot n with piece ``p`` off ``f``, piece ``q`` on ``t`` (the promoted piece
    for a promotion), captured piece ``cp`` (0: none) off ``csq``, and a castling rook ``rp``
    (0: none) from ``rf`` to ``rt``: one pass over each perspective's H values (``U``: the board
    after the move, for king buckets).

    The loops index the int16 view with unsigned offsets (no negative-index wraparound test per
    element, and no slice to reference-count), so LLVM vectorises them (16 int16 lanes per AVX2
    instruction)."""
    if S[S_W + N_KB] > 1:
        acc_move_buckets(U, S, n, p, f, q, t, cp, csq, rp, rf, rt)
        return
    A = S.view(np.int16)
    h = S[S_W + N_HIDDEN]
    w = S[S_W + N_NET_ABS]
    src = S[S_W + N_ACC_ABS] + n * 2 * h
    hu = np.uint64(h)
    for persp in range(2):
        s = np.uint64(src + persp * h)
        d = s + np.uint64(2 * h)
        r1 = np.uint64(w + FEAT[persp, p, f] * h)
        r2 = np.uint64(w + FEAT[persp, q, t] * h)
        if cp != 0:
            r3 = np.uint64(w + FEAT[persp, cp, csq] * h)
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i] - A[r3 + i]
        elif rp != 0:
            r3 = np.uint64(w + FEAT[persp, rp, rf] * h)
            r4 = np.uint64(w + FEAT[persp, rp, rt] * h)
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i] - A[r3 + i] + A[r4 + i]
        else:
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i]


@njit(cache=True)
def acc_move_buckets(U, S, n, p, f, q, t, cp, csq, rp, rf, rt):
    """:func:`acc_move` for a net with king buckets: each perspective's rows are those of its
    king's bucket, mirrored on files e-h; a move of a perspective's own king to another bucket
    or side of the board refreshes that perspective from the Finny table instead."""
    A = S.view(np.int16)
    h = S[S_W + N_HIDDEN]
    w = S[S_W + N_NET_ABS]
    src = S[S_W + N_ACC_ABS] + n * 2 * h
    hu = np.uint64(h)
    for persp in range(2):
        s = np.uint64(src + persp * h)
        d = s + np.uint64(2 * h)
        b, x = king_view(S, persp, lsb(U[5 + 6 * persp]))
        if p == 6 + 6 * persp:
            ob, ox = king_view(S, persp, f)
            if ob != b or ox != x:
                finny_refresh(U, S, persp, d)
                continue
        base = w + INPUTS * b * h
        r1 = np.uint64(base + (FEAT[persp, p, f] ^ x) * h)
        r2 = np.uint64(base + (FEAT[persp, q, t] ^ x) * h)
        if cp != 0:
            r3 = np.uint64(base + (FEAT[persp, cp, csq] ^ x) * h)
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i] - A[r3 + i]
        elif rp != 0:
            r3 = np.uint64(base + (FEAT[persp, rp, rf] ^ x) * h)
            r4 = np.uint64(base + (FEAT[persp, rp, rt] ^ x) * h)
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i] - A[r3 + i] + A[r4 + i]
        else:
            for i in range(hu):
                A[d + i] = A[s + i] - A[r1 + i] + A[r2 + i]


@njit(cache=True)
def acc_copy(S, n, k):
    """Copy accumulator slot n to slot k (the history was compacted)."""
    if S[S_W + N_ACC_ABS] == 0:
        return
    A = S.view(np.int16)
    h = S[S_W + N_HIDDEN]
    acc = S[S_W + N_ACC_ABS]
    src = A[acc + n * 2 * h:acc + n * 2 * h + 2 * h]
    dst = A[acc + k * 2 * h:acc + k * 2 * h + 2 * h]
    for i in range(2 * h):
        dst[i] = src[i]


@njit(cache=True, fastmath=True)
def _dot_float(a, w, qa, square):
    """sum(c * w) with c = clamp(a, 0, qa), squared when ``square``, in float64: every product
    and partial sum is an integer below 2^53 here (see :func:`output`), so the sum is exact in
    any order, and fastmath lets LLVM vectorise it (4 doubles per AVX2 FMA)."""
    q = np.int16(qa)
    z = np.int16(0)
    s = 0.0
    if square:
        for i in range(a.size):
            v = np.float64(min(max(a[i], z), q))
            s += v * v * np.float64(w[i])
    else:
        for i in range(a.size):
            s += np.float64(min(max(a[i], z), q)) * np.float64(w[i])
    return np.int64(s)


@njit(cache=True, inline="always")
def _dot16(A, a0, w0, h, qa, square):
    """sum(c * w), or sum(c^2 * w) when ``square``, over c = clamp(A[a0 + i], 0, qa) and
    w = A[w0 + i], i < h: c * w in int16, times c in int32, summed in int32. Exact when
    :func:`dot16_exact` holds (no product or sum leaves its type). The indices are unsigned and
    no slice is made: LLVM vectorises the loop (vpmullw, vpmaddwd) with no wraparound test, and
    no array is reference-counted; about 3x faster than the float64 sum over slices."""
    q = np.int16(qa)
    z = np.int16(0)
    s = np.int32(0)
    a0 = np.uint64(a0)
    w0 = np.uint64(w0)
    if square:
        for i in range(np.uint64(h)):
            c = min(max(A[a0 + i], z), q)
            s = np.int32(s + np.int32(np.int16(c * A[w0 + i])) * np.int32(c))
    else:
        for i in range(np.uint64(h)):
            c = min(max(A[a0 + i], z), q)
            s = np.int32(s + np.int32(np.int16(c * A[w0 + i])))
    return np.int64(s)


@njit(cache=True)
def _dot_int(a, w, qa):
    """sum(clamp(a, 0, qa)^2 * w) in int64 (qa too large for the float sum to be exact)."""
    s = 0
    for i in range(a.size):
        v = min(max(np.int64(a[i]), 0), qa)
        s += v * v * np.int64(w[i])
    return s


EXACT_FLOAT = 2.0 ** 53
"""Sums whose terms' magnitudes add up to less than this are exact in float64."""


@njit(cache=True)
def output(S, slot, bucket):
    """The output layer of output bucket ``bucket`` on the accumulators of ``slot`` for the side
    to move, clamped.

    SCReLU: s = sum(clamp(acc, 0, qa)^2 * l1w) truncated by qa; CReLU: s = sum(clamp(acc, 0, qa)
    * l1w); then (s + l1b) * scale / (qa * qb) truncated: bullet's rules, exact integers. The
    sums run in 16/32-bit integers when the net allows it (N_DOT16, :func:`dot16_exact`), else
    in float64 when 2 H qa^2 32768 < 2^53 (SCReLU; always for CReLU), else in int64."""
    A = S.view(np.int16)
    h = S[S_W + N_HIDDEN]
    qa = S[S_W + N_QA]
    acc = S[S_W + N_ACC_ABS] + slot * 2 * h
    us = acc + S[S_SIDE] * h
    them = acc + (1 - S[S_SIDE]) * h
    w1 = S[S_W + N_NET_ABS] + (INPUTS * S[S_W + N_KB] + 1) * h + bucket * 2 * h
    square = S[S_W + N_ACT] == 0
    if S[S_W + N_DOT16] == 1:
        s = _dot16(A, us, w1, h, qa, square) + _dot16(A, them, w1 + h, h, qa, square)
    else:
        a_us = A[us:us + h]
        a_them = A[them:them + h]
        w_us = A[w1:w1 + h]
        w_them = A[w1 + h:w1 + 2 * h]
        if square and 2.0 * h * qa * qa * 32768.0 >= EXACT_FLOAT:
            s = _dot_int(a_us, w_us, qa) + _dot_int(a_them, w_them, qa)
        else:
            s = _dot_float(a_us, w_us, qa, square) + _dot_float(a_them, w_them, qa, square)
    if square:
        s = _tdiv(s, qa)
    v = _tdiv((s + S[S_W + N_L1BS + bucket]) * S[S_W + N_SCALE], S[S_W + N_QAQB])
    return max(-NNUE_EVAL_LIMIT, min(NNUE_EVAL_LIMIT, v))


@njit(cache=True)
def eval_nnue(U, S):
    """The net's evaluation of the current position, side to move's view (the output bucket:
    bullet's MaterialCount, (pieces - 2) // ceil(32 / N))."""
    bucket = 0
    if S[S_W + N_OB] > 1:
        bucket = (popcount(U[U_ALL]) - 2) // S[S_W + N_ODIV]
    return output(S, S[S_NHIST], bucket)


@njit(cache=True, nogil=True)
def timing_core(U, S, reps, which):
    """Entry point for benchmarks/nnue_speed.py: ``reps`` calls of one part on the prepared
    state, returning a sum of the results (so nothing is optimised away). ``which``: 0, the
    accumulator update of a quiet move (the white knight b1-c3: two rows per perspective); 1,
    a capture (three rows); 2, the output layer; with king buckets, 3: a Finny refresh of
    White's perspective whose entry's board differs from the board by two squares (a white pawn
    between a2 and a4, toggled each call: one of the two bits must be set; U is restored), and
    4: the root refresh (the table's reset, then both perspectives from empty
    boards)."""
    total = 0
    n = S[S_NHIST]
    h = S[S_W + N_HIDDEN]
    pawn = (ONE << np.uint64(8)) | (ONE << np.uint64(24))
    for k in range(reps):
        if which == 0:
            acc_move(U, S, n, 2, 1, 2, 18, 0, 0, 0, 0, 0)
        elif which == 1:
            acc_move(U, S, n, 2, 1, 2, 18, 7, 18, 0, 0, 0)
        elif which == 3:
            U[0] ^= pawn
            finny_refresh(U, S, 0, S[S_W + N_ACC_ABS] + (n + 1) * 2 * h)
        elif which == 4:
            refresh(S)
        else:
            total += output(S, n + (k & 0), 0)
    if which == 3 and reps % 2 == 1:
        U[0] ^= pawn
    return total
