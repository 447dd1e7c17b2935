"""Quiescence of positions: static evaluation, quiescence score and the quiescence leaf's phi.

A position is *quiet* when the side to move is not in check and its static evaluation equals
its quiescence score (no capture or promotion sequence changes it). ``evotune datagen`` keeps
only quiet positions; ``evotune texel`` rejects the others, or with ``--qsearch`` replaces each
position by the leaf of its quiescence principal variation.

The search is the core's own quiescence (``evotune.engine.qsearch``: full window, the engine's
rounded weights, the leaf's phi folded to the root mover's view).
"""
from __future__ import annotations

import chess
import numpy as np

from ..engine.api import qsearch as core_qsearch
from ..engine.api import to_board
from ..featuresets import FEATURE_SETS, size


def _feature_set(n: int) -> str:
    """The feature set whose weight vectors have ``n`` entries (the sizes are distinct)."""
    for fs in FEATURE_SETS:
        if size(fs) == n:
            return fs
    return "shannon"  # the core then reports the wrong length in one line


def qsearch(position, weights) -> tuple[int, int, bool, np.ndarray]:
    """(static eval, quiescence score, in check, leaf phi) of ``position`` (side to move's view),
    with the feature set of ``weights`` (by length: 6 shannon, 778 pst, 824 extended).

    The history of a Board is not used (quiescence has no draw checks).
    """
    board = to_board(position)
    board = chess.Board(board.fen()) if board.move_stack else board
    q = core_qsearch(board, weights, _feature_set(len(np.atleast_1d(weights))))
    return q.static, q.score, board.is_check(), q.leaf_phi


def is_quiet(position, weights) -> bool:
    """Not in check and static evaluation == quiescence score."""
    static, score, check, _ = qsearch(position, weights)
    return not check and static == score
