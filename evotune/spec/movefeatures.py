"""The move model's features (issue 40): the one place their blocks are defined, read by the
numba core (engine/core/movemodel.py, which compiles them in: this file is part of the core's
cache key) and by the python-chess reference and the files (engine/movemodel.py). Plain Python.

A model scores a move by one weight per block (the linear part) plus, when it has H > 0 hidden
units, ``sum_j out_j * clip(acc_j, 0, 64) >> 6`` with ``acc_j = bias_j + sum of the move's
features' hidden weights of unit j`` (integers throughout; :data:`MODEL_SLOTS` lays it out).

Every legal move activates exactly one feature of each block; squares are seen from the side to
move (a black move's mirrored, ``sq ^ 56``), piece types are python-chess's minus one (pawn 0 ..
king 5).
"""
from __future__ import annotations

BLOCKS = (
    ("piece_to", 6 * 64),      # moving piece type x to-square
    ("piece_from", 6 * 64),    # moving piece type x from-square
    ("capture", 6 * 6),        # captured type (0 none, 1 pawn .. 5 queen) x moving type
    ("promotion", 5),          # 0 none, 1 knight, 2 bishop, 3 rook, 4 queen
    ("check", 2),              # the move gives check
    ("to_attacker", 7 * 6),    # the to-square's least valuable enemy attacker (0 none, 1 pawn ..
    #                            6 king), the mover lifted off its square, x moving type
    ("to_defended", 2),        # another own piece attacks the to-square (the mover lifted)
    ("from_attacker", 7 * 6),  # the from-square's least valuable enemy attacker x moving type
)
"""The feature blocks (name, size), in index order."""
N_BLOCKS = len(BLOCKS)
BLOCK_START = tuple(sum(size for _, size in BLOCKS[:i]) for i in range(N_BLOCKS))
"""The first index of each block."""
N_FEATURES = sum(size for _, size in BLOCKS)
"""Weights of a move model (897)."""
HIDDEN_MAX = 32
"""Hidden units of a move model at most (0: the linear model)."""
ACT_SHIFT = 6
"""A hidden unit's accumulator is clipped to [0, 2**ACT_SHIFT] (CReLU, 64 = an activation of
one) and its output weight's product shifted right by ACT_SHIFT (a floor division)."""
MODEL_SLOTS = N_FEATURES + 1 + HIDDEN_MAX * (N_FEATURES + 2)
"""The longest model as the core holds it: the linear weights, the hidden size H, then H x
N_FEATURES hidden weights (feature-major), H biases and H output weights."""
SCORE_CLAMP = 2000
"""A move's score is clamped to [-SCORE_CLAMP, SCORE_CLAMP] (the probability split packs it
into 12 bits beside the ordering score)."""
