"""The move-by-move game loop for any pairing that is not builtin against builtin.

Two built-in players play a whole game inside the numba core (``evotune.engine.play_game``);
when at least one side is an external UCI engine, :func:`play_players_game` plays on a
python-chess board: a built-in side moves with ``evotune.engine.search`` and its weights, an
external side through :mod:`evotune.players.external`. The game ends by the core's rules
(checkmate, stalemate, threefold repetition, fifty-move rule, insufficient material, ply cap,
adjudication) or by a forfeit: the side whose engine crashed, hung past its time or answered an
illegal move loses ('forfeit-crash', 'forfeit-timeout', 'forfeit-illegal-move'); under a time
control a side whose clock runs out loses on time ('time-forfeit'). An engine fault never raises
out of the game; an engine that cannot be started at all does (EngineError).
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace

import chess
import numpy as np

from ..engine import GameOutcome, SearchResult, SearchTree, features, search
from ..engine.api import MAX_NODES
from ..engine.evaluation import SHANNON
from ..engine.uci.timeman import allot
from ..errors import EngineError
from ..limits import Limits
from ..rules import Adjudicator, game_over
from . import PlayerSpec
from .clock import Clocks
from .external import Forfeit, MoveLimit, discard, engine_for, shares_process
from .nets import evaluation

log = logging.getLogger(__name__)

def _leaf_phi(board: chess.Board, pv: tuple[str, ...], feature_set: str) -> np.ndarray:
    """phi of the end of ``pv`` from the mover's point of view (the PV leaf of the search)."""
    leaf = board.copy(stack=False)
    plies = 0
    for uci in pv:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            break
        if move not in leaf.legal_moves:
            break
        leaf.push(move)
        plies += 1
    phi = np.asarray(features(leaf, feature_set), dtype=np.int64)
    return phi if plies % 2 == 0 else -phi


def timed_search(spec: PlayerSpec, board: chess.Board, weights: np.ndarray, *, depth: int,
                 nodes: int, seconds: float, tree: SearchTree | None) -> SearchResult:
    """A builtin player's search of ``board``: with ``seconds`` > 0 and a search other than
    alpha-beta, one that a timer stops after ``seconds`` (``nodes`` still a limit when > 0);
    else to ``depth`` / ``nodes`` (the search's own budget when it is not alpha-beta)."""
    if seconds <= 0 or spec.search.is_alphabeta:
        return search(board, weights, depth=depth, nodes=nodes, features=spec.features,
                      settings=spec.search, tree=tree)
    stop = np.zeros(1, dtype=np.int64)
    timer = threading.Timer(seconds, stop.fill, args=(1,))
    timer.daemon = True
    timer.start()
    try:
        return search(board, weights, depth=depth, nodes=nodes or MAX_NODES, stop=stop,
                      features=spec.features, settings=spec.search, tree=tree)
    finally:
        timer.cancel()


def _loses(colour: bool) -> str:
    return "0-1" if colour == chess.WHITE else "1-0"


def play_players_game(white: PlayerSpec, black: PlayerSpec, board: chess.Board,
                      limits: Limits = Limits(), *,
                      move_timeout: float | None = None) -> GameOutcome:
    """Play one game from ``board`` (its move stack is the history) between two players under
    ``limits`` (its depth, nodes, movetime, tc, time_margin, max_plies and adjudication, as
    below).

    Built-in alpha-beta sides search with ``depth`` and ``nodes`` (movetime and clocks do not
    apply to them); built-in UCT and probability sides search ``nodes`` (simulations / nodes),
    or for ``movetime`` seconds, or under the clock of ``tc`` as planned by
    :func:`~evotune.engine.uci.timeman.allot` (their time is taken off their clock; a UCT side keeps
    its tree between its moves when its settings reuse it); external sides get ``go depth
    <depth> [nodes <nodes>]``, or ``go movetime <ms> [nodes <nodes>]`` when ``movetime`` > 0 (it
    replaces the depth), or real clocks ``go wtime btime winc binc`` under a time control ``tc``
    (then neither depth nor movetime is sent; a side that overruns its clock by more than
    ``time_margin`` loses on time, 'time-forfeit'). Each external side is the live engine
    process of its colour in this worker (reused across games: its weight options are set and
    ``ucinewgame`` sent). ``move_timeout`` is a hard wall-clock limit per move (None: movetime +
    2 s, the clock + 2 s, or 60 s). ``max_plies`` counts the plies played here. The returned
    :class:`GameOutcome` has the moves played from ``board``; ``scores`` hold each move's score
    from the mover's view (0 when an external engine sent none), ``depths`` each search's depth
    (an external engine's last ``info depth`` with a score; 0 when it sent none),
    ``move_seconds`` each move's thinking time, and ``leaf_phi`` the PV-leaf phi of built-in
    moves (zeros for external moves).
    """
    start = time.perf_counter()
    depth, nodes, movetime, tc = limits.depth, limits.nodes, limits.movetime, limits.tc
    max_plies = limits.max_plies
    board = board.copy()
    players = {chess.WHITE: white, chess.BLACK: black}
    weights = {c: evaluation(p) for c, p in players.items() if p.is_builtin}  # checked when made
    trees = {c: SearchTree(p.search.tree) for c, p in players.items()
             if p.is_builtin and p.search.algorithm == "uct" and p.search.reuse}
    clocks = Clocks(tc, limits.time_margin) if tc is not None else None
    limit = MoveLimit(depth=0 if (movetime > 0 or tc is not None) else depth,
                      nodes=0 if tc is not None else nodes,
                      movetime=0.0 if tc is not None else movetime, timeout=move_timeout)
    adjudicator = Adjudicator(limits.adjudication)
    # phi rows are as wide as the wider builtin side's feature set (external sides and nets:
    # zeros)
    width = max([p.evaluation.phi_width for p in players.values() if p.is_builtin]
                or [SHANNON.phi_width])
    root = board.root() if board.move_stack else board
    fen = root.fen()
    head = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
    history = [m.uci() for m in board.move_stack]

    moves: list[str] = []
    scores: list[int] = []
    depths: list[int] = []
    thought: list[float] = []  # each move's thinking time
    score: int | None  # the mover's; an external engine may give none
    leaves: list[np.ndarray] = []
    pvs: list[tuple[str, ...]] = []
    total_nodes = 0
    verdict = None
    engines = {}
    notes: list[str] = []
    # one live process per engine, reused across games; two when both sides are the same engine
    shared = not white.is_builtin and not black.is_builtin and shares_process(white, black)
    slots = {c: int(c) if shared else 0 for c in players}
    for colour, spec in players.items():
        if spec.is_builtin:
            continue
        try:
            # it started before the match (check_engine_spec): failing to
            # start again after a crash is the engine's fault in this game, not the match's end
            engines[colour] = engine_for(spec, slot=slots[colour])
            engines[colour].new_game(dict(spec.weight_options))
        except Forfeit as fault:
            verdict = _forfeit(notes, spec, colour, slots[colour], fault, clocks)
            break
        except EngineError as exc:
            verdict = _forfeit(notes, spec, colour, slots[colour], Forfeit("start", str(exc)),
                               clocks)
            break
    if verdict is None:
        verdict = game_over(board)
    while verdict is None:
        if len(moves) >= max_plies:
            verdict = ("1/2-1/2", "ply-cap")
            break
        colour = board.turn
        spec = players[colour]
        if spec.is_builtin:
            seconds = movetime if tc is None else 0.0
            if clocks is not None and not spec.search.is_alphabeta:
                seconds = allot(clocks.left[colour], clocks.tc.inc)
            res = timed_search(spec, board, weights[colour], depth=depth,
                               nodes=0 if tc is not None else nodes, seconds=seconds,
                               tree=trees.get(colour))
            if clocks is not None and not spec.search.is_alphabeta \
                    and not clocks.spend(colour, res.seconds):
                log.info("%s (%s) lost on time", spec.name, "white" if colour else "black")
                verdict = clocks.flag_result(board, colour)
                break
            if not res.move:
                raise EngineError(f"built-in engine found no move in {board.fen()}, which is not "
                                  "over by the rules: this is a bug, please report it")
            move, score, pv = chess.Move.from_uci(res.move), int(res.score), tuple(res.pv)
            depth_reached, seconds = int(res.depth), float(res.seconds)
            total_nodes += int(res.nodes)
            leaf = _leaf_phi(board, pv, spec.features) if spec.evaluation.phi_width \
                else np.zeros(width, dtype=np.int64)
        else:
            if clocks is not None:
                limit = replace(limit, wtime=clocks.left[chess.WHITE],
                                btime=clocks.left[chess.BLACK], winc=clocks.tc.inc,
                                binc=clocks.tc.inc)
            try:
                position = head + (" moves " + " ".join(history) if history else "")
                reply = engines[colour].play(board, limit, position=position)
            except Forfeit as fault:
                verdict = _forfeit(notes, spec, colour, slots[colour], fault, clocks, board)
                break
            if clocks is not None and not clocks.spend(colour, reply.seconds):
                log.info("%s (%s) lost on time", spec.name, "white" if colour else "black")
                verdict = clocks.flag_result(board, colour)
                break
            move, score, pv = reply.move, reply.score, reply.pv
            depth_reached, seconds = (reply.depth if score is not None else 0), reply.seconds
            total_nodes += reply.nodes
            leaf = np.zeros(width, dtype=np.int64)
        board.push(move)
        history.append(move.uci())
        moves.append(history[-1])
        scores.append(0 if score is None else score)
        depths.append(depth_reached)
        thought.append(seconds)
        leaves.append(leaf)
        pvs.append(pv)
        verdict = game_over(board) or adjudicator.update(colour, score, len(moves))

    predicted = np.zeros(len(moves), dtype=bool)
    for t in range(len(moves) - 1):
        predicted[t] = len(pvs[t]) >= 2 and pvs[t][1] == moves[t + 1]
    result, termination = verdict
    return GameOutcome(
        moves=tuple(moves), result=result, termination=termination, nodes=total_nodes,
        scores=np.asarray(scores, dtype=np.int64),
        leaf_phi=_rows(leaves, width),
        predicted=predicted, seconds=time.perf_counter() - start, notes=tuple(notes),
        depths=np.asarray(depths, dtype=np.int64),
        move_seconds=np.asarray(thought, dtype=np.float64))


def _forfeit(notes: list[str], spec: PlayerSpec, colour: bool, slot: int, fault: Forfeit,
             clocks: Clocks | None, board: chess.Board | None = None) -> tuple[str, str]:
    """The verdict when ``colour``'s engine (in ``slot``) misbehaved; its process is killed and
    replaced. The forfeit goes into ``notes`` (the game's outcome) instead of being printed
    here: a game cut off by a shutdown (Ctrl-C kills the workers' engines before the workers)
    never reaches the parent, so its engines' deaths are not reported as forfeits."""
    notes.append(f"{spec.name} ({'white' if colour == chess.WHITE else 'black'}) forfeits the "
                 f"game: {fault}")
    log.debug("%s", notes[-1])
    discard(spec, slot=slot)
    if clocks is not None and fault.reason == "timeout" and board is not None:
        return clocks.flag_result(board, colour)  # under a clock a hang is a loss on time
    return _loses(colour), f"forfeit-{fault.reason}"


def _rows(leaves: list[np.ndarray], width: int) -> np.ndarray:
    """The per-ply phi rows as one int64 (plies, width) array, narrower rows zero-padded."""
    out = np.zeros((len(leaves), width), dtype=np.int64)
    for i, row in enumerate(leaves):
        out[i, :len(row)] = row
    return out
