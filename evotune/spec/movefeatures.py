"""The move model's features (issue 40): the one place their blocks are defined, read by the
numba core (engine/core/movemodel.py, which compiles them in: this file is part of the core's
cache key) and by the python-chess reference and the files (engine/movemodel/modelfile.py). Plain Python.

A model scores a move by one weight per block (the linear part) plus, when it has H > 0 hidden
units, ``sum_j out_j * clip(acc_j, 0, 64) >> 6`` with ``acc_j = bias_j + sum of the move's
features' hidden weights of unit j`` (integers throughout; :data:`MODEL_SLOTS` lays it out).

Every legal move activates exactly one feature of each block; squares are seen from the side to
move (a black move's mirrored, ``sq ^ 56``), piece types are python-chess's minus one (pawn 0 ..
king 5). A model's feature set says how many of the blocks it reads (:data:`SET_BLOCKS`): set 1
the first eight (the move itself), set 2 all sixteen (the last eight: the position around the
move). The blocks' indices do not depend on the set, so a set-1 model is a set-2 model with zero
weights on the last eight blocks.
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
    # ---- feature set 2: the position around the move
    ("from_threat", 7 * 2 * 6),  # the from-square's least valuable enemy attacker x another own
    #                              piece defends the from-square x moving type
    ("capture_safe", 6 * 7 * 6),  # captured type x the to-square's least valuable enemy attacker
    #                               (the mover lifted) x moving type: a one-step exchange
    ("threat", 7 * 2 * 6),     # after the move, the most valuable enemy piece the moved piece
    #                            attacks (0 none, 1 pawn .. 6 king) x it attacks two or more enemy
    #                            pieces other than pawns (a fork) x moving type
    ("king_zone", 4 * 6),      # after the move, the enemy king's neighbour squares the moved
    #                            piece attacks (0, 1, 2, 3 or more) x moving type
    ("king_distance", 8 * 6),  # the to-square's king-move distance to the enemy king x moving type
    ("mobility", 8 * 6),       # after the move, the moved piece's attacked squares not held by
    #                            its own side, min(n, 15) // 2, x moving type
    ("phase_rank", 4 * 6 * 8),  # the game phase (knights and bishops 1, rooks 2, queens 4, both
    #                             sides, before the move: 0-5, 6-11, 12-17, 18 or more) x moving
    #                             type x to-rank
    ("pawn", 1 + 2 * 8),       # 0 not a pawn move, else 1 + 8 x passed after the move (no enemy
    #                            pawn ahead on its file or the next) + to-rank
)
"""The feature blocks (name, size), in index order, of the latest feature set."""
SET_BLOCKS = {1: 8, 2: 16}
"""Feature set -> the blocks its models read (the first so many of :data:`BLOCKS`)."""
FEATURE_SET_LATEST = 2
"""The feature set ``nn train-moves`` trains by default."""
N_BLOCKS = len(BLOCKS)
BLOCK_START = tuple(sum(size for _, size in BLOCKS[:i]) for i in range(N_BLOCKS))
"""The first index of each block."""
N_FEATURES = sum(size for _, size in BLOCKS)
"""Features of the latest set (1,646): the core's layout."""
SET_FEATURES = {fs: sum(size for _, size in BLOCKS[:nb]) for fs, nb in SET_BLOCKS.items()}
"""Feature set -> weights of its linear model (set 1: 897, set 2: 1,646)."""
HIDDEN_MAX = 32
"""Hidden units of a move model at most (0: the linear model)."""
ACT_SHIFT = 6
"""A hidden unit's accumulator is clipped to [0, 2**ACT_SHIFT] (CReLU, 64 = an activation of
one) and its output weight's product shifted right by ACT_SHIFT (a floor division)."""
MODEL_SLOTS = N_FEATURES + 2 + HIDDEN_MAX * (N_FEATURES + 2)
"""The longest model as the core holds it: N_FEATURES linear weights, the hidden size H, the
blocks the model reads, then H x N_FEATURES hidden weights (feature-major), H biases and H
output weights (a set-1 model's weights of the set-2 blocks are zeros)."""
SCORE_CLAMP = 2000
"""A move's score is clamped to [-SCORE_CLAMP, SCORE_CLAMP] (the probability split packs it
into 12 bits beside the ordering score)."""
