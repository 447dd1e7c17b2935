"""The strength curve (issue 58): a rating model over a run's stored mini-matches, each
generation's move credited by the fit that did not see its games. Random outcomes (no weight
matters) must read as no strength; a known strength is recovered."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evotune.reporting.strength import Played, curve_of, fit_ratings, strength_curve


@pytest.mark.parametrize(("strategy", "seed"), [("de", 11), ("de", 12), ("spsa", 11)])
def test_random_outcomes_read_as_no_strength(tmp_path, make_fake_run, strategy, seed):
    """make_fake_run scores every match at random (points uniform over 0..2 games: wider than
    games spread): the strategy still moves (it chases the noise), and a fit on the games that
    drove the moves would credit it (hundreds of Elo); the curve must not."""
    store = make_fake_run(tmp_path, "r", strategy=strategy, generations=30, seed=seed)
    curve = strength_curve(store)
    assert curve.against == "the initial mean" and curve.matches > 0
    assert len(curve.elo) == 31 and curve.games[-1] == store.current_state().games
    # the last point within twice its band (the points of a curve are one walk, not 30 draws;
    # an in-sample fit reads such a run as hundreds of Elo, far outside)
    assert abs(curve.elo[-1]) < 2 * curve.error[-1]
    assert curve.elo[0] == pytest.approx(0.0, abs=1e-9)  # the base itself


def test_a_known_strength_is_credited_out_of_sample():
    """Matches from a known linear strength; the moves credited by the other fold's fit add up
    to the true Elo of the last vector within the band."""
    rng = np.random.default_rng(3)
    true = np.array([200.0, -100.0])  # Elo per unit of each weight
    gens, per = 40, 50
    means = np.cumsum(np.vstack([np.zeros(2), rng.normal(0.02, 0.01, size=(gens, 2))]), axis=0)
    diff = rng.uniform(-0.5, 0.5, size=(gens * per, 2))
    p = 1 / (1 + 10 ** (-(diff @ true) / 400))
    played = Played(diff=diff, low=np.full(2, -0.5), high=np.full(2, 0.5),
                    score=rng.binomial(2, p) / 2, games=np.full(gens * per, 2.0),
                    generation=np.repeat(np.arange(1, gens + 1), per))
    curve = curve_of(played, means=means, games=np.arange(gens + 1) * per * 2,
                     generations=np.arange(gens + 1), base=means[0], against="the start")
    want = (means[-1] - means[0]) @ true
    assert abs(curve.elo[-1] - want) < curve.error[-1]
    assert curve.error[-1] < abs(want)  # and it is measured, not lost in its band


def test_fit_ratings_error_shrinks_with_games():
    rng = np.random.default_rng(5)
    true = np.array([120.0, -60.0, 0.0])
    errors = []
    for count in (400, 4000):
        x = rng.uniform(-0.5, 0.5, size=(count, 3))
        y = rng.binomial(4, 1 / (1 + 10 ** (-(x @ true) / 400))) / 4
        theta, cov = fit_ratings(x, y, np.full(count, 4.0))
        d = np.full(3, 0.5)
        err = 1.96 * math.sqrt(d @ cov @ d)
        assert abs(d @ theta - d @ true) < err
        errors.append(err)
    assert errors[1] < errors[0] / 2
