"""TDLeaf(lambda): a hand-computed update, KnightCap's prediction rule, learning toward w*."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evotune.space import WeightSpace
from evotune.strategies import GameLeaves, MatchOutcome, make_strategy
from evotune.strategies.td import tdleaf_gradient

SPACE = WeightSpace()
W = np.array([100.0, 300.0, 330.0, 500.0, 900.0, 10.0])


def three_ply_game(predicted_first: bool) -> GameLeaves:
    # ply 0 white: mobility +10 (eval 100); ply 1 black: a knight down (-300);
    # ply 2 white: mobility +20 (eval 200); white wins.
    return GameLeaves(a_white=True, result=1.0, movers=(1, 0, 1), scores=(100, -300, 200),
                      leaf_phi=((0, 0, 0, 0, 0, 10), (0, -1, 0, 0, 0, 0), (0, 0, 0, 0, 0, 20)),
                      predicted=(predicted_first, False, False))


def test_hand_computed_update():
    # beta = 0.005, lambda = 0.7.
    # White: J0 = tanh(0.5) = 0.4621171573, J1 = tanh(1.0) = 0.7615941560, terminal +1.
    #   d0 = 0.7615941560 - 0.4621171573 = 0.2994769987 (> 0, black's reply predicted: kept)
    #   d1 = 1 - 0.7615941560 = 0.2384058440 (the game ended: no reply to mispredict, kept)
    #   e1 = d1 = 0.2384058440; e0 = d0 + 0.7 e1 = 0.4663610895
    #   grad J0 = 0.005 (1 - J0^2) phi0 -> mobility 0.05 * 0.7864477 = 0.0393224
    #   grad J1 = 0.005 (1 - J1^2) phi2 -> mobility 0.10 * 0.4199743 = 0.0419974
    #   mobility: 0.0393224 * 0.4663611 + 0.0419974 * 0.2384058 = 0.0283509
    # Black: J0 = tanh(-1.5) = -0.9051482536, terminal (black lost) -1.
    #   d0 = -1 + 0.9051482536 = -0.0948517464 (negative: always kept)
    #   grad J0 = 0.005 (1 - 0.8192933) * (-1 knight) = -0.000903534
    #   knight: -0.000903534 * -0.0948517 = 0.0000857017
    dw, d = tdleaf_gradient(W, three_ply_game(True), beta=0.005, lam=0.7)
    np.testing.assert_allclose(dw, [0, 8.570170e-05, 0, 0, 0, 0.02835086], rtol=1e-6)
    np.testing.assert_allclose(d, [0.29947700, 0.23840584, -0.09485175], rtol=1e-6)


def test_knightcap_rule_drops_unpredicted_positive_difference():
    # black's reply was not predicted: white's d0 = 0, so e0 = 0.7 d1 = 0.1668841
    # mobility: 0.0393224 * 0.1668841 + 0.0419974 * 0.2384058 = 0.0165747
    dw, d = tdleaf_gradient(W, three_ply_game(False), beta=0.005, lam=0.7)
    np.testing.assert_allclose(dw, [0, 8.570170e-05, 0, 0, 0, 0.01657471], rtol=1e-6)
    assert d[0] == 0.0


def test_mate_scores_give_no_gradient():
    game = GameLeaves(a_white=True, result=1.0, movers=(1,), scores=(999_999,),
                      leaf_phi=((0, 0, 0, 0, 0, 10),), predicted=(False,))
    dw, d = tdleaf_gradient(W, game, beta=0.005, lam=0.7)
    assert not dw.any() and d == [0.0]


def test_tell_applies_alpha_on_free_weights_only():
    s = make_strategy("td", SPACE, params={"init": "reference", "games": 2, "alpha": 1000.0,
                                           "decay": 4.0}, seed=1)
    req, = s.ask()
    assert req.a == req.b == tuple(W) and req.record_leaves and req.games == 2
    game = three_ply_game(True)
    game2 = GameLeaves(**{**game.__dict__, "a_white": False})
    stats = s.tell([MatchOutcome(2, 2, 2, leaves=(game, game2))])
    # two identical games: w += 1000 * 2 * dw; mobility 10 + 56.7017, knight 300 + 0.1714
    np.testing.assert_allclose(s.theta[0], [100, 300.1714034, 330, 500, 900, 66.7017296],
                               rtol=1e-7)
    np.testing.assert_array_equal(s.population[0], [100, 300, 330, 500, 900, 67])
    assert stats["learning_rate"] == 1000.0 and stats["games_learned"] == 2
    assert s.learning_rate() == 1000.0 / (1 + 1 / 4.0)


def test_tell_needs_leaves():
    s = make_strategy("td", SPACE, params={}, seed=1)
    s.ask()
    with pytest.raises(ValueError, match="record_leaves"):
        s.tell([MatchOutcome(4, 4, 4)])


def test_learns_toward_the_true_weights(synthetic_oracle, synthetic_optimum, oracle_run,
                                        oracle_distance):
    oracle = synthetic_oracle(plies=30)
    s = make_strategy("td", SPACE, params={"alpha": 600.0, "decay": 1000.0, "games": 8},
                      seed=1)
    free = SPACE.free
    start = s.recommended()
    d0 = oracle_distance(start)
    oracle_run(s, 160, seed=1, oracle=oracle)
    w = s.recommended()

    def cos(v):
        a, b = np.asarray(v)[free], np.asarray(synthetic_optimum)[free]
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    # measured (seed 1, oracle seed 1, 1,280 games): distance 741 -> 237, cosine 0.77 -> 0.988
    assert d0 > 700 and oracle_distance(w) < d0 / 2.5, (d0, oracle_distance(w))
    assert cos(w) > 0.97 > cos(start) + 0.1
    assert math.isclose(s.learning_rate(), 600.0 / (1 + 160 / 1000.0))
