from __future__ import annotations

import json

import pytest

from evotune.errors import StoreError
from evotune.store import Store, atomic_write_json, list_runs


def _store(tmp_path, run_id="r1"):
    return Store.create(tmp_path, run_id, config={"np": 4}, identity={"hash": "abc"})


def test_create_refuses_existing_and_bad_ids(tmp_path):
    _store(tmp_path)
    with pytest.raises(StoreError, match="already exists.*evotune resume r1"):
        _store(tmp_path)
    with pytest.raises(StoreError, match="not allowed"):
        Store.create(tmp_path, "../escape", config={}, identity={})


def test_open_unknown_run_lists_known_ones(tmp_path):
    _store(tmp_path, "alpha")
    with pytest.raises(StoreError, match="no run 'beta'.*alpha"):
        Store.open("beta", tmp_path)
    assert Store.open("alpha", tmp_path).run_id == "alpha"
    assert [s.run_id for s in list_runs(tmp_path)] == ["alpha"]


def test_corrupt_state_is_a_clear_error_never_a_restart(tmp_path):
    s = _store(tmp_path)
    s.state_path.write_text('{"generation": 3, "gam')
    with pytest.raises(StoreError, match="corrupt"):
        s.read_state()
    s.state_path.write_text('{"generation": 3}')
    with pytest.raises(StoreError, match="corrupt \\(no 'games'\\)"):
        s.read_state()


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    atomic_write_json(tmp_path / "x.json", {"a": 1})
    atomic_write_json(tmp_path / "x.json", {"a": 2})
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_repair_drops_games_and_files_of_unfinished_generations(tmp_path):
    s = _store(tmp_path)
    recs = [{"key": [g, 0, 0, i]} for g in (1, 2, 3) for i in range(2)]
    s.append_games(recs)
    with open(s.games_path, "a") as fh:
        fh.write('{"key": [3, 1')  # a torn line from a kill mid-write
    for g in range(4):
        s.write_generation(g, {"generation": g})
    s.write_state({"generation": 2, "games": 4, "strategy": {}})
    dropped = s.repair(generations_done=2, to_pgn=lambda r: f"{len(r)} games\n")
    assert dropped == 2
    assert [r["key"][0] for r in s.read_games()] == [1, 1, 2, 2]
    assert s.pgn_path.read_text() == "4 games\n"
    assert [g["generation"] for g in s.generations()] == [0, 1, 2]
