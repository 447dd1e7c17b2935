"""The python-chess reference engine, and the numba core checked against it.

The reference (evotune/engine/reference.py) is the search of docs/internals.md in plain code;
here it is first checked against hand-computed numbers and an independent count, then the core
(evotune.engine) must give the same phi, the same evaluation and the same root scores.
"""
from __future__ import annotations

import chess
import numpy as np
import pytest

from evotune import engine  # the numba core; its API is in docs/internals.md
from evotune.engine import reference as ref
from evotune.errors import ConfigError, PositionError, WeightsError

W = (100, 300, 330, 500, 900, 10)
ODD_W = (100, 412.6, 187.2, 655.5, 731.4, 23.7)  # rounding matters: 655.5 -> 656 (np.rint)


# Positions: the random_boards, special_boards and search_boards fixtures (tests/conftest.py).


# ---- the reference against hand-computed numbers ------------------------------------------------

HAND_PHI = [
    # start position: equal material, 4 knight moves each (nothing else can move)
    (chess.STARTING_FEN, [0, 0, 0, 0, 0, 0]),
    # Ra1 (7 up the file + b1, c1, d1; e1 is its own king) + Ke1 (5) = 15 vs Ke8 (5)
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", [0, 0, 0, 1, 0, 10]),
    ("4k3/8/8/8/8/8/8/R3K3 b - - 0 1", [0, 0, 0, -1, 0, -10]),
    # Na1 (b3, c2) + Ke1 (5) = 7, pawn b2 not counted, vs Kh8 (g8, g7, h7) = 3
    ("7k/8/8/8/8/8/1P6/N3K3 w - - 0 1", [1, 1, 0, 0, 0, 4]),
    # Qd1: d2-d5 (enemy queen included) 4, c1-a1 3, c2-a4 3, e2-h5 4 = 14; Ke1 4 (d1 own) -> 18
    # Qd5: 4 + 3 + 3 + 4 + 3 + 3 + 3 + 4 = 27; Ke8 5 -> 32
    ("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1", [0, 0, 0, 0, 0, -14]),
]


@pytest.mark.parametrize("fen,expected", HAND_PHI)
def test_reference_phi_hand_computed(fen, expected):
    assert ref.features(chess.Board(fen)).tolist() == expected
    assert ref.features(chess.Board(fen)).dtype == np.int64
    assert ref.evaluate(chess.Board(fen), W) == int(np.dot(W, expected))


def independent_phi(board: chess.Board) -> list[int]:
    """phi counted the obvious way: piece map and SquareSets, no bit tricks."""
    phi = [0] * 6
    order = [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]
    for square, piece in board.piece_map().items():
        sign = 1 if piece.color == board.turn else -1
        if piece.piece_type in order:
            phi[order.index(piece.piece_type)] += sign
        if piece.piece_type != chess.PAWN:
            targets = [t for t in board.attacks(square)
                       if board.color_at(t) != piece.color]
            phi[5] += sign * len(targets)
    return phi


def test_reference_phi_matches_independent_count(random_boards, special_boards):
    for board in random_boards(7, 200) + special_boards():
        assert ref.features(board).tolist() == independent_phi(board), board.fen()


@pytest.mark.parametrize("features", ["shannon", "pst", "extended"])
def test_reference_phi_is_features_over_the_denominator_and_equals_the_core(features,
                                                                            random_boards):
    for board in random_boards(11, 30):
        want = ref.features(board, features) / (1 if features == "shannon" else 24)
        got = ref.phi(board, features)
        assert got.dtype == np.float64 and np.array_equal(got, want)
        assert np.array_equal(got, engine.phi(board, features)), board.fen()


def test_reference_weights_rounded_with_rint():
    board = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")  # phi = (0, 0, 0, 1, 0, 10)
    assert ref.evaluate(board, (100, 300, 330, 500.5, 900, 10.4)) == 500 + 100  # rint: 500.5 -> 500
    assert ref.evaluate(board, (100, 300, 330, 501.5, 900, 10.6)) == 502 + 110
    with pytest.raises(WeightsError):
        ref.evaluate(board, (100, 300, 330))


def test_reference_search_mates_and_draws():
    mate1 = ref.search("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", W, depth=1)
    assert (mate1.move, mate1.score) == ("a1a8", ref.MATE - 1)
    mated = ref.search("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", W, depth=2)
    assert (mated.move, mated.score, mated.nodes, mated.pv) == ("", -ref.MATE, 1, ())
    stalemate = ref.search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", W, depth=3)
    assert (stalemate.move, stalemate.score, stalemate.nodes) == ("", 0, 1)
    # K v K: the root (ply 0) is searched, each of the 3 king moves is a draw at ply 1.
    bare = ref.search("8/8/8/8/8/8/8/K6k w - - 0 1", W, depth=5)
    assert (bare.score, bare.nodes) == (0, 4)
    # WAC.001: 1.Qg6!! mates in two (the mated side is to move at ply 3).
    wac1 = ref.search("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", W, depth=3)
    assert (wac1.move, wac1.score) == ("g3g6", ref.MATE - 3)
    assert len(wac1.pv) == 3


def test_reference_search_draw_rules(special_boards):
    # Fifty-move rule: every white move except a capture or pawn move reaches clock 100 -> 0.
    # White is a rook up, so without the rule the score would be about +5 pawns.
    fifty = ref.search("8/8/3k4/8/3K4/8/5R2/8 w - - 99 120", W, depth=2)
    assert fifty.score == 0
    assert ref.search("8/8/3k4/8/3K4/8/5R2/8 w - - 0 120", W, depth=2).score > 400
    # The clock is tested before the mate: Ra8# at clock 99 -> 100 scores 0, at 98 it mates.
    assert ref.search("6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 100", W, depth=2).score == 0
    assert ref.search("6k1/5ppp/8/8/8/8/8/R5K1 w - - 98 100", W, depth=2).score == ref.MATE - 1
    # Capturing the checking knight leaves K+B v K+B on light squares: insufficient, so 0.
    bishops = ref.search("2b1k3/8/8/8/8/8/6n1/4KB2 w - - 0 1", W, depth=2)
    assert (bishops.move, bishops.score) == ("f1g2", 0)
    # Repetition via the game history (1.Nf3 Nf6 2.Ng1 Ng8 3.Nf3): at depth 2 Black's ...Nf6
    # repeats the position after 1...Nf6 and scores exactly 0, better than the -20 of the
    # best move when the same FEN is searched without its history.
    rep = special_boards()[-1]
    with_history = ref.search(rep, W, depth=2)
    assert (with_history.move, with_history.score, with_history.pv) == ("g8f6", 0, ("g8f6",))
    assert len(rep.move_stack) == 5  # the caller's board is not modified
    without = ref.search(rep.fen(), W, depth=2)
    assert (without.move, without.score) == ("e7e6", -20)


def test_reference_bad_input():
    with pytest.raises(PositionError):
        ref.search("not a fen", W, depth=1)
    with pytest.raises(PositionError):
        ref.search("8/8/8/8/8/8/8/8 w - - 0 1", W, depth=1)
    with pytest.raises(ConfigError):
        ref.search(chess.STARTING_FEN, W, depth=0)


# ---- the core against the reference -------------------------------------------------------------


@pytest.fixture(scope="module")
def phi_boards(random_boards, special_boards):
    """1,000 random-game ends (seed 2024) and the special boards."""
    return random_boards(2024, 1000) + special_boards()


def test_core_phi_and_eval_equal_reference(phi_boards):
    assert len(phi_boards) >= 1000
    for i, board in enumerate(phi_boards):
        weights = W if i % 2 else ODD_W
        expected = ref.features(board)
        got = engine.features(board)
        assert got.dtype == np.int64 and got.shape == (6,)
        assert got.tolist() == expected.tolist(), board.fen()
        assert engine.features(board.fen()).tolist() == expected.tolist(), board.fen()
        assert engine.evaluate(board, weights) == ref.evaluate(board, weights), board.fen()


def _same_root_scores(boards, depth, weights=W):
    mismatches = []
    for board in boards:
        want = ref.search(board, weights, depth=depth)
        got = engine.search(board, weights, depth=depth)
        if got.score != want.score:
            mismatches.append((board.fen(), [m.uci() for m in board.move_stack[-8:]],
                               got.score, want.score, got.move, want.move))
    return mismatches


@pytest.mark.parametrize("depth", [1, 2])
def test_core_root_scores_equal_reference_shallow(depth, search_boards):
    assert len(search_boards) >= 50
    assert _same_root_scores(search_boards, depth) == []


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_core_root_scores_equal_reference_depth3_odd_weights(search_boards):
    assert _same_root_scores(search_boards[:12], 3, ODD_W) == []


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_core_root_scores_equal_reference_depth3(search_boards):
    assert _same_root_scores(search_boards, 3) == []


def test_core_special_positions_equal_reference(special_boards):
    for board in special_boards():
        for depth in (1, 2, 3, 4):
            want = ref.search(board, W, depth=depth)
            got = engine.search(board, W, depth=depth)
            assert got.score == want.score, (board.fen(), depth, got, want)


@pytest.mark.slow
def test_core_root_scores_equal_reference_depth4(random_boards):
    assert _same_root_scores(random_boards(5, 20, max_plies=60), 4) == []


def test_core_repetition_when_en_passant_is_illegal():
    """A repetition counts the position, not the hash: after ...d5 the e5 pawn is pinned by Bh8,
    so exd6 e.p. is illegal and (FIDE, python-chess ``is_repetition``) the position is the same as
    the one after 3...Nb8 without an en passant square, although the Polyglot keys differ."""
    board = chess.Board("1n2k2b/3p4/8/4P3/5P2/Q7/8/K5N1 b - - 0 1")
    for uci in ("d7d5", "g1f3", "b8c6", "f3g1"):
        board.push_uci(uci)
    child = board.copy()
    child.push_uci("c6b8")
    assert child.is_repetition(2)
    want = ref.search(board, W, depth=1)
    assert (want.move, want.score) == ("c6b8", 0)  # a queen down, Black repeats
    got = engine.search(board, W, depth=1)
    assert (got.move, got.score) == (want.move, want.score), got
