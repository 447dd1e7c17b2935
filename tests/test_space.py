from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError, WeightsError
from evotune.space import WeightSpace, check_weights, finetune_scale
from evotune.weightsio import parse_weights_text


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


def test_sample_around_starts_at_the_reference_within_the_spread():
    space = WeightSpace(names=("pawn", "a", "b"), lower=(100, -300, 0), upper=(100, 300, 2000),
                        reference=(100, 0, 900), fixed=(True, False, False))
    pop = space.sample_around(np.random.default_rng(5), 500, 0.1)
    assert pop.shape == (500, 3)
    assert pop[0].tolist() == [100, 0, 900]          # row 0: the reference itself
    assert np.all(pop[:, 0] == 100)                   # fixed weight untouched
    a, b = pop[1:, 1], pop[1:, 2]
    assert a.min() >= -60 and a.max() <= 60           # +-0.1 x width 600
    assert b.min() >= 700 and b.max() <= 1100         # +-0.1 x width 2000
    assert a.min() < -50 and a.max() > 50 and abs(a.mean()) < 6  # fills the interval, centred
    assert np.all(pop == np.rint(pop))
    # clipped at the bounds: a reference on the bound stays inside
    edge = WeightSpace(names=("pawn", "a"), lower=(100, 0), upper=(100, 10),
                       reference=(100, 0), fixed=(True, False))
    assert edge.sample_around(np.random.default_rng(1), 50, 1.0)[:, 1].min() >= 0


def test_sample_around_with_finetune_draws_within_each_weights_own_scale():
    # scale = max(|v| / 10, width / 200), at most spread x width
    space = WeightSpace(names=("pawn", "knight", "term", "zero"), lower=(100, 0, -300, -300),
                        upper=(100, 2000, 300, 300), reference=(100, 320, 40, 0),
                        fixed=(True, False, False, False))
    np.testing.assert_allclose(finetune_scale(space.reference_array, space.lower_array,
                                              space.upper_array), [10, 32, 4, 3])
    pop = space.sample_around(np.random.default_rng(3), 400, 0.1, finetune=True)
    d = pop[1:] - space.reference_array
    assert np.all(d[:, 0] == 0)
    assert np.abs(d[:, 1]).max() <= 32 and np.abs(d[:, 1]).max() >= 30
    assert np.abs(d[:, 2]).max() <= 4 and np.abs(d[:, 2]).max() >= 3
    assert np.abs(d[:, 3]).max() == 3
    wide = space.sample_around(np.random.default_rng(3), 400, 0.1)
    assert np.abs(wide[1:, 1] - 320).max() > 150   # the width rule: +-200 for the knight
    # the spread still caps the scale
    tight = space.sample_around(np.random.default_rng(3), 400, 0.005, finetune=True)
    assert np.abs(tight[1:, 1] - 320).max() <= 10
