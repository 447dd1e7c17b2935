from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from evotune import experiments
from evotune.cli import cli
from evotune.kinds.games.config import build_run_config
from evotune.runs.store import Store


def test_paper_config_is_the_papers_setup():
    cfg = experiments.paper_config(seed=3)
    assert (cfg.strategy, cfg.population, cfg.budget.generations, cfg.play.games,
            cfg.play.limits.depth) == \
        ("de", 20, 50, 4, 3)
    assert cfg.params_dict() == {"F": 0.5, "CR": 0.9}
    assert (cfg.start.low, cfg.start.high, cfg.play.openings) == (0.0, 1000.0, "book")


def test_reproduce_prints_the_paper_table_beside_the_run(tmp_path, monkeypatch):
    tiny = lambda *, seed, workers=0, backend="local", scheduler="": build_run_config(  # noqa: E731
        strategy="de", population=4, generations=2, games=2, depth=1, seed=seed, workers=1,
        backend=backend, scheduler=scheduler)
    monkeypatch.setattr(experiments, "paper_config", tiny)
    res = CliRunner().invoke(cli, ["reproduce", "de-paper", "--seeds", "2", "--workers", "1",
                                   "--runs-dir", str(tmp_path / "pop"),
                                   "--reports", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "paper final mean" in out and "931.45" in out and "3070" in out
    assert (tmp_path / "rep" / "de-paper-s1" / "report.html").exists()
    assert (tmp_path / "rep" / "de-paper-s2" / "convergence.png").exists()
    # the evotune rows are the stored generations' statistics (mean over the two seeds)
    lasts = [Store(tmp_path / "pop" / f"de-paper-s{s}").generations()[-1] for s in (1, 2)]
    knight_final = (lasts[0].mean[1] + lasts[1].mean[1]) / 2
    row = next(line for line in out.splitlines() if line.startswith("evotune final mean"))
    assert float(row.split()[3]) == pytest.approx(knight_final, abs=0.01)
    # calling again reuses the finished runs (same games, no new generation)
    again = CliRunner().invoke(cli, ["reproduce", "de-paper", "--seeds", "2", "--workers", "1",
                                     "--runs-dir", str(tmp_path / "pop"),
                                     "--reports", str(tmp_path / "rep")])
    assert again.exit_code == 0
    assert Store(tmp_path / "pop" / "de-paper-s1").generations()[-1].games_total \
        == lasts[0].games_total


def test_compare_runs_each_strategy_on_the_same_budget_and_verifies(tmp_path):
    res = CliRunner().invoke(cli, ["compare", "--strategies", "de,ea", "--max-games", "12",
                                   "--np", "4", "--depth", "1", "--verify-games", "2",
                                   "--workers", "1", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith(("de ", "ea "))]
    assert [ln.split()[0] for ln in lines] == ["de", "ea"]
    for ln in lines:
        assert int(ln.split()[2]) >= 12  # each stopped after the generation reaching the budget
    doc = experiments.Store(tmp_path / "compare-de-b12-s1").read_document("verify")
    assert doc["matches"][0]["opponent"] == "reference" and doc["matches"][0]["games"] == 2


def test_compare_init_reference_starts_every_strategy_at_the_reference(tmp_path):
    res = CliRunner().invoke(cli, ["compare", "--strategies", "de,spsa", "--max-games", "8",
                                   "--np", "4", "--depth", "1", "--verify-games", "2",
                                   "--init", "reference", "--workers", "1",
                                   "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    ref = np.array([100.0, 300.0, 330.0, 500.0, 900.0, 10.0])
    de = experiments.Store(tmp_path / "compare-de-b8-s1-iref")  # its own run id: not reused
    assert de.manifest().config.params_dict()["init"] == "reference"
    start = np.array(de.read_generation(0).population)
    assert start[0].tolist() == ref.tolist() and np.abs(start - ref).max() <= 100
    assert len({tuple(r) for r in start}) == 4
    spsa = experiments.Store(tmp_path / "compare-spsa-b8-s1-iref")
    assert np.array(spsa.read_generation(0).population)[0].tolist() == ref.tolist()
    assert not (tmp_path / "compare-de-b8-s1").exists()


def test_compare_rejects_unknown_strategies(tmp_path):
    res = CliRunner().invoke(cli, ["compare", "--strategies", "de,pso", "--max-games", "10",
                                   "--runs-dir", str(tmp_path)])
    assert res.exit_code != 0
