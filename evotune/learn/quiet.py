"""Quiescence of positions: static evaluation, quiescence score and the quiescence leaf's phi.

A position is *quiet* when the side to move is not in check and its static evaluation equals
its quiescence score (no capture or promotion sequence changes it). ``evotune datagen`` keeps
only quiet positions; ``evotune texel`` rejects the others, or with ``--qsearch`` replaces each
position by the leaf of its quiescence principal variation.

The search is the core's own quiescence (``engine.core.search.quiesce``: full window, the
engine's rounded weights of any feature set), called from jitted entry points here: one position
(:func:`qsearch`, any FEN or Board) and many FENs at once (:func:`qsearch_batch`: the FENs are
parsed inside numba by the core's ``parse_board``, which reads the board and the side to move;
FENs with an en passant square go through the one-position path so that en passant captures
count). phi is the core's ``phi_into`` (phi_int, side to move's view), folded to the root mover's
view for the leaf and divided by the feature set's denominator.
"""
from __future__ import annotations

import chess
import numpy as np
from numba import njit

from ..engine.api import _arrays, _rounded, to_board
from ..engine.core import layout as L
from ..engine.core.attacks import in_check
from ..engine.core.batch import parse_board
from ..engine.core.evaluate import evaluate, phi_into, prepare
from ..engine.core.position import make_move, unmake_move
from ..engine.core.search import quiesce
from ..featuresets import denominator, feature_names
from ..rules import INF

_MAX_NNZ = 128


@njit(cache=True, nogil=True)
def _qsearch_root(U, S, stop, out):
    """(static eval, quiescence score, in check) of the set-up position; leaf phi_int -> out."""
    zero = out.size - out.size
    inf = zero + INF
    S[L.S_NODES] = 0
    S[L.S_STOPPED] = 0
    S[L.S_ITER] = 0
    check = 1 if in_check(U, S[L.S_SIDE]) else 0
    static = evaluate(U, S)
    score = quiesce(U, S, stop, -inf, inf, zero)
    ln = S[L.S_PVLEN]
    for j in range(ln):
        make_move(U, S, S[L.S_PV + j])
    phi_into(U, S, out, zero)
    for j in range(ln - 1, -1, -1):
        unmake_move(U, S, S[L.S_PV + j])
    if ln % 2 == 1:
        for k in range(out.size):
            out[k] = -out[k]
    return static, score, check


@njit(cache=True, nogil=True)
def _qsearch_one(U, S, stop, out):
    prepare(S)
    return _qsearch_root(U, S, stop, out)


@njit(cache=True, nogil=True)
def _qsearch_many(buf, offsets, U, S, stop, scratch, res, indptr, indices, data):
    """Every FEN of ``buf``: res[i] = (static, score, check); leaf phi_int as CSR rows.
    Returns nnz, or -1 - i for a malformed FEN i."""
    nnz = 0
    n = offsets.size - 1
    indptr[0] = 0
    for i in range(n):
        if not parse_board(buf, offsets[i], offsets[i + 1], U, S):
            return -1 - i
        S[L.S_EP] = -1
        S[L.S_CASTLE] = 0
        S[L.S_HALF] = 0
        S[L.S_NHIST] = 0
        prepare(S)
        static, score, check = _qsearch_root(U, S, stop, scratch)
        res[i, 0] = static
        res[i, 1] = score
        res[i, 2] = check
        for k in range(scratch.size):
            v = scratch[k]
            if v != 0:
                indices[nnz] = k
                data[nnz] = v
                nnz += 1
        indptr[i + 1] = nnz
    return nnz


class QSearch:
    """Quiescence results of many positions: static evals, scores, in-check flags, leaf phi."""

    def __init__(self, static, score, check, leaf):
        self.static = static
        """int64 (n,): static evaluation, side to move's view."""
        self.score = score
        """int64 (n,): quiescence score, side to move's view."""
        self.check = check
        """bool (n,): side to move in check."""
        self.leaf = leaf
        """scipy.sparse CSR (n, p) float64: phi of the quiescence leaf, root mover's view."""

    @property
    def quiet(self) -> np.ndarray:
        return ~self.check & (self.static == self.score)


def _state(features: str, weights) -> tuple[np.ndarray, np.ndarray]:
    U, S = _arrays(chess.Board(), 10, reuse=True, features=features)
    w = _rounded(weights, "weights", features)
    S[L.S_W:L.S_W + w.size] = w
    return U, S


def qsearch(position, weights, features: str = "shannon") -> tuple[int, int, bool, np.ndarray]:
    """(static eval, quiescence score, in check, leaf phi as float64) of ``position``, side to
    move's view (a Board's history is not used: quiescence has no draw checks)."""
    board = to_board(position)
    board = chess.Board(board.fen()) if board.move_stack else board
    U, S = _arrays(board, 10, reuse=True, features=features)
    w = _rounded(weights, "weights", features)
    S[L.S_W:L.S_W + w.size] = w
    out = np.zeros(len(feature_names(features)), dtype=np.int64)
    static, score, check = _qsearch_one(U, S, np.zeros(1, dtype=np.int64), out)
    return int(static), int(score), bool(check), out / float(denominator(features))


def is_quiet(position, weights, features: str = "shannon") -> bool:
    """Not in check and static evaluation == quiescence score."""
    static, score, check, _ = qsearch(position, weights, features)
    return not check and static == score


def qsearch_batch(fens, weights, features: str = "shannon") -> QSearch:
    """:func:`qsearch` of many FENs (parsed in numba; en passant FENs one by one)."""
    from scipy import sparse

    fens = list(fens)
    n = len(fens)
    width = len(feature_names(features))
    den = float(denominator(features))
    encoded = [f.strip().encode("ascii", "replace") for f in fens]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8) if n else np.zeros(0, np.uint8)
    res = np.zeros((n, 3), dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.zeros(_MAX_NNZ * max(n, 1), dtype=np.int64)
    data = np.zeros(_MAX_NNZ * max(n, 1), dtype=np.int64)
    U, S = _state(features, weights)
    nnz = _qsearch_many(buf, offsets, U, S, np.zeros(1, dtype=np.int64),
                        np.zeros(width, dtype=np.int64), res, indptr, indices, data)
    if nnz < 0:
        from ..errors import PositionError

        raise PositionError(f"FEN #{-nnz} {fens[-nnz - 1]!r} is malformed")
    leaf = sparse.csr_matrix((data[:nnz] / den, indices[:nnz], indptr), shape=(n, width))
    static, score, check = res[:, 0].copy(), res[:, 1].copy(), res[:, 2].astype(bool)
    ep = [i for i, f in enumerate(fens) if f.split()[3] != "-"]
    if ep:
        leaf = leaf.tolil()
        for i in ep:
            s, q, c, phi = qsearch(fens[i], weights, features)
            static[i], score[i], check[i] = s, q, c
            leaf[i] = phi
        leaf = leaf.tocsr()
    return QSearch(static, score, check, leaf)
