"""Match, verify, compare and datagen are as safe as runs: nothing they start outlives them (SIGKILL
or SIGTERM of the command), they start only the engine processes they use, a shutdown is not
reported as forfeits, and what they print says what the games mean."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_store_processes import _descendants, _table

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ")
    except OSError:
        return b""


def _engine_pids(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.iterdir()}


def _alive(pids: dict[int, bytes]) -> dict[int, bytes]:
    """The processes of ``pids`` (pid -> start time) still running (zombies count as gone)."""
    table = _table()
    out = {}
    for p, start in pids.items():
        if p in table and table[p][1] == start:
            try:
                state = open(f"/proc/{p}/stat", "rb").read().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if state != b"Z":
                out[p] = _cmdline(p)[:100]
    return out


def _kill_when_busy(args: list[str], pids: Path, sig: int, *, engines: int = 2,
                    timeout: float = 150.0) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """Start ``evotune ARGS``; once its loky workers and ``engines`` engines run, send ``sig``;
    return (the command line of every descendant seen, those still running 5 s after the
    command ended)."""
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, bytes] = {}
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        seen.update(_descendants(proc.pid))
        workers = [p for p in seen if b"loky" in _cmdline(p)]
        if len(workers) >= 2 and len(_engine_pids(pids)) >= engines:
            break
        time.sleep(0.05)
    seen.update(_descendants(proc.pid))
    assert proc.poll() is None, (
        "the command ended before it could be killed: " + proc.stderr.read().decode()[-500:])
    table = _table()
    seen.update({p: table[p][1] for p in _engine_pids(pids) if p in table})
    kinds = {p: _cmdline(p) for p in seen}
    os.kill(proc.pid, sig)
    proc.wait()
    gone_by = time.time() + 5
    while time.time() < gone_by and _alive(seen):
        time.sleep(0.1)
    return kinds, _alive(seen)


@pytest.fixture()
def two_fakes(tmp_path, fake_engine_spec):
    """Two fake engine specs that write their processes' pids into tmp_path/pids."""
    pids = tmp_path / "pids"
    pids.mkdir()
    a = fake_engine_spec(tmp_path, "random_mover", "--pids", str(pids), name="fa")
    b = fake_engine_spec(tmp_path, "random_mover", "--pids", str(pids), name="fb",
                         options="Seed = 8")
    return a, b, pids


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_match_leaves_no_worker_tracker_or_engine(two_fakes, sig):
    a, b, pids = two_fakes
    # 2 engines of the spec check (closed when the workers start) + 2 per worker
    seen, alive = _kill_when_busy(["match", str(a), str(b), "--games", "400", "--workers", "2"],
                                  pids, sig, engines=6)
    assert sum(b"LokyProcess" in c for c in seen.values()) == 2
    assert sum(b"resource_tracker" in c for c in seen.values()) >= 1
    assert sum(b"random_mover" in c for c in seen.values()) >= 4
    assert alive == {}


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGKILL, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)])
def test_killed_verify_leaves_no_process(tmp_path, two_fakes, make_fake_run, sig):
    a, _, pids = two_fakes
    make_fake_run(tmp_path / "runs", "v", engine=str(a))
    seen, alive = _kill_when_busy(["verify", "v", "--runs-dir", str(tmp_path / "runs"),
                                   "--games", "400", "--workers", "2"], pids, sig, engines=5)
    assert sum(b"LokyProcess" in c for c in seen.values()) == 2
    assert sum(b"random_mover" in c for c in seen.values()) >= 4
    assert alive == {}


@needs_proc
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_compare_leaves_no_process(tmp_path, two_fakes, sig):
    a, _, pids = two_fakes
    seen, alive = _kill_when_busy(["compare", "--strategies", "de", "--max-games", "20000",
                                   "--np", "4", "--engine", str(a), "--verify-games", "2",
                                   "--workers", "2", "--runs-dir", str(tmp_path / "runs"),
                                   "--reports", str(tmp_path / "reports")], pids, sig,
                                  engines=4)
    assert sum(b"LokyProcess" in c for c in seen.values()) == 2
    assert alive == {}


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGKILL, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)])
def test_killed_datagen_leaves_no_process(tmp_path, two_fakes, sig):
    a, _, pids = two_fakes
    seen, alive = _kill_when_busy(["datagen", "--engine", str(a), "--games", "400", "--workers",
                                   "2", "--out", str(tmp_path / "pos.txt")], pids, sig,
                                  engines=2)
    assert sum(b"LokyProcess" in c for c in seen.values()) == 2
    assert alive == {}


def _max_alive_engines(proc: subprocess.Popen, pids: Path) -> int:
    """The most engine processes of ``pids`` running at once while ``proc`` runs."""
    most = 0
    while proc.poll() is None:
        table = _table()
        most = max(most, len([p for p in _engine_pids(pids) if p in table and b"random_mover"
                              in _cmdline(p)]))
        time.sleep(0.02)
    return most


@needs_proc
@pytest.mark.parametrize("workers, started, at_once", [(1, 4, 2), (2, 6, 4)])
def test_match_starts_one_process_per_engine_and_worker(two_fakes, workers, started, at_once):
    """The spec check starts each engine once and closes it (it checks options and bounds as a
    run does); then each worker holds one process per engine (not one per engine and colour)."""
    a, b, pids = two_fakes
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "match", str(a), str(b),
                             "--games", "16", "--max-plies", "30", "--workers", str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    most = _max_alive_engines(proc, pids)
    out, err = proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"Games: 16, " in out
    assert len(_engine_pids(pids)) == started
    assert most == at_once


def test_self_play_holds_two_processes_per_worker(tmp_path, fake_engine_spec):
    """The same engine on both sides: one check (the spec once), then two processes for the
    games, and no more across games."""
    pids = tmp_path / "pids"
    pids.mkdir()
    a = fake_engine_spec(tmp_path, "random_mover", "--pids", str(pids), name="fa")
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "match", str(a), str(a),
                           "--games", "6", "--max-plies", "20", "--workers", "1"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(_engine_pids(pids)) == 3


def _ctrl_c_stderr(args: list[str], pids: Path, engines: int) -> str:
    """Start ``evotune ARGS`` in a process group of its own (SIGINT not ignored, as on a
    terminal), press Ctrl-C (SIGINT to the group) once ``engines`` engines run; its stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, process_group=0,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and len(_engine_pids(pids)) < engines:
        time.sleep(0.05)
    time.sleep(1.0)  # games under way
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return err.decode()


@needs_proc
def test_ctrl_c_of_a_match_reports_no_forfeit(two_fakes):
    a, b, pids = two_fakes
    out = pids.parent / "ctrl-c-match"
    err = _ctrl_c_stderr(["match", str(a), str(b), "--games", "400", "--workers", "2", "--out",
                          str(out)], pids, 6)
    assert "forfeit" not in err and "exit code" not in err, err
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"match in {out} (continue a stopped one with "), err
    assert all(ln.startswith(("match in", "compiling the engine core")) for ln in lines[:-1]), err
    assert lines[-1].startswith("evotune: interrupted; the ") and str(out) in lines[-1], err


@needs_proc
@pytest.mark.slow
def test_ctrl_c_of_a_run_reports_no_forfeit(tmp_path, two_fakes):
    a, _, pids = two_fakes
    err = _ctrl_c_stderr(["run", "--engine", str(a), "--np", "4", "--games", "2",
                          "--generations", "50", "--workers", "2", "--runs-dir",
                          str(tmp_path / "runs"), "--run-id", "c"], pids, 5)
    assert "forfeit" not in err and "exit code" not in err, err
    assert "interrupted; every finished generation is stored" in err, err


def test_a_forfeit_is_reported_where_the_game_arrives_not_where_it_is_played(
        tmp_path, fake_engine_spec, caplog):
    """A worker does not print its engine's death: the game's record carries the forfeit, and
    map_games (in the process that receives the game) reports it. A game cut off by a shutdown
    never arrives, so engines killed by Ctrl-C are not reported as forfeits."""
    from evotune.match import MatchSettings, map_games, play_task
    from evotune.match.fixtures import Fixture, game_task
    from evotune.match.openings import Opening
    from evotune.players.external import close_all
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    crash = player_from_engine_spec(load_engine_spec(fake_engine_spec(
        tmp_path, "crash", "--after", "2", name="crasher")), None, name="crasher")
    other = player_from_engine_spec(load_engine_spec(fake_engine_spec(
        tmp_path, options="Seed = 9")), None, name="other")
    task = game_task(Fixture(key=(0, 0), a=crash, b=other, games=2), 0, Opening(),
                     MatchSettings())
    try:
        with caplog.at_level("WARNING"):
            rec = play_task(task)
            assert caplog.records == []
            assert rec.termination == "forfeit-crash" and rec.result == "0-1"
            assert len(rec.notes) == 1 and "crasher (white) forfeits the game" in rec.notes[0]
            assert "notes" not in rec.to_dict()
            (again,) = map_games([task])
        assert again == rec
        assert [r.getMessage() for r in caplog.records] == list(rec.notes)
    finally:
        close_all()


# ---- what a match of mirror-image pairs says ------------------------------------------------------

def test_mirror_image_pairs_say_no_information_instead_of_a_zero_error_bar(tmp_path,
                                                                         fake_engine_spec):
    """The fake engine's move depends on the position only: with colours swapped, each pair's
    two games mirror each other (every pair 1-1), as deterministic self-play at a fixed depth."""
    a = fake_engine_spec(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "match", str(a), str(a),
                           "--games", "6", "--max-plies", "20"], capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "Ptnml(0-2): [0, 0, 3, 0, 0]" in out
    assert "Elo: no information (every pair of games scored 1-1" in out
    assert "+- 0.0" not in out
    js = subprocess.run([sys.executable, "-m", "evotune.cli", "match", str(a), str(a),
                         "--games", "6", "--max-plies", "20", "--json"], capture_output=True,
                        timeout=120)
    assert json.loads(js.stdout)["elo_error"] is None  # no interval, not a bar of 0


def test_verify_and_compare_lines_say_no_information_too():
    from evotune.experiments import _elo_text
    from evotune.match.scoring import elo_error, uninformative
    from evotune.verify.text import describe_match

    m = {"label": "recommended vs reference", "games": 6, "wins": 2, "draws": 2, "losses": 2,
         "score": 0.5, "elo": 0.0, "elo_error": None, "pentanomial": [0, 0, 3, 0, 0],
         "los": 0.5}
    assert "Elo: no information (every pair of games scored 1-1" in describe_match(m)
    assert _elo_text(m) == "no information"
    informative = {**m, "pentanomial": [0, 1, 1, 1, 0], "elo_error": 150.2}
    assert "Elo +0.0 +- 150.2 (95%)" in describe_match(informative)
    assert not uninformative([0, 1, 1, 1, 0]) and not uninformative([0, 0, 0, 0, 0])
    assert elo_error(0.5, 0.0, 10) == math.inf  # every pair alike: no interval, never 0


# ---- verify's limits, the game budget's rule ---------------------------------------------------

@pytest.mark.slow
def test_verify_takes_movetime_and_tc_from_the_shared_limit_flags(tmp_path, fake_engine_spec,
                                                                  make_fake_run):
    runs = tmp_path / "runs"
    make_fake_run(runs, "v", engine=str(fake_engine_spec(tmp_path)), max_plies=20)
    base = [sys.executable, "-m", "evotune.cli", "verify", "v", "--runs-dir", str(runs),
            "--games", "2", "--workers", "1"]
    both = subprocess.run(base + ["--movetime", "0.05", "--tc", "1+0.1"], capture_output=True)
    assert both.returncode == 2 and len(both.stderr.decode().splitlines()) == 1
    assert "--tc or --movetime" in both.stderr.decode()
    assert not (runs / "v" / "verify.json").exists()
    bad = subprocess.run(base + ["--movetime", "-1"], capture_output=True)
    assert bad.returncode == 2 and len(bad.stderr.decode().splitlines()) == 1
    ok = subprocess.run(base + ["--movetime", "0.05"], capture_output=True, timeout=300)
    assert ok.returncode == 0, ok.stderr.decode()
    doc = json.loads((runs / "v" / "verify.json").read_text())
    assert doc["movetime"] == 0.05 and doc["tc"] == ""
    ok = subprocess.run(base + ["--tc", "5+0.1"], capture_output=True, timeout=300)
    assert ok.returncode == 0, ok.stderr.decode()
    doc = json.loads((runs / "v" / "verify.json").read_text())
    assert doc["movetime"] == 0.0 and doc["tc"] == "5+0.1"


def test_max_games_stops_after_the_generation_that_reaches_it(tmp_path):
    """The rule --help states: whole generations; the last may pass the budget by at most one
    generation's games (NP x --games)."""
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "run", "--np", "4", "--games",
                           "2", "--max-games", "10", "--depth", "1", "--workers", "1",
                           "--runs-dir", str(tmp_path), "--run-id", "b"], capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    gens = sorted((tmp_path / "b" / "generations").glob("gen-*.json"))[1:]  # after gen 0
    games = [json.loads(g.read_text())["games"] for g in gens]
    total = sum(games)
    assert total >= 10 and total - games[-1] < 10 and games[-1] <= 4 * 2


# ---- names that reach PGN headers -----------------------------------------------------------------

def test_pgn_headers_escape_line_breaks_and_quotes_so_no_game_is_lost():
    """A name from a file, an engine command or an openings path can hold anything: every game
    is still written, one header per line, and read back whole."""
    import io

    import chess.pgn

    from evotune.match import GameRecord, write_pgn_text
    from evotune.match.openings import Opening

    odd = 'x\n[Result "0-1"]\r\t"q"\\'
    recs = [GameRecord(key=(0, 0, 0, i), white_name=odd, black_name="b", white_weights=(1.0,),
                       black_weights=(2.0,), opening=Opening(label=f"{odd}:3"),
                       moves=("e2e4", "e7e5"), result="1-0", termination="ply-cap",
                       white_engine=f"/bin/{odd}") for i in range(3)]
    text = write_pgn_text(recs, event=f"match {odd}")
    lines = text.splitlines()
    assert sum(x.startswith("[Event ") for x in lines) == 3
    assert sum(x.startswith("[Result ") for x in lines) == 3
    assert all(line.startswith("[") == line.endswith("]") for line in text.splitlines()
               if line.startswith("["))
    games = []
    fh = io.StringIO(text)
    while (g := chess.pgn.read_game(fh)) is not None:
        games.append(g)
    assert len(games) == 3
    assert [g.headers["Result"] for g in games] == ["1-0"] * 3
    assert [len(list(g.mainline_moves())) for g in games] == [2] * 3
    assert "\n" not in games[0].headers["White"]
