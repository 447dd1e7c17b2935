"""The quadratic rating model and the strategy that proposes at its peak (``quad``): the fit
against a direct maximisation, the strategy on a landscape whose optimum is known, a stored run
(its centre is the peak of the model of its stored games; 1 and 2 workers; kill -9 and resume),
and a run that ends worse than its start."""
from __future__ import annotations

import json
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
from evotune.match.quadmodel import fit_quadratic
from evotune.match.rating import ELO, GameResult, game_results
from evotune.runs.store import Store
from evotune.space import WeightSpace
from evotune.strategies import make_strategy
from evotune.strategies.base import MatchOutcome
from evotune.tuning.rated import RatedEvidence, model_scale

scipy_optimize = pytest.importorskip("scipy.optimize", reason="the direct MAP uses scipy")

START = {"pawn": 100, "knight": 310, "bishop": 330, "rook": 500, "queen": 900, "mobility": 10}
QUAD = dict(strategy="quad", generations=3, games=2, depth=1, seed=5,
            params={"batch": 2, "prior": 20.0})


def _evotune(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True)


def _direct(games: list[GameResult], scale, anchor, prior, mean_h, sd_h):
    """MAP (slope, curvature) in Elo by scipy on the log posterior written game by game."""
    ua = (np.array([g.a for g in games]) - anchor) / scale
    ub = (np.array([g.b for g in games]) - anchor) / scale
    d = np.hstack([ua - ub, -0.5 * (ua ** 2 - ub ** 2)])
    s = np.array([g.score for g in games])
    n = len(scale)
    mean = np.concatenate([np.zeros(n), np.full(n, mean_h / ELO)])
    prec = np.concatenate([np.full(n, (ELO / prior) ** 2), np.full(n, (ELO / sd_h) ** 2)])

    def negative(beta):
        z = d @ beta
        return -(np.sum(s * z - np.logaddexp(0.0, z)) - 0.5 * np.sum(prec * (beta - mean) ** 2))

    def gradient(beta):
        p = 1.0 / (1.0 + np.exp(-(d @ beta)))
        return -(d.T @ (s - p) - prec * (beta - mean))

    res = scipy_optimize.minimize(negative, mean, jac=gradient, method="BFGS",
                                  options={"gtol": 1e-12, "maxiter": 10_000})
    return res.x[:n] * ELO, res.x[n:] * ELO


def test_the_quadratic_fit_equals_a_direct_map_and_reads_the_truth_back():
    rng = np.random.default_rng(3)
    scale = np.array([10.0, 5.0])
    start = np.array([100.0, 50.0])
    g_true, h_true = np.array([40.0, -20.0]), np.array([30.0, 10.0])  # Elo per unit, unit^2
    games = []
    for k in range(6000):
        a, b = start + rng.normal(0, 1.5, 2) * scale, start + rng.normal(0, 1.5, 2) * scale

        def elo(v):
            u = (v - start) / scale
            return g_true @ u - 0.5 * h_true @ (u * u)

        p = 1 / (1 + 10 ** (-(elo(a) - elo(b)) / 400))
        games.append(GameResult(key=(k, 0, 0, 0), a=tuple(a), b=tuple(b),
                                score=float(rng.random() < p)))
    model = fit_quadratic(games, scale=scale, anchor=start, prior=50.0, curvature=5.0,
                          curvature_sd=50.0)
    slope, curvature = _direct(games, scale, start, 50.0, 5.0, 50.0)
    assert np.allclose(model.slope, slope, atol=1e-3)
    assert np.allclose(model.curvature, curvature, atol=1e-3)
    error = np.sqrt(np.diag(model.covariance))
    assert np.all(np.abs(model.slope - g_true) < 4 * error[:2])
    assert np.all(np.abs(model.curvature - h_true) < 4 * error[2:]) and np.all(error < 10)
    assert model.rating(tuple(start)) == (0.0, 0.0) and model.games == 6000
    up = tuple(start + scale * [1, 0])  # one unit up the first weight: g - h / 2
    elo, _ = model.rating(up)
    assert elo == pytest.approx(model.slope[0] - 0.5 * model.curvature[0])
    assert model.best([tuple(start), up]) == up and model.best([]) is None


def test_the_quadratic_fit_refuses_bad_priors_and_anchors():
    g = [GameResult(key=(0, 0, 0, 0), a=(1.0, 2.0), b=(2.0, 2.0), score=1.0)]
    with pytest.raises(ConfigError, match="curvature_sd must be a positive number"):
        fit_quadratic(g, scale=(1.0, 1.0), anchor=(0.0, 0.0), curvature_sd=0.0)
    with pytest.raises(ConfigError, match="the anchor has 3 weights, the scale 2"):
        fit_quadratic(g, scale=(1.0, 1.0), anchor=(0.0, 0.0, 0.0))
    empty = fit_quadratic([], scale=(1.0, 1.0), anchor=(0.0, 0.0), prior=3.0, curvature=2.0)
    assert np.allclose(empty.slope, 0.0) and np.allclose(empty.curvature, 2.0)  # the prior


def _landscape_run(seed: int, games_budget: int) -> tuple[float, float, float]:
    """quad on a separable quadratic landscape (shannon's space, the optimum two units from the
    start on every free weight): (true Elo of the start, of the recommendation, distance of the
    recommendation from the optimum in units / the start's)."""
    space = WeightSpace(init_low=0.0, init_high=1000.0)
    scale = np.asarray(model_scale(space))
    start = space.reference_array
    optimum = start + 2.0 * scale * np.array([0, 1, -1, 1, -1, 1])
    h = np.array([0.0, 2.0, 2.0, 1.0, 1.0, 3.0])  # Elo per unit^2

    def true_elo(v):
        d = (np.asarray(v) - optimum) / scale
        return float(-np.sum(h * d * d))

    rng = np.random.default_rng(seed)
    s = make_strategy("quad", space, seed=seed, params={"batch": 8, "c": 2.0})
    ev = RatedEvidence((), request=s.rating_model(), scale=scale)
    played = 0
    while played < games_budget:
        requests = s.ask()
        outcomes, results = [], []
        for req in requests:
            p = 1 / (1 + 10 ** (-(true_elo(req.a) - true_elo(req.b)) / 400))
            scores = (rng.random(req.games) < p).astype(float)
            for j, sc in enumerate(scores):
                results.append(GameResult(key=(s.generation + 1, req.tag[0], j // 2, j % 2),
                                          a=req.a, b=req.b, score=float(sc)))
            pa = int(2 * scores.sum())
            outcomes.append(MatchOutcome(points_a=pa, points_b=2 * req.games - pa,
                                         games=req.games))
            played += req.games
        ev.add(results)
        ev.rate(requests, outcomes)  # fits the model, as the run loop does
        s.tell(outcomes, model=ev.view())
    rec = s.recommended()
    far = np.linalg.norm((rec - optimum)[1:] / scale[1:]) / np.linalg.norm(
        (start - optimum)[1:] / scale[1:])
    return true_elo(start), true_elo(rec), float(far)


def test_quad_climbs_a_landscape_whose_optimum_is_known():
    """The start is 36 Elo below the optimum; 3,000 games take the centre most of the way."""
    before, after, far = _landscape_run(seed=4, games_budget=3000)
    assert before == pytest.approx(-36.0)
    assert after > -12.0 and far < 0.6, (after, far)


def test_quad_needs_the_model_and_restores_exactly():
    s = make_strategy("quad", WeightSpace(), seed=2, params={"batch": 3})
    requests = s.ask()
    assert len(requests) == 3 and all(r.games == 2 for r in requests)
    for r in requests:  # the + side is never below the - side (one rounding draw for both)
        up = np.asarray(r.a) - np.asarray(r.b)
        assert up[0] == 0 and np.all(np.abs(up[1:]) > 0)
    with pytest.raises(ValueError, match="proposes by the rating model"):
        s.tell([MatchOutcome(points_a=2, points_b=2, games=2)] * 3)
    assert s.rating_model().form == "quadratic" and s.rating_model().anchor == tuple(
        float(x) for x in WeightSpace().reference)
    restored = type(s).from_state(s.space, params=s.params, seed=2, state=s.state())
    assert restored.ask() == s.ask()
    assert np.array_equal(s.recommended(), s.space.round(s.space.reference_array))


@pytest.fixture(scope="module")
def quad_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("quad")
    store, plan = new_run(build_run_config(workers=1, **QUAD), out_dir=root, run_id="q1")
    execute(store, plan)
    return store, plan


def test_a_quad_run_moves_its_centre_to_the_peak_of_the_model_of_its_stored_games(quad_run):
    store, plan = quad_run
    games = game_results(store.read_games())
    start = tuple(float(v) for v in plan.space.reference)
    model = fit_quadratic(games, scale=model_scale(plan.space), anchor=start, prior=20.0,
                          curvature=0.5, curvature_sd=1.0)
    state = store.read_state().strategy
    s = make_strategy("quad", plan.space, seed=5, params={**QUAD["params"], "games": 2})
    assert len(games) == 3 * 2 * 2 and state["x0"] == list(start)
    assert state["centre"] == pytest.approx(list(s.peak(model.slope, model.curvature)),
                                            abs=1e-9)
    assert state["centre"] != list(start)  # 12 games moved it


def test_a_quad_run_is_the_same_for_1_and_2_workers(quad_run, tmp_path, stored_generations,
                                                    stored_games):
    store, _ = quad_run
    two, plan = new_run(build_run_config(workers=2, **QUAD), out_dir=tmp_path, run_id="q2")
    execute(two, plan)
    assert stored_generations(store.root) == stored_generations(two.root)
    assert stored_games(store.root) == stored_games(two.root)


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_a_quad_run_resumed_after_sigkill_equals_an_uninterrupted_one(
        tmp_path, kill_at_generation, stored_generations, stored_games):
    args = ["--strategy", "quad", "--generations", "6", "--depth", "1", "--seed", "11",
            "--workers", "1", "--param", "batch=2", "--param", "prior=20",
            "--runs-dir", str(tmp_path)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args, "--run-id",
                             "killed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_at = kill_at_generation(proc, tmp_path / "killed" / "state.json")
    assert killed_at is not None and killed_at < 6, "the run ended before it could be killed"
    assert proc.returncode == -signal.SIGKILL
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")


def test_a_quad_run_worse_than_its_start_still_recommends_its_start(tmp_path):
    """A model told to believe a few games (a wide prior, a flat curvature, a wide trust
    region) moves the centre far off: the final check finds it worse and the run recommends its
    start."""
    (tmp_path / "start.json").write_text(json.dumps(START))
    res = CliRunner().invoke(cli, [
        "run", "--strategy", "quad", "--engine", f"shannon:{tmp_path / 'start.json'}",
        "--generations", "1", "--depth", "1", "--seed", "3", "--workers", "1",
        "--param", "batch=2", "--param", "prior=300", "--param", "radius=40",
        "--param", "curvature=0.01", "--param", "min_curvature=0.01",
        "--final-check-games", "40", "--runs-dir", str(tmp_path), "--run-id", "worse"])
    assert res.exit_code == 0, res.output
    check = Store(tmp_path / "worse").read_final_check()
    assert check is not None and check.tuned != check.start and not check.better
    assert check.start == tuple(float(v) for v in START.values()) and check.elo < 0
    exported = CliRunner().invoke(cli, ["export", "worse", "--format", "json",
                                        "--runs-dir", str(tmp_path)])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout) == START


def test_quad_refuses_a_gauntlet_in_one_line(tmp_path):
    res = _evotune("run", "--strategy", "quad", "--opponents", "shannon", "--generations", "1",
                   "--depth", "1", "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and not any(tmp_path.iterdir())
    assert res.stderr.strip().splitlines() == [
        "evotune: error: strategy 'quad' compares its own candidates, each against another; "
        "--opponents applies to de, jde, ea, spsa, cmaes and ng:NAME"]
