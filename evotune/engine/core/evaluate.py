"""phi and the evaluation of the position, dispatching to the module of each feature set."""
from __future__ import annotations

from numba import njit

from .eval_shannon import eval_shannon, phi_shannon


@njit(cache=True)
def evaluate(U, S):
    """The evaluation (rounded weights . phi), side to move's view."""
    return eval_shannon(U, S)


@njit(cache=True)
def phi_into(U, S, out, off):
    """phi of the position (side to move's view) into ``out[off:]``."""
    phi_shannon(U, S, out, off)
