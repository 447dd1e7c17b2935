"""Legal move generation: king moves, pins, check evasions, castling, en passant, promotions."""
from __future__ import annotations

from numba import njit

from .attacks import (BETWEEN, BIT, KING, KNIGHT, LINE, PAWN_ATT, attackers, bishop_attacks,
                      rook_attacks)
from .bits import ONE, ZERO, lsb, popcount
from .layout import MAXMOVES, S_CASTLE, S_EP, S_MOVES, S_SIDE, U_ALL, U_OCC
from .moves import F_CASTLE, F_DOUBLE, F_EP, encode

@njit(cache=True)
def _add_targets(S, base, n, f, targets):
    while targets != ZERO:
        t = lsb(targets)
        targets &= targets - ONE
        S[base + n] = encode(f, t, 0, 0)
        n += 1
    return n


@njit(cache=True)
def _add_pawn_moves(S, base, n, f, t, promo_rank):
    if promo_rank:
        for pr in range(5, 1, -1):
            S[base + n] = encode(f, t, pr, 0)
            n += 1
    else:
        S[base + n] = encode(f, t, 0, 0)
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
            S[base + n] = encode(ksq, t, 0, 0)
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
                    S[base + n] = encode(f, t2, 0, F_DOUBLE)
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
                S[base + n] = encode(f, ep, 0, F_EP)
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
            S[base + n] = encode(ksq, r0 + 6, 0, F_CASTLE)
            n += 1
        if (cr & 2) and ksq == r0 + 4 and (rook & BIT[r0]) != ZERO \
                and (occ & (BIT[r0 + 1] | BIT[r0 + 2] | BIT[r0 + 3])) == ZERO \
                and attackers(U, r0 + 3, occ, them) == ZERO \
                and attackers(U, r0 + 2, occ, them) == ZERO:
            S[base + n] = encode(ksq, r0 + 2, 0, F_CASTLE)
            n += 1
    return n
