"""The layout of the core's state: two arrays, ``U`` (uint64) and ``S`` (int64), and their offsets.

Squares are python-chess squares (a1 = 0, h8 = 63). Pieces are ``type + 6 * colour`` with
python-chess types (pawn 1 .. king 6) and colour 0 = white, 1 = black; 0 is an empty square.
Jitted code reads these module globals as compile-time constants (they are frozen into the
numba cache, whose folder is keyed on the core's sources), so nothing here changes after import.
Passing two arrays keeps reference counting on the hot path small, and :func:`unowned` makes
what is left of it free.
"""
from __future__ import annotations

from numba import types
from numba.extending import intrinsic

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
S_FSET = 13       # feature set of the weights in use (0 shannon, 1 pst, 2 extended)
S_MGSUM = 14      # tapered sets: material + PST, middlegame, White minus Black (incremental)
S_EGSUM = 15      # the same, endgame
S_RAW = 16        # scratch: the raw terms of the extended set (32 slots)
S_QROOT = 48      # the node count where the current quiescence search began (search.QNODES)
MAXW = 1024       # weight slots (the largest set has 824 weights)
S_W = 56          # the rounded weights in use
S_PSQ = S_W + MAXW                       # tapered sets: [phase][piece][square] signed values
PSQ_PHASE = 13 * 64                      # ints per phase of S_PSQ
S_MB = S_PSQ + 2 * PSQ_PHASE             # mailbox, 64 squares
UNDO = 6                                 # ints per pushed move: captured, castle, ep, half,
S_UNDO = S_MB + 64                       # mg sum, eg sum
S_MOVES = S_UNDO + UNDO * MAXHIST           # move lists, MAXMOVES per ply
S_SCORES = S_MOVES + MAXPLY * MAXMOVES   # ordering scores, parallel to the move lists
S_KILL = S_SCORES + MAXPLY * MAXMOVES    # 2 killers per ply
S_HISTORY = S_KILL + 2 * MAXPLY          # history heuristic, [side][from][to]
S_PV = S_HISTORY + 2 * 64 * 64           # triangular PV table, MAXPLY x MAXPLY
S_PVLEN = S_PV + MAXPLY * MAXPLY
S_ROOTPV = S_PVLEN + MAXPLY              # root PV of the deepest completed iteration
MM_SLOTS = 65536                         # move model (core/movemodel.py: MODEL_SLOTS at most)
S_MM = S_ROOTPV + MAXPLY
S_MM_ORDER = S_MM + MM_SLOTS - 1         # 1: alpha-beta orders quiet moves by the move model
S_REDUCE = S_MM + MM_SLOTS - 2           # > 0: reduce quiet moves this far below the first (model)
S_LATE = S_MM + MM_SLOTS - 3             # > 0: reduce quiet moves after this many (any order)
S_TT = S_MM + MM_SLOTS                   # TT data, 2 ints per entry: score, packed info
S_SIZE = S_TT


# One row of play_game_core's ``boards`` (the position before each engine move): the mailbox
# (64 squares, pieces as in layout), then these columns.
B_SIDE = 64       # side to move (0 white)
B_CASTLE = 65     # castling rights (1 K, 2 Q, 4 k, 8 q)
B_EP = 66         # en passant square when a legal en passant capture exists, else -1 (as FENs)
B_HALF = 67       # halfmove clock
B_FULL = 68       # fullmove number
B_FLAGS = 69      # B_CHECK | B_CAPTURE | B_PROMO of the position and the move played from it
B_WIDTH = 70
B_CHECK = 1       # the side to move is in check
B_CAPTURE = 2     # the move played is a capture (en passant included)
B_PROMO = 4       # the move played is a promotion


@intrinsic
def unowned(typingctx, arr):
    """A view of ``arr`` without a memory owner (NRT meminfo NULL), for jitted code only.

    Numba counts references to every array passed to a non-inlined call, with an atomic add
    on the array's meminfo; for a view without one the count is a null test. The entry points
    hand the search such views of U, S and the stop flag (millions of calls per second): their
    caller keeps the arrays alive for the whole call, and no view outlives it.
    """
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        view = context.make_array(arr)(context, builder)
        view.meminfo = context.get_constant_null(types.MemInfoPointer(arr.dtype))
        view.parent = context.get_constant_null(types.pyobject)
        view.nitems = src.nitems
        view.itemsize = src.itemsize
        view.data = src.data
        view.shape = src.shape
        view.strides = src.strides
        return view._getvalue()

    return arr(arr), codegen
