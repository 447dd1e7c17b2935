"""Progress on every long command (issue 37, item 1): off a terminal plain lines at most every
PLAIN_EVERY seconds and never a carriage return; on a terminal a bar with done/total, the rate
and the time left; --quiet for none."""
from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.cli import progress as progress_mod

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
MATCH = ["match", "shannon", "shannon", "--games", "4", "--depth", "1", "--workers", "1"]


@pytest.fixture
def every_update(monkeypatch):
    """A plain line at every update (PLAIN_EVERY 0), so that short commands show them."""
    monkeypatch.setattr(progress_mod, "PLAIN_EVERY", 0.0)


def _invoke(args: list[str]):
    runner = CliRunner()
    with runner.isolated_filesystem():  # a match keeps its games under populations/matches/
        res = runner.invoke(cli, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def _progress_lines(stderr: str) -> list[str]:
    """stderr less the line that names a match's folder."""
    return [ln for ln in stderr.splitlines() if not ln.startswith("match in ")]


def test_match_off_a_terminal_prints_plain_lines_with_rate_and_time_left(every_update):
    res = _invoke(MATCH)
    lines = _progress_lines(res.stderr)
    assert "\r" not in res.stderr
    assert [re.match(r"games  (\d)/4 games  [\d.]+ games/s  \d+:\d\d left$", ln).group(1)
            for ln in lines] == ["1", "2", "3", "4"]
    assert "Score of shannon vs shannon" in res.stdout or "games" in res.stdout


def test_off_a_terminal_lines_are_rare_and_quiet_has_none(every_update, monkeypatch):
    assert _invoke([*MATCH, "--quiet"]).stderr == ""
    monkeypatch.setattr(progress_mod, "PLAIN_EVERY", 30.0)
    assert _progress_lines(_invoke(MATCH).stderr) == []  # a match of a second: none before 30 s


def test_run_shows_the_games_inside_a_generation_off_a_terminal(tmp_path, every_update):
    res = _invoke(["run", "--np", "4", "--games", "2", "--depth", "1", "--generations", "2",
                   "--workers", "1", "--runs-dir", str(tmp_path), "--run-id", "r"])
    assert "\r" not in res.stderr
    inside = [ln for ln in res.stderr.splitlines()
              if re.match(r"generation 2/2  \d+/\d+ games  [\d.]+ games/s  \d+:\d\d left  "
                          r"run \d+:\d\d left$", ln)]
    ends = [ln for ln in res.stderr.splitlines() if re.match(r"generation \d/2  games \d+  ", ln)]
    assert len(inside) >= 4 and len(ends) == 2, res.stderr
    quiet = _invoke(["run", "--np", "4", "--games", "2", "--depth", "1", "--generations", "1",
                     "--workers", "1", "--runs-dir", str(tmp_path), "--run-id", "q", "--quiet"])
    assert quiet.stderr.splitlines() == [f"run q in {tmp_path / 'q'}"]


def test_plot_and_datagen_show_progress_off_a_terminal(tmp_path, every_update, make_fake_run):
    make_fake_run(tmp_path, "p")
    res = _invoke(["plot", "p", "--runs-dir", str(tmp_path), "--reports", str(tmp_path / "r")])
    steps = [ln for ln in res.stderr.splitlines() if ln.startswith("plot  ")]
    assert "\r" not in res.stderr
    # convergence, deviation and strategy: built, then each as .png and .svg
    assert len(steps) == 7 and steps[-1].startswith("plot  7/7 files"), steps
    res = _invoke(["datagen", "--games", "4", "--depth", "1", "--chunk", "2", "--workers", "1",
                   "--out", str(tmp_path / "d.txt")])
    assert "\r" not in res.stderr
    assert re.search(r"^datagen  4/4 games  [\d.]+ games/s  0:00 left  \d+ positions$",
                     res.stderr, re.M), res.stderr


def test_compare_shows_its_runs_and_its_verification(tmp_path, every_update):
    res = _invoke(["compare", "--strategies", "de", "--max-games", "8", "--np", "4", "--depth",
                   "1", "--verify-games", "2", "--workers", "1", "--runs-dir", str(tmp_path),
                   "--reports", str(tmp_path / "r")])
    assert "\r" not in res.stderr
    assert re.search(r"^  generation 1  \d+/\d+ games", res.stderr, re.M), res.stderr
    assert re.search(r"^  generation 1  games \d+  means", res.stderr, re.M), res.stderr
    assert re.search(r"^verification  \d/\d games", res.stderr, re.M), res.stderr


def test_on_a_terminal_match_draws_a_bar_with_rate_and_time_left():
    """stderr a pty: the bar is redrawn in place ('\\r'), with done/total, rate and time left."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *MATCH], stdout=subprocess.PIPE,
                            stderr=slave, env=ENV)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the pty
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(master)
    text = seen.decode()
    assert proc.returncode == 0, text
    assert "\r" in text
    assert re.search(r"games  \[#{24}\]  4/4 games  [\d.]+ games/s  0:00 left", text), text


def test_nn_train_shows_its_reading_and_its_epochs_off_a_terminal(tmp_path, every_update,
                                                                   monkeypatch):
    from evotune.learn.nn import data as nn_data

    _invoke(["datagen", "--games", "4", "--depth", "1", "--format", "text", "--workers", "1",
             "--out", str(tmp_path / "d.txt"), "--quiet"])
    monkeypatch.setattr(nn_data, "_BLOCK", 8)  # a progress call every 8 positions read
    res = _invoke(["nn", "train", str(tmp_path / "d.txt"), "--hidden", "8", "--epochs", "1",
                   "--batch", "8", "--wdl", "0", "--workers", "1", "--runs-dir",
                   str(tmp_path / "runs")])
    assert "\r" not in res.stderr
    assert re.search(r"^reading the data  8 positions  ", res.stderr, re.M), res.stderr
    assert re.search(r"^epoch 1/1  \d+/\d+ positions  [\d,.]+ positions/s  \d+:\d\d left$",
                     res.stderr, re.M), res.stderr
    assert re.search(r"^  epoch 1/1  loss train ", res.stderr, re.M), res.stderr


def test_a_continued_datagen_counts_only_its_own_games_and_ends_at_the_positions_limit(
        every_update, monkeypatch, capsys):
    """A rerun that continues a file at 6,000 of 8,000 games: the rate is this command's 10
    games/s (not 6,100 / 10 s), and the time left is to --positions (93,000 more at 700 a
    second: 2:13), which comes before the games' 190 s."""
    now = [100.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: now[0])
    bar = progress_mod.CountBar("datagen", "games", count_total=600_000)
    bar(6000, 8000, 500_000)  # the library's call before the first chunk: where the file stood
    now[0] = 110.0
    bar(6100, 8000, 507_000)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == ("datagen  6,100/8,000 games  10.0 games/s  2:13 left  "
                         "507,000/600,000 positions")
    plain = progress_mod.CountBar("label", "positions", "scored")
    now[0] = 200.0
    plain(0, 100, 0)
    now[0] = 204.0
    plain(20, 100, 18)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "label  20/100 positions  5.0 positions/s  0:16 left  18 scored")
