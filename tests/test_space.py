from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError, WeightsError
from evotune.space import WeightSpace, check_weights, parse_weights_text


def test_sample_is_uniform_in_initial_range_with_pawn_fixed():
    space = WeightSpace()
    pop = space.sample(np.random.default_rng(3), 2000)
    assert pop.shape == (2000, 6)
    assert np.all(pop[:, 0] == 100)
    free = pop[:, 1:]
    assert free.min() >= 0 and free.max() <= 1000
    assert np.all(free == np.rint(free))
    # uniform [0, 1000]: mean 500, std 1000/sqrt(12) = 288.7
    assert abs(free.mean() - 500) < 10
    assert abs(free.std() - 288.7) < 8


@pytest.mark.parametrize("rule,expected", [
    ("clip", [100, 0, 1000, 3, 4, 5]),
    ("reflect", [100, 5, 800, 3, 4, 5]),
    ("midpoint", [100, 5, 1000 - 0, 3, 4, 5]),
])
def test_repair_rules(rule, expected):
    space = WeightSpace()
    x = np.array([7, -5, 1200, 3, 4, 5.4])
    base = np.array([100, 10, 1000, 3, 4, 5])
    got = space.repair(x, rule=rule, rng=np.random.default_rng(0), base=base)
    assert got.tolist() == expected


def test_repair_random_stays_in_bounds_and_keeps_good_values():
    space = WeightSpace()
    got = space.repair(np.array([100, -5, 1200, 3, 4, 5]), rule="random",
                       rng=np.random.default_rng(1))
    assert 0 <= got[1] <= 1000 and 0 <= got[2] <= 1000
    assert got[3:].tolist() == [3, 4, 5]


def test_bounds_that_exclude_the_fixed_weight_are_refused():
    with pytest.raises(ConfigError, match="fixed at 100"):
        WeightSpace(lower=(0, 0, 0, 0, 0, 0), upper=(50, 1000, 1000, 1000, 1000, 1000))


def test_unknown_bound_rule():
    with pytest.raises(ConfigError, match="unknown bound rule 'bounce'"):
        WeightSpace().repair(np.zeros(6), rule="bounce", rng=np.random.default_rng(0))


@pytest.mark.parametrize("bad,msg", [
    ([1, 2, 3], "got 3 values, need 6"),
    ([100, 300, 330, 500, 900, float("nan")], "finite"),
    ("abc", "not a list of numbers"),
])
def test_check_weights_errors(bad, msg):
    with pytest.raises(WeightsError, match=msg):
        check_weights(bad)


def test_parse_weights_text():
    assert parse_weights_text("100, 300,330,500,900,10").tolist() == [100, 300, 330, 500, 900, 10]
    with pytest.raises(WeightsError, match="six comma-separated"):
        parse_weights_text("100,x")


def test_dict_round_trip():
    space = WeightSpace()
    w = space.from_dict({"knight": 310, "bishop": 341, "rook": 454, "queen": 931, "mobility": 5})
    assert w.tolist() == [100, 310, 341, 454, 931, 5]
    assert space.from_dict(space.as_dict(w)).tolist() == w.tolist()
    with pytest.raises(WeightsError, match="unknown weight name"):
        space.from_dict({"king": 1})
