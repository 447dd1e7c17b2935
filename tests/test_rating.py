"""The rating model over every game of a run, and selection and recommendation by it."""
from __future__ import annotations

import json
import math
import signal
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.errors import ConfigError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run
from evotune.kinds.games.solver import execute
from evotune.match.rating import ELO, GameResult, fit_ratings, game_results
from evotune.runs.store import Store
from evotune.space import WeightSpace
from evotune.strategies import make_strategy
from evotune.strategies.base import MatchOutcome

START = {"pawn": 100, "knight": 310, "bishop": 330, "rook": 500, "queen": 900, "mobility": 10}
MODEL = dict(strategy="de", population=4, generations=2, games=2, depth=1, seed=5,
             params={"selection": "model", "init": "reference", "race_games": 8,
                     "race_elo": 100.0, "model_prior": 60.0})


def _evotune(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, **kw)


def _game(k: int, a, b, score: float) -> GameResult:
    return GameResult(key=(1, k, k // 2, k % 2), a=a, b=b, score=score)


# ---- the model as numerics ----------------------------------------------------------------------

def test_two_won_games_rate_a_vector_a_little_above_the_anchor_not_at_infinity():
    start, new = (1.0, 2.0), (1.0, 3.0)
    model = fit_ratings([_game(0, new, start, 1.0), _game(1, new, start, 1.0)], anchor=start,
                        prior=50.0)
    elo, error = model.rating(new)
    # the MAP of 2 won games with a 50-Elo prior: far from the maximum likelihood (+inf)
    assert 10.0 < elo < 20.0 and 45.0 < error < 50.0
    assert model.rating(start) == (0.0, 0.0)
    assert model.difference(new, start) == pytest.approx((elo, error))
    assert model.best() == new and model.best([start]) == start
    assert model.rating((9.0, 9.0)) == (0.0, 50.0)  # never played: the prior's


def test_the_fit_is_a_function_of_the_games_not_of_their_order():
    rng = np.random.default_rng(4)
    vs = [(float(i),) for i in range(6)]
    games = [_game(k, vs[i], vs[j], float(rng.choice([0.0, 0.5, 1.0])))
             for k, (i, j) in enumerate(rng.integers(6, size=(60, 2))) if i != j]
    a = fit_ratings(games, anchor=vs[0], prior=80.0)
    b = fit_ratings(list(reversed(games)), anchor=vs[0], prior=80.0)
    assert a.vectors == b.vectors
    assert np.array_equal(a.elo, b.elo) and np.array_equal(a.covariance, b.covariance)
    with pytest.raises(ConfigError, match="prior must be a positive number"):
        fit_ratings(games, prior=0.0)


# ---- the model on a stored run equals a direct computation -------------------------------------

def _direct_map(games: list[dict], anchor: tuple, prior: float):
    """The MAP by scipy's minimiser on the log posterior written out from the raw game log
    (independent of evotune.match.rating), with its covariance from a finite-difference
    Hessian."""
    optimize = pytest.importorskip("scipy.optimize", reason="scipy (the 'texel' extra) checks "
                                                            "the model by an independent fit")
    vectors: list[tuple] = []
    rows = []
    for g in games:
        w, b = tuple(g["white_weights"]), tuple(g["black_weights"])
        for v in (w, b):
            if v not in vectors:
                vectors.append(v)
        rows.append((vectors.index(w), vectors.index(b),
                     {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[g["result"]]))
    fixed = vectors.index(anchor)
    free = [i for i in range(len(vectors)) if i != fixed]
    wi, bi, s = (np.array(c) for c in zip(*rows))

    def full(x):
        r = np.zeros(len(vectors))
        r[free] = x
        return r

    def neg_log_posterior(x):
        r = full(x)
        d = (r[wi] - r[bi]) * math.log(10) / 400  # Elo -> logits
        return float(np.sum(s * np.logaddexp(0, -d) + (1 - s) * np.logaddexp(0, d))
                     + 0.5 * np.sum((x / prior) ** 2))

    def gradient(x):
        r = full(x)
        d = (r[wi] - r[bi]) * math.log(10) / 400
        resid = (s - 1 / (1 + np.exp(-d))) * math.log(10) / 400
        g = np.zeros(len(vectors))
        np.add.at(g, wi, -resid)
        np.add.at(g, bi, resid)
        return g[free] + x / prior ** 2

    res = optimize.minimize(neg_log_posterior, np.zeros(len(free)), jac=gradient,
                            method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000})
    res = optimize.root(gradient, res.x, tol=1e-14)  # polished: the gradient's exact zero
    assert np.max(np.abs(gradient(res.x))) < 1e-12
    h = 1e-4
    hess = np.array([(gradient(res.x + h * e) - gradient(res.x - h * e)) / (2 * h)
                     for e in np.eye(len(free))])
    cov = np.zeros((len(vectors), len(vectors)))
    cov[np.ix_(free, free)] = np.linalg.inv((hess + hess.T) / 2)
    return vectors, full(res.x), cov


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    """A 2-generation run at depth 1 that selects by the model (1 worker)."""
    root = tmp_path_factory.mktemp("model")
    store, plan = new_run(build_run_config(workers=1, **MODEL), out_dir=root, run_id="w1")
    execute(store, plan)
    return store, plan


def test_the_model_of_a_stored_run_equals_a_direct_map(model_run):
    store, plan = model_run
    games = store.read_games()
    start = tuple(float(v) for v in plan.space.reference)
    assert len(games) > 8 and any(start in (tuple(g["white_weights"]),
                                            tuple(g["black_weights"])) for g in games)
    model = fit_ratings(game_results(games), anchor=start, prior=60.0)
    vectors, elo, cov = _direct_map(games, start, 60.0)
    assert sorted(model.vectors) == sorted(vectors) and model.anchor == start
    order = [model.index(v) for v in vectors]
    assert np.allclose(model.elo[order], elo, rtol=0, atol=1e-6)
    assert np.allclose(model.covariance[np.ix_(order, order)], cov, rtol=1e-5, atol=1e-5)
    assert model.elo[model.index(start)] == 0.0
    assert np.all(model.error()[[i for i in range(len(vectors)) if vectors[i] != start]] > 0)
    # the strategy was told the model of every game: each individual keeps its rating in it
    state = store.read_state().strategy
    for v, r in zip(state["population"], state["rating"]):
        assert r == pytest.approx(model.rating(v)[0], abs=1e-9)
    assert ELO == pytest.approx(400 / math.log(10))


def test_a_model_run_is_the_same_for_1_and_2_workers(model_run, tmp_path, stored_generations,
                                                     stored_games):
    store, _ = model_run
    two, plan = new_run(build_run_config(workers=2, **MODEL), out_dir=tmp_path, run_id="w2")
    execute(two, plan)
    assert stored_generations(store.root) == stored_generations(two.root)
    assert stored_games(store.root) == stored_games(two.root)


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
@pytest.mark.parametrize("form", ["vectors", "linear"])
def test_a_model_run_resumed_after_sigkill_equals_an_uninterrupted_one(
        form, tmp_path, kill_at_generation, stored_generations, stored_games):
    args = ["--strategy", "de", "--np", "4", "--generations", "5", "--depth", "1", "--seed", "11",
            "--workers", "1", "--param", "selection=model", "--param", "init=reference",
            "--param", f"model_form={form}",
            "--param", "race_games=8", "--param", "race_elo=100", "--runs-dir", str(tmp_path)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args, "--run-id",
                             "killed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_at = kill_at_generation(proc, tmp_path / "killed" / "state.json")
    assert killed_at is not None and killed_at < 5, "the run ended before it could be killed"
    assert proc.returncode == -signal.SIGKILL
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")


# ---- selection and recommendation by the model -------------------------------------------------

def _rated(elo_a: float, elo_b: float, error: float) -> MatchOutcome:
    return MatchOutcome(points_a=9, points_b=7, games=8, rated=(elo_a, elo_b, error))


@pytest.mark.parametrize("strategy", ["de", "jde", "ea"])
def test_the_model_replaces_only_when_it_says_so_with_the_stated_confidence(strategy):
    s = make_strategy(strategy, WeightSpace(), seed=3,
                      params={"np": 4, "selection": "model", "model_z": 2.0})
    requests = s.ask()
    assert [(r.stop, r.games) for r in requests] == [("sprt", 24)] * 4  # a race's games
    before = s.population.copy()
    # the points favour every challenger; the model's z: 2.5, 1.9, -3, exactly 2
    s.tell([_rated(25, 0, 10), _rated(19, 0, 10), _rated(-30, 0, 10), _rated(5, -15, 10)])
    replaced = [i for i in range(4) if not np.array_equal(s.population[i], before[i])]
    assert replaced == [0, 3]
    assert list(s.rated()) == [25.0, 0.0, 0.0, 5.0]  # the survivor's rating, each
    assert np.array_equal(s.recommended("rated"), s.population[0])
    restored = type(s).from_state(s.space, params=s.params, seed=3, state=s.state())
    assert np.array_equal(restored.rated(), s.rated()) and restored.ask() == s.ask()
    with pytest.raises(ValueError, match="needs the rating model's verdict"):
        s.tell([MatchOutcome(points_a=9, points_b=7, games=8)] * 4)


def test_rated_needs_the_model_and_other_states_stay_as_they_were():
    s = make_strategy("de", WeightSpace(), seed=3, params={"np": 4})
    assert s.rated() is None and "rating" not in s.state()
    with pytest.raises(ConfigError, match="'rated' needs the rating model"):
        s.recommended("rated")
    fresh = make_strategy("de", WeightSpace(), seed=3, params={"np": 4, "selection": "model"})
    assert np.array_equal(fresh.recommended("rated"), fresh.recommended("mean"))  # none told


def test_a_model_run_worse_than_its_start_still_recommends_its_start(tmp_path):
    """A population far from the start (half of each bound width): the final check finds its
    mean not better than the start, so the run recommends its start by every rule, the rating
    model's best included (a trial that only met a far-off target can be rated above the start:
    nothing ties the two)."""
    (tmp_path / "start.json").write_text(json.dumps(START))
    res = CliRunner().invoke(cli, [
        "run", "--strategy", "de", "--engine", f"shannon:{tmp_path / 'start.json'}", "--np", "4",
        "--generations", "1", "--depth", "1", "--seed", "3", "--workers", "1",
        "--param", "selection=model", "--param", "race_games=4", "--param", "finetune=false",
        "--param", "init_spread=0.5", "--final-check-games", "40", "--runs-dir", str(tmp_path),
        "--run-id", "worse"])
    assert res.exit_code == 0, res.output
    check = Store(tmp_path / "worse").read_final_check()
    assert check is not None and check.tuned != check.start and not check.better
    assert check.start == tuple(float(v) for v in START.values()) and check.elo < 0
    for rule in ("rated", "mean"):  # the check's verdict holds for every rule
        exported = CliRunner().invoke(cli, ["export", "worse", "--format", "json", "--recommend",
                                            rule, "--runs-dir", str(tmp_path)])
        assert exported.exit_code == 0, exported.output
        assert json.loads(exported.stdout) == START
