"""Board state of the numba core: attacks, make/unmake with incremental Polyglot hashing,
legal move generation (pins, checks, castling, en passant, promotions) and perft.

The whole state lives in two arrays (see ``tables``): ``U`` (uint64: bitboards, hash, history
hashes, TT keys) and ``S`` (int64: scalars, mailbox, undo stack, move lists, search tables).
Passing two arrays keeps reference counting on the hot path small.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ONE, ZERO, lsb, msb, popcount
from .tables import (BETWEEN, BIT, CASTLE_MASK, DARK, F_CASTLE, F_DOUBLE, F_EP, KING, KNIGHT,
                     LIGHT, LINE, MAXMOVES, PAWN_ATT, RAYS, S_CASTLE, S_EP, S_HALF, S_MB,
                     S_MOVES, S_NHIST, S_SIDE, S_UNDO, U_ALL, U_HASH, U_HIST, U_OCC, Z_CASTLE,
                     Z_EP, Z_PIECE, Z_TURN)

RANK_1 = np.uint64(0xFF)
RANK_8 = np.uint64(0xFF << 56)
NOT_OWN_DUMMY = ZERO


# ---- attacks ------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _ray_up(d, sq, occ):
    a = RAYS[d, sq]
    b = a & occ
    if b != ZERO:
        a ^= RAYS[d, lsb(b)]
    return a


@njit(cache=True, inline="always")
def _ray_down(d, sq, occ):
    a = RAYS[d, sq]
    b = a & occ
    if b != ZERO:
        a ^= RAYS[d, msb(b)]
    return a


@njit(cache=True)
def rook_attacks(sq, occ):
    """Rook attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _ray_up(0, sq, occ) | _ray_up(1, sq, occ) | _ray_down(4, sq, occ) | _ray_down(5, sq, occ)


@njit(cache=True)
def bishop_attacks(sq, occ):
    """Bishop attack set from ``sq`` with blockers ``occ`` (first blocker included)."""
    return _ray_up(2, sq, occ) | _ray_up(3, sq, occ) | _ray_down(6, sq, occ) | _ray_down(7, sq, occ)


@njit(cache=True)
def attackers(U, sq, occ, by):
    """Pieces of colour ``by`` attacking ``sq`` given occupancy ``occ``."""
    o = 6 * by
    rq = U[o + 3] | U[o + 4]
    bq = U[o + 2] | U[o + 4]
    return ((PAWN_ATT[1 - by, sq] & U[o]) | (KNIGHT[sq] & U[o + 1]) | (KING[sq] & U[o + 5])
            | (rook_attacks(sq, occ) & rq) | (bishop_attacks(sq, occ) & bq))


@njit(cache=True)
def in_check(U, S):
    """True when the side to move is in check."""
    us = S[S_SIDE]
    ksq = lsb(U[6 * us + 5])
    return attackers(U, ksq, U[U_ALL], 1 - us) != ZERO


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
    """Play move ``m``; pushes the undo record and the old hash onto the history."""
    f = m & 63
    t = (m >> 6) & 63
    promo = (m >> 12) & 7
    flags = m >> 15
    us = S[S_SIDE]
    n = S[S_NHIST]
    h = U[U_HASH]
    U[U_HIST + n] = h
    u = S_UNDO + 4 * n
    cap = S[S_MB + t]
    S[u] = cap
    S[u + 1] = S[S_CASTLE]
    S[u + 2] = S[S_EP]
    S[u + 3] = S[S_HALF]
    S[S_NHIST] = n + 1
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
    elif flags & F_EP:
        csq = t - 8 if us == 0 else t + 8
        cp = 7 - 6 * us  # the other side's pawn
        bc = BIT[csq]
        U[cp - 1] ^= bc
        U[occ_them] ^= bc
        U[U_ALL] ^= bc
        S[S_MB + csq] = 0
        h ^= Z_PIECE[cp, csq]
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


@njit(cache=True)
def unmake_move(U, S, m):
    """Take back move ``m`` (the last one made)."""
    f = m & 63
    t = (m >> 6) & 63
    promo = (m >> 12) & 7
    flags = m >> 15
    n = S[S_NHIST] - 1
    S[S_NHIST] = n
    u = S_UNDO + 4 * n
    cap = S[u]
    S[S_CASTLE] = S[u + 1]
    S[S_EP] = S[u + 2]
    S[S_HALF] = S[u + 3]
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


# ---- legal move generation ------------------------------------------------------------------

@njit(cache=True)
def _add_targets(S, base, n, f, targets):
    while targets != ZERO:
        t = lsb(targets)
        targets &= targets - ONE
        S[base + n] = f | (t << 6)
        n += 1
    return n


@njit(cache=True)
def _add_pawn_moves(S, base, n, f, t, promo_rank):
    if promo_rank:
        for pr in range(5, 1, -1):
            S[base + n] = f | (t << 6) | (pr << 12)
            n += 1
    else:
        S[base + n] = f | (t << 6)
        n += 1
    return n


@njit(cache=True)
def gen_legal(U, S, ply, captures_only):
    """Legal moves into ``S[S_MOVES + ply * MAXMOVES:]``; returns their number.

    ``captures_only``: only captures (en passant included) and promotions (all four pieces,
    quiet ones too), as quiescence wants when not in check.
    """
    base = S_MOVES + ply * MAXMOVES
    n = 0
    us = S[S_SIDE]
    them = 1 - us
    o = 6 * us
    own = U[U_OCC + us]
    opp = U[U_OCC + them]
    occ = U[U_ALL]
    kbb = U[o + 5]
    ksq = lsb(kbb)
    checkers = attackers(U, ksq, occ, them)
    nchk = popcount(checkers)
    # king moves
    kt = KING[ksq] & ~own
    if captures_only:
        kt &= opp
    occ_nok = occ ^ kbb
    while kt != ZERO:
        t = lsb(kt)
        kt &= kt - ONE
        if attackers(U, t, occ_nok, them) == ZERO:
            S[base + n] = ksq | (t << 6)
            n += 1
    if nchk >= 2:
        return n
    if nchk == 1:
        mask = checkers | BETWEEN[ksq, lsb(checkers)]
    else:
        mask = ~own
    if captures_only:
        cmask = mask & opp
    else:
        cmask = mask
    # pinned pieces
    oth = 6 * them
    pinned = ZERO
    snipers = ((rook_attacks(ksq, opp) & (U[oth + 3] | U[oth + 4]))
               | (bishop_attacks(ksq, opp) & (U[oth + 2] | U[oth + 4])))
    while snipers != ZERO:
        s = lsb(snipers)
        snipers &= snipers - ONE
        b = BETWEEN[ksq, s] & occ
        if b != ZERO and (b & (b - ONE)) == ZERO and (b & own) != ZERO:
            pinned |= b
    # knights (a pinned knight never moves)
    bb = U[o + 1] & ~pinned
    while bb != ZERO:
        f = lsb(bb)
        bb &= bb - ONE
        n = _add_targets(S, base, n, f, KNIGHT[f] & cmask)
    # bishops, rooks, queens
    bb = U[o + 2] | U[o + 4]
    while bb != ZERO:
        f = lsb(bb)
        bb &= bb - ONE
        tg = bishop_attacks(f, occ) & cmask
        if pinned & BIT[f]:
            tg &= LINE[ksq, f]
        n = _add_targets(S, base, n, f, tg)
    bb = U[o + 3] | U[o + 4]
    while bb != ZERO:
        f = lsb(bb)
        bb &= bb - ONE
        tg = rook_attacks(f, occ) & cmask
        if pinned & BIT[f]:
            tg &= LINE[ksq, f]
        n = _add_targets(S, base, n, f, tg)
    # pawns
    empty = ~occ
    bb = U[o]
    fwd = 8 if us == 0 else -8
    ep = S[S_EP]
    while bb != ZERO:
        f = lsb(bb)
        bb &= bb - ONE
        line = LINE[ksq, f] if (pinned & BIT[f]) != ZERO else ~ZERO
        rank = f >> 3
        promo_rank = rank == (6 if us == 0 else 1)
        t = f + fwd
        if (BIT[t] & empty) != ZERO:
            if (BIT[t] & mask & line) != ZERO and (promo_rank or not captures_only):
                n = _add_pawn_moves(S, base, n, f, t, promo_rank)
            if not captures_only and rank == (1 if us == 0 else 6):
                t2 = t + fwd
                if (BIT[t2] & empty & mask & line) != ZERO:
                    S[base + n] = f | (t2 << 6) | (F_DOUBLE << 15)
                    n += 1
        caps = PAWN_ATT[us, f] & opp & mask & line
        while caps != ZERO:
            t = lsb(caps)
            caps &= caps - ONE
            n = _add_pawn_moves(S, base, n, f, t, promo_rank)
        if ep >= 0 and (PAWN_ATT[us, f] & BIT[ep]) != ZERO:
            csq = ep - fwd
            occ2 = (occ ^ BIT[f] ^ BIT[csq]) | BIT[ep]
            if (attackers(U, ksq, occ2, them) & ~BIT[csq]) == ZERO:
                S[base + n] = f | (ep << 6) | (F_EP << 15)
                n += 1
    # castling
    if nchk == 0 and not captures_only:
        cr = S[S_CASTLE] >> (2 * us)
        r0 = 56 * us
        rook = U[o + 3]
        if (cr & 1) and ksq == r0 + 4 and (rook & BIT[r0 + 7]) != ZERO \
                and (occ & (BIT[r0 + 5] | BIT[r0 + 6])) == ZERO \
                and attackers(U, r0 + 5, occ, them) == ZERO \
                and attackers(U, r0 + 6, occ, them) == ZERO:
            S[base + n] = ksq | ((r0 + 6) << 6) | (F_CASTLE << 15)
            n += 1
        if (cr & 2) and ksq == r0 + 4 and (rook & BIT[r0]) != ZERO \
                and (occ & (BIT[r0 + 1] | BIT[r0 + 2] | BIT[r0 + 3])) == ZERO \
                and attackers(U, r0 + 3, occ, them) == ZERO \
                and attackers(U, r0 + 2, occ, them) == ZERO:
            S[base + n] = ksq | ((r0 + 2) << 6) | (F_CASTLE << 15)
            n += 1
    return n


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
def perft_rec(U, S, depth, ply):
    """Leaf count of the legal move tree to ``depth`` (bulk counting at the last ply)."""
    n = gen_legal(U, S, ply, depth < 0)
    if depth <= 1:
        return n
    total = 0
    base = S_MOVES + ply * MAXMOVES
    for i in range(n):
        m = S[base + i]
        make_move(U, S, m)
        total += perft_rec(U, S, depth - 1, ply + 1)
        unmake_move(U, S, m)
    return total


@njit(cache=True, nogil=True)
def perft_divide_core(U, S, depth, out):
    """Entry point: ``out[i]`` = leaf count below root move ``S[S_MOVES + i]``; returns moves."""
    # never pass literals into the recursion (numba issue 6061): derive typed values
    ply0 = depth - depth
    n = gen_legal(U, S, ply0, depth < 0)
    for i in range(n):
        m = S[S_MOVES + i]
        if depth <= 1:
            out[i] = 1
        else:
            make_move(U, S, m)
            out[i] = perft_rec(U, S, depth - 1, ply0 + 1)
            unmake_move(U, S, m)
    return n
