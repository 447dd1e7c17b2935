"""The move int of the core and its accessors (inlined by numba: free at run time).

    move = from | to << 6 | promotion type << 12 | flags << 15

``from``/``to`` are python-chess squares (a1 = 0 .. h8 = 63); the promotion type is a
python-chess piece type (knight 2 .. queen 5) or 0; flags: F_EP (en passant capture), F_CASTLE
(the king's two-square move), F_DOUBLE (a pawn's double push). 0 is "no move".
"""
from __future__ import annotations

from numba import njit

F_EP = 1
F_CASTLE = 2
F_DOUBLE = 4


@njit(cache=True, inline="always")
def encode(f, t, promo, flags):
    """The move from ``f`` to ``t`` with promotion type ``promo`` (0: none) and ``flags``."""
    return f | (t << 6) | (promo << 12) | (flags << 15)


@njit(cache=True, inline="always")
def move_from(m):
    """From-square."""
    return m & 63


@njit(cache=True, inline="always")
def move_to(m):
    """To-square."""
    return (m >> 6) & 63


@njit(cache=True, inline="always")
def move_promo(m):
    """Promotion piece type, 0 when none."""
    return (m >> 12) & 7


@njit(cache=True, inline="always")
def move_flags(m):
    """F_EP | F_CASTLE | F_DOUBLE bits."""
    return m >> 15


@njit(cache=True, inline="always")
def from_to(m):
    """``from | to << 6``: the index of the history table."""
    return m & 4095


def unpack(m: int) -> tuple[int, int, int, int]:
    """(from, to, promotion type, flags) of a move, in plain Python (the same accessors)."""
    m = int(m)
    return (move_from.py_func(m), move_to.py_func(m), move_promo.py_func(m),
            move_flags.py_func(m))
