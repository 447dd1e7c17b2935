"""Constant tables of the numba core, built once with numpy at import: attack sets, rays, lines,
Polyglot Zobrist keys, and the layout of the two state arrays (``U`` uint64, ``S`` int64).

Squares are python-chess squares (a1 = 0, h8 = 63). Pieces are ``type + 6 * colour`` with
python-chess types (pawn 1 .. king 6) and colour 0 = white, 1 = black; 0 is an empty square.
Jitted code reads these module globals as compile-time constants (they are frozen into the
numba cache), so nothing here may change after import.
"""
from __future__ import annotations

import chess.polyglot
import numpy as np

# ---- state layout -----------------------------------------------------------------------------
MAXPLY = 160          # deepest ply of search + quiescence
MAXMOVES = 256        # move list slots per ply (218 is the legal maximum)
MAXHIST = 1200        # positions of game history + search path

# U (uint64): piece bitboards 0..11 (index piece-1), colour occupancy 12/13, all 14, hash 15,
# then the hashes of earlier positions (history + search path), then the TT keys.
U_OCC = 12
U_ALL = 14
U_HASH = 15
U_HIST = 16
U_TT = U_HIST + MAXHIST
U_SIZE = U_TT

# S (int64) scalars
S_SIDE = 0        # side to move (0 white, 1 black)
S_CASTLE = 1      # castling rights: 1 K, 2 Q, 4 k, 8 q
S_EP = 2          # en passant square or -1
S_HALF = 3        # halfmove clock
S_NHIST = 4       # number of earlier positions stored in U[U_HIST:]
S_NODES = 5       # nodes of the current search
S_LIMIT = 6       # node limit (0 = none)
S_STOPPED = 7     # 1 when the current search was stopped
S_ITER = 8        # current iteration depth
S_TTMASK = 9      # TT entries - 1 (power of two)
S_GEN = 10        # TT generation (entries of other generations are ignored)
S_ROOTPVLEN = 11  # length of the root PV of the deepest completed iteration
S_FULLMOVE = 12   # fullmove number (FEN output only)
S_W = 16          # 6 rounded weights in use
S_MB = 32         # mailbox, 64 squares
S_UNDO = S_MB + 64                       # 4 ints per pushed move: captured, castle, ep, half
S_MOVES = S_UNDO + 4 * MAXHIST           # move lists, MAXMOVES per ply
S_SCORES = S_MOVES + MAXPLY * MAXMOVES   # ordering scores, parallel to the move lists
S_KILL = S_SCORES + MAXPLY * MAXMOVES    # 2 killers per ply
S_HISTORY = S_KILL + 2 * MAXPLY          # history heuristic, [side][from][to]
S_PV = S_HISTORY + 2 * 64 * 64           # triangular PV table, MAXPLY x MAXPLY
S_PVLEN = S_PV + MAXPLY * MAXPLY
S_ROOTPV = S_PVLEN + MAXPLY              # root PV of the deepest completed iteration
S_TT = S_ROOTPV + MAXPLY                 # TT data, 2 ints per entry: score, packed info
S_SIZE = S_TT

# ---- moves ------------------------------------------------------------------------------------
# move = from | to << 6 | promotion type << 12 | flags << 15
F_EP = 1
F_CASTLE = 2
F_DOUBLE = 4

MATE = 1_000_000
INF = MATE + 1
MATE_BOUND = MATE - 1000

# ---- bitboards --------------------------------------------------------------------------------
_ALL = (1 << 64) - 1


def _bb(squares) -> np.uint64:
    v = 0
    for s in squares:
        v |= 1 << s
    return np.uint64(v)


def _on(f: int, r: int) -> bool:
    return 0 <= f < 8 and 0 <= r < 8


BIT = np.array([np.uint64(1 << s) for s in range(64)], dtype=np.uint64)

KNIGHT = np.zeros(64, dtype=np.uint64)
KING = np.zeros(64, dtype=np.uint64)
PAWN_ATT = np.zeros((2, 64), dtype=np.uint64)
# ray directions: 0..3 increase the square index (N, E, NE, NW), 4..7 decrease it (S, W, SW, SE)
_DIRS = ((0, 1), (1, 0), (1, 1), (-1, 1), (0, -1), (-1, 0), (-1, -1), (1, -1))
RAYS = np.zeros((8, 64), dtype=np.uint64)
BETWEEN = np.zeros((64, 64), dtype=np.uint64)
LINE = np.zeros((64, 64), dtype=np.uint64)

for _s in range(64):
    _f, _r = _s % 8, _s // 8
    KNIGHT[_s] = _bb(8 * (_r + dr) + _f + df
                     for df, dr in ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1),
                                    (-1, 2)) if _on(_f + df, _r + dr))
    KING[_s] = _bb(8 * (_r + dr) + _f + df for df in (-1, 0, 1) for dr in (-1, 0, 1)
                   if (df or dr) and _on(_f + df, _r + dr))
    PAWN_ATT[0, _s] = _bb(8 * (_r + 1) + _f + df for df in (-1, 1) if _on(_f + df, _r + 1))
    PAWN_ATT[1, _s] = _bb(8 * (_r - 1) + _f + df for df in (-1, 1) if _on(_f + df, _r - 1))
    for _d, (df, dr) in enumerate(_DIRS):
        sq = []
        f, r = _f + df, _r + dr
        while _on(f, r):
            sq.append(8 * r + f)
            f, r = f + df, r + dr
        RAYS[_d, _s] = _bb(sq)
        for i, t in enumerate(sq):
            BETWEEN[_s, t] = _bb(sq[:i])
            back = []
            f, r = _f - df, _r - dr
            while _on(f, r):
                back.append(8 * r + f)
                f, r = f - df, r - dr
            LINE[_s, t] = _bb(sq + back + [_s])

DARK = _bb(s for s in range(64) if (s % 8 + s // 8) % 2 == 0)
LIGHT = np.uint64(_ALL ^ int(DARK))

# castling: rights kept after a move from/to each square
CASTLE_MASK = np.full(64, 15, dtype=np.int64)
CASTLE_MASK[0] = 15 ^ 2
CASTLE_MASK[7] = 15 ^ 1
CASTLE_MASK[4] = 15 ^ 3
CASTLE_MASK[56] = 15 ^ 8
CASTLE_MASK[63] = 15 ^ 4
CASTLE_MASK[60] = 15 ^ 12

# ---- Polyglot Zobrist keys ----------------------------------------------------------------------
_R = np.array(chess.polyglot.POLYGLOT_RANDOM_ARRAY, dtype=np.uint64)
Z_PIECE = np.zeros((13, 64), dtype=np.uint64)
for _p in range(1, 13):
    _t, _c = (_p - 1) % 6 + 1, (_p - 1) // 6
    _kind = 2 * (_t - 1) + (1 if _c == 0 else 0)
    Z_PIECE[_p] = _R[64 * _kind: 64 * _kind + 64]
Z_CASTLE = np.zeros(16, dtype=np.uint64)
for _m in range(16):
    _v = 0
    for _i in range(4):
        if _m >> _i & 1:
            _v ^= int(_R[768 + _i])
    Z_CASTLE[_m] = np.uint64(_v)
Z_EP = _R[772:780].copy()
Z_TURN = _R[780]

# piece values for MVV/LVA ordering, by type
ORDER_VALUE = np.array([0, 1, 3, 3, 5, 9, 20], dtype=np.int64)
