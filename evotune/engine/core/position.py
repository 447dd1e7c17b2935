"""The position: set-up, make/unmake with incremental Polyglot hashing, and the draw rules
(repetition within the reversible window, insufficient material), written once for search and game.
"""
from __future__ import annotations

import chess.polyglot
import numpy as np
from numba import njit

from .attacks import BIT, PAWN_ATT, attackers
from .bits import ONE, ZERO, lsb, popcount
from ...spec.features import FS_NNUE
from .eval_pst import psq_add
from .layout import (S_CASTLE, S_EGSUM, S_EP, S_FSET, S_HALF, S_MB, S_MGSUM, S_NHIST, S_SIDE,
                     S_UNDO, U_ALL, U_HASH, U_HIST, U_OCC, UNDO)
from .moves import F_CASTLE, F_DOUBLE, F_EP, move_flags, move_from, move_promo, move_to
from .nnue import acc_copy, acc_move

# ---- Polyglot Zobrist keys, castling masks, square colours ------------------------------------

DARK = np.uint64(sum(1 << s for s in range(64) if (s % 8 + s // 8) % 2 == 0))
LIGHT = ~DARK

# castling: rights kept after a move from/to each square
CASTLE_MASK = np.full(64, 15, dtype=np.int64)
CASTLE_MASK[0] = 15 ^ 2
CASTLE_MASK[7] = 15 ^ 1
CASTLE_MASK[4] = 15 ^ 3
CASTLE_MASK[56] = 15 ^ 8
CASTLE_MASK[63] = 15 ^ 4
CASTLE_MASK[60] = 15 ^ 12

# ---- Polyglot Zobrist keys ----------------------------------------------------------------------
_R = np.array(chess.polyglot.POLYGLOT_RANDOM_ARRAY, dtype=np.uint64)
Z_PIECE = np.zeros((13, 64), dtype=np.uint64)
for _p in range(1, 13):
    _t, _c = (_p - 1) % 6 + 1, (_p - 1) // 6
    _kind = 2 * (_t - 1) + (1 if _c == 0 else 0)
    Z_PIECE[_p] = _R[64 * _kind: 64 * _kind + 64]
Z_CASTLE = np.zeros(16, dtype=np.uint64)
for _m in range(16):
    _v = 0
    for _i in range(4):
        if _m >> _i & 1:
            _v ^= int(_R[768 + _i])
    Z_CASTLE[_m] = np.uint64(_v)
Z_EP = _R[772:780].copy()
Z_TURN = _R[780]

# ---- set-up and make/unmake -----------------------------------------------------------------

@njit(cache=True)
def put_piece(U, S, p, sq):
    """Place piece ``p`` (1..12) on an empty square, without hashing."""
    b = BIT[sq]
    U[p - 1] |= b
    U[U_OCC + (p - 1) // 6] |= b
    U[U_ALL] |= b
    S[S_MB + sq] = p


@njit(cache=True)
def ep_hashed(U, S):
    """True when the en passant square enters the Polyglot hash (a capturing pawn is adjacent)."""
    ep = S[S_EP]
    if ep < 0:
        return False
    us = S[S_SIDE]
    return (PAWN_ATT[1 - us, ep] & U[6 * us]) != ZERO


@njit(cache=True)
def ep_capture_legal(U, S, ep):
    """True when the side to move has a legal en passant capture onto square ``ep``."""
    us = S[S_SIDE]
    them = 1 - us
    csq = ep - 8 if us == 0 else ep + 8
    if (U[6 * them] & BIT[csq]) == ZERO or (U[U_ALL] & BIT[ep]) != ZERO:
        return False
    ksq = lsb(U[6 * us + 5])
    occ = U[U_ALL]
    bb = PAWN_ATT[them, ep] & U[6 * us]
    while bb != ZERO:
        f = lsb(bb)
        bb &= bb - ONE
        occ2 = (occ ^ BIT[f] ^ BIT[csq]) | BIT[ep]
        if (attackers(U, ksq, occ2, them) & ~BIT[csq]) == ZERO:
            return True
    return False


@njit(cache=True)
def window_start_is_twin(U, S):
    """The oldest position of the reversible window equals the current one in python-chess's sense
    (FIDE: en passant rights count only when the capture is legal) although their Polyglot keys
    differ: it was the position right after a double push, its key carries the en passant file
    (Polyglot hashes it whenever a pawn stands beside), and that capture would be illegal.

    Only the window's oldest entry can carry an en passant file, since a double push resets the
    halfmove clock; so this single check completes the plain key comparison of repetitions.
    """
    k = S[S_HALF]
    n = S[S_NHIST]
    if k < 2 or k > n or k % 2 == 1:
        return False
    d = U[U_HIST + n - k] ^ U[U_HASH]
    for f in range(8):
        if d == Z_EP[f]:
            ep = 40 + f if S[S_SIDE] == 0 else 16 + f
            return not ep_capture_legal(U, S, ep)
    return False


@njit(cache=True)
def compute_hash(U, S):
    """Polyglot Zobrist key of the position, from scratch."""
    h = ZERO
    for sq in range(64):
        p = S[S_MB + sq]
        if p != 0:
            h ^= Z_PIECE[p, sq]
    h ^= Z_CASTLE[S[S_CASTLE]]
    if ep_hashed(U, S):
        h ^= Z_EP[S[S_EP] & 7]
    if S[S_SIDE] == 0:
        h ^= Z_TURN
    return h


@njit(cache=True)
def make_move(U, S, m):
    """Play move ``m``; pushes the undo record and the old hash onto the history (and, for a
    net, writes the next accumulator slot)."""
    f = move_from(m)
    t = move_to(m)
    promo = move_promo(m)
    flags = move_flags(m)
    us = S[S_SIDE]
    n = S[S_NHIST]
    h = U[U_HASH]
    U[U_HIST + n] = h
    u = S_UNDO + UNDO * n
    cap = S[S_MB + t]
    S[u] = cap
    S[u + 1] = S[S_CASTLE]
    S[u + 2] = S[S_EP]
    S[u + 3] = S[S_HALF]
    S[S_NHIST] = n + 1
    fs = S[S_FSET]
    tapered = 0 < fs < FS_NNUE  # keep the material + PST sums of the tapered sets
    if tapered:
        S[u + 4] = S[S_MGSUM]
        S[u + 5] = S[S_EGSUM]
    if ep_hashed(U, S):
        h ^= Z_EP[S[S_EP] & 7]
    old_cr = S[S_CASTLE]
    new_cr = old_cr & CASTLE_MASK[f] & CASTLE_MASK[t]
    h ^= Z_CASTLE[old_cr] ^ Z_CASTLE[new_cr]
    S[S_CASTLE] = new_cr
    p = S[S_MB + f]
    bf = BIT[f]
    bt = BIT[t]
    occ_us = U_OCC + us
    occ_them = U_OCC + 1 - us
    if cap != 0:
        U[cap - 1] ^= bt
        U[occ_them] ^= bt
        U[U_ALL] ^= bt
        h ^= Z_PIECE[cap, t]
        if tapered:
            psq_add(S, cap, t, -1)
    elif flags & F_EP:
        csq = t - 8 if us == 0 else t + 8
        cp = 7 - 6 * us  # the other side's pawn
        bc = BIT[csq]
        U[cp - 1] ^= bc
        U[occ_them] ^= bc
        U[U_ALL] ^= bc
        S[S_MB + csq] = 0
        h ^= Z_PIECE[cp, csq]
        if tapered:
            psq_add(S, cp, csq, -1)
    # move the piece
    U[p - 1] ^= bf
    h ^= Z_PIECE[p, f]
    np_ = p if promo == 0 else promo + 6 * us
    U[np_ - 1] ^= bt
    h ^= Z_PIECE[np_, t]
    U[occ_us] ^= bf | bt
    U[U_ALL] = U[U_OCC] | U[U_OCC + 1]
    S[S_MB + f] = 0
    S[S_MB + t] = np_
    if tapered:
        psq_add(S, p, f, -1)
        psq_add(S, np_, t, 1)
    if flags & F_CASTLE:
        if t > f:
            rf, rt = t + 1, t - 1
        else:
            rf, rt = t - 2, t + 1
        rp = 4 + 6 * us
        rb = BIT[rf] | BIT[rt]
        U[rp - 1] ^= rb
        U[occ_us] ^= rb
        U[U_ALL] ^= rb
        S[S_MB + rf] = 0
        S[S_MB + rt] = rp
        h ^= Z_PIECE[rp, rf] ^ Z_PIECE[rp, rt]
        if tapered:
            psq_add(S, rp, rf, -1)
            psq_add(S, rp, rt, 1)
    if cap != 0 or (p - 1) % 6 == 0:
        S[S_HALF] = 0
    else:
        S[S_HALF] += 1
    if flags & F_DOUBLE:
        S[S_EP] = (f + t) >> 1
    else:
        S[S_EP] = -1
    S[S_SIDE] = 1 - us
    h ^= Z_TURN
    if ep_hashed(U, S):
        h ^= Z_EP[S[S_EP] & 7]
    U[U_HASH] = h
    if fs == FS_NNUE:
        cp = cap
        csq = t
        if flags & F_EP:
            cp = 7 - 6 * us
            csq = t - 8 if us == 0 else t + 8
        rp = 0
        rf = 0
        rt = 0
        if flags & F_CASTLE:
            rp = 4 + 6 * us
            if t > f:
                rf, rt = t + 1, t - 1
            else:
                rf, rt = t - 2, t + 1
        acc_move(U, S, n, p, f, np_, t, cp, csq, rp, rf, rt)


@njit(cache=True)
def unmake_move(U, S, m):
    """Take back move ``m`` (the last one made)."""
    f = move_from(m)
    t = move_to(m)
    promo = move_promo(m)
    flags = move_flags(m)
    n = S[S_NHIST] - 1
    S[S_NHIST] = n
    u = S_UNDO + UNDO * n
    cap = S[u]
    S[S_CASTLE] = S[u + 1]
    S[S_EP] = S[u + 2]
    S[S_HALF] = S[u + 3]
    if 0 < S[S_FSET] < FS_NNUE:
        S[S_MGSUM] = S[u + 4]
        S[S_EGSUM] = S[u + 5]
    U[U_HASH] = U[U_HIST + n]
    us = 1 - S[S_SIDE]
    S[S_SIDE] = us
    bf = BIT[f]
    bt = BIT[t]
    occ_us = U_OCC + us
    occ_them = U_OCC + 1 - us
    np_ = S[S_MB + t]
    p = np_ if promo == 0 else 1 + 6 * us
    U[np_ - 1] ^= bt
    U[p - 1] ^= bf
    U[occ_us] ^= bf | bt
    S[S_MB + f] = p
    S[S_MB + t] = cap
    if cap != 0:
        U[cap - 1] ^= bt
        U[occ_them] ^= bt
    elif flags & F_EP:
        csq = t - 8 if us == 0 else t + 8
        cp = 7 - 6 * us
        bc = BIT[csq]
        U[cp - 1] ^= bc
        U[occ_them] ^= bc
        S[S_MB + csq] = cp
    if flags & F_CASTLE:
        if t > f:
            rf, rt = t + 1, t - 1
        else:
            rf, rt = t - 2, t + 1
        rp = 4 + 6 * us
        rb = BIT[rf] | BIT[rt]
        U[rp - 1] ^= rb
        U[occ_us] ^= rb
        S[S_MB + rt] = 0
        S[S_MB + rf] = rp
    U[U_ALL] = U[U_OCC] | U[U_OCC + 1]


@njit(cache=True)
def insufficient_material(U):
    """python-chess ``is_insufficient_material()``: neither side can possibly mate."""
    pawns = U[0] | U[6]
    if pawns != ZERO:
        return False
    if (U[3] | U[4] | U[9] | U[10]) != ZERO:
        return False
    knights = U[1] | U[7]
    bishops = U[2] | U[8]
    for c in range(2):
        own = U[U_OCC + c]
        if own & knights:
            if popcount(own) > 2:
                return False
            other = U[U_OCC + 1 - c] & ~(U[5] | U[11]) & ~(U[4] | U[10])
            if other != ZERO:
                return False
        elif own & bishops:
            same = (bishops & DARK) == ZERO or (bishops & LIGHT) == ZERO
            if not (same and knights == ZERO):
                return False
    return True


@njit(cache=True)
def repetitions(U, S, limit):
    """Earlier occurrences of the current position (same side to move) within the reversible
    window, counted up to ``limit`` (python-chess ``is_repetition`` semantics, see
    :func:`window_start_is_twin`)."""
    n = S[S_NHIST]
    h = U[U_HASH]
    lim = min(S[S_HALF], n)
    c = 0
    k = 2
    while k <= lim:
        if U[U_HIST + n - k] == h:
            c += 1
            if c >= limit:
                return c
        k += 2
    if window_start_is_twin(U, S):
        c += 1
    return c


@njit(cache=True)
def compact_history(U, S):
    """Keep only the reversible window of the position history (between the moves of a game)."""
    n = S[S_NHIST]
    keep = min(S[S_HALF], n)
    for i in range(keep):
        U[U_HIST + i] = U[U_HIST + n - keep + i]
    S[S_NHIST] = keep
    if S[S_FSET] == FS_NNUE:
        acc_copy(S, n, keep)
