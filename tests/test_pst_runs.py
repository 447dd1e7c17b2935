"""Runs on the `pst` feature set (778 weights), small budgets, end to end: a DE run and a TD run
play, store, plot, report and export; `evotune features` and `bench --engine` on the sets."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.runs.store import Store
from evotune.spec.features import feature_names

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def _ok(args):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.output


STRATEGIES = [("de", ["--np", "4"]),
              ("td", ["--np", "1", "--param", "alpha=2000"])]


def _pst_run(tmp_path, strategy, extra):
    runs = tmp_path / "runs"
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("init_low = -20.0\ninit_high = 300.0\n")  # tables near 0, pieces positive
    _ok(["run", "--strategy", strategy, *extra, "--engine", "pst", "--generations", "2",
         "--games", "2", "--depth", "1", "--workers", "1", "--config", str(cfg),
         "--runs-dir", str(runs), "--run-id", "r"])
    return runs


@pytest.mark.parametrize("strategy,extra", STRATEGIES)
def test_pst_run_plays_stores_and_exports(tmp_path, strategy, extra):
    runs = _pst_run(tmp_path, strategy, extra)
    store = Store(runs / "r")
    gens = store.generations()
    assert [g.generation for g in gens] == [0, 1, 2]
    assert all(np.asarray(g.population).shape[1] == 778 for g in gens)
    games = store.read_games()
    assert len(games) == gens[-1].games_total > 0
    if strategy == "td":
        # the records hold the PV-leaf phi_int of every move, 778 wide; learning moved weights
        assert all(len(row) == 778 for g in games for row in g["leaf_phi"])
        assert gens[1].stats["games_learned"] == 2 and gens[1].stats["update_norm"] > 0
    out = tmp_path / "w.json"
    _ok(["export", "r", "--format", "json", "--out", str(out), "--runs-dir", str(runs)])
    assert out.stat().st_size > 0
    # the exported weights play again as SPEC:WEIGHTS
    _ok(["match", f"pst:{out}", "pst", "--games", "2", "--depth", "1", "--max-plies", "20"])


@pytest.mark.slow
@pytest.mark.parametrize("strategy,extra", STRATEGIES)
def test_pst_run_plots_and_reports(tmp_path, strategy, extra):
    """Slow: until the plots draw tables as heatmaps, a 778-line convergence plot takes minutes."""
    runs, reports = _pst_run(tmp_path, strategy, extra), tmp_path / "reports"
    _ok(["plot", "r", "--runs-dir", str(runs), "--reports", str(reports)])
    _ok(["report", "r", "--runs-dir", str(runs), "--reports", str(reports)])
    assert any(reports.rglob("*.png")) and any(reports.rglob("*.md"))


def test_features_command_lists_names_values_and_contributions():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    text = _ok(["features", fen, "--engine", "pst-pesto"])
    lines = text.splitlines()
    assert lines[0].split() == ["feature", "phi", "weight", "contribution"]
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[1:-1]}
    assert set(rows) <= set(feature_names("pst"))
    # the knights on f3 and c6 cancel in the tables only if their squares mirror: f3 vs f6 differ
    assert "pst.mg.knight.f3" in rows and "pst.mg.knight.c3" in rows
    phi, weight, contribution = (float(x) for x in rows["pst.mg.knight.f3"])
    assert contribution == pytest.approx(phi * weight, abs=0.01)
    total = sum(float(r[2]) for r in rows.values())
    evaluation = int(lines[-1].rsplit("evaluation ", 1)[1].split()[0])
    assert abs(total - evaluation) < 1
    shannon = _ok(["features", fen]).splitlines()
    assert shannon[1].split()[0] == "mobility" and len(shannon) == 3  # material is level


def test_bench_with_an_engine_spec_json():
    text = _ok(["bench", "--json", "--quick", "--engine", "extended"])
    figures = json.loads(text)
    assert (figures["engine"], figures["features"]) == ("extended", "extended")
    assert figures["signature"] > 0 and figures["speedup"] > 1


def test_features_and_bench_bad_input_is_one_line(capsys):
    for args in (["features", "not a fen", "--engine", "pst"],
                 ["features", START, "--engine", "nope"],
                 ["features", START, "--engine", "pst", "--weights", "1,2,3"],
                 ["bench", "--engine", "example-centipawn"]):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 2, args
        err = capsys.readouterr().err
        assert err.startswith("evotune: error:") and len(err.strip().splitlines()) == 1, err
