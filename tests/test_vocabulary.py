"""One meaning per word (round 5): the built-in engine as a player is ``shannon`` (``reference``
still plays it, with a one-line note), the final check has one name in flags, config files and
run files (the old spellings still read), a clock no player plays is refused, ``runs`` counts the
final check's games and shows its verdict, and SPSA/CMA-ES runs are described in their own
terms (theta, its step; no population, no zero deviations)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import chess.pgn
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.kinds.games.config import build_run_config, dump_config_toml, load_config_file
from evotune.runs.store import Store

START = {"pawn": 100, "knight": 300, "bishop": 330, "rook": 500, "queen": 900, "mobility": 10}


def _evotune(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)


def test_reference_as_a_player_still_plays_shannon_with_one_note(tmp_path):
    pgn = tmp_path / "g.pgn"
    res = _evotune("match", "reference", "shannon", "--games", "2", "--depth", "1",
                   "--pgn", str(pgn))
    assert res.returncode == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if "note:" in ln]
    assert notes == ["evotune: note: the player 'reference' is now called 'shannon' (the "
                     "built-in engine's spec name); 'reference' still works"]
    with pgn.open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    assert {game.headers["White"], game.headers["Black"]} == {"shannon-A", "shannon-B"}
    plain = _evotune("match", "shannon", "shannon", "--games", "2", "--depth", "1")
    assert plain.returncode == 0 and "note:" not in plain.stderr
    assert plain.stdout.splitlines()[-1].split(":")[1:] == res.stdout.splitlines()[-1].split(":")[1:]


@pytest.mark.parametrize("args", [
    ("match", "shannon", "pst", "--games", "2", "--tc", "1+0.05"),
    ("match", "shannon", "shannon", "--games", "2", "--movetime", "0.1"),
    ("run", "--strategy", "spsa", "--max-games", "8", "--generations", "0", "--tc", "2+0.05"),
    ("run", "--opponents", "pst", "--max-games", "8", "--generations", "0", "--movetime", "0.1"),
])
def test_a_clock_that_no_player_plays_is_one_line_and_exit_2_before_anything_is_written(
        tmp_path, args):
    res = _evotune(*args, "--runs-dir", str(tmp_path / "runs")) if args[0] == "run" \
        else _evotune(*args, "--pgn", str(tmp_path / "g.pgn"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "built-in alpha-beta engine, which plays to its depth whatever the clock" \
        in res.stderr
    assert re.match(r"evotune: error: --(tc|movetime) ", res.stderr)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "g.pgn").exists()


def test_the_final_check_is_one_name_in_flags_and_config_files(tmp_path):
    new = CliRunner().invoke(cli, ["run", "--final-check-games", "200", "--final-check-openings",
                                   "run", "--print-config"])
    assert new.exit_code == 0, new.output
    assert "final_check_games = 200" in new.stdout and 'final_check_openings = "run"' \
        in new.stdout and "guard" not in new.stdout
    old = CliRunner().invoke(cli, ["run", "--guard-games", "200", "--guard-openings", "run",
                                   "--print-config"])
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert "--guard-games is now called --final-check-games" in old.stderr
    assert "--guard-openings is now called --final-check-openings" in old.stderr
    # the printed config reads back; a file may still spell the stored keys
    f = tmp_path / "c.toml"
    f.write_text(new.stdout)
    cfg = build_run_config(file=f)
    assert (cfg.final_check.games, cfg.final_check.openings) == (200, "run")
    assert dump_config_toml(cfg) == new.stdout
    f.write_text("guard_games = 400\n")
    assert load_config_file(f) == {"guard_games": 400}
    f.write_text("guard_games = 400\nfinal_check_games = 200\n")
    bad = _evotune("run", "--config", str(f), "--print-config")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "'final_check_games' is given twice" in bad.stderr


def _from_start(tmp_path, run_id: str, strategy: str, *extra: str):
    (tmp_path / "start.json").write_text(json.dumps(START))
    res = CliRunner().invoke(cli, [
        "run", "--strategy", strategy, "--engine", f"shannon:{tmp_path / 'start.json'}",
        "--generations", "2", "--games", "2", "--depth", "1", "--seed", "3", "--workers", "1",
        "--final-check-games", "8", "--runs-dir", str(tmp_path), "--run-id", run_id, *extra])
    assert res.exit_code == 0, res.output
    return res


def test_an_spsa_run_is_told_in_its_own_terms_and_its_counts_agree(tmp_path):
    # seed 4: theta moves by a unit in these 8 games (a theta equal to its start plays no check)
    res = _from_start(tmp_path, "s", "spsa", "--batch", "2", "--seed", "4")
    store = Store(tmp_path / "s")
    check = store.read_final_check()
    assert check is not None and check.games > 0
    assert (tmp_path / "s" / "final-check.json").is_file()
    assert not (tmp_path / "s" / "guard.json").exists()
    tuning = store.read_state().games
    total = tuning + check.games
    last = [ln for ln in res.output.splitlines() if ln.startswith("run s:")][0]
    assert f"{total} games" in last
    status = CliRunner().invoke(cli, ["status", "s", "--runs-dir", str(tmp_path)])
    lines = status.output.splitlines()
    assert lines[0].startswith(f"run s: spsa, generation 2/2, {total} games,")
    assert "NP" not in lines[0]
    assert re.match(r"  spsa step: c_k [0-9.e+-]+, R_k [0-9.e+-]+ \(means over the weights\)$",
                    lines[1])
    assert lines[2].split() == ["weight", "theta", "change"]  # no std column of zeros
    info = json.loads(CliRunner().invoke(cli, ["status", "s", "--runs-dir", str(tmp_path),
                                               "--json"]).stdout)
    assert (info["games"], info["tuning_games"]) == (total, tuning)
    assert set(info["step"]) == {"c_k", "R_k"}
    runs = CliRunner().invoke(cli, ["runs", "--runs-dir", str(tmp_path)])
    row = runs.output.splitlines()[1]
    verdict = "tuned" if check.better else "start kept"
    assert re.search(rf"^s +games +spsa +generation 2/2 +{total} games +check {check.verdict}"
                     rf" .*: {verdict} +finished", row), row
    report = CliRunner().invoke(cli, ["report", "s", "--runs-dir", str(tmp_path),
                                      "--reports", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    md = (tmp_path / "rep" / "s" / "report.md").read_text()
    assert "population (NP)" not in md and "initial range" not in md
    assert "| start |" in md and "| final theta |" in md and "initial std" not in md
    assert f"{total} games ({check.games} of them the final check's)" in md


def test_a_run_made_before_the_rename_still_shows_its_final_check(tmp_path):
    _from_start(tmp_path, "old", "de", "--np", "4", "--param", "selection=paper")
    root = tmp_path / "old"
    (root / "final-check.json").rename(root / "guard.json")
    (root / "final-check.pgn").rename(root / "guard.pgn")
    check = Store(root).read_final_check()
    assert check is not None
    status = CliRunner().invoke(cli, ["status", "old", "--runs-dir", str(tmp_path)])
    assert status.exit_code == 0 and status.output.strip().splitlines()[-1] == check.sentence
    assert "NP 4" in status.output.splitlines()[0]  # a population keeps its NP and stds
    assert status.output.splitlines()[1].split() == ["weight", "mean", "std", "change"]
    resumed = CliRunner().invoke(cli, ["resume", "old", "--runs-dir", str(tmp_path)])
    assert resumed.exit_code == 0, resumed.output
    assert not (root / "final-check.json").exists()  # its check is read, not played again
