"""The network in the numba core (engine/core/nnue.py): the accumulators kept by make_move and the
integer output give exactly the numpy reference's evaluation (engine/net/network.py), and the search
with a net gives the reference search's root scores."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import chess
import numpy as np
import pytest

from evotune.engine import api
from evotune.engine import reference as ref
from evotune.engine.core.prior import win_probability
from evotune.engine.net.network import Net, evaluate_reference
from evotune.limits import Limits
from evotune.spec.features import NNUE_EVAL_LIMIT
from evotune.spec.searchsettings import SearchSettings


def make_net(hidden, seed, activation="screlu", *, qa=255, w0=300, w1=64):
    rng = np.random.default_rng(seed)
    return Net(hidden=hidden, activation=activation, qa=qa,
               l0w=rng.integers(-w0, w0 + 1, (768, hidden)).astype(np.int16),
               l0b=rng.integers(-200, 201, hidden).astype(np.int16),
               l1w=rng.integers(-w1, w1 + 1, 2 * hidden).astype(np.int16),
               l1b=int(rng.integers(-3000, 3001)))


NETS = {
    "h8-screlu": make_net(8, 1),
    "h40-crelu": make_net(40, 2, "crelu"),
    "h100-screlu-qa300": make_net(100, 3, qa=300),
    "h1024-screlu-qa16000": make_net(1024, 6, qa=16000, w0=900, w1=2000),  # int64 sums
    "h256-screlu": make_net(256, 4, w0=60, w1=40),
    "h33-crelu-huge": make_net(33, 5, "crelu", w1=32767),   # outputs past the clamp
    "h48-screlu-float": make_net(48, 7, w1=300),   # 255 * 300 > 32767: the float64 sums
    # l1w at +-128 and most accumulators at or past qa: clamp * w reaches 255 * 128 = 32,640,
    # next to int16's edge
    "h64-screlu-edge": Net(hidden=64, activation="screlu",
                           l0w=np.random.default_rng(8).integers(-12, 13, (768, 64)).astype(
                               np.int16),
                           l0b=np.resize(np.array([250, 420], np.int16), 64),
                           l1w=np.resize(np.array([128, -128, 128, -127], np.int16), 128),
                           l1b=0),
}
"""The output layer's three paths (core/nnue.output): 16/32-bit integers (dot16_exact: h8,
h40, h100, h256, h64-edge), float64 (h33, h48), int64 (h1024)."""


def _special(board: chess.Board, move: chess.Move) -> bool:
    return board.is_capture(move) or bool(move.promotion) or board.is_castling(move)


def line_games(n_games=20, plies=150, seed=11):
    """Seeded random games biased towards the moves whose updates differ: en passant,
    capturing promotions, castling, promotions when available, then captures, then pawn moves
    (double pushes give en passant chances)."""
    rnd = random.Random(seed)
    games = []
    for _ in range(n_games):
        board = chess.Board()
        moves = []
        while len(moves) < plies and not board.is_game_over():
            legal = list(board.legal_moves)
            tiers = ([m for m in legal if board.is_en_passant(m)],
                     [m for m in legal if m.promotion and board.is_capture(m)],
                     [m for m in legal if board.is_castling(m)],
                     [m for m in legal if m.promotion],
                     [m for m in legal if _special(board, m)],
                     [m for m in legal if board.piece_type_at(m.from_square) == chess.PAWN])
            pool = legal
            for tier, p in zip(tiers, (0.9, 0.9, 0.9, 0.8, 0.5, 0.4)):
                if tier and rnd.random() < p:
                    pool = tier
                    break
            move = rnd.choice(pool)
            board.push(move)
            moves.append(move)
        games.append(moves)
    return games


GAMES = line_games()


def test_each_output_path_is_taken():
    from evotune.engine.core.nnue import dot16_exact
    fast = {k for k, n in NETS.items() if dot16_exact(n.qa, n.l1w)}
    assert fast == {"h8-screlu", "h40-crelu", "h100-screlu-qa300", "h256-screlu",
                    "h64-screlu-edge"}
    # the bounds themselves: 255 * 128 fits int16, 255 * 129 does not; qa^2 sum|w| < 2^31
    assert dot16_exact(255, np.array([128, -128], np.int16))
    assert not dot16_exact(255, np.array([129], np.int16))
    assert dot16_exact(255, np.full(33025, 1, np.int16))        # 255^2 * 33025 < 2^31
    assert not dot16_exact(255, np.full(33026, 1, np.int16))    # 255^2 * 33026 >= 2^31


def test_the_games_cover_every_kind_of_move():
    kinds = dict(castle=0, ep=0, promo=0, capture_promo=0, capture=0, black=0, white=0)
    positions = 0
    for moves in GAMES:
        board = chess.Board()
        for move in moves:
            kinds["castle"] += board.is_castling(move)
            kinds["ep"] += board.is_en_passant(move)
            kinds["promo"] += bool(move.promotion)
            kinds["capture_promo"] += bool(move.promotion) and board.is_capture(move)
            kinds["capture"] += board.is_capture(move)
            kinds["white" if board.turn else "black"] += 1
            board.push(move)
        positions += len(moves) + 1
    assert positions >= 2000
    assert min(kinds.values()) >= 5, kinds


@pytest.mark.parametrize("name", list(NETS))
def test_incremental_evaluation_equals_the_reference(name):
    net = NETS[name]
    got, want = [], []
    for moves in GAMES:
        got.extend(api.evaluate_line(chess.Board(), moves, net, "nnue").tolist())
        board = chess.Board()
        want.append(evaluate_reference(net, board, clamp=True))
        for move in moves:
            board.push(move)
            want.append(evaluate_reference(net, board, clamp=True))
    assert len(got) >= 2000
    assert got == want
    assert len(set(got)) > len(got) // 20      # the evaluations vary
    if name.endswith("huge"):
        assert NNUE_EVAL_LIMIT in got and -NNUE_EVAL_LIMIT in got
    else:
        assert max(map(abs, got)) < NNUE_EVAL_LIMIT


def test_refresh_equals_the_reference_and_mirrors_agree():
    net = NETS["h40-crelu"]
    for moves in GAMES[:3]:
        board = chess.Board()
        for move in moves[:80]:
            board.push(move)
            value = api.evaluate(board, net, "nnue")
            assert value == evaluate_reference(net, board, clamp=True)
            assert value == api.evaluate(board.mirror(), net, "nnue")


def test_a_net_needs_the_nnue_set_and_a_net_for_it():
    from evotune.errors import WeightsError

    with pytest.raises(WeightsError, match="takes a network"):
        api.evaluate(chess.Board(), [100, 300, 300, 500, 900, 10], "nnue")
    with pytest.raises(WeightsError):
        api.evaluate(chess.Board(), NETS["h8-screlu"], "shannon")


def _same_root_scores(boards, depth, net):
    bad = []
    for board in boards:
        want = ref.search(board, net, depth=depth, features="nnue")
        got = api.search(board, net, depth=depth, features="nnue")
        if got.score != want.score:
            bad.append((board.fen(), depth, got.score, want.score))
    return bad


def material_net(seed, activation="crelu"):
    """A net that counts material (units 0-15: the perspective's own pieces, 16-31: the other
    side's, 6 per pawn), with seeded noise on every weight: searches with it cut off like real
    ones (a random net's trees explode in quiescence and make the reference crawl)."""
    rng = np.random.default_rng(seed)
    value = np.repeat([1, 3, 3, 5, 9, 0], 64)
    l0w = rng.integers(-4, 5, (768, 32))
    l0w[:384, :16] += 6 * value[:, None]
    l0w[384:, 16:] += 6 * value[:, None]
    l1w = rng.integers(-2, 3, 64) + np.repeat([10, -10, -10, 10], 16)
    return Net(hidden=32, activation=activation, l0w=l0w.astype(np.int16),
               l0b=rng.integers(-10, 11, 32).astype(np.int16), l1w=l1w.astype(np.int16),
               l1b=int(rng.integers(-500, 501)))


SEARCH_NET = material_net(7)


def test_the_material_net_likes_material():
    start = chess.Board()
    up_a_rook = chess.Board("1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1")
    for turn in (chess.WHITE, chess.BLACK):
        start.turn = up_a_rook.turn = turn
        gain = api.evaluate(up_a_rook, SEARCH_NET, "nnue") - api.evaluate(start, SEARCH_NET,
                                                                           "nnue")
        assert (gain if turn == chess.WHITE else -gain) > 150


@pytest.mark.parametrize("depth,count,net", [(1, 50, SEARCH_NET), (1, 20, NETS["h40-crelu"]),
                                             (2, 50, SEARCH_NET), (3, 8, SEARCH_NET)])
def test_root_scores_equal_the_reference_search(depth, count, net, search_boards):
    assert len(search_boards) >= 50
    assert _same_root_scores(search_boards[:count], depth, net) == []


@pytest.mark.slow
def test_root_scores_equal_the_reference_search_depth3_all_50(search_boards):
    """The issue's requirement in full at depth 3 (depths 1 and 2: the fast test)."""
    assert _same_root_scores(search_boards, 3, SEARCH_NET) == []


def test_quiescence_and_games_with_a_net():
    net, other = SEARCH_NET, material_net(8, "screlu")
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/3PP3/5N2/PPP2PPP/RNBQKB1R b KQkq d3 0 3"
    q = api.qsearch(fen, SEARCH_NET, "nnue")
    want, pv = ref.Search(chess.Board(fen), SEARCH_NET, "nnue").quiesce(-ref.INF, ref.INF, 0)
    assert (q.score, q.pv) == (want, tuple(m.uci() for m in pv))
    assert q.leaf_phi.size == 0 and q.static == evaluate_reference(SEARCH_NET, chess.Board(fen))
    g = api.play_game(chess.Board(), net, other, limits=Limits(depth=2, max_plies=60),
                      features="nnue")
    assert len(g.moves) > 10 and g.leaf_phi.shape == (len(g.moves), 0)
    # each move's score is a fresh search of that position (root refresh, shared tail)
    board = chess.Board()
    for i, (move, score) in enumerate(zip(g.moves[:12], g.scores[:12])):
        mover = net if i % 2 == 0 else other
        assert api.search(board, mover, depth=2, features="nnue").score == score
        board.push_uci(move)
    # a net against a linear set in one core game
    mixed = api.play_game(chess.Board(), net, [100, 300, 330, 500, 900, 10],
                          limits=Limits(depth=2, max_plies=20), features=("nnue", "shannon"))
    assert mixed.leaf_phi.shape == (20, 6) and not mixed.leaf_phi[::2].any()
    assert mixed.leaf_phi[1::2].any()


def test_probability_limited_search_with_a_net_is_the_reference_search_at_its_depth():
    """One iteration of the probability-limited search splits the start position's probability
    evenly (20 moves, 20 replies): thresholds 1/2, 1/40 and 1/401 are depths 1, 2 and 3, whose
    root scores with the net are the reference search's. (A net's node limit cuts even the
    first iteration: the budget is the smallest that completes it, found by bisection.)"""
    board = chess.Board()

    def first_iteration(settings):
        lo, hi = 0, 1   # depth 0 at lo nodes (none completed); at hi, >= 1
        while api.search(board, SEARCH_NET, nodes=hi, features="nnue",
                         settings=settings).depth < 1:
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if api.search(board, SEARCH_NET, nodes=mid, features="nnue",
                          settings=settings).depth < 1:
                lo = mid
            else:
                hi = mid
        return api.search(board, SEARCH_NET, nodes=hi, features="nnue", settings=settings)

    for factor, depth in ((0.5, 1), (1 / 40, 2), (1 / 401, 3)):
        got = first_iteration(SearchSettings(algorithm="probability", factor=factor))
        want = ref.search(board, SEARCH_NET, depth=depth, features="nnue")
        assert (got.depth, got.score) == (1, want.score), factor


@pytest.mark.parametrize("policy,count", [("eval", 50), ("qsearch", 25)])
def test_uct_with_a_net_values_each_root_child_by_the_reference(policy, count, search_boards):
    """UCT visiting every root move once (unvisited = inf, as many simulations as moves, no
    solver): each child's value is the reference's for the position after the move (its net
    evaluation, or its quiescence search), through the logistic curve, from the root's view:
    the accumulators UCT's make and unmake keep are exact. A child that repeats a position of
    the game is a draw in the search (one repetition), not in the reference: skipped."""
    settings = SearchSettings(algorithm="uct", policy=policy, unvisited=float("inf"),
                              reuse=False, solver=False)
    checked = []
    for board in search_boards[:count]:
        legal = list(board.legal_moves)
        r = api.search(board, SEARCH_NET, nodes=len(legal), features="nnue", settings=settings)
        got = {move: (visits, value) for move, visits, value in r.children}
        for move in legal:
            child = board.copy()
            child.push(move)
            if child.is_game_over(claim_draw=True) or child.is_repetition(2):
                continue
            if policy == "eval":
                score = evaluate_reference(SEARCH_NET, child, clamp=True)
            else:
                score = ref.Search(child, SEARCH_NET, "nnue").quiesce(-ref.INF, ref.INF, 0)[0]
            want = 1.0 - win_probability(score, settings.k)
            checked.append(got[move.uci()] == (1, want) or (board.fen(), move.uci()))
    assert len(checked) > 25 * count
    assert [c for c in checked if c is not True] == []


_FRESH = """
import chess, numpy as np
from evotune.engine import api
from evotune.engine.net.network import Net
rng = np.random.default_rng(3)
net = Net(hidden=48, activation="screlu", l0w=rng.integers(-40, 41, (768, 48)).astype(np.int16),
          l0b=rng.integers(-100, 101, 48).astype(np.int16),
          l1w=rng.integers(-30, 31, 96).astype(np.int16), l1b=77)
r = api.search("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", net,
               depth=3, features="nnue")
line = api.evaluate_line(chess.Board(), ["e2e4", "g8f6", "e4e5", "d7d5", "e5d6", "e7e6", "d6c7",
                                         "f8e7", "c7b8q", "e8g8", "b8a8"], net, "nnue")
print(r.move, r.score, r.nodes, " ".join(map(str, line)))
"""


@pytest.mark.slow
def test_compile_then_cache_load_give_the_same_results(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _FRESH], env=env, capture_output=True,
                           text=True, timeout=1200)
        assert p.returncode == 0, p.stderr[-2000:]
        outs.append(p.stdout)
    assert outs[0] == outs[1] and len(outs[0].split()) == 3 + 12
