"""The store: typed records, resume checks and repairs, the writer lock, disk full.

Damaged-run tests copy one real finished run (3 generations) and damage it the way the issue
found: each damage is either repaired exactly (and the resumed run equals an undamaged resume)
or refused with one line naming the file (and line), leaving every file as it was.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evotune.errors import StoreError
from evotune.fileio import atomic_write_json
from evotune.kinds.games.config import RunConfig, build_run_config
from evotune.kinds.games.lifecycle import new_run, open_run
from evotune.kinds.games.plan import with_overrides
from evotune.kinds.games.solver import execute
from evotune.match.gamerecord import GameRecord
from evotune.runs.store import Store, list_runs

TINY = dict(population=4, generations=3, games=2, depth=1, seed=5, openings="book", workers=1)


def _evotune(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, **kw)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished 3-generation run, and the same run continued to generation 4 (the truth)."""
    base = tmp_path_factory.mktemp("runs")
    cfg = build_run_config(**TINY)
    execute(*new_run(cfg, out_dir=base, run_id="done"))
    shutil.copytree(base / "done", base / "truth4")
    store, plan = open_run("truth4", out_dir=base)
    execute(store, with_overrides(plan, generations=4))
    return base


def _copy(finished_run: Path, tmp_path: Path) -> Store:
    shutil.copytree(finished_run / "done", tmp_path / "done")
    return Store(tmp_path / "done")


def _snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".lock"}


def _resume4(store: Store):
    s, plan = open_run(store.root.name, out_dir=store.root.parent)
    return execute(s, with_overrides(plan, generations=4))


@pytest.fixture
def equals_truth(stored_generations, stored_games):
    """``equals_truth(store, finished_run)``: asserts that ``store`` holds the truth run's
    generations, games and PGN (timings aside)."""

    def check(store: Store, finished_run: Path) -> None:
        assert stored_generations(store.root) == stored_generations(finished_run / "truth4")
        assert stored_games(store.root) == stored_games(finished_run / "truth4")
        assert store.pgn_path.read_text() == (finished_run / "truth4" / "games.pgn").read_text()

    return check


# ---- repaired exactly ---------------------------------------------------------------------------

def test_missing_state_is_rebuilt_exactly_from_the_last_generation(finished_run, tmp_path,
                                                                   equals_truth):
    store = _copy(finished_run, tmp_path)
    before = store.read_state()
    store.state_path.unlink()
    point = store.prepare_resume()
    assert point.notes == ("state.json was missing: rebuilt from gen-0003.json (generation 3)",)
    assert (point.state.generation, point.state.games, point.state.strategy) == \
        (before.generation, before.games, before.strategy)
    _resume4(store)
    equals_truth(store, finished_run)


def test_torn_tail_of_an_unfinished_generation_is_dropped_and_the_next_line_is_whole(
        finished_run, tmp_path, equals_truth):
    store = _copy(finished_run, tmp_path)
    with open(store.games_path, "a") as fh:
        fh.write('{"key": [4, 0')  # shorter than one record: a kill mid-append
    _resume4(store)
    equals_truth(store, finished_run)
    assert len(store.read_games()) == store.read_state().games


def test_games_and_file_of_an_uncommitted_generation_are_dropped(finished_run, tmp_path,
                                                                 equals_truth):
    store = _copy(finished_run, tmp_path)
    truth = Store(finished_run / "truth4")
    extra = [GameRecord.from_dict(r) for r in truth.read_games() if r["key"][0] == 4]
    store.append_games(extra[:1])
    shutil.copy(truth.generation_path(4), store.generation_path(4))  # state not yet written
    point = store.prepare_resume()
    assert point.notes == ("dropped 1 games of the unfinished generation 4",)
    assert not store.generation_path(4).exists()
    _resume4(store)
    equals_truth(store, finished_run)


@pytest.mark.parametrize("damage", ["truncate", "binary", "missing"])
def test_a_pgn_behind_the_log_is_rebuilt_in_full_never_shrunk(finished_run, tmp_path, damage,
                                                              equals_truth):
    store = _copy(finished_run, tmp_path)
    games = len(store.read_games())
    text = store.pgn_path.read_bytes()
    if damage == "truncate":
        store.pgn_path.write_bytes(text[:len(text) // 2])
    elif damage == "binary":
        store.pgn_path.write_bytes(bytes(range(256)) * 4)
    else:
        store.pgn_path.unlink()
    _resume4(store)
    equals_truth(store, finished_run)
    assert store.pgn_game_count() == len(store.read_games()) > games


# ---- refused, naming the file, changing nothing ----------------------------------------------

def _state(store, **kw):
    d = json.loads(store.state_path.read_text())
    d.update(kw)
    store.state_path.write_text(json.dumps(d))


def _log_lines(store):
    return store.games_path.read_bytes().split(b"\n")[:-1]


def _set_log(store, lines):
    store.games_path.write_bytes(b"".join(x + b"\n" for x in lines))


DAMAGES = {
    # name: (damage, message regex)
    "state not json": (lambda s: s.state_path.write_text('{"generation": 2, "gam'),
                       r"state file .*state\.json is corrupt"),
    "state generation x": (lambda s: _state(s, generation="x"),
                           r"state\.json is damaged \('generation' must be an integer"),
    "state games -5": (lambda s: _state(s, games=-5), r"state\.json is damaged \('games'"),
    "state generation 99": (lambda s: _state(s, generation=99), r"gen-0004\.json is missing"),
    "state a list": (lambda s: s.state_path.write_text("[1, 2]"),
                     r"state\.json is damaged \(a JSON object was expected"),
    "state missing, old generation files": (
        lambda s: (s.state_path.unlink(), _strip_state(s.generation_path(3))),
        r"state\.json is missing and .*gen-0003\.json does not hold the strategy state"),
    "log emptied": (lambda s: s.games_path.write_text(""),
                    r"games\.jsonl holds 0 games of generation 1 but gen-0001\.json counts"),
    "log truncated": (lambda s: _set_log(s, _log_lines(s)[:3]),
                      r"games\.jsonl holds \d+ games of generation \d but gen-000\d\.json"),
    "log line duplicated": (lambda s: _set_log(s, _log_lines(s) + _log_lines(s)[-1:]),
                            r"games\.jsonl line \d+ repeats the game"),
    "log line damaged in the middle": (
        lambda s: _set_log(s, [b'{"key": [1,'] + _log_lines(s)[1:]),
        r"games\.jsonl line 1 is damaged \(not a JSON game record\)"),
    "log line not utf-8": (lambda s: _set_log(s, _log_lines(s)[:2] + [b"\xff\xfe"]
                                              + _log_lines(s)[2:]),
                           r"games\.jsonl line 3 is damaged"),
    "log line without key": (lambda s: _set_log(s, [b'{"white": "x"}'] + _log_lines(s)),
                             r"games\.jsonl line 1 is damaged \('key' must be 4 integers"),
    "log game of a far generation": (
        lambda s: _set_log(s, _log_lines(s) + [_log_lines(s)[0].replace(b'"key": [1,',
                                                                         b'"key": [9,')]),
        r"a game of generation 9, but the run is at generation 3"),
    "generation truncated": (lambda s: _truncate(s.generation_path(2), 100),
                             r"gen-0002\.json is corrupt"),
    "generation deleted": (lambda s: s.generation_path(3).unlink(),
                           r"gen-0003\.json is missing"),
    "generation with a wrong count": (lambda s: _edit_json(s.generation_path(2), games_total=999),
                                      r"gen-0002\.json is damaged \(games_total 999"),
    "stray generation file": (lambda s: (s.generations_dir / "gen-abc.json").write_text("{}"),
                              r"gen-abc\.json does not belong in"),
    "generations is a file": (lambda s: (shutil.rmtree(s.generations_dir),
                                         s.generations_dir.write_text("x")),
                              r"generations is damaged \(a file where the generations folder"),
    "manifest a list": (lambda s: s.manifest_path.write_text("[]"),
                        r"manifest\.json is damaged \(a JSON object was expected"),
    "manifest without config": (lambda s: _edit_json(s.manifest_path, config=None),
                                r"manifest\.json is damaged \(no 'config' object\)"),
    "manifest not utf-8": (lambda s: s.manifest_path.write_bytes(b"\xff" * 10),
                           r"manifest\.json is damaged \(not UTF-8 text\)"),
}


def _strip_state(path):
    d = json.loads(path.read_text())
    del d["state"]
    path.write_text(json.dumps(d))


def _truncate(path, n):
    with open(path, "r+b") as fh:
        fh.truncate(n)


def _edit_json(path, **kw):
    d = json.loads(path.read_text())
    d.update(kw)
    path.write_text(json.dumps(d))


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damage_is_refused_with_one_line_and_nothing_changes(finished_run, tmp_path, name):
    store = _copy(finished_run, tmp_path)
    damage, message = DAMAGES[name]
    damage(store)
    before = _snapshot(store.root)
    res = _evotune("resume", "done", "--runs-dir", str(tmp_path), "--generations", "4")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert re.search(message, lines[0]), lines[0]
    assert _snapshot(store.root) == before


@pytest.mark.parametrize("name", ["state generation x", "log line not utf-8", "stray generation "
                                  "file", "generations is a file", "manifest a list"])
@pytest.mark.parametrize("command", ["status", "report", "export"])
def test_readers_refuse_damage_with_one_line(finished_run, tmp_path, name, command):
    store = _copy(finished_run, tmp_path)
    DAMAGES[name][0](store)
    extra = {"status": ["--runs-dir"], "report": ["--reports", str(tmp_path / "rep"), "--runs-dir"],
             "export": ["--format", "json", "--runs-dir"]}[command]
    res = _evotune(command, "done", *extra, str(tmp_path))
    if name == "log line not utf-8":  # the readers do not read the game log
        assert res.returncode == 0, res.stderr
        return
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr


def test_a_verify_document_that_is_a_list_is_one_line(finished_run, tmp_path):
    store = _copy(finished_run, tmp_path)
    (store.root / "verify.json").write_text("[]")
    res = _evotune("report", "done", "--reports", str(tmp_path / "rep"), "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and "verify.json is damaged" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


# ---- one writer --------------------------------------------------------------------------------

def _wait_for_lock_holder(store: Store, proc, timeout=120.0) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if store.state_path.exists():
            try:
                return int(store.lock_path.read_text().strip())
            except (OSError, ValueError):
                pass
        time.sleep(0.01)
    raise AssertionError("the first run never started")


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_a_second_writer_is_refused_naming_the_holder_and_a_dead_holder_is_no_obstacle(
        tmp_path):
    args = ["--np", "4", "--games", "2", "--depth", "2", "--seed", "3", "--workers", "1",
            "--runs-dir", str(tmp_path), "--run-id", "live"]
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", "--generations", "500",
                             *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        store = Store(tmp_path / "live")
        holder = _wait_for_lock_holder(store, proc)
        assert holder == proc.pid
        for cmd in (["resume", "live", "--runs-dir", str(tmp_path)],
                    ["run", "--generations", "500", *args]):
            res = _evotune(*cmd)
            assert res.returncode == 2, res.stderr
            assert res.stderr.strip().splitlines() == [
                f"evotune: error: run 'live' is being written by process {proc.pid}; wait for "
                "it to end (or stop it) before running or resuming it"]
    finally:
        proc.kill()
        proc.wait()
    g = store.read_state().generation
    # the dead holder is no obstacle (continued by the library for one more generation: resume
    # refuses a lower --generations, which would shrink the run)
    live, plan = open_run(tmp_path / "live")
    execute(live, with_overrides(plan, generations=g + 1))
    games = store.read_games()
    assert len(games) == store.read_state().games == len({tuple(r["key"]) for r in games})


def test_two_runs_started_together_one_wins_and_no_game_is_doubled(tmp_path):
    args = ["run", "--np", "4", "--games", "2", "--depth", "1", "--generations", "2",
            "--workers", "1", "--runs-dir", str(tmp_path), "--run-id", "same"]
    procs = [subprocess.Popen([sys.executable, "-m", "evotune.cli", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    loser = next(o for p, o in zip(procs, outs) if p.returncode == 2)[1]
    assert ("is being written by process" in loser or "already exists" in loser), loser
    store = Store(tmp_path / "same")
    assert len(store.read_games()) == store.read_state().games


# ---- disk full -----------------------------------------------------------------------------------

@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_disk_full_is_one_line_and_resume_continues(tmp_path, stored_generations, stored_games):
    mnt = tmp_path / "small"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mnt)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.decode().strip()})")
    try:
        args = ["--np", "4", "--games", "2", "--depth", "1", "--seed", "9", "--workers", "1"]
        res = _evotune("run", *args, "--generations", "400", "--runs-dir", str(mnt), "--run-id", "f")
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        last = lines[-1]
        assert "Traceback" not in res.stderr
        assert "No space left on device" in last and "evotune resume f" in last, last
        assert sum("evotune: error" in x for x in lines) == 1
        shutil.copytree(mnt / "f", tmp_path / "f")  # space freed: the run continues elsewhere
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
    done = Store(tmp_path / "f").read_state().generation
    # continued for two more generations (resume refuses a lower --generations: a shrink)
    f, plan = open_run(tmp_path / "f")
    execute(f, with_overrides(plan, generations=done + 2))
    truth = _evotune("run", *args, "--generations", str(done + 2), "--runs-dir", str(tmp_path),
                     "--run-id", "t")
    assert truth.returncode == 0
    assert stored_generations(tmp_path / "f") == stored_generations(tmp_path / "t")
    assert stored_games(tmp_path / "f") == stored_games(tmp_path / "t")


# ---- small pieces ----------------------------------------------------------------------------------

def test_create_refuses_existing_and_bad_ids(tmp_path):
    Store.create(tmp_path, "r1", config=RunConfig(population=4), identity={"hash": "abc"}).unlock()
    with pytest.raises(StoreError, match="already exists.*evotune resume r1"):
        Store.create(tmp_path, "r1", config=RunConfig(population=4), identity={"hash": "abc"})
    for bad in ("../escape", "a/b", "x\ny", "ok\n", "", ".hidden", "a" * 101, "t\x1b[31m"):
        with pytest.raises(StoreError, match="not allowed"):
            Store.create(tmp_path, bad, config=RunConfig(), identity={})
    assert [p.name for p in tmp_path.iterdir()] == ["r1"]


def test_a_new_run_of_any_kind_is_checked_before_its_work(tmp_path):
    """check_new_run: what a fit, a training and a move-model training check before they read
    their data (a taken or bad id, a runs folder inside a run's), one line each."""
    from evotune.runs.manifest import check_new_run

    Store.create(tmp_path, "r1", config=RunConfig(population=4), identity={"hash": "abc"}).unlock()
    with pytest.raises(StoreError, match=r"run 'r1' already exists in .*'evotune resume r1'"):
        check_new_run(tmp_path, "r1")
    with pytest.raises(StoreError, match="not allowed"):
        check_new_run(tmp_path, "../escape")
    with pytest.raises(StoreError, match="lies inside the folder of run 'r1'"):
        check_new_run(tmp_path / "r1" / "runs", None)
    check_new_run(tmp_path, "r2")  # free: nothing said, nothing made
    check_new_run(tmp_path, None)
    assert [p.name for p in tmp_path.iterdir()] == ["r1"]


def test_open_unknown_run_lists_known_ones(tmp_path):
    Store.create(tmp_path, "alpha", config=RunConfig(), identity={"hash": "abc"})
    with pytest.raises(StoreError, match="no run 'beta'.*alpha"):
        Store.open("beta", tmp_path)
    assert Store.open("alpha", tmp_path).run_id == "alpha"
    assert [s.run_id for s in list_runs(tmp_path)] == ["alpha"]


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    atomic_write_json(tmp_path / "x.json", {"a": 1})
    atomic_write_json(tmp_path / "x.json", {"a": 2})
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_records_round_trip_through_their_readers(finished_run):
    store = Store(finished_run / "done")
    m = store.manifest()
    assert m.run_id == "done" and m.config.population == 4 and m.config.budget.generations == 3
    state = store.read_state()
    assert (state.generation, state.finished) == (3, True)
    gens = store.generations()
    assert [g.generation for g in gens] == [0, 1, 2, 3]
    assert gens[-1].games_total == state.games == len(store.read_games())
    assert gens[-1].state == state.strategy  # what makes a lost state.json rebuildable
    assert os.path.exists(store.lock_path)
