"""Probability-limited alpha-beta (core/probability.py): the split of a node's probability, the
iterations by threshold, mates, a won KQK, budgets, determinism, the spec and a match."""
from __future__ import annotations

import os
import subprocess
import sys

import chess
import numpy as np
import pytest
from test_mcts import KQK, MATE_IN_TWO_IDS, MATES_IN_ONE, W, _mate_in_two
from test_wac import mating_moves

from evotune.engine import play_game, search
from evotune.errors import WeightsError
from evotune.limits import Limits
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings

MIDDLEGAME = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def prob(**kw) -> SearchSettings:
    return SearchSettings(algorithm="probability", **kw)


def test_the_first_iteration_is_alpha_beta_at_the_depth_the_threshold_allows():
    """Start position: 20 moves, 20 replies each. Threshold 1/2: the children (1/20) are leaves,
    which is depth 1; threshold 1/40: the children expand, the grandchildren (1/400) are
    leaves, which is depth 2. One iteration only (a node limit of 1 stops the second at once):
    the exact alpha-beta scores."""
    board = chess.Board()
    for factor, depth in ((0.5, 1), (1 / 40, 2)):
        r = search(board, W, nodes=1, settings=prob(factor=factor))
        ab = search(board, W, depth=depth)
        assert (r.depth, r.score) == (1, ab.score), factor
    # Black has 20 replies to every first move: the grandchildren's probability is 1/400, a
    # leaf under a threshold of 1/399 (depth 2), searched on under 1/401 (depth 3)
    assert search(board, W, nodes=1, settings=prob(factor=1 / 399)).score == \
        search(board, W, depth=2).score
    assert search(board, W, nodes=1, settings=prob(factor=1 / 401)).score == \
        search(board, W, depth=3).score


def test_a_flat_prior_splits_like_the_uniform_rule_and_a_sharp_one_does_not():
    board = chess.Board()
    depth2 = search(board, W, depth=2).score
    uniform = search(board, W, nodes=1, settings=prob(factor=1 / 40))
    flat = search(board, W, nodes=1, settings=prob(factor=1 / 40, prior=True, temperature=1e12))
    assert uniform.score == flat.score == depth2
    # the prior's ordering among equals differs, so the node counts may too; the tree does not
    sharp = search(MIDDLEGAME, W, nodes=1, settings=prob(factor=1 / 40, prior=True,
                                                          temperature=20))
    wide = search(MIDDLEGAME, W, nodes=1, settings=prob(factor=1 / 40))
    # a sharp prior puts (nearly) all of the probability on the capture Nxe5: the quiet moves
    # become leaves at once, the capture is searched deeper than the uniform split's depth 2
    assert sharp.nodes != wide.nodes


def test_iterations_lower_the_threshold_within_the_node_budget():
    depths = []
    for nodes in (2_000, 20_000, 200_000):
        r = search(MIDDLEGAME, W, nodes=nodes, settings=prob())
        assert r.nodes == nodes  # stopped by the budget inside an iteration, exactly at it
        depths.append(r.depth)
    assert depths == sorted(depths) and depths[-1] >= depths[0] + 2
    # no budget given: the default (20000 nodes)
    assert search(MIDDLEGAME, W, settings=prob()).nodes == 20000


def test_the_stop_flag_ends_the_search_after_the_first_iteration():
    stop = np.ones(1, dtype=np.int64)
    r = search(MIDDLEGAME, W, nodes=10**9, stop=stop, settings=prob())
    # the flag is read every 1024 nodes once the first iteration is done
    assert r.nodes <= 1024 and r.depth >= 1
    assert r.move in {m.uci() for m in chess.Board(MIDDLEGAME).legal_moves}


@pytest.mark.parametrize("prior", [False, True], ids=["uniform", "prior"])
def test_mates_in_one_and_two_are_found(prior):
    for fen in MATES_IN_ONE:
        r = search(fen, W, nodes=20000, settings=prob(prior=prior))
        assert r.move in mating_moves(chess.Board(fen)) and r.score == 1_000_000 - 1
    positions = _mate_in_two()
    for wac_id in MATE_IN_TWO_IDS:
        board, good = positions[wac_id]
        r = search(board, W, nodes=200000, settings=prob(prior=prior))
        assert r.move in good and r.score == 1_000_000 - 3, (wac_id, r)


def test_a_won_kqk_is_converted():
    s = prob()
    for fen in KQK:
        g = play_game(fen, W, W, limits=Limits(nodes=2000, max_plies=150), settings=(s, s))
        assert (g.result, g.termination) == ("1-0", "checkmate"), fen


def test_games_are_deterministic_and_mix_with_alpha_beta():
    s = prob(prior=True)
    g1 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, depth=2, max_plies=60),
                   settings=(s, SearchSettings()))
    g2 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, depth=2, max_plies=60),
                   settings=(s, SearchSettings()))
    assert g1.moves == g2.moves and g1.nodes == g2.nodes
    # each move's score is that of a search of the position (no state between moves)
    board = chess.Board()
    for i, move in enumerate(g1.moves[:6]):
        if i % 2 == 0:
            assert search(board, W, nodes=3000, settings=s).score == g1.scores[i]
        board.push_uci(move)


def test_the_shipped_spec_and_its_factor_weight():
    spec = load_engine_spec("shannon-probability")
    assert spec.names[-1] == "probability_factor" and spec.search.factor == 0.125
    player = player_from_engine_spec(spec, [100, 300, 330, 500, 900, 10, 250])
    assert player.search.factor == 0.25 and player.weights == W
    with pytest.raises(WeightsError, match="probability_factor"):
        player_from_engine_spec(spec, [100, 300, 330, 500, 900, 10, 950])  # above its bound


def test_a_match_plays_the_probability_spec_against_alpha_beta(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "match", "shannon-probability",
                           "shannon", "--games", "2", "--nodes", "2000", "--depth", "64",
                           "--max-plies", "40", "--pgn", str(tmp_path / "g.pgn")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Results of shannon-probability vs shannon (64 plies, 2000 nodes, " in proc.stdout
    assert "Games: 2, " in proc.stdout
    pgn = (tmp_path / "g.pgn").read_text()
    assert pgn.count('[White "shannon-probability"]') == 1
