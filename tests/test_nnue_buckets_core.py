"""Bucketed nets in the numba core (issue 39 item 1): king buckets with the Finny table's
refreshes and output buckets give exactly the numpy reference's evaluation along random games,
and the search with such a net gives the reference search's root scores."""
from __future__ import annotations

import chess
import numpy as np
import pytest
from test_nnue_core import GAMES, _same_root_scores, material_net

from evotune.engine import api
from evotune.engine.net.inputs import KING_BUCKET_PRESETS, king_view, output_bucket
from evotune.engine.net.network import Net, evaluate_reference
from evotune.limits import Limits


def make_net(hidden, seed, bmap, n, activation="screlu", *, w0=300, w1=64):
    rng = np.random.default_rng(seed)
    k = max(bmap) + 1
    return Net(hidden=hidden, activation=activation, king_buckets=bmap, output_buckets=n,
               l0w=rng.integers(-w0, w0 + 1, (768 * k, hidden)).astype(np.int16),
               l0b=rng.integers(-200, 201, hidden).astype(np.int16),
               l1w=rng.integers(-w1, w1 + 1, (n, 2 * hidden)).astype(np.int16),
               l1b=rng.integers(-3000, 3001, n).astype(np.int16))


NETS = {
    "k4-o8-h32-screlu": make_net(32, 1, KING_BUCKET_PRESETS[4], 8),
    "k16-o1-h40-crelu": make_net(40, 2, KING_BUCKET_PRESETS[16], 1, "crelu"),
    "k1-o5-h24-screlu": make_net(24, 3, KING_BUCKET_PRESETS[1], 5),
    "k8-o3-h64-screlu-float": make_net(64, 4, KING_BUCKET_PRESETS[8], 3, w1=300),
    "k2-o2-h16-crelu": make_net(16, 5, KING_BUCKET_PRESETS[2], 2, "crelu"),
}
"""Every bucket preset; output buckets 1, 2, 3, 5, 8; both activations; the 16/32-bit and the
float64 output paths (k8: 255 x 300 > 32767)."""


def test_the_games_change_king_buckets_and_sides_often():
    """The games make the refreshes happen: king moves to another bucket or side of the board,
    for both perspectives, and output buckets from full to few pieces."""
    bmap = KING_BUCKET_PRESETS[16]
    changes = {chess.WHITE: 0, chess.BLACK: 0}
    flips = {chess.WHITE: 0, chess.BLACK: 0}
    buckets = set()
    for moves in GAMES:
        board = chess.Board()
        for move in moves:
            persp = board.turn
            moved_king = board.piece_type_at(move.from_square) == chess.KING
            before = king_view(bmap, board.king(persp), persp)
            board.push(move)
            after = king_view(bmap, board.king(persp), persp)
            if moved_king and before != after:
                changes[persp] += 1
                flips[persp] += before[1] != after[1]
            buckets.add(output_bucket(chess.popcount(board.occupied), 8))
    assert min(changes.values()) >= 50 and min(flips.values()) >= 10, (changes, flips)
    assert len(buckets) >= 6


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
    assert len(set(got)) > len(got) // 20


def test_refresh_from_scratch_equals_the_reference():
    net = NETS["k4-o8-h32-screlu"]
    for moves in GAMES[:3]:
        board = chess.Board()
        for move in moves[:80]:
            board.push(move)
            assert api.evaluate(board, net, "nnue") == evaluate_reference(net, board, clamp=True)


def bucketed_material_net(seed, bmap, n):
    """material_net's weights copied into every king bucket (seeded noise per bucket) and every
    output bucket: searches with it cut off like real ones."""
    plain = material_net(seed)
    rng = np.random.default_rng(seed)
    k = max(bmap) + 1
    l0w = np.tile(plain.l0w, (k, 1)) + rng.integers(-2, 3, (768 * k, 32)).astype(np.int16)
    l1w = np.tile(plain.l1w, (n, 1)) + rng.integers(-2, 3, (n, 64)).astype(np.int16)
    return Net(hidden=32, activation="crelu", king_buckets=bmap, output_buckets=n, l0w=l0w,
               l0b=plain.l0b, l1w=l1w, l1b=rng.integers(-500, 501, n).astype(np.int16))


SEARCH_NET = bucketed_material_net(7, KING_BUCKET_PRESETS[4], 8)


@pytest.mark.parametrize("depth", [1, 2, pytest.param(3, marks=pytest.mark.slow)])  # 3: ~10 s
def test_root_scores_equal_the_reference_search(depth, search_boards):
    """All 50 search boards at depths 1-3 (about 13 s at depth 3)."""
    assert len(search_boards) >= 50
    assert _same_root_scores(search_boards, depth, SEARCH_NET) == []


def test_a_game_between_a_bucketed_and_a_plain_net():
    """Two nets of different shapes share the tail (accumulator stack, Finny table): each move's
    score is a fresh search of that position with the mover's net."""
    plain = material_net(8, "screlu")
    g = api.play_game(chess.Board(), SEARCH_NET, plain, features="nnue",
                      limits=Limits(depth=2, max_plies=40))
    assert len(g.moves) >= 20
    board = chess.Board()
    for i, (move, score) in enumerate(zip(g.moves[:14], g.scores[:14])):
        mover = SEARCH_NET if i % 2 == 0 else plain
        assert api.search(board, mover, depth=2, features="nnue").score == score
        board.push_uci(move)


def test_the_largest_net_along_a_game_equals_the_reference():
    """H 1024, 16 king buckets, 8 output buckets (the int16 tail's largest: 25 MB of weights)."""
    from evotune.engine.net.network import random_net

    net = random_net(1024, 2, king_buckets=KING_BUCKET_PRESETS[16], output_buckets=8)
    moves = GAMES[3][:60]
    got = api.evaluate_line(chess.Board(), moves, net, "nnue").tolist()
    board = chess.Board()
    want = [evaluate_reference(net, board, clamp=True)]
    for move in moves:
        board.push(move)
        want.append(evaluate_reference(net, board, clamp=True))
    assert got == want and len(set(got)) > 10
