"""The run loop end to end: CLI runs, determinism across workers, resume after SIGKILL, errors."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.errors import StoreError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run, open_run
from evotune.kinds.games.plan import with_overrides
from evotune.kinds.games.solver import execute
from evotune.runs.store import Store

TINY = dict(population=4, generations=2, games=2, depth=1, seed=5, openings="book")




def _evotune(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, **kw)


def test_end_to_end_de_run_from_the_cli(tmp_path):
    res = CliRunner().invoke(cli, ["run", "--strategy", "de", "--np", "4", "--generations", "3",
                                   "--games", "2", "--depth", "2", "--workers", "1",
                                   "--runs-dir", str(tmp_path), "--run-id", "e2e"])
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "e2e")
    gens = store.generations()
    assert [g.generation for g in gens] == [0, 1, 2, 3]
    games = store.read_games()
    # DE: one decisive match per target; 2-game matches stop after 1 game when it is decided
    for g in gens[1:]:
        assert len(g.matches) == 4
        assert all(1 <= m.games <= 2 for m in g.matches)
        assert g.games == sum(m.games for m in g.matches)
        assert g.games_total == sum(x.games for x in gens[1:g.generation + 1])
    assert len(games) == gens[-1].games_total
    # selection: a target is replaced exactly when the trial scored strictly more points
    for prev, g in zip(gens[1:], gens[2:]):
        for i, m in enumerate(g.matches):
            expected = m.a if m.points_a > m.points_b else prev.population[i]
            assert g.population[i] == expected
    assert store.pgn_path.read_text().count("[Event ") == len(games)
    state = store.read_state()
    assert state.finished and state.generation == 3
    status = CliRunner().invoke(cli, ["status", "e2e", "--runs-dir", str(tmp_path), "--json"])
    assert json.loads(status.output)["games"] == len(games)


@pytest.mark.parametrize("strategy", ["de", "ea", "td"])
def test_same_seed_same_generations_for_1_and_2_workers(tmp_path, strategy, stored_generations,
                                                        stored_games):
    roots = []
    for workers in (1, 2):
        cfg = build_run_config(strategy=strategy, workers=workers, **TINY)
        store, plan = new_run(cfg, out_dir=tmp_path, run_id=f"{strategy}-w{workers}")
        execute(store, plan)
        roots.append(store.root)
    assert stored_generations(roots[0]) == stored_generations(roots[1])
    assert stored_games(roots[0]) == stored_games(roots[1])


def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path, kill_at_generation,
                                                          stored_generations, stored_games):
    args = ["--strategy", "de", "--np", "6", "--generations", "5", "--games", "2", "--depth", "2",
            "--seed", "11", "--workers", "1", "--runs-dir", str(tmp_path)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args,
                             "--run-id", "killed"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    state = tmp_path / "killed" / "state.json"
    killed_at = kill_at_generation(proc, state)
    assert killed_at is not None and killed_at < 5, "the run ended before it could be killed"
    assert proc.returncode == -signal.SIGKILL
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")
    assert (tmp_path / "killed" / "games.pgn").read_text().count("[Event ") == \
        (tmp_path / "full" / "games.pgn").read_text().count("[Event ")


def test_resume_with_the_same_seed_continues_identically_in_process(tmp_path,
                                                                   stored_generations):
    cfg4 = build_run_config(**{**TINY, "generations": 4})
    a, plan = new_run(cfg4, out_dir=tmp_path, run_id="a")
    execute(a, plan)
    cfg2 = build_run_config(**{**TINY, "generations": 2})
    b, plan = new_run(cfg2, out_dir=tmp_path, run_id="b")
    execute(b, plan)
    store, plan = open_run("b", out_dir=tmp_path)
    execute(store, with_overrides(plan, generations=4))
    assert stored_generations(a.root) == stored_generations(b.root)


@pytest.mark.parametrize("args,msg", [
    (["--strategy", "pso"], "unknown strategy 'pso'"),
    (["--np", "3"], "NP >= 4"),
    (["--games", "3"], "--games must be a positive even number"),
    (["--param", "Fx=0.3"], "Fx"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, msg):
    res = _evotune("run", *args, "--runs-dir", str(tmp_path))
    assert res.returncode == 2
    assert msg in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_config_key_that_does_not_exist_and_bounds_excluding_the_fixed_weight(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("np = 6\npopulation = 3\n")
    res = _evotune("run", "--config", str(bad), "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and "unknown key 'population'" in res.stderr
    spec = tmp_path / "eng.toml"
    spec.write_text('name = "x"\n[[weight]]\nname = "pawn"\nreference = 100\nlower = 0\n'
                    'upper = 50\nfixed = true\n[[weight]]\nname = "knight"\nreference = 300\n')
    res = _evotune("run", "--engine", str(spec), "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and "fixed at 100" in res.stderr


def test_corrupt_state_is_refused_not_restarted(tmp_path):
    cfg = build_run_config(**TINY)
    store, plan = new_run(cfg, out_dir=tmp_path, run_id="c")
    execute(store, plan)
    store.state_path.write_text('{"generation": 2, "games": ')
    res = _evotune("resume", "c", "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and "corrupt" in res.stderr
    assert len(list(store.generations_dir.glob("gen-*.json"))) == 3  # nothing was restarted


def test_changed_config_is_refused_with_what_differs(tmp_path):
    cfg = build_run_config(**TINY)
    new_run(cfg, out_dir=tmp_path, run_id="same")
    with pytest.raises(StoreError, match="depth: 1 -> 2"):
        new_run(build_run_config(**{**TINY, "depth": 2}), out_dir=tmp_path, run_id="same")
    manifest = json.loads((tmp_path / "same" / "manifest.json").read_text())
    manifest["config"]["depth"] = 2  # as if the stored config were edited by hand
    (tmp_path / "same" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="resolved configuration changed"):
        open_run("same", out_dir=tmp_path)


def test_stop_on_games_budget(tmp_path):
    cfg = build_run_config(**{**TINY, "generations": 0, "max_games": 10})
    store, plan = new_run(cfg, out_dir=tmp_path, run_id="budget")
    summary = execute(store, plan)
    assert summary.games >= 10
    last = store.generations()[-1]
    assert last.games_total - last.games < 10  # stopped after the generation that reached it
