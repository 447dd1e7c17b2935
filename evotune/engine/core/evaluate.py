"""phi and the evaluation of the position, dispatching on the feature set in ``S[S_FSET]`` to the
module of each set (eval_shannon, eval_pst, eval_extended) or to the net (nnue, no phi)."""
from __future__ import annotations

from numba import njit

from ...spec.features import FS_EXTENDED, FS_NNUE, FS_SHANNON
from .eval_extended import eval_extended, phi_extended
from .eval_pst import eval_pst, load_psq, phi_pst
from .eval_shannon import eval_shannon, phi_shannon
from .layout import S_FSET
from .nnue import eval_nnue, refresh


@njit(cache=True)
def evaluate(U, S):
    """The evaluation (rounded weights . phi, tapered sets floored), side to move's view."""
    fs = S[S_FSET]
    if fs == FS_SHANNON:
        return eval_shannon(U, S)
    if fs == FS_EXTENDED:
        return eval_extended(U, S)
    if fs == FS_NNUE:
        return eval_nnue(U, S)
    return eval_pst(U, S)


@njit(cache=True)
def prepare(S):
    """Make the state ready for the weights in ``S[S_W:]`` (tapered sets: PSQ tables and sums; a
    net: its accumulators, computed from scratch)."""
    fs = S[S_FSET]
    if fs == FS_NNUE:
        refresh(S)
    elif fs != FS_SHANNON:
        load_psq(S)


@njit(cache=True)
def phi_into(U, S, out, off):
    """phi_int of the position (side to move's view) into ``out[off:]`` (a net has none: nothing
    is written)."""
    fs = S[S_FSET]
    if fs == FS_SHANNON:
        phi_shannon(U, S, out, off)
    elif fs == FS_EXTENDED:
        phi_extended(U, S, out, off)
    elif fs != FS_NNUE:
        phi_pst(U, S, out, off)
