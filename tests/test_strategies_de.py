"""DE/rand/1/bin and jDE: donors, crossover, selection, self-adaptation, convergence."""
from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.seeding import generator
from evotune.space import WeightSpace
from evotune.strategies import MatchOutcome, make_strategy
from evotune.strategies.de import binomial_masks, draw_donors

SPACE = WeightSpace()


def test_donors_distinct_and_not_the_target():
    rng = generator(1, 99)
    seen = np.zeros((6, 6), dtype=int)
    for _ in range(400):
        d = draw_donors(rng, 6)
        for i, row in enumerate(d):
            assert len(set(row.tolist())) == 3 and i not in row
            seen[i, row] += 1
    # every other individual is used as a donor, never the target itself
    assert (np.diag(seen) == 0).all() and (seen + np.eye(6, dtype=int) > 0).all()


def test_donors_in_every_trial_of_a_run():
    s = make_strategy("de", SPACE, params={"np": 4}, seed=2)
    for _ in range(50):
        s.ask()
        donors = s.pending_plan["donors"]
        for i, row in enumerate(donors):
            assert sorted(set(row.tolist()) | {i}) == [0, 1, 2, 3]
        s.tell([MatchOutcome(2, 6, 4)] * 4)


def test_forced_index_with_cr_zero():
    masks = binomial_masks(generator(1, 99), 50, 5, np.zeros(50))
    assert (masks.sum(axis=1) == 1).all()
    # each free weight gets forced sometimes
    assert (masks.sum(axis=0) > 0).all()
    masks = binomial_masks(generator(1, 99), 50, 5, np.ones(50))
    assert masks.all()


def test_trial_takes_one_weight_when_cr_zero_and_keeps_fixed_weights():
    s = make_strategy("de", SPACE, params={"np": 10, "CR": 0.0}, seed=3)
    reqs = s.ask()
    changed = 0
    for i, r in enumerate(reqs):
        trial, target = np.array(r.a), np.array(r.b)
        np.testing.assert_array_equal(target, s.population[i])
        assert trial[0] == target[0] == 100.0          # the fixed pawn
        changed += int(np.sum(trial != target))
        assert np.sum(trial != target) <= 1
        assert r.stop == "decisive" and r.games == 4 and r.tag == (i,)
    assert changed >= 8


def test_trial_is_the_mutant_in_free_weights_when_cr_one():
    s = make_strategy("de", SPACE, params={"np": 8, "CR": 1.0, "F": 0.5, "bound_rule": "clip"},
                      seed=4)
    s.ask()
    plan = s.pending_plan
    pop, d = s.population, plan["donors"]
    mutant = pop[d[:, 0]] + 0.5 * (pop[d[:, 1]] - pop[d[:, 2]])
    expect = SPACE.round(np.clip(mutant, SPACE.lower_array, SPACE.upper_array))
    np.testing.assert_array_equal(plan["trials"], expect)


def test_selection_strictly_greater():
    s = make_strategy("de", SPACE, params={"np": 4}, seed=5)
    reqs = s.ask()
    before = s.population.copy()
    stats = s.tell([MatchOutcome(4, 4, 4), MatchOutcome(5, 3, 4), MatchOutcome(3, 5, 4),
                    MatchOutcome(4, 0, 2)])
    np.testing.assert_array_equal(s.population[0], before[0])          # tie keeps the target
    np.testing.assert_array_equal(s.population[1], reqs[1].a)          # more points replaces
    np.testing.assert_array_equal(s.population[2], before[2])          # fewer keeps
    np.testing.assert_array_equal(s.population[3], reqs[3].a)          # early-stopped win
    assert stats["replacements"] == 2 and stats["replacement_rate"] == 0.5
    np.testing.assert_array_equal(s.record, [[4, 4], [5, 4], [5, 4], [4, 2]])


def test_np_below_four_raises():
    with pytest.raises(ConfigError, match="'np' = 3"):
        make_strategy("de", SPACE, params={"np": 3}, seed=1)


@pytest.mark.parametrize("name", ["de", "jde"])
def test_converges_toward_the_optimum(name, oracle_run, oracle_distance):
    s = make_strategy(name, SPACE, params={}, seed=1)
    d0 = oracle_distance(s.recommended())
    oracle_run(s, 20, seed=7)
    d = oracle_distance(s.recommended())
    # measured (seed 1, oracle seed 7): de 706 -> ~100, jde 706 -> ~90; require a factor 4
    assert d0 > 600 and d < d0 / 4, (d0, d)
    assert oracle_distance(s.recommended("better-half")) < d0 / 4


def test_jde_controls_in_range_and_survive_only_with_a_win():
    s = make_strategy("jde", SPACE, params={"np": 20}, seed=6)
    drawn_F, drawn_CR, new_F, new_CR = [], [], [], []
    for g in range(30):
        s.ask()
        plan = s.pending_plan
        drawn_F.extend(plan["F"])
        drawn_CR.extend(plan["CR"])
        before_F, before_CR = s.F.copy(), s.CR.copy()
        new_F.extend(plan["F"] != before_F)
        new_CR.extend(plan["CR"] != before_CR)
        wins = np.arange(20) % 2 == g % 2
        s.tell([MatchOutcome(6, 2, 4) if w else MatchOutcome(2, 6, 4) for w in wins])
        np.testing.assert_array_equal(s.F[wins], plan["F"][wins])
        np.testing.assert_array_equal(s.CR[wins], plan["CR"][wins])
        np.testing.assert_array_equal(s.F[~wins], before_F[~wins])
        np.testing.assert_array_equal(s.CR[~wins], before_CR[~wins])
    F, CR = np.array(drawn_F), np.array(drawn_CR)
    assert F.min() >= 0.1 and F.max() <= 1.0 and CR.min() >= 0.0 and CR.max() <= 1.0
    # about tau1 = tau2 = 10% of the draws are new values
    assert 0.05 < np.mean(new_F) < 0.15 and 0.05 < np.mean(new_CR) < 0.15


def test_jde_uses_its_own_controls_in_the_trial():
    s = make_strategy("jde", SPACE, params={"np": 6, "CR": 1.0, "tau1": 1.0, "tau2": 0.0,
                                            "bound_rule": "clip"}, seed=8)
    s.ask()
    plan = s.pending_plan
    pop, d = s.population, plan["donors"]
    mutant = pop[d[:, 0]] + plan["F"][:, None] * (pop[d[:, 1]] - pop[d[:, 2]])
    expect = SPACE.round(np.clip(mutant, SPACE.lower_array, SPACE.upper_array))
    np.testing.assert_array_equal(plan["trials"], expect)
    assert len(set(plan["F"].tolist())) == 6


@pytest.mark.parametrize("name", ["de", "jde", "ea"])
def test_init_reference_starts_the_population_around_the_reference(name):
    s = make_strategy(name, SPACE, params={"init": "reference", "init_spread": 0.05}, seed=2)
    pop = s.population
    ref = SPACE.reference_array
    assert pop[0].tolist() == ref.tolist()
    assert np.all(np.abs(pop - ref) <= 50)      # 0.05 x bound width 1000
    assert len({tuple(r) for r in pop}) == len(pop)  # still a diverse population
    sampled = make_strategy(name, SPACE, params={}, seed=2).population
    assert np.abs(sampled - ref).max() > 300    # the default draws uniform in [0, 1000]
    # resumed exactly like any other start
    again = make_strategy(name, SPACE, params={"init": "reference", "init_spread": 0.05}, seed=2)
    assert np.array_equal(again.population, pop)


@pytest.mark.parametrize("name", ["de", "jde", "ea"])
def test_finetune_draws_the_first_population_within_each_weights_own_scale(name):
    params = {"init": "reference", "init_spread": 0.1}
    fine = make_strategy(name, SPACE, params={**params, "finetune": True}, seed=2).population
    wide = make_strategy(name, SPACE, params=params, seed=2).population
    ref = SPACE.reference_array
    scale = np.maximum(np.abs(ref) / 10, (SPACE.upper_array - SPACE.lower_array) / 200)
    assert fine[0].tolist() == ref.tolist()
    assert np.all(np.abs(fine - ref) <= np.ceil(scale))
    assert np.any(np.abs(wide - ref) > 2 * scale)   # 0.1 x the width (100) otherwise
