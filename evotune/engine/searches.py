"""The Python boundary of the core's other searches: UCT (core/mcts.py) and probability-limited
alpha-beta (core/probability.py), given by :class:`~evotune.spec.searchsettings.SearchSettings`.

:func:`search_params` packs the settings for the core; a :class:`SearchTree` holds one player's
UCT tree between its searches (tree reuse) and knows which moves led from its root to the next
position; :func:`run` searches a position already loaded in the core's state arrays (the API's
``search`` loads it and builds the result).
"""
from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

from ..seeding import game_seed
from ..spec.searchsettings import ALGORITHMS, POLICIES, SearchSettings
from .core import mcts as M
from .core.game import probability_core, uct_core
from .core.moves import F_CASTLE, F_DOUBLE, F_EP, encode, unpack
from .core.prior import PRIOR_MODEL, PRIOR_ORDERING
from .movemodel.modelfile import cached_model

ALPHABETA = SearchSettings()
"""Plain alpha-beta (quiet moves by history)."""


def search_params(settings: SearchSettings) -> np.ndarray:
    """The core's parameter vector (float64, mcts.NP) of ``settings`` (a move model's weights
    read from its file once per process, MoveModelError naming it)."""
    p = np.zeros(M.NP, dtype=np.float64)
    p[M.P_ALGO] = ALGORITHMS.index(settings.algorithm)
    p[M.P_POLICY] = POLICIES.index(settings.policy)
    p[M.P_DEPTH] = settings.policy_depth
    p[M.P_C] = settings.c
    p[M.P_K] = settings.k
    p[M.P_PRIOR] = PRIOR_MODEL if settings.model else PRIOR_ORDERING if settings.prior else 0.0
    if settings.model:
        p[M.P_MODEL:] = cached_model(settings.model).params()
    p[M.P_TEMP] = settings.temperature
    p[M.P_SOLVER] = 1.0 if settings.solver else 0.0
    p[M.P_REUSE] = 1.0 if settings.reuse else 0.0
    p[M.P_PLYCAP] = settings.ply_cap
    p[M.P_FACTOR] = settings.factor
    p[M.P_UNVISITED] = settings.unvisited
    p[M.P_NODE_BUDGET] = 1.0 if settings.budget_unit == "nodes" else 0.0
    p[M.P_REDUCE] = settings.reduce_gap
    p[M.P_LATE] = settings.reduce_late
    return p


def seed_value(settings: SearchSettings) -> int:
    """The core's generator seed of ``settings.seed`` (63 bits, from the seeded generator)."""
    return game_seed(settings.seed)


def tree_arrays(rows: int, players: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty trees (TI, TF, meta) of ``rows`` nodes for ``players`` players (a leading axis when
    more than one). Zeroed pages are mapped on first use, so a large tree costs what it holds."""
    shape = (rows,) if players == 1 else (players, rows)
    meta_shape = (M.NM,) if players == 1 else (players, M.NM)
    return (np.zeros(shape + (M.NI,), dtype=np.int64), np.zeros(shape + (M.NF,), dtype=np.float64),
            np.zeros(meta_shape, dtype=np.int64))


def game_state(settings: tuple[SearchSettings, SearchSettings] | None, nodes: int):
    """What the core's whole-game entry point takes for the searches of white and black:
    (params (2, NP), budgets (2,), TI, TF, meta with the seeds set)."""
    sides = settings or (SearchSettings(), SearchSettings())
    params = np.stack([search_params(s) for s in sides])
    budgets = np.array([s.budget(nodes) if not s.is_alphabeta else nodes for s in sides],
                       dtype=np.int64)
    rows = max([s.tree for s in sides if s.algorithm == "uct"] or [1])
    TI, TF, meta = tree_arrays(rows, 2)
    meta[:, M.M_SEED] = [seed_value(s) for s in sides]
    return params, budgets, TI, TF, meta


def core_move(move: chess.Move, board: chess.Board) -> int:
    """The core's move int of ``move`` on ``board`` (before it is played)."""
    flags = 0
    if board.is_en_passant(move):
        flags = F_EP
    elif board.is_castling(move):
        flags = F_CASTLE
    elif board.piece_type_at(move.from_square) == chess.PAWN \
            and abs(move.to_square - move.from_square) == 16:
        flags = F_DOUBLE
    return int(encode.py_func(move.from_square, move.to_square, move.promotion or 0, flags))


class SearchTree:
    """One player's UCT tree between searches: reused when the next position continues the
    game of the last one (the moves since are looked up in the tree), else started afresh."""

    def __init__(self, rows: int) -> None:
        self.TI, self.TF, self.meta = tree_arrays(rows)
        self._root_fen = ""
        self._moves: list[chess.Move] = []

    def path(self, board: chess.Board) -> np.ndarray | None:
        """The core moves from the last searched position to ``board`` (None: not a
        continuation, the tree starts empty), and remember ``board`` as the last position."""
        root = board.root() if board.move_stack else board
        fen, moves = root.fen(), list(board.move_stack)
        known = self._moves
        out = None
        if self._root_fen == fen and moves[:len(known)] == known and self.meta[M.M_USED]:
            replay = root.copy(stack=False)
            for m in known:
                replay.push(m)
            out = []
            for m in moves[len(known):]:
                out.append(core_move(m, replay))
                replay.push(m)
        self._root_fen, self._moves = fen, moves
        return None if out is None else np.array(out, dtype=np.int64)


@dataclass(frozen=True)
class RootChild:
    """A root move of a UCT search."""

    move: int
    """Core move int."""
    visits: int
    """Simulations through it."""
    value: float
    """Mean result for the side to move (0..1)."""
    proven: int
    """Solver: 1 a proven win for the side to move, -1 a proven loss, 0 unknown."""


def root_children(TI: np.ndarray, TF: np.ndarray, meta: np.ndarray) -> list[RootChild]:
    """The root's children, most visited first."""
    if not meta[M.M_USED]:
        return []
    root = int(meta[M.M_ROOT])
    first, n = int(TI[root, M.I_FIRST]), int(TI[root, M.I_NCH])
    if first < 0:
        return []
    rows = range(first, first + n)
    out = [RootChild(int(TI[j, M.I_MOVE]), int(TI[j, M.I_VISITS]),
                     float(TF[j, M.F_VALUE] / TI[j, M.I_VISITS]) if TI[j, M.I_VISITS] else 0.0,
                     int(TI[j, M.I_PROVEN])) for j in rows]
    return sorted(out, key=lambda c: -c.visits)


def run(U: np.ndarray, S: np.ndarray, stop: np.ndarray, board: chess.Board,
        settings: SearchSettings, nodes: int,
        tree: SearchTree | None = None) -> tuple[int, tuple[tuple[str, int, float], ...], int]:
    """Search the position loaded in ``U``/``S`` (``board``) with ``settings`` and the budget
    ``settings.budget(nodes)`` (simulations or nodes; ``stop`` ends it earlier): (score, the
    root's children as (UCI, visits, mean value) (UCT), simulations (UCT)). The PV is left in
    ``S[S_ROOTPV:]``."""
    params = search_params(settings)
    budget = np.int64(settings.budget(nodes))
    if settings.algorithm == "probability":
        return int(probability_core(U, S, stop, params, budget)), (), 0
    if tree is None:
        tree = SearchTree(settings.tree)
    path = tree.path(board)
    if path is None:
        tree.meta[M.M_USED] = 0
        path = np.zeros(0, dtype=np.int64)
    tree.meta[M.M_SEED] = seed_value(settings)
    score = uct_core(U, S, stop, tree.TI, tree.TF, tree.meta, params, budget, path,
                     np.int64(path.size))
    children = tuple((uci(c.move), c.visits, c.value)
                     for c in root_children(tree.TI, tree.TF, tree.meta))
    return int(score), children, int(tree.meta[M.M_SIMS])


def uci(m: int) -> str:
    """A core move int as UCI text."""
    f, t, promo, _ = unpack(m)
    return chess.Move(f, t, promo or None).uci()


