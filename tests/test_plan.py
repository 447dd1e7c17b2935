"""A command resolves its run once: one parse of each TOML file it names, a plan passed inward."""
from __future__ import annotations

import pytest

from evotune.cli import main
from evotune.errors import ConfigError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.plan import plan_run, with_overrides


def _run(*args):
    try:
        main(list(args))
    except SystemExit as exc:
        assert exc.code in (0, None), exc.code


def test_run_and_resume_parse_each_toml_file_once(tmp_path, toml_parses):
    spec = tmp_path / "tiny.toml"
    spec.write_text('# tiny spec\nname = "tiny"\nfeatures = "shannon"\n'
                    '[[group]]\nmatch = "*"\nreference = 100\nlower = 0\nupper = 1000\n'
                    '[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n')
    config = tmp_path / "run.toml"
    config.write_text("# run config\ngenerations = 1\nnp = 4\ngames = 2\ndepth = 1\n"
                      "max_plies = 40\nworkers = 1\n")
    _run("run", "--config", str(config), "--engine", str(spec), "--strategy", "spsa",
         "--openings", "startpos", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r")
    assert toml_parses == {"# tiny spec": 1, "# run config": 1}
    toml_parses.clear()
    _run("resume", "r", "--runs-dir", str(tmp_path / "runs"), "--generations", "2")
    assert toml_parses == {"# tiny spec": 1}


def test_a_plan_resolves_the_spec_openings_and_identity_once():
    cfg = build_run_config(depth=2, tc="", openings="startpos")
    plan = plan_run(cfg)
    assert plan.spec.name == "shannon" and plan.openings is None
    assert plan.limits.depth == 2 and plan.space.size == 6
    assert len(plan.identity["hash"]) == 16 and plan.identity["engine_spec"] == plan.spec.digest
    # where and how long a run goes may change on resume; what it computes may not
    more = with_overrides(plan, generations=9, workers=2)
    assert more.config.budget.generations == 9 and more.identity == plan.identity
    with pytest.raises(ConfigError, match="depth cannot change"):
        with_overrides(plan, depth=3)


def test_status_export_and_verify_parse_the_spec_once(tmp_path, toml_parses):
    spec = tmp_path / "tiny.toml"
    spec.write_text('# tiny spec\nname = "tiny"\nfeatures = "shannon"\n'
                    '[[group]]\nmatch = "*"\nreference = 100\nlower = 0\nupper = 1000\n'
                    '[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n')
    runs = str(tmp_path / "runs")
    _run("run", "--engine", str(spec), "--strategy", "de", "--np", "4", "--generations", "1",
         "--games", "2", "--depth", "1", "--max-plies", "40", "--workers", "1",
         "--openings", "startpos", "--runs-dir", runs, "--run-id", "r")
    spec.unlink()  # the run keeps its own copy: nothing below reads the file again
    for command in (["status", "r"], ["export", "r", "--format", "uci"],
                    ["verify", "r", "--games", "2", "--workers", "1"]):
        toml_parses.clear()
        _run(*command, "--runs-dir", runs)
        assert set(toml_parses) <= {"# tiny spec"} and toml_parses["# tiny spec"] <= 1, command
