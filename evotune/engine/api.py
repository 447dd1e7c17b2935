"""Python API of the numba core (docs/internals.md, "Python API").

python-chess is the boundary: positions come in as FEN strings or ``chess.Board`` objects (the
move stack is the game history used for repetitions), moves go out as UCI strings. All checks of
user input happen here; the jitted code trusts its arguments.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import chess
import chess.polyglot
import numpy as np

from ..errors import ConfigError, PositionError
from ..limits import Limits
from ..rules import MATE, RESULTS, TERMINATIONS, Adjudication
from ..spec.features import FEATURE_SETS, feature_names
from ..spec.searchsettings import SearchSettings
from . import searches
from .core import layout as T
from .core.game import (
    eval_core,
    eval_line_core,
    iteration_core,
    ordering_core,
    phi_core,
    play_game_core,
    qsearch_core,
    search_core,
)
from .core.moves import F_CASTLE, F_DOUBLE, F_EP, encode, unpack
from .evaluation import Evaluation, engine_weights, evaluation_of
from .net.corestate import Tail, rows
from .phibatch import PhiBatch, phi_batch

logger = logging.getLogger(__name__)

__all__ = ["FEATURE_SETS", "MATE", "Adjudication", "GameOutcome", "PhiBatch", "QuiescenceResult",
           "SearchResult", "evaluate", "feature_names", "features", "iterate", "phi", "phi_batch",
           "play_game", "qsearch", "search"]

DEFAULT_TT_BITS = 18
MAX_DEPTH = 64
MAX_NODES = 10**12
"""Node limits above this are refused (the core counts nodes in int64)."""


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one search."""

    move: str
    """Best move, UCI ('' when the position has no legal move)."""
    score: int
    """Root score, side to move's view (mate scores: +-(MATE - plies))."""
    depth: int
    """Deepest completed iteration."""
    nodes: int
    """Nodes searched (every negamax or quiescence call counts one)."""
    seconds: float
    """Wall time of the search."""
    pv: tuple[str, ...]
    """Principal variation, UCI."""
    children: tuple[tuple[str, int, float], ...] = field(default=(), compare=False)
    """UCT: the root's moves (UCI, visits, mean value for the side to move), most visited first."""
    simulations: int = 0
    """UCT: the simulations of the search (0 for the other searches)."""


@dataclass(frozen=True)
class GameOutcome:
    """A game played by the core."""

    moves: tuple[str, ...]
    """UCI moves played by the core from the start position."""
    result: str
    """'1-0', '0-1' or '1/2-1/2'."""
    termination: str
    """'checkmate', 'stalemate', 'repetition', 'fifty-move', 'insufficient-material', 'ply-cap',
    'adjudication-resign' or 'adjudication-draw'."""
    nodes: int
    """Nodes searched over the whole game."""
    scores: np.ndarray = field(repr=False, compare=False)
    """int64 (plies,): each move's root score, mover's view."""
    leaf_phi: np.ndarray = field(repr=False, compare=False)
    """int64 (plies, width): phi_int of each search's PV leaf, mover's view (width: the size of
    the wider of the two feature sets; a narrower side's rows are zero-padded)."""
    predicted: np.ndarray = field(repr=False, compare=False)
    """bool (plies,): the move at ply t+1 is the reply the PV of ply t predicted (last: False)."""
    seconds: float
    """Wall time of the game."""
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What went wrong in the game that the user should hear of (an engine's forfeit), said by
    the process that receives the game, not the one that played it."""
    boards: np.ndarray | None = field(default=None, repr=False, compare=False)
    """int64 (plies, B_WIDTH): each move's position and flags (:mod:`.gameboards`), or None."""
    last_visits: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    """The root's moves (UCI) and their visits in the search of the game's last move, when a
    UCT side made it (most visited first, moves never visited left out); () otherwise."""
    depths: np.ndarray | None = field(default=None, repr=False, compare=False)
    """int64 (plies,): the depth each move's search reached (the search's ``depth``: alpha-beta's
    deepest completed iteration, UCT's PV length, probability's iterations; an external
    engine's last ``info depth``, 0 when it sent none)."""
    move_seconds: np.ndarray | None = field(default=None, repr=False, compare=False)
    """float64 (plies,): each move's thinking time, where moves are searched one by one (the
    move-by-move loop); None for a game played inside the core (not measured)."""


# ---- boundary helpers ----------------------------------------------------------------------

def to_board(position) -> chess.Board:
    """A validated copy of ``position`` (FEN string, 'startpos' as in UCI, or chess.Board)."""
    if isinstance(position, chess.Board):
        board = position.copy()
    elif isinstance(position, str):
        text = position.strip()
        try:
            board = chess.Board() if text == "startpos" else chess.Board(text)
        except ValueError as exc:
            raise PositionError(f"malformed FEN '{position}': {exc}; give a FEN such as "
                                f"'{chess.STARTING_FEN}' (or 'startpos')") from None
    else:
        raise PositionError(f"position must be a FEN string or a chess.Board, got "
                            f"{type(position).__name__}")
    # STATUS_IMPOSSIBLE_CHECK is python-chess being stricter than the rules need (e.g. perft's
    # double checks by two bishops); the core plays such positions correctly.
    if board.chess960 or board.status() & ~chess.STATUS_IMPOSSIBLE_CHECK:
        raise PositionError(f"illegal position '{board.fen()}': {board.status()!r}; give a legal "
                            "standard-chess position")
    return board


def _check_limits(depth: int, nodes: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) \
            or not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth {depth!r} is invalid; give an integer from 1 to {MAX_DEPTH}")
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) \
            or not 0 <= nodes <= MAX_NODES:
        raise ConfigError(f"nodes {nodes!r} is invalid; give 0 (no limit) or a positive integer "
                          f"up to {MAX_NODES}")


_contexts = threading.local()


def board_arrays(board: chess.Board, tt_bits: int, *, reuse: bool = False,
                 features: str | Evaluation = "shannon", tail: Tail | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The core's state arrays (U, S) for ``board``, history from its move stack, evaluating with
    the feature set ``features`` (its weights are set by the caller; ``tail``: the nets behind
    the TT).

    ``reuse``: take this thread's arrays of the same TT size from the previous call (their pages
    are already mapped; TT entries of earlier searches are invisible through the generation tag,
    so results do not depend on them).
    """
    if isinstance(tt_bits, bool) or not isinstance(tt_bits, (int, np.integer)) \
            or not 10 <= tt_bits <= 26:
        raise ConfigError(f"tt_bits {tt_bits!r} is invalid; give 10..26 (2^bits TT entries)")
    size = 1 << tt_bits
    n_s = T.S_SIZE + 2 * size + (0 if tail is None else tail.slots)
    cached = getattr(_contexts, "arrays", None) if reuse else None
    if cached is not None and cached[1].size == n_s:
        U, S = cached
        gen = S[T.S_GEN]
        U[:T.U_TT] = 0
        S[:T.S_MOVES] = 0
        S[T.S_GEN] = gen
    else:
        U = np.zeros(T.U_SIZE + size, dtype=np.uint64)
        S = np.zeros(n_s, dtype=np.int64)
        if reuse:
            _contexts.arrays = (U, S)
    for sq, piece in board.piece_map().items():
        p = piece.piece_type + (0 if piece.color == chess.WHITE else 6)
        b = np.uint64(1 << sq)
        U[p - 1] |= b
        U[T.U_OCC + (p - 1) // 6] |= b
        S[T.S_MB + sq] = p
    U[T.U_ALL] = U[T.U_OCC] | U[T.U_OCC + 1]
    S[T.S_FSET] = evaluation_of(features).code
    if tail is not None:
        tail.install(S, size)
    cr = board.clean_castling_rights()
    S[T.S_CASTLE] = ((1 if cr & chess.BB_H1 else 0) | (2 if cr & chess.BB_A1 else 0)
                     | (4 if cr & chess.BB_H8 else 0) | (8 if cr & chess.BB_A8 else 0))
    S[T.S_SIDE] = 0 if board.turn == chess.WHITE else 1
    S[T.S_EP] = -1 if board.ep_square is None else board.ep_square
    S[T.S_HALF] = board.halfmove_clock
    S[T.S_FULLMOVE] = board.fullmove_number
    S[T.S_TTMASK] = size - 1
    U[T.U_HASH] = np.uint64(chess.polyglot.zobrist_hash(board))
    # earlier positions of the game, within the reversible window
    keep = min(board.halfmove_clock, len(board.move_stack), T.MAXHIST - T.MAXPLY - 1)
    if keep:
        past = board.copy()
        hashes = []
        for _ in range(keep):
            past.pop()
            hashes.append(chess.polyglot.zobrist_hash(past))
        U[T.U_HIST:T.U_HIST + keep] = np.array(hashes[::-1], dtype=np.uint64)
    S[T.S_NHIST] = keep
    return U, S


def decode_move(m: int) -> chess.Move:
    """A core move int as a python-chess move."""
    f, t, promo, _ = unpack(m)
    return chess.Move(f, t, promo or None)


def uci_moves(moves) -> tuple[str, ...]:
    """Core move ints as UCI strings."""
    return tuple(decode_move(int(m)).uci() for m in moves)


# ---- API ------------------------------------------------------------------------------------------

def features(position, features: str | Evaluation = "shannon") -> np.ndarray:
    """phi_int(position), int64 (size of the set), side to move's view: for ``shannon`` the
    material differences P, N, B, R, Q and the mobility difference; for the tapered sets 24 x phi
    (phase folded in, see :func:`phi`)."""
    evaluation = evaluation_of(features)
    board = to_board(position)
    U, S = board_arrays(board, 10, features=evaluation)
    out = np.zeros(evaluation.size, dtype=np.int64)
    phi_core(U, S, out)
    return out


def phi(position, features: str | Evaluation = "shannon") -> np.ndarray:
    """phi(position) as float64, the learning vector: ``evaluate == round(w) . phi`` rounded toward
    zero, up to float rounding (exactly ``round(w) . phi`` for shannon)."""
    evaluation = evaluation_of(features)
    return features_int(position, evaluation) / float(evaluation.denominator)


features_int = features


def evaluate(position, weights, features: str | Evaluation = "shannon") -> int:
    """The core's evaluation of ``position`` with ``weights`` (rounded), side to move's view:
    ``round(w) . phi_int`` for shannon, ``round(w) . phi_int / 24`` rounded toward zero for the
    tapered sets; for ``nnue`` the net's integer output (``weights`` is a Net), clamped."""
    board = to_board(position)
    (w,), tail = rows([engine_weights(weights, "weights", features)])
    U, S = board_arrays(board, 10, features=features, tail=tail)
    S[T.S_W:T.S_W + w.size] = w
    return int(eval_core(U, S))


def encode_move(board: chess.Board, move: chess.Move) -> int:
    """The core's move int of the legal ``move`` on ``board``."""
    flags = (F_EP if board.is_en_passant(move) else 0) \
        | (F_CASTLE if board.is_castling(move) else 0) \
        | (F_DOUBLE if board.piece_type_at(move.from_square) == chess.PAWN
           and abs(move.to_square - move.from_square) == 16 else 0)
    return int(encode.py_func(move.from_square, move.to_square, move.promotion or 0, flags))


def evaluate_line(position, moves, weights,
                  features: str | Evaluation = "shannon") -> np.ndarray:
    """int64 (len(moves) + 1,): :func:`evaluate` of ``position`` and after each of ``moves``
    (UCI strings or chess.Moves, legal, played in turn), each from its side to move's view,
    kept incrementally by the core as its search does (a net's accumulators by make_move)."""
    board = to_board(position)
    codes = []
    for mv in moves:
        try:
            move = mv if isinstance(mv, chess.Move) else chess.Move.from_uci(str(mv))
        except ValueError:
            move = chess.Move.null()
        if not board.is_legal(move):
            raise PositionError(f"move {mv} is not legal in '{board.fen()}'")
        codes.append(encode_move(board, move))
        board.push(move)
    (w,), tail = rows([engine_weights(weights, "weights", features)])
    U, S = board_arrays(to_board(position), 10, features=features, tail=tail)
    S[T.S_W:T.S_W + w.size] = w
    if len(codes) >= T.MAXHIST - S[T.S_NHIST]:
        raise ConfigError(f"{len(codes)} moves are too many; give at most 1000")
    out = np.zeros(len(codes) + 1, dtype=np.int64)
    eval_line_core(U, S, np.array(codes, dtype=np.int64), out)
    return out


def _prepared(position, weights, depth: int, nodes: int, stop: np.ndarray | None, tt_bits: int,
              features: str | Evaluation
              ) -> tuple[chess.Board, np.ndarray, np.ndarray, np.ndarray]:
    """The checked arguments of a search in this thread's core state: (board, U, S, stop)."""
    (w,), tail = rows([engine_weights(weights, "weights", features)])
    _check_limits(depth, nodes)
    board = to_board(position)
    if stop is None:
        stop = np.zeros(1, dtype=np.int64)
    elif not (isinstance(stop, np.ndarray) and stop.dtype == np.int64 and stop.ndim == 1
              and stop.size >= 1 and stop.flags.c_contiguous):
        raise ConfigError("stop must be a contiguous 1-d int64 numpy array of length >= 1")
    U, S = board_arrays(board, tt_bits, reuse=True, features=features, tail=tail)
    S[T.S_W:T.S_W + w.size] = w
    if not _contexts.__dict__.get("warm"):
        # the first jitted call of a process initialises numba's JIT (~0.5 s): keep it out of
        # the search's timing
        phi_core(U, S, np.zeros(w.size, dtype=np.int64))
        _contexts.warm = True
    return board, U, S, stop


def search(position, weights, *, depth: int = 3, nodes: int = 0, stop: np.ndarray | None = None,
           tt_bits: int = DEFAULT_TT_BITS, features: str | Evaluation = "shannon",
           settings: SearchSettings | None = None,
           tree: searches.SearchTree | None = None) -> SearchResult:
    """Search ``position`` to ``depth`` (and at most about ``nodes`` nodes when > 0).

    ``stop`` is an int64 array of length >= 1; setting ``stop[0] = 1`` from another thread ends
    the search like the node limit (the first iteration always completes, except with a net:
    then the best root move searched so far is played, ``depth`` 0). ``tt_bits``: the
    transposition table holds 2**tt_bits entries (16 bytes each). ``features``: the evaluation
    the weights belong to, a name or an :class:`~evotune.engine.evaluation.Evaluation` (``nnue``:
    ``weights`` is a Net). ``settings``: another search than
    alpha-beta (uct: ``nodes`` simulations, probability: ``nodes`` nodes; 0: the settings'
    default budget; ``depth`` does not apply), or alpha-beta with a move model ordering its quiet
    moves; ``tree``: the player's UCT tree, reused when
    ``position`` continues the game of its last search.
    """
    board, U, S, stop = _prepared(position, weights, depth, nodes, stop, tt_bits, features)
    t0 = time.perf_counter()
    children: tuple[tuple[str, int, float], ...]
    if settings is None or settings.is_alphabeta:
        ordering_core(S, searches.search_params(settings or searches.ALPHABETA))
        score, children, sims = search_core(U, S, stop, np.int64(depth), np.int64(nodes)), (), 0
    else:
        score, children, sims = searches.run(U, S, stop, board, settings, nodes, tree)
    seconds = time.perf_counter() - t0
    pv = uci_moves(S[T.S_ROOTPV:T.S_ROOTPV + S[T.S_ROOTPVLEN]])
    return SearchResult(move=pv[0] if pv else "", score=int(score), depth=int(S[T.S_ITER]),
                        nodes=int(S[T.S_NODES]), seconds=seconds, pv=pv, children=children,
                        simulations=sims)


def iterate(position, weights, *, depth: int = MAX_DEPTH, nodes: int = 0,
            stop: np.ndarray | None = None, tt_bits: int = DEFAULT_TT_BITS,
            features: str | Evaluation = "shannon", settings: SearchSettings | None = None
            ) -> Iterator[SearchResult]:
    """Alpha-beta's iterative deepening on ``position``, one iteration at a time: a
    :class:`SearchResult` after each completed iteration 1..``depth`` (``nodes`` and ``seconds``
    of the whole search so far), the same search as :func:`search` to that depth (whose result
    is the last one yielded) without searching the shallower iterations again. ``nodes`` limits
    the whole search, ``stop`` ends it as in :func:`search`; a stopped iteration yields nothing,
    except a net's first (then the best root move searched so far, ``depth`` 0). ``settings``:
    alpha-beta's (another search is refused). Bad arguments raise at the call. The core state
    is this thread's: consume the iterations before the thread's next search."""
    if settings is not None and not settings.is_alphabeta:
        raise ConfigError(f"iterate() runs alpha-beta; the settings' search is "
                          f"{settings.algorithm!r} (use search())")
    _, U, S, stop = _prepared(position, weights, depth, nodes, stop, tt_bits, features)
    ordering_core(S, searches.search_params(settings or searches.ALPHABETA))
    return _iterations(U, S, stop, depth, nodes)


def _iterations(U: np.ndarray, S: np.ndarray, stop: np.ndarray, depth: int,
                nodes: int) -> Iterator[SearchResult]:
    """:func:`iterate`'s iterations on the prepared state (its arguments checked at the call)."""
    t0 = time.perf_counter()
    score, done = np.int64(0), np.int64(0)
    for d in range(1, depth + 1):
        score, done = iteration_core(U, S, stop, np.int64(d), np.int64(nodes), score, done)
        completed = done == d
        if not completed and not (done == 0 and S[T.S_ROOTPVLEN] > 0):
            return
        pv = uci_moves(S[T.S_ROOTPV:T.S_ROOTPV + S[T.S_ROOTPVLEN]])
        yield SearchResult(move=pv[0] if pv else "", score=int(score), depth=int(done),
                           nodes=int(S[T.S_NODES]), seconds=time.perf_counter() - t0, pv=pv)
        if not completed or not pv or stop[0] != 0:  # stopped: no iteration to start
            return


@dataclass(frozen=True)
class QuiescenceResult:
    """A quiescence search of one position (what learning from positions needs)."""

    static: int
    """The evaluation of the position itself (side to move)."""
    score: int
    """The quiescence score (side to move; mate scores when in check without evasions)."""
    pv: tuple[str, ...]
    """The quiescence PV, UCI (empty: the position is quiet, score == static)."""
    leaf_phi: np.ndarray
    """phi (float64, phase folded in) of the PV's leaf, side to move's view:
    ``score == trunc(round(w) . leaf_phi)`` unless the leaf is mate (a net: empty)."""


def qsearch(position, weights, features: str | Evaluation = "shannon") -> QuiescenceResult:
    """Quiescence search of ``position`` (the search's quiescence: stand pat, captures and
    promotions, all evasions in check), full window."""
    board = to_board(position)
    (w,), tail = rows([engine_weights(weights, "weights", features)])
    U, S = board_arrays(board, 10, reuse=False, features=features, tail=tail)
    S[T.S_W:T.S_W + w.size] = w
    out = np.zeros(_phi_width([features]), dtype=np.int64)
    static = int(eval_core(U, S))
    score = int(qsearch_core(U, S, np.zeros(1, dtype=np.int64), out))
    pv = uci_moves(S[T.S_PV:T.S_PV + S[T.S_PVLEN]])
    return QuiescenceResult(static=static, score=score, pv=pv,
                            leaf_phi=out / float(evaluation_of(features).denominator))


def _phi_width(sets) -> int:
    """The width of phi rows for players of the evaluations ``sets`` (a net has no phi)."""
    return max(evaluation_of(s).phi_width for s in sets)


def play_game(position, white, black, *, limits: Limits = Limits(),
              tt_bits: int = DEFAULT_TT_BITS,
              features: str | Evaluation | tuple[str | Evaluation, str | Evaluation] = "shannon",
              settings: tuple[SearchSettings, SearchSettings] | None = None,
              boards: bool = False) -> GameOutcome:
    """Play a whole game from ``position`` inside one core call; ``white``/``black`` are weights
    of the feature set ``features`` (or of ``features[0]`` and ``features[1]``; Nets for
    ``nnue``). ``leaf_phi`` rows are as wide as the wider linear set (0 for two nets).

    ``limits`` is the game's :class:`~evotune.limits.Limits` whole: its ``depth`` and ``nodes``
    per move, its ``max_plies`` and its ``adjudication`` (its ``movetime`` and ``tc`` do not
    apply inside the core: a timed game is played move by move, ``players.gameloop``).
    Every alpha-beta move is an independent search (fresh TT generation, killers, history), so
    each move's score equals ``search()`` on that position and the game is deterministic.
    ``settings``: the search of white and black (default alpha-beta); a UCT side searches
    ``nodes`` simulations (0: its default budget) and keeps its tree between its moves when its
    settings reuse it, so its scores depend on the game before; a probability side searches
    ``nodes`` nodes (0: its default). ``boards``: keep the position before each move.
    """
    if not isinstance(limits, Limits):  # a Limits checked its depth, nodes, ply cap, adjudication
        raise ConfigError(f"limits must be a Limits, got {limits!r}")
    sets = tuple(features) if isinstance(features, (tuple, list)) else (features, features)
    if len(sets) != 2:
        raise ConfigError(f"features must be a feature set or a (white, black) pair, got "
                          f"{features!r}")
    (ww, wb), tail = rows([engine_weights(white, "white weights", sets[0]),
                           engine_weights(black, "black weights", sets[1])])
    width = max(ww.size, wb.size)
    weights = np.zeros((2, width), dtype=np.int64)
    weights[0, :ww.size] = ww
    weights[1, :wb.size] = wb
    fsets = np.array([evaluation_of(s).code for s in sets], dtype=np.int64)
    depth, nodes, max_plies = limits.depth, limits.nodes, limits.max_plies
    adj = np.array(limits.adjudication.as_tuple(), dtype=np.int64)
    board = to_board(position)
    U, S = board_arrays(board, tt_bits, reuse=True, tail=tail)
    cap = max_plies
    moves = np.zeros(cap, dtype=np.int64)
    scores = np.zeros(cap, dtype=np.int64)
    depths = np.zeros(cap, dtype=np.int64)
    phi = np.zeros(width * cap, dtype=np.int64)
    pred = np.zeros(cap, dtype=np.int64)
    info = np.zeros(4, dtype=np.int64)
    stop = np.zeros(1, dtype=np.int64)
    rec = np.zeros((cap if boards else 0, T.B_WIDTH), dtype=np.int64)
    params, budgets, TI, TF, meta = searches.game_state(settings, nodes)
    t0 = time.perf_counter()
    play_game_core(U, S, stop, fsets, weights, np.int64(depth), np.int64(nodes),
                   np.int64(max_plies), adj, moves, scores, depths, phi, pred, info, params,
                   budgets,
                   TI, TF, meta, rec)
    seconds = time.perf_counter() - t0
    n = int(info[2])
    last_visits: tuple[tuple[str, int], ...] = ()
    if n:
        side = (0 if board.turn == chess.WHITE else 1) ^ ((n - 1) & 1)
        if params[side, searches.M.P_ALGO] == searches.M.ALGO_UCT:
            last_visits = tuple((searches.uci(c.move), c.visits) for c in
                                searches.root_children(TI[side], TF[side], meta[side])
                                if c.visits)
    return GameOutcome(moves=uci_moves(moves[:n]), result=RESULTS[int(info[0])],
                       termination=TERMINATIONS[int(info[1])], nodes=int(info[3]),
                       scores=scores[:n].copy(), depths=depths[:n].copy(),
                       leaf_phi=phi[:width * n].reshape(n, width)[:, :_phi_width(sets)].copy(),
                       predicted=pred[:n].astype(bool), seconds=seconds,
                       boards=rec[:n] if boards else None, last_visits=last_visits)
