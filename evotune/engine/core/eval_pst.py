"""The ``pst`` feature set: tapered material and piece-square tables (docs/internals.md,
"Feature sets"), and the incremental material + PST sums that make/unmake keep.

The weights (``S[S_W:]``, layout in ``evotune/spec/features.py``) are expanded once per search into
``S[S_PSQ + phase * PSQ_PHASE + piece * 64 + square]``: material + table value of the piece on
that square, positive for White, negative for Black (a black piece on s uses the table at s ^ 56).
``S[S_MGSUM]`` / ``S[S_EGSUM]`` hold the sums over the board, kept by make/unmake.
"""
from __future__ import annotations

from numba import njit

from ...spec.features import MAT_EG, MAT_MG, PHASE_MAX, PST_EG, PST_MG, PST_SIZE
from .bits import popcount
from .layout import PSQ_PHASE, S_EGSUM, S_MB, S_MGSUM, S_PSQ, S_SIDE, S_W

SIZE = PST_SIZE


@njit(cache=True, inline="always")
def psq(S, ph, p, sq):
    """Signed material + PST value of piece ``p`` on ``sq`` in phase ``ph`` (0 mg, 1 eg)."""
    return S[S_PSQ + ph * PSQ_PHASE + p * 64 + sq]


@njit(cache=True, inline="always")
def psq_add(S, p, sq, sign):
    """Add (sign 1) or remove (sign -1) piece ``p`` on ``sq`` in the incremental sums."""
    S[S_MGSUM] += sign * psq(S, 0, p, sq)
    S[S_EGSUM] += sign * psq(S, 1, p, sq)


@njit(cache=True)
def phase(U):
    """min(24, N + B + 2 R + 4 Q) over both sides."""
    p = (popcount(U[1] | U[7] | U[2] | U[8]) + 2 * popcount(U[3] | U[9])
         + 4 * popcount(U[4] | U[10]))
    return min(p, PHASE_MAX)


@njit(cache=True)
def load_psq(S):
    """Expand the weights into the PSQ tables and recompute the sums from the mailbox."""
    for ph in range(2):
        mat = MAT_MG if ph == 0 else MAT_EG
        pst = PST_MG if ph == 0 else PST_EG
        base = S_PSQ + ph * PSQ_PHASE
        for sq in range(64):
            S[base + sq] = 0
        for t in range(1, 7):
            m = S[S_W + mat + t - 1] if t < 6 else 0
            for sq in range(64):
                v = m + S[S_W + pst + 64 * (t - 1) + sq]
                S[base + t * 64 + sq] = v
                S[base + (t + 6) * 64 + (sq ^ 56)] = -v
    mg = 0
    eg = 0
    for sq in range(64):
        p = S[S_MB + sq]
        if p != 0:
            mg += psq(S, 0, p, sq)
            eg += psq(S, 1, p, sq)
    S[S_MGSUM] = mg
    S[S_EGSUM] = eg


@njit(cache=True, inline="always")
def taper(S, mg, eg, ph):
    """(mg * phase + eg * (24 - phase)) * s / 24 rounded toward zero (C division), s = +1 White
    to move, -1 Black: symmetric, so a score negated up the tree equals the evaluation of the
    negated phi."""
    x = mg * ph + eg * (PHASE_MAX - ph)
    if S[S_SIDE] == 1:
        x = -x
    if x < 0:
        return -((-x) // PHASE_MAX)
    return x // PHASE_MAX


@njit(cache=True)
def eval_pst(U, S):
    """The tapered material + PST evaluation, side to move's view."""
    return taper(S, S[S_MGSUM], S[S_EGSUM], phase(U))


@njit(cache=True)
def phi_pst(U, S, out, off):
    """phi_int of the pst set into ``out[off:off + 778]`` (side to move's view, phase folded in,
    24 x phi)."""
    for i in range(PST_SIZE):
        out[off + i] = 0
    for sq in range(64):
        p = S[S_MB + sq]
        if p == 0:
            continue
        t = (p - 1) % 6 + 1
        if p <= 6:
            sign = 1
            rel = sq
        else:
            sign = -1
            rel = sq ^ 56
        if t < 6:
            out[off + MAT_MG + t - 1] += sign
        out[off + PST_MG + 64 * (t - 1) + rel] += sign
    ph = phase(U)
    s = 1 if S[S_SIDE] == 0 else -1
    for i in range(5):
        r = out[off + MAT_MG + i]
        out[off + MAT_MG + i] = s * r * ph
        out[off + MAT_EG + i] = s * r * (PHASE_MAX - ph)
    for i in range(6 * 64):
        r = out[off + PST_MG + i]
        if r != 0:
            out[off + PST_MG + i] = s * r * ph
            out[off + PST_EG + i] = s * r * (PHASE_MAX - ph)
