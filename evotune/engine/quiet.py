"""Quiescence of positions: static evaluation, quiescence score and the quiescence leaf's phi.

A position is *quiet* when the side to move is not in check and its static evaluation equals
its quiescence score (no capture or promotion sequence changes it). ``evotune datagen`` keeps
only quiet positions; ``evotune texel`` rejects the others, or with ``--qsearch`` replaces each
position by the leaf of its quiescence principal variation.

The search is the core's own quiescence (``engine.core.search.quiesce``: full window, the
engine's rounded weights of any feature set), through the core's entry points (compiled into the
core's cache, which is keyed on the core's sources): one position (:func:`qsearch`, any FEN or
Board; ``game.quiescence_core``) and many FENs at once (:func:`qsearch_batch`;
``batch.qsearch_batch_core`` parses them inside numba, reading the board and the side to move;
FENs with an en passant square go through the one-position path so that en passant captures
count). phi is the core's ``phi_into`` (phi_int, side to move's view), folded to the root mover's
view for the leaf and divided by the feature set's denominator (a net has no phi: width 0).
"""
from __future__ import annotations

import chess
import numpy as np

from ..errors import PositionError
from .api import board_arrays, to_board
from .core import layout as L
from .core.batch import qsearch_batch_core
from .core.game import quiescence_core
from .evaluation import Evaluation, evaluation_of
from .net.corestate import rows

_MAX_NNZ = 128


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


def _state(evaluation: Evaluation, weights, board=None) -> tuple[np.ndarray, np.ndarray]:
    (w,), tail = rows([evaluation.core_input(weights, "weights")])
    U, S = board_arrays(chess.Board() if board is None else board, 10, reuse=True,
                        features=evaluation, tail=tail)
    S[L.S_W:L.S_W + w.size] = w
    return U, S


def qsearch(position, weights, features: str | Evaluation = "shannon"
            ) -> tuple[int, int, bool, np.ndarray]:
    """(static eval, quiescence score, in check, leaf phi as float64) of ``position``, side to
    move's view (a Board's history is not used: quiescence has no draw checks); ``features``:
    the evaluation (or its name, resolved here once)."""
    evaluation = evaluation_of(features)
    board = to_board(position)
    board = chess.Board(board.fen()) if board.move_stack else board
    U, S = _state(evaluation, weights, board)
    out = np.zeros(evaluation.phi_width, dtype=np.int64)
    static, score, check = quiescence_core(U, S, np.zeros(1, dtype=np.int64), out)
    return int(static), int(score), bool(check), out / float(evaluation.denominator)


def is_quiet(position, weights, features: str | Evaluation = "shannon") -> bool:
    """Not in check and static evaluation == quiescence score."""
    static, score, check, _ = qsearch(position, weights, features)
    return not check and static == score


def _run_batch(fens: list[str], weights, evaluation: Evaluation
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The core's batch quiescence of ``fens``: (res (n, 3): static, score, in check; indptr,
    indices, data of the leaves' phi_int; nnz)."""
    n = len(fens)
    width = evaluation.phi_width
    encoded = [f.strip().encode("ascii", "replace") for f in fens]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8) if n else np.zeros(0, np.uint8)
    res = np.zeros((n, 3), dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.zeros(_MAX_NNZ * max(n, 1), dtype=np.int64)
    data = np.zeros(_MAX_NNZ * max(n, 1), dtype=np.int64)
    U, S = _state(evaluation, weights)
    nnz = qsearch_batch_core(buf, offsets, U, S, np.zeros(1, dtype=np.int64),
                             np.zeros(width, dtype=np.int64), res, indptr, indices, data)
    if nnz < 0:
        raise PositionError(f"FEN #{-nnz} {fens[-nnz - 1]!r} is malformed")
    return res, indptr, indices, data, nnz


def _en_passant(fens: list[str]) -> list[int]:
    """The FENs with an en passant square (searched one by one, so that its capture counts)."""
    return [i for i, f in enumerate(fens) if f.split()[3] != "-"]


def quiescence_scores(fens, weights, features: str | Evaluation = "shannon") -> np.ndarray:
    """int64 (n,): the quiescence score of each FEN, side to move's view (:func:`qsearch_batch`'s
    ``score`` without the leaves' phi, so without scipy)."""
    evaluation = evaluation_of(features)
    fens = list(fens)
    score = _run_batch(fens, weights, evaluation)[0][:, 1].copy()
    for i in _en_passant(fens):
        score[i] = qsearch(fens[i], weights, evaluation)[1]
    return score


def qsearch_batch(fens, weights, features: str | Evaluation = "shannon") -> QSearch:
    """:func:`qsearch` of many FENs (parsed in numba; en passant FENs one by one)."""
    from scipy import sparse

    fens = list(fens)
    n = len(fens)
    evaluation = evaluation_of(features)
    width = evaluation.phi_width
    den = float(evaluation.denominator)
    res, indptr, indices, data, nnz = _run_batch(fens, weights, evaluation)
    leaf = sparse.csr_matrix((data[:nnz] / den, indices[:nnz], indptr), shape=(n, width))
    static, score, check = res[:, 0].copy(), res[:, 1].copy(), res[:, 2].astype(bool)
    ep = _en_passant(fens)
    if ep:
        leaf = leaf.tolil()
        for i in ep:
            s, q, c, phi = qsearch(fens[i], weights, evaluation)
            static[i], score[i], check[i] = s, q, c
            leaf[i] = phi
        leaf = leaf.tocsr()
    return QSearch(static, score, check, leaf)
