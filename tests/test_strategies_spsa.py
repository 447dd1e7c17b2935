"""SPSA: fishtest's schedule against hand-computed values, the update, stochastic rounding,
fishtest/OpenBench lines, convergence on the synthetic player, exact resume."""
from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.space import WeightSpace
from evotune.strategies import STRATEGIES, MatchOutcome, make_strategy
from evotune.strategies.spsa import (
    Schedule,
    SpsaLine,
    fishtest_line,
    openbench_line,
    parse_spsa_lines,
    stochastic_round,
)

SPACE = WeightSpace()


def test_schedule_matches_hand_computed_values():
    # N = 10 pairs, A = 0.1 N = 1, c_end = 2, r_end = 0.5:
    #   c = 2 * 10^0.101 = 2 * 1.2618275 = 2.5236551
    #   a = 0.5 * 2^2 * (1 + 10)^0.602 = 2 * 4.2356337 = 8.4712674
    #   k = 1: c_1 = 2.5236551, a_1 = 8.4712674 / 2^0.602 = 8.4712674 / 1.5178193 = 5.5812096,
    #          R_1 = 5.5812096 / 2.5236551^2 = 0.8763313
    #   k = 2: c_2 = 2.5236551 / 2^0.101 = 2.3530219, a_2 = 8.4712674 / 3^0.602 = 4.3724152
    #   k = N: c_N = c_end = 2 and R_N = r_end = 0.5 exactly
    s = Schedule.from_ends([2.0], [0.5], N=10)
    assert s.A == pytest.approx(1.0)
    assert s.c[0] == pytest.approx(2.5236551, abs=1e-7)
    assert s.a[0] == pytest.approx(8.4712674, abs=1e-7)
    assert s.c_k(1)[0] == pytest.approx(2.5236551, abs=1e-7)
    assert s.a_k(1)[0] == pytest.approx(5.5812096, abs=1e-7)
    assert s.R_k(1)[0] == pytest.approx(0.8763313, abs=1e-7)
    assert s.c_k(2)[0] == pytest.approx(2.3530219, abs=1e-7)
    assert s.a_k(2)[0] == pytest.approx(4.3724152, abs=1e-7)
    assert s.c_k(10)[0] == pytest.approx(2.0, abs=1e-12)
    assert s.R_k(10)[0] == pytest.approx(0.5, abs=1e-12)


TABLE = "knight, float, 300, 0, 1000, 2, 0.5\nrook, float, 500, 0, 1000, 2, 0.5\n"


def test_one_iteration_plays_plus_against_minus_and_moves_by_R_c_result_delta():
    s = make_strategy("spsa", SPACE, params={"table": TABLE, "budget": 20, "batch": 1,
                                             "games": 2}, seed=5)
    (req,) = s.ask()
    a, b = np.array(req.a), np.array(req.b)
    delta = np.sign(a - b)[[1, 3]]
    # theta +- c_1 Delta on the tuned weights (floats: no rounding); others at the reference
    np.testing.assert_allclose(a[[1, 3]], [300, 500] + 2.5236551 * delta, atol=1e-6)
    np.testing.assert_allclose(b[[1, 3]], [300, 500] - 2.5236551 * delta, atol=1e-6)
    assert (a[[0, 2, 4, 5]] == [100, 330, 900, 10]).all() and req.games == 2
    # the + side wins one game and draws one: W - L = 1 -> theta += R_1 c_1 * 1 * Delta
    stats = s.tell([MatchOutcome(points_a=3, points_b=1, games=2)])
    np.testing.assert_allclose(s.theta[[1, 3]], [300, 500] + 0.8763313 * 2.5236551 * delta,
                               atol=1e-6)
    assert stats["iteration"] == 1 and stats["w_minus_l"] == 1
    # the next generation uses k = 2
    (req2,) = s.ask()
    assert abs(req2.a[1] - req2.b[1]) == pytest.approx(2 * 2.3530219, abs=1e-6)


def test_batch_results_apply_in_order_at_the_same_k_and_pairs_count_iterations():
    s = make_strategy("spsa", SPACE, params={"table": TABLE, "budget": 20, "batch": 3,
                                             "games": 4}, seed=2)
    reqs = s.ask()
    assert len(reqs) == 3 and all(r.games == 4 for r in reqs)
    gaps = {round(abs(r.a[1] - r.b[1]), 9) for r in reqs}
    assert gaps == {round(2 * 2.5236551, 9)} or len(gaps) == 1
    outs = [MatchOutcome(points_a=6, points_b=2, games=4), MatchOutcome(points_a=4, points_b=4,
            games=4), MatchOutcome(points_a=1, points_b=7, games=4)]
    theta0 = s.theta.copy()
    s.tell(outs)
    step = 0.8763313 * 2.5236551
    expect = theta0[[1, 3]].copy()
    for r, result in zip(reqs, (2, 0, -3)):  # W - L = (points_a - points_b) / 2
        expect += step * result * np.sign(np.array(r.a) - np.array(r.b))[[1, 3]]
    np.testing.assert_allclose(s.theta[[1, 3]], expect, atol=1e-5)
    assert s.pairs == 6


def test_stochastic_rounding_keeps_the_mean_and_moves_integers_under_half_a_unit():
    rng = np.random.default_rng(1)
    x = np.full(20000, 10.3)
    r = stochastic_round(x, rng)
    assert set(np.unique(r)) == {10.0, 11.0}
    assert r.mean() == pytest.approx(10.3, abs=0.01)
    # c_k = 0.3 on an integer weight: plain rounding would play 10 against 10; SPSA's plus side
    # plays 10.3 on average and the minus side 9.7
    s = make_strategy("spsa", SPACE, params={"table": "knight, int, 10, 0, 1000, 0.3, 0.5\n",
                                             "budget": 2, "batch": 4000}, seed=3)
    reqs = s.ask()
    plus = np.array([r.a[1] for r in reqs])
    minus = np.array([r.b[1] for r in reqs])
    assert set(np.unique(plus)) <= {9.0, 10.0, 11.0} and (plus != minus).mean() > 0.4
    delta = s.pending_plan["deltas"][:, 0]
    # plus = floor(10 + 0.3 delta + u): mean 10 + 0.3 delta; minus: 10 - 0.3 delta
    assert np.mean((plus - 10) * delta) == pytest.approx(0.3, abs=0.03)
    assert np.mean((minus - 10) * delta) == pytest.approx(-0.3, abs=0.03)


def test_clipped_to_bounds():
    s = make_strategy("spsa", SPACE, params={"table": "knight, int, 0, 0, 1000, 50, 0.5\n",
                                             "budget": 10, "batch": 50}, seed=4)
    for r in s.ask():
        assert 0 <= r.a[1] <= 1000 and 0 <= r.b[1] <= 1000
    s.tell([MatchOutcome(points_a=0, points_b=4, games=2) if r.a[1] > r.b[1]
            else MatchOutcome(points_a=4, points_b=0, games=2) for r in s.ask()])
    assert s.theta[1] == 0.0  # pushed below 0 every time, clipped


def test_lines_fishtest_and_openbench_read_and_write_exactly():
    text = ("# comment\nKnightValue,310,0,1000,50,0.002\n"
            "BishopValue, float, 333.25, 0, 1000, 12.5, 0.0025\n\n")
    lines = parse_spsa_lines(text)
    assert lines == [SpsaLine("KnightValue", "int", 310, 0, 1000, 50, 0.002),
                     SpsaLine("BishopValue", "float", 333.25, 0, 1000, 12.5, 0.0025)]
    assert fishtest_line(lines[0]) == "KnightValue,310,0,1000,50,0.002"
    assert openbench_line(lines[1]) == "BishopValue, float, 333.25, 0, 1000, 12.5, 0.0025"
    odd = SpsaLine("x", "float", 1 / 3, 0.1, 7.000000000000001, 0.1 + 0.2, 1e-7)
    assert parse_spsa_lines(fishtest_line(odd), default_kind="float") == [odd]
    assert parse_spsa_lines(openbench_line(odd)) == [odd]


@pytest.mark.parametrize("text,pattern", [
    ("KnightValue,310,0,1000\n", r"line 1: 'KnightValue,310,0,1000': expected fishtest"),
    ("KnightValue, bool, 1, 0, 1, 1, 1\n", r"line 1: .*expected fishtest"),
    ("KnightValue,310,0,1000,x,0.002\n", r"expected fishtest"),
    ("KnightValue,1310,0,1000,50,0.002\n", r"start 1310 of 'KnightValue' is outside \[0, 1000\]"),
    ("KnightValue,310,0,1000,0,0.002\n", r"c_end and r_end of 'KnightValue' must be > 0"),
    ("K,1,0,9,1,1\nK,1,0,9,1,1\n", r"line 2: 'K' is given twice"),
])
def test_bad_lines_are_one_clear_error(text, pattern):
    with pytest.raises(ConfigError, match=pattern):
        parse_spsa_lines(text)


def test_table_names_must_be_free_weights_inside_the_bounds():
    with pytest.raises(ConfigError, match="'pawn' is fixed"):
        make_strategy("spsa", SPACE, params={"table": "pawn,100,0,200,5,0.1\n"}, seed=1)
    with pytest.raises(ConfigError, match="'king' is not a weight"):
        make_strategy("spsa", SPACE, params={"table": "king,1,0,9,1,1\n"}, seed=1)
    with pytest.raises(ConfigError, match="leave the space's"):
        make_strategy("spsa", SPACE, params={"table": "knight,300,0,2000,5,0.1\n"}, seed=1)


def test_weights_not_in_the_table_stay_at_their_reference(oracle_run):
    s = make_strategy("spsa", SPACE, params={"table": "queen,700,0,1000,40,0.02\n",
                                             "budget": 400, "batch": 4}, seed=1)
    oracle_run(s, 20)
    rec = s.recommended()
    assert rec[[0, 1, 2, 3, 5]].tolist() == [100, 300, 330, 500, 10]
    assert rec[4] != 700


def test_converges_on_the_synthetic_player(oracle_run, oracle_distance):
    # from a uniform draw in [0, 1000] (distance ~600 from w*), 3,000 games
    for seed in (1, 2):
        s = make_strategy("spsa", SPACE, params={"budget": 3000, "batch": 8, "games": 2},
                          seed=seed)
        start = oracle_distance(s.recommended())
        oracle_run(s, 3000 // 16, seed=seed)
        assert s.pairs == 1496  # 187 generations of 8 pairs
        assert start > 300 and oracle_distance(s.recommended()) < 60


def test_resume_equals_uninterrupted(oracle_run):
    params = {"budget": 400, "batch": 3}
    a = make_strategy("spsa", SPACE, params=params, seed=9)
    oracle_run(a, 5, seed=1)
    saved = a.state()
    b = STRATEGIES["spsa"].from_state(SPACE, params=params, seed=9, state=saved)
    assert b.ask() == a.ask()
    oracle_run(a, 4, seed=2)
    oracle_run(b, 4, seed=2)
    assert a.theta.tolist() == b.theta.tolist() and a.pairs == b.pairs


def test_finetune_takes_the_ends_from_each_weights_reference():
    # the paper's space: bounds [0, 1000] (pawn fixed), reference 300, 330, 500, 900, 10.
    # c_end = min(0.05 * 1000, max(|v| / 10, 1000 / 200)) = 30, 33, 50 (|v|/10 = 50), 50 (90
    # capped at the width rule), 5 (1 raised to the floor); r_end = fishtest's 0.002
    s = make_strategy("spsa", SPACE, params={"finetune": True, "budget": 1000,
                                             "init": "reference"}, seed=1)
    N, gamma = s.schedule.N, s.schedule.gamma
    np.testing.assert_allclose(s.schedule.c / N ** gamma, [30, 33, 50, 50, 5])
    np.testing.assert_allclose(s.schedule.c_k(N), [30, 33, 50, 50, 5])
    np.testing.assert_allclose(s.schedule.R_k(N), [0.002] * 5)
    assert s.params["r_end"] == 0.002 and s.theta.tolist() == [100, 300, 330, 500, 900, 10]
    # an r_end or c_end given still counts: c_end caps the rule, r_end replaces 0.002
    t = make_strategy("spsa", SPACE, params={"finetune": True, "budget": 1000, "c_end": 0.04,
                                             "r_end": 0.01}, seed=1)
    np.testing.assert_allclose(t.schedule.c_k(t.schedule.N), [30, 33, 40, 40, 5])
    np.testing.assert_allclose(t.schedule.R_k(t.schedule.N), [0.01] * 5)
    # without finetune (every run stored before it): the width rule, c_end 50, r_end 0.02
    u = make_strategy("spsa", SPACE, params={"budget": 1000}, seed=1)
    np.testing.assert_allclose(u.schedule.c_k(u.schedule.N), [50] * 5)
    np.testing.assert_allclose(u.schedule.R_k(u.schedule.N), [0.02] * 5)


def test_finetune_is_a_boolean_and_excludes_a_table():
    with pytest.raises(ConfigError, match="'finetune' = 'yes' is invalid; give true or false"):
        make_strategy("spsa", SPACE, params={"finetune": "yes"}, seed=1)
    with pytest.raises(ConfigError, match="finetune derives c_end and r_end"):
        make_strategy("spsa", SPACE, params={"finetune": True, "table": TABLE}, seed=1)


def test_default_ends_are_what_the_strategy_plays_with_a_given_r_end():
    # export --format spsa reads the ends through default_ends: with finetune and r_end 0.01
    # given, they are the strategy's (it once wrote fishtest's 0.002 instead)
    from evotune.strategies.spsa import default_ends
    params = {"finetune": True, "budget": 1000, "c_end": 0.04, "r_end": 0.01}
    s = make_strategy("spsa", SPACE, params=params, seed=1)
    c_end, r_end = default_ends(SPACE, SPACE.free, s.params)
    np.testing.assert_allclose(c_end, [30, 33, 40, 40, 5])
    np.testing.assert_allclose(r_end, [0.01] * 5)
    np.testing.assert_allclose(c_end, s.schedule.c_k(s.schedule.N))
    np.testing.assert_allclose(r_end, s.schedule.R_k(s.schedule.N))


def _pairs(state=None, seed=3):
    """(plus, minus, delta) of knight in one SPSA generation at c = 0.3 (4,000 perturbations),
    from a new strategy or from ``state``."""
    params = {"table": "knight, int, 10, 0, 1000, 0.3, 0.5\n", "budget": 2, "batch": 4000}
    s = make_strategy("spsa", SPACE, params=params, seed=seed) if state is None else \
        STRATEGIES["spsa"].from_state(SPACE, params=params, seed=seed, state=state)
    reqs = s.ask()
    return (np.array([r.a[1] for r in reqs]), np.array([r.b[1] for r in reqs]),
            s.pending_plan["deltas"][:, 0], s)


def test_both_sides_share_one_rounding_so_no_pair_is_reversed():
    """Rounded each with its own draw, theta + c Delta and theta - c Delta at c = 0.3 played the
    same integer in about half the pairs and the reverse order in some (OpenBench fixed this
    pitfall by one draw for both sides). With one draw the + side is never below the - side,
    differs by 1 with probability 2c, and the mean difference is exactly 2c."""
    plus, minus, delta, _ = _pairs()
    gap = (plus - minus) * delta
    assert set(np.unique(gap)) == {0.0, 1.0}  # never reversed
    assert gap.mean() == pytest.approx(0.6, abs=0.03)
    # from a theta between integers too (10.5: + 10.8, - 10.2), where own draws reverse pairs
    *_, s = _pairs()
    state = {**s.state(), "theta": [10.5 if i == 1 else v for i, v in enumerate(s.theta)]}
    plus, minus, delta, _ = _pairs(state)
    assert ((plus - minus) * delta >= 0).all()
    plus, minus, delta, _ = _pairs({k: v for k, v in state.items() if k != "rounding"})
    assert ((plus - minus) * delta < 0).mean() == pytest.approx(0.2 * 0.2, abs=0.015)


def test_a_run_made_before_keeps_its_independent_rounding():
    """A state without 'rounding' is a run made before the shared rounding: it resumes with the
    rounding it was made with (the same requests as the old code's, computed here), so its
    resume equals its uninterrupted run."""
    from evotune.seeding import restore_generator

    *_, s = _pairs()
    state = s.state()
    assert state["rounding"] == "shared"
    old = {k: v for k, v in state.items() if k != "rounding"}
    plus, minus, delta, restored = _pairs(old)
    assert restored.rounding == "independent"
    rng = restore_generator(old["rng"])  # the old code: deltas, then one draw per side
    d = rng.integers(0, 2, size=(4000, 1)) * 2 - 1
    ck = restored.schedule.c_k(1)
    want_plus = np.floor(10 + ck * d + rng.random((4000, 1)))[:, 0]
    want_minus = np.floor(10 - ck * d + rng.random((4000, 1)))[:, 0]
    assert np.array_equal(delta, d[:, 0])
    assert np.array_equal(plus, want_plus) and np.array_equal(minus, want_minus)
    # each side its own draw: both 10 with probability 0.7 x 0.7 (one draw: 0.4)
    assert (plus == minus).mean() == pytest.approx(0.49, abs=0.03)
