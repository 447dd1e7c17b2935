"""The strategy registry, parameter checking, recommendation rules and exact state restore."""
from __future__ import annotations

import json

import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.space import WeightSpace
from evotune.strategies import STRATEGIES, MatchOutcome, make_strategy

SPACE = WeightSpace()
SMALL = {"de": {"np": 6}, "jde": {"np": 6}, "ea": {"np": 4}, "td": {"np": 2, "games": 2},
         "spsa": {"batch": 3}, "cmaes": {"np": 4}, "quad": {"batch": 3}}


def test_registry_names():
    assert sorted(STRATEGIES) == ["cmaes", "de", "ea", "jde", "quad", "spsa", "td"]
    for name, cls in STRATEGIES.items():
        assert cls.name == name
        assert make_strategy(name, SPACE, params={}, seed=1).params == cls.default_params()


def test_unknown_strategy_lists_known():
    with pytest.raises(ConfigError, match=r"unknown strategy 'pso'.*de, jde, ea, td, spsa, "
                                          r"cmaes, quad or ng:NAME"):
        make_strategy("pso", SPACE, params={}, seed=1)


@pytest.mark.parametrize("name,params,pattern", [
    ("de", {"np": 3}, r"'np' = 3 is invalid; give an integer >= 4"),
    ("jde", {"np": 2}, r"'np' = 2 is invalid; give an integer >= 4"),
    ("de", {"games": 3}, r"'games' = 3 is invalid; give an even integer >= 2"),
    ("ea", {"games": 5}, r"'games' = 5 is invalid; give an even integer"),
    ("td", {"games": 1}, r"'games' = 1 is invalid"),
    ("de", {"CR": 1.5}, r"'CR' = 1.5 is invalid; give a number >= 0 and <= 1"),
    ("de", {"F": 0}, r"'F' = 0 is invalid; give a number > 0 and <= 2"),
    ("de", {"bound_rule": "wrap"}, r"'bound_rule' = 'wrap' is invalid; give one of 'clip'"),
    ("td", {"alpha": -1.0}, r"'alpha' = -1.0 is invalid; give a number > 0"),
    ("td", {"lambda": "high"}, r"'lambda' = 'high' is invalid"),
    ("ea", {"np": True}, r"'np' = True is invalid"),
    ("de", {"popsize": 10}, r"unknown parameter\(s\) 'popsize'; valid parameters: np \("),
    ("td", {"lam": 0.5}, r"unknown parameter\(s\) 'lam'.*lambda \(a number >= 0 and <= 1\)"),
])
def test_bad_params_name_the_parameter(name, params, pattern):
    with pytest.raises(ConfigError, match=pattern):
        make_strategy(name, SPACE, params=params, seed=1)


def test_integral_float_accepted_for_int_params():
    assert make_strategy("de", SPACE, params={"np": 8.0}, seed=1).params["np"] == 8


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_ask_is_idempotent_and_in_bounds(name):
    s = make_strategy(name, SPACE, params=SMALL[name], seed=3)
    first, second = s.ask(), s.ask()
    assert first == second
    for r in first:
        for w in (r.a, r.b):
            SPACE.validate(w)
            assert w[0] == 100.0 and all(float(x).is_integer() for x in w)
        assert r.games % 2 == 0


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_state_round_trip_is_bit_identical(name, oracle_run, synthetic_oracle, oracle_teller):
    params = SMALL[name]
    straight = make_strategy(name, SPACE, params=params, seed=11)
    stats3 = oracle_run(straight, 3, seed=5)

    # same outcomes: the oracle's generator is advanced the same way in both runs
    from evotune.seeding import STREAM_GAMES, generator
    rng = generator(5, STREAM_GAMES)
    first = make_strategy(name, SPACE, params=params, seed=11)
    teller = oracle_teller(first)  # the run loop's model, when the strategy asks for one
    stats = [teller.tell(first, first.ask(), synthetic_oracle().play(first.ask(), rng))]
    first.ask()  # a pending ask must not leak into the saved state
    saved = json.loads(json.dumps(first.state()))
    resumed = STRATEGIES[name].from_state(SPACE, params=params, seed=11, state=saved)
    assert resumed.ask() == first.ask()
    assert resumed.generation == 1
    for _ in range(2):
        stats.append(teller.tell(resumed, resumed.ask(),
                                 synthetic_oracle().play(resumed.ask(), rng)))
    assert stats == stats3
    np.testing.assert_array_equal(resumed.population, straight.population)
    assert json.dumps(resumed.state()) == json.dumps(straight.state())


def test_from_state_refuses_other_strategy_and_other_np():
    s = make_strategy("de", SPACE, params={"np": 6}, seed=1)
    with pytest.raises(ConfigError, match="state is for 'de', not 'jde'"):
        STRATEGIES["jde"].from_state(SPACE, params={"np": 6}, seed=1, state=s.state())
    with pytest.raises(ConfigError, match="6 individuals but np = 8"):
        STRATEGIES["de"].from_state(SPACE, params={"np": 8}, seed=1, state=s.state())
    broken = s.state()
    del broken["record"]
    with pytest.raises(ConfigError, match="incomplete or corrupt"):
        STRATEGIES["de"].from_state(SPACE, params={"np": 6}, seed=1, state=broken)


def test_same_seed_same_outcomes_same_population(oracle_run):
    a = make_strategy("jde", SPACE, params={"np": 8}, seed=4)
    b = make_strategy("jde", SPACE, params={"np": 8}, seed=4)
    oracle_run(a, 4, seed=9)
    oracle_run(b, 4, seed=9)
    np.testing.assert_array_equal(a.population, b.population)
    c = make_strategy("jde", SPACE, params={"np": 8}, seed=5)
    assert not np.array_equal(c.population, make_strategy("jde", SPACE, params={"np": 8},
                                                          seed=4).population)


def test_tell_checks_outcomes():
    s = make_strategy("de", SPACE, params={"np": 4}, seed=1)
    with pytest.raises(ValueError, match="got 3 outcomes for 4 requests"):
        s.tell([MatchOutcome(4, 4, 4)] * 3)
    with pytest.raises(ValueError, match="does not fit request"):
        s.tell([MatchOutcome(4, 4, 6)] * 4)


def test_recommended_rules():
    s = make_strategy("de", SPACE, params={"np": 4}, seed=1)
    s.population = np.array([[100, 100, 200, 300, 400, 10], [100, 300, 200, 300, 400, 20],
                             [100, 500, 200, 300, 400, 30], [100, 700, 200, 300, 401, 40]], float)
    s.record = np.array([[0, 4], [8, 4], [2, 4], [6, 4]])
    np.testing.assert_array_equal(s.recommended(), [100, 400, 200, 300, 400, 25])
    # better half: individuals 1 (8/8 points) and 3 (6/8)
    np.testing.assert_array_equal(s.recommended("better-half"), [100, 500, 200, 300, 400, 30])
    with pytest.raises(ConfigError, match="unknown recommendation rule 'best'"):
        s.recommended("best")
