"""Transposition-table entries: the key in ``U[U_TT + slot]``, two ints in ``S[S_TT + 2 * slot]``:
the score and the packed info ``move | depth << 20 | flag << 28 | generation << 32``.

Entries of another generation (an earlier search) are invisible, so results never depend on what
the table held before a search.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...rules import MATE_BOUND
from .bits import prefetch
from .layout import S_GEN, S_TT, S_TTMASK, U_TT

TT_EXACT = 0
TT_LOWER = 1
TT_UPPER = 2


@njit(cache=True, inline="always")
def tt_slot(S, h):
    """The slot of hash ``h``."""
    return np.int64(h & np.uint64(S[S_TTMASK]))


@njit(cache=True, inline="always")
def tt_prefetch(U, S, h):
    """Start loading the entry of hash ``h`` into the caches (key and data lie in two arrays, so
    a probe misses twice): issued after a move, the loads overlap the child's first work."""
    slot = tt_slot(S, h)
    prefetch(U, U_TT + slot)
    prefetch(S, S_TT + 2 * slot)


@njit(cache=True, inline="always")
def tt_info(S, slot):
    """The packed info of ``slot``."""
    return S[S_TT + 2 * slot + 1]


@njit(cache=True, inline="always")
def tt_hit(U, S, slot, h):
    """True when ``slot`` holds hash ``h`` from the current search."""
    return U[U_TT + slot] == h and (tt_info(S, slot) >> 32) == S[S_GEN]


@njit(cache=True, inline="always")
def info_move(info):
    """Best move of an entry."""
    return info & 0xFFFFF


@njit(cache=True, inline="always")
def info_depth(info):
    """Remaining depth of an entry."""
    return (info >> 20) & 0xFF


@njit(cache=True, inline="always")
def info_flag(info):
    """TT_EXACT, TT_LOWER or TT_UPPER."""
    return (info >> 28) & 3


@njit(cache=True, inline="always")
def tt_score(S, slot, ply):
    """The stored score, mate scores made relative to the root again."""
    ts = S[S_TT + 2 * slot]
    if ts > MATE_BOUND:
        ts -= ply
    elif ts < -MATE_BOUND:
        ts += ply
    return ts


@njit(cache=True, inline="always")
def tt_store(U, S, slot, h, score, ply, move, depth, flag):
    """Store an entry (mate scores relative to the node)."""
    ts = score
    if ts > MATE_BOUND:
        ts += ply
    elif ts < -MATE_BOUND:
        ts -= ply
    U[U_TT + slot] = h
    S[S_TT + 2 * slot] = ts
    S[S_TT + 2 * slot + 1] = move | (depth << 20) | (flag << 28) | (S[S_GEN] << 32)
