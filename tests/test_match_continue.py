"""A match stopped anyhow (Ctrl-C, SIGTERM, kill -9) keeps every finished game in its folder and
continues with the command it prints, ending exactly as an uninterrupted match: the same PGN
bytes and the same statistics (issue 56, item 3), for 1 and 2 workers."""
from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
WEIGHTS = '{"knight": 280, "bishop": 330, "rook": 500, "queen": 900, "mobility": 5}'


def _match_args(tmp_path: Path, games: int, folder: str, pgn: str, workers: int) -> list[str]:
    w = tmp_path / "w.json"
    w.write_text(WEIGHTS)
    return ["match", "shannon", str(w), "--games", str(games), "--depth", "1", "--max-plies",
            "60", "--seed", "5", "--workers", str(workers), "--json", "--out",
            str(tmp_path / folder), "--pgn", str(tmp_path / pgn)]


def _evotune(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=600)


def _journal_games(folder: Path) -> int:
    try:
        return (folder / "games.jsonl").read_bytes().count(b"\n")
    except OSError:
        return 0


def _stop_at(args: list[str], folder: Path, games: int, sig: int) -> subprocess.CompletedProcess:
    """Start ``evotune ARGS`` in a process group of its own (SIGINT as on a terminal) and send
    ``sig`` once its journal holds ``games`` games (SIGINT to the whole group, as Ctrl-C; SIGTERM
    and SIGKILL to the command)."""
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, process_group=0, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and _journal_games(folder) < games:
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _continue_line(stderr: str) -> list[str]:
    """The command the last line of a stopped match says to continue with."""
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("evotune: interrupted; the "), stderr
    assert "finished games are kept in" in last
    command = shlex.split(last.split("continue with '", 1)[1].rstrip("'"))
    assert command[0] == "evotune"
    return command[1:]


def _stopped_and_continued(tmp_path: Path, games: int, workers: int, stops, name: str):
    """The match stopped at each (games, signal) of ``stops`` and continued each time with the
    printed command (kill -9 prints none: the same command continues it); its stdout, PGN bytes
    and folder."""
    args = _match_args(tmp_path, games, name, f"{name}.pgn", workers)
    folder = tmp_path / name
    for at, sig in stops:
        r = _stop_at(args, folder, at, sig)
        if sig == signal.SIGKILL:
            assert r.returncode == -signal.SIGKILL
        else:
            assert r.returncode == 130, r.stderr
            assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr, r.stderr
            args = _continue_line(r.stderr)
        kept = _journal_games(folder)
        assert kept >= at and kept < games
        assert not (tmp_path / f"{name}.pgn").exists()  # written once, at the end
    r = _evotune(args)
    assert r.returncode == 0, r.stderr
    assert "continuing the match in" in r.stderr
    return r.stdout, (tmp_path / f"{name}.pgn").read_bytes(), folder


def _uninterrupted(tmp_path: Path, games: int):
    r = _evotune(_match_args(tmp_path, games, "whole", "whole.pgn", 1))
    assert r.returncode == 0, r.stderr
    return r.stdout, (tmp_path / "whole.pgn").read_bytes(), tmp_path / "whole"


def _same_match(got, want) -> None:
    out, pgn, folder = got
    w_out, w_pgn, w_folder = want
    assert json.loads(out) == json.loads(w_out)  # the statistics
    assert pgn == w_pgn  # the PGN bytes
    assert (folder / "games.pgn").read_bytes() == (w_folder / "games.pgn").read_bytes() == w_pgn
    assert json.loads((folder / "result.json").read_text()) \
        == {**json.loads((w_folder / "result.json").read_text()),
            "pgn": str(tmp_pgn(folder))}


def tmp_pgn(folder: Path) -> Path:
    return folder.parent / f"{folder.name}.pgn"


def test_a_match_stopped_by_ctrl_c_sigterm_and_kill_9_ends_as_an_uninterrupted_one(tmp_path):
    want = _uninterrupted(tmp_path, 60)
    got = _stopped_and_continued(tmp_path, 60, 1, [(8, signal.SIGINT), (20, signal.SIGTERM),
                                                   (35, signal.SIGKILL)], "stopped")
    _same_match(got, want)
    assert json.loads(want[0])["games"] == 60


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_400_game_match_stopped_at_random_points_ends_as_an_uninterrupted_one(tmp_path,
                                                                                 workers):
    want = _uninterrupted(tmp_path, 400)
    rng = random.Random(56 + workers)
    points = sorted(rng.sample(range(10, 390), 4))
    stops = [(p, sig) for p, sig in zip(points, (signal.SIGINT, signal.SIGKILL, signal.SIGINT,
                                                 signal.SIGKILL))]
    got = _stopped_and_continued(tmp_path, 400, workers, stops, f"w{workers}")
    _same_match(got, want)


def test_a_torn_last_line_is_dropped_and_other_damage_refused(tmp_path):
    want = _uninterrupted(tmp_path, 6)
    args = _match_args(tmp_path, 6, "torn", "torn.pgn", 1)
    folder = tmp_path / "torn"
    folder.mkdir()
    lines = (tmp_path / "whole" / "games.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "games.jsonl").write_bytes(b"".join(lines[:3]) + lines[3][:40])  # killed mid-write
    (folder / "match.json").write_bytes((tmp_path / "whole" / "match.json").read_bytes())
    r = _evotune(args)
    assert r.returncode == 0, r.stderr
    assert "continuing the match in" in r.stderr and "(3 games kept)" in r.stderr
    _same_match((r.stdout, (tmp_path / "torn.pgn").read_bytes(), folder), want)
    # a damaged line before the end: one line, exit 2, nothing played
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "match.json").write_bytes((tmp_path / "whole" / "match.json").read_bytes())
    (bad / "games.jsonl").write_bytes(lines[0] + b"{not json\n" + lines[2])
    r = _evotune(_match_args(tmp_path, 6, "bad", "bad.pgn", 1))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("evotune: error: ")
    assert "games.jsonl line 2" in r.stderr and not (tmp_path / "bad.pgn").exists()


def test_a_continue_of_another_match_is_refused_in_one_line(tmp_path):
    _uninterrupted(tmp_path, 4)
    args = _match_args(tmp_path, 4, "whole", "other.pgn", 1)
    args[args.index("--seed") + 1] = "6"
    args[args.index("--depth") + 1] = "2"
    r = _evotune(args)
    assert r.returncode == 2
    assert r.stderr.strip() == (f"evotune: error: {tmp_path / 'whole'} holds another match (its "
                                "the limits (depth, nodes, time, --max-plies, adjudication), "
                                "--seed differ); continue it with its own command, or give "
                                "--out another folder")
    assert not (tmp_path / "other.pgn").exists()


def test_a_finished_match_again_prints_its_result_and_writes_its_pgn_once(tmp_path):
    want = _uninterrupted(tmp_path, 4)
    r = _evotune(_match_args(tmp_path, 4, "whole", "whole.pgn", 1))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(want[0])
    assert "(4 games kept)" in r.stderr and "not again" in r.stderr
    assert (tmp_path / "whole.pgn").read_bytes() == want[1]


def test_a_verification_keeps_its_games_in_the_run_and_continues_from_them(tmp_path,
                                                                            stored_run):
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(stored_run, runs / "good")
    args = ["verify", "good", "--runs-dir", str(runs), "--games", "6", "--depth", "1",
            "--workers", "1"]
    r = _evotune(args)
    assert r.returncode == 0, r.stderr
    whole = json.loads((runs / "good" / "verify.json").read_text())
    folders = sorted((runs / "good" / "verify-games").iterdir())
    assert len(folders) == len(whole["matches"])
    journal = folders[0] / "games.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    journal.write_bytes(b"".join(lines[:2]) + lines[2][:30])  # stopped (killed mid-write)
    r = _evotune(args)
    assert r.returncode == 0, r.stderr
    again = json.loads((runs / "good" / "verify.json").read_text())

    assert again["matches"] == whole["matches"]  # every count and statistic
    assert journal.read_bytes().count(b"\n") == 6


def test_a_compile_is_said_before_it_begins_and_left_out_of_the_rate(monkeypatch, caplog):
    """The first game of a command that must compile the core says so first (with the last
    compile's time as its estimate) and records how long it took; a bar's rate starts when the
    compile ended."""
    import logging

    from evotune.cli import progress
    from evotune.match import runner

    recorded = []
    monkeypatch.setattr(runner, "_WARM", False)
    monkeypatch.setattr(runner, "core_is_compiled", lambda: False)
    monkeypatch.setattr(runner, "compile_estimate", lambda: 93.0)
    monkeypatch.setattr(runner, "record_compile", recorded.append)
    bar = progress.Progress("games", 10)
    bar.t0 -= 100.0  # the bar began 100 s ago ...
    with caplog.at_level(logging.WARNING, logger="evotune.match.runner"):
        runner.warm_up()  # ... and the core compiled meanwhile (here: loaded from the cache)
    assert caplog.messages == ["compiling the engine core, about 93 s, once (later commands load "
                               "it from the cache)"]
    assert len(recorded) == 1 and recorded[0] >= 0
    bar.done = 5
    time.sleep(0.05)
    rate = float(bar.text().split("  ")[2].split()[0].replace(",", ""))
    assert rate > 5 / 100.0 * 10  # measured since the compile ended, not over the 100 s


def test_a_damaged_match_file_says_to_give_another_out(tmp_path):
    """Second adversarial pass of issue 60: a match folder whose match.json is corrupt or not an
    object was refused with a run's remedy ('another --run-id'), which match has not: the line
    says to give --out another folder."""
    _uninterrupted(tmp_path, 2)
    for text, words in (("{", "is corrupt"), ("[]", "a JSON object was expected, not a list")):
        (tmp_path / "whole" / "match.json").write_text(text)
        r = _evotune(_match_args(tmp_path, 2, "whole", "again.pgn", 1))
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert words in r.stderr and r.stderr.rstrip().endswith("give --out another folder")
        assert "--run-id" not in r.stderr
