"""Texel on small data stays near its start (issue 37, item 8): the ridge is centred on the
initial weights (the spec's reference, or --init), ``--l2 auto`` keeps the strongest ridge within
one standard error of the lowest validation error, and a fit that predicts held-out games no
better than its start says so on its last line and in texel.json."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from evotune.errors import ConfigError
from evotune.kinds.fit.config import TexelConfig, texel_config_from_dict
from evotune.kinds.fit.plan import plan_fit
from evotune.kinds.fit.solver import execute_fit, new_fit, read_data, weaker_warning
from evotune.learn import texel as tx
from evotune.learn.fitdata import choose_l2
from evotune.spec.file import load_engine_spec

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_texel import labelled_file  # noqa: E402

CENTER = np.array([100, 300, 300, 500, 900, 0, 0, 0], dtype=float)
W_TRUE = np.array([100, 420, 250, 620, 780, 40, -60, 80], dtype=float)


def problem(n: int, *, seed: int, truth: np.ndarray = W_TRUE) -> tuple[tx.Problem, np.ndarray]:
    """n rows of small integer features, results 1 or 0 drawn with probability
    sigma(x . truth / 400) (truth = CENTER: the start is right, there is nothing to learn);
    groups of 10 rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, 8)).astype(float)
    X[rng.random((n, 8)) < 0.5] = 0.0
    y = (rng.random(n) < tx.sigmoid(X @ truth / 400)).astype(float)
    lo, hi = np.full(8, -2000.0), np.full(8, 2000.0)
    lo[0] = hi[0] = 100.0
    prob = tx.Problem(sparse.csr_matrix(X), y, free=np.arange(1, 8), lower=lo, upper=hi,
                      center=CENTER)
    return prob, np.arange(n) // 10


def split(prob: tx.Problem, groups: np.ndarray) -> tuple[tx.Problem, tx.Problem, np.ndarray]:
    """(training, validation, validation groups): every fifth group held out."""
    val = groups % 5 == 0
    kw = dict(free=prob.free, lower=prob.lower, upper=prob.upper, center=prob.center)
    return (tx.Problem(prob.X[~val], prob.y[~val], **kw), tx.Problem(prob.X[val], prob.y[val], **kw),
            groups[val])


def test_centred_ridge_objective_and_gradient_match_finite_differences():
    prob, _ = problem(400, seed=2)
    prob.l2 = 5e-3
    w = W_TRUE + np.random.default_rng(1).normal(0, 40, size=8)
    obj, g = prob.objective_and_gradient(w, 0.9)
    free = prob.free
    assert obj == pytest.approx(prob.error(w, 0.9)
                                + 5e-3 * np.sum(((w - CENTER)[free] / 100) ** 2), rel=1e-12)
    for i in range(8):
        e = np.zeros(8)
        e[i] = 1e-3
        fd = (prob.objective_and_gradient(w + e, 0.9)[0]
              - prob.objective_and_gradient(w - e, 0.9)[0]) / 2e-3
        assert g[i] == pytest.approx(fd, rel=1e-5, abs=1e-12)
    # at the centre the penalty adds nothing to the error's gradient
    assert np.array_equal(prob.objective_and_gradient(CENTER, 0.9)[1],
                          prob.error_and_gradient(CENTER, 0.9)[1])


def test_difference_se_takes_a_group_together():
    diff = np.array([1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    # 4 groups of 2 whose sums are 2, -2, 2, -2: sd 2.309, se of the mean sqrt(4) * 2.309 / 8
    assert tx.difference_se(diff, np.arange(8) // 2) == pytest.approx(np.sqrt(4 * 16 / 3) / 8)
    assert tx.difference_se(diff, np.zeros(8)) == 0.0
    assert tx.difference_se(np.zeros(0), np.zeros(0)) == 0.0


def _choose(n: int, *, truth: np.ndarray, rule: str) -> tuple[float, list[dict]]:
    prob, groups = problem(n, seed=7, truth=truth)
    train, val, vgroups = split(prob, groups)
    cfg = TexelConfig.of(data=("unused.txt",), l2_rule=rule, epochs=5, iters=30)
    return choose_l2(train, val, CENTER, 1.0, cfg, lambda _: None, groups=vgroups)


def test_on_data_with_nothing_to_learn_the_one_se_rule_stays_at_the_start():
    l2, tried = _choose(600, truth=CENTER, rule="one-se")
    assert [t["l2"] for t in tried] == list(tx.L2_GRID_ONE_SE)
    assert l2 == tx.L2_GRID_ONE_SE[-1]
    assert sum(t["se"] == 0 for t in tried) == 1  # the lowest's difference to itself
    # the old rule, on its grid of weak ridges, keeps one of them
    l2_old, tried_old = _choose(600, truth=CENTER, rule="lowest")
    assert [t["l2"] for t in tried_old] == list(tx.L2_GRID) and l2_old <= 1e-3
    assert "se" not in tried_old[0]


def test_on_plenty_of_informative_data_the_one_se_rule_keeps_a_weak_ridge():
    l2, tried = _choose(20000, truth=W_TRUE, rule="one-se")
    assert l2 <= 1e-3
    strongest = tried[-1]
    assert strongest["above_lowest"] > strongest["se"] > 0


def test_heavy_ridge_on_tiny_data_gives_the_reference_not_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = labelled_file(tmp_path / "d.txt", n=200)
    cfg = TexelConfig.of(data=(str(data),), l2=10.0, epochs=5)
    d = read_data(plan_fit(cfg))
    store = new_fit(plan_fit(cfg), d, out_dir=tmp_path / "runs", run_id="heavy")
    s = execute_fit(store, plan_fit(cfg), d)
    reference = load_engine_spec("shannon").space().reference_array
    assert s["weights_rounded"] == reference.tolist() == [100, 300, 330, 500, 900, 10]
    # rounded back onto the start, the fit predicts held-out games exactly as well: it says so
    assert s["error_after_rounding"]["validation"] == s["error_initial"]["validation"]
    assert s["warning"].startswith("the fit is likely weaker than its start")


def test_warning_when_not_below_the_start():
    def errors(start: float, after: float) -> dict:
        return {"error_initial": {"validation": start}, "error_after_rounding":
                {"validation": after}}

    assert weaker_warning(errors(0.12, 0.119)) == ""
    assert "0.120000 is not below the initial weights' 0.120000" in \
        weaker_warning(errors(0.12, 0.12))
    assert "weaker than its start" in weaker_warning(errors(0.12, 0.13))


def test_the_fits_last_line_says_it_is_likely_weaker(tmp_path):
    data = labelled_file(tmp_path / "d.txt", n=200)
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "texel", str(data), "--runs-dir",
                        str(tmp_path / "runs"), "--run-id", "f", "--l2", "10", "--epochs", "3"],
                       capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        "evotune: warning: the fit is likely weaker than its start")
    doc = json.loads((tmp_path / "runs" / "f" / "texel.json").read_text())
    assert doc["warning"].startswith("the fit is likely weaker than its start")


def test_a_fit_stored_before_the_rule_reads_and_resumes_with_the_lowest_error(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = labelled_file(tmp_path / "d.txt", n=200)
    new = TexelConfig.of(data=(str(data),), epochs=3)
    assert new.ridge.rule == "one-se" and new.to_dict()["l2_rule"] == "one-se"
    old = TexelConfig.of(data=(str(data),), epochs=3, l2_rule="lowest")
    data_ = read_data(plan_fit(old))
    store = new_fit(plan_fit(old), data_, out_dir=tmp_path / "runs", run_id="old")
    store.unlock()
    doc = json.loads(store.manifest_path.read_text())
    del doc["config"]["l2_rule"]  # as the code before --l2-rule stored it
    store.manifest_path.write_text(json.dumps(doc))
    assert texel_config_from_dict(doc["config"]).ridge.rule == "lowest"
    assert "l2_rule" not in old.identity_dict() and new.identity_dict()["l2_rule"] == "one-se"
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "resume", "old", "--runs-dir",
                        str(tmp_path / "runs")], capture_output=True, text=True, env=ENV,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "runs" / "old" / "texel.json").read_text())
    assert [t["l2"] for t in s["l2_tried"]] == list(tx.L2_GRID)
    assert "chosen: the lowest validation error of 5" in r.stderr


def test_a_bad_l2_rule_is_one_line_and_writes_nothing(tmp_path):
    data = labelled_file(tmp_path / "d.txt", n=20)
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "texel", str(data), "--l2-rule",
                        "median", "--runs-dir", str(tmp_path / "runs")], capture_output=True,
                       text=True, env=ENV, cwd=tmp_path, timeout=600)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--l2-rule" in r.stderr
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ConfigError, match="--l2-rule median: use one of one-se, lowest"):
        TexelConfig.of(data=("d.txt",), l2_rule="median")


@pytest.mark.slow
def test_the_quality_check_script_runs_at_a_tiny_scale(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "texel_small_data.py"),
                        "--out", str(tmp_path), "--games", "40", "--match-games", "2"],
                       capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("extended (fitted) vs shannon, depth 3, 2 games: +")
    # 40 games are too few: the fit says so, and the check repeats it
    assert "fit warning: the fit is likely weaker than its start" in r.stdout
    fit = json.loads((tmp_path / "runs" / "extended-40-s1" / "texel.json").read_text())
    assert fit["l2_chosen_by_validation"] and len(fit["l2_tried"]) == len(tx.L2_GRID_ONE_SE)
