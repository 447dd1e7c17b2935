"""The rating model's linear form (``model_form = linear``): strength as a linear function of the
weights, fitted over every game, checked against a direct maximisation of the same posterior
and on a stored run (its strategy told exactly that model)."""
from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run
from evotune.kinds.games.solver import execute
from evotune.match.rating import ELO, GameResult, fit_linear, game_results
from evotune.tuning.rated import model_scale

scipy_optimize = pytest.importorskip("scipy.optimize", reason="the direct MAP uses scipy")

LINEAR = dict(strategy="de", population=4, generations=2, games=2, depth=1, seed=5,
              params={"selection": "model", "model_form": "linear", "init": "reference",
                      "race_games": 8, "race_elo": 100.0, "model_prior": 20.0})


def _direct(games: list[GameResult], scale: np.ndarray, prior: float) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """The MAP slope (Elo per scale unit) and its covariance, by scipy on the log posterior
    written game by game."""
    d = np.array([np.subtract(g.a, g.b) for g in games]) / scale
    s = np.array([g.score for g in games])
    precision = (ELO / prior) ** 2

    def negative(beta):
        z = d @ beta
        return -(np.sum(s * z - np.logaddexp(0.0, z)) - 0.5 * precision * beta @ beta)

    def gradient(beta):
        p = 1.0 / (1.0 + np.exp(-(d @ beta)))
        return -(d.T @ (s - p) - precision * beta)

    res = scipy_optimize.minimize(negative, np.zeros(d.shape[1]), jac=gradient, method="BFGS",
                                  options={"gtol": 1e-12, "maxiter": 10_000})
    p = 1.0 / (1.0 + np.exp(-(d @ res.x)))
    hess = (d.T * (p * (1 - p))) @ d + precision * np.eye(d.shape[1])
    return res.x * ELO, np.linalg.inv(hess) * ELO * ELO


def test_the_linear_fit_equals_a_direct_map_and_reads_the_truth_back():
    rng = np.random.default_rng(7)
    truth = np.array([30.0, -15.0, 0.0])  # Elo per scale unit
    scale = np.array([10.0, 5.0, 2.0])
    start = (100.0, 50.0, 20.0)
    games = []
    for k in range(3000):
        a = np.asarray(start) + rng.normal(0, 1, 3) * scale
        b = np.asarray(start) + rng.normal(0, 1, 3) * scale
        p = 1 / (1 + 10 ** (-(truth @ ((a - b) / scale)) / 400))
        games.append(GameResult(key=(k, 0, 0, 0), a=tuple(a), b=tuple(b),
                                score=float(rng.random() < p)))
    model = fit_linear(games, scale=scale, anchor=start, prior=50.0)
    slope, cov = _direct(games, scale, 50.0)
    assert np.allclose(model.slope, slope, atol=1e-4)
    assert np.allclose(model.covariance, cov, rtol=1e-4, atol=1e-6)
    error = np.sqrt(np.diag(model.covariance))
    assert np.all(np.abs(model.slope - truth) < 4 * error) and np.all(error < 5)
    up = tuple(np.asarray(start) + scale * [1, 0, 0])
    assert model.rating(start) == (0.0, 0.0)
    elo, se = model.rating(up)
    assert elo == pytest.approx(model.slope[0]) and se == pytest.approx(error[0])
    assert model.difference(start, up) == pytest.approx((-elo, se))
    assert model.best([start, up]) == up and model.best([]) is None
    assert model.games == 3000


def test_the_linear_fit_refuses_a_bad_scale_or_prior():
    g = [GameResult(key=(0, 0, 0, 0), a=(1.0, 2.0), b=(2.0, 2.0), score=1.0)]
    with pytest.raises(ConfigError, match="scale must be a positive number"):
        fit_linear(g, scale=(1.0, 0.0))
    with pytest.raises(ConfigError, match="prior must be a positive number"):
        fit_linear(g, scale=(1.0, 1.0), prior=0.0)
    with pytest.raises(ConfigError, match="the games' vectors have 2 weights, the scale 3"):
        fit_linear(g, scale=(1.0, 1.0, 1.0))
    empty = fit_linear([], scale=(1.0, 1.0), prior=30.0)  # no game: the prior alone
    assert empty.difference((1.0, 0.0), (0.0, 0.0)) == pytest.approx((0.0, 30.0))


def test_a_linear_model_run_tells_its_strategy_the_model_of_every_stored_game(
        tmp_path, stored_generations, stored_games):
    store, plan = new_run(build_run_config(workers=1, **LINEAR), out_dir=tmp_path, run_id="l1")
    execute(store, plan)
    games = game_results(store.read_games())
    start = tuple(float(v) for v in plan.space.reference)
    scale = np.asarray(model_scale(plan.space))
    model = fit_linear(games, scale=scale, anchor=start, prior=20.0)
    state = store.read_state().strategy
    assert len(games) > 8 and len(state["rating"]) == 4
    for v, r in zip(state["population"], state["rating"]):
        assert r == pytest.approx(model.rating(v)[0], abs=1e-9)
    two, plan2 = new_run(build_run_config(workers=2, **LINEAR), out_dir=tmp_path, run_id="l2")
    execute(two, plan2)
    assert stored_generations(store.root) == stored_generations(two.root)
    assert stored_games(store.root) == stored_games(two.root)
