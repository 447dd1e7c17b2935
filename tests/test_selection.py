"""Selection under noise (races) and the final check of a run from given weights."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.kinds.games.config import build_run_config, run_config_from_dict
from evotune.kinds.games.lifecycle import new_run, resolve_final_check, tuning_games, with_budget, with_start
from evotune.kinds.games.solver import execute
from evotune.reporting.export import export_run
from evotune.runs.store import Store
from evotune.space import WeightSpace
from evotune.spec.file import load_engine_spec
from evotune.spec.start import with_start_values
from evotune.strategies import make_strategy
from evotune.strategies.base import MatchOutcome

START = {"pawn": 100, "knight": 310, "bishop": 330, "rook": 500, "queen": 900, "mobility": 10}


def _evotune(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, **kw)


# ---- the rule, as pure numerics ---------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["de", "jde"])
def test_a_race_replaces_only_on_h1_whatever_the_points(strategy):
    s = make_strategy(strategy, WeightSpace(), seed=3,
                      params={"np": 4, "selection": "race", "race_games": 24, "race_elo": 10.0})
    requests = s.ask()
    assert [(r.stop, r.games, r.sprt) for r in requests] == [("sprt", 24, (0.0, 10.0, 0.1, 0.2))] * 4
    before = s.population.copy()
    trials = np.array([r.a for r in requests])
    # the trial scores more points in every comparison; only the one whose test said H1 wins
    outcomes = [MatchOutcome(points_a=30, points_b=18, games=24, verdict=v)
                for v in ("H1", None, "H0", None)]
    stats = s.tell(outcomes)
    assert stats["replacements"] == 1
    assert np.array_equal(s.population[0], trials[0])
    assert np.array_equal(s.population[1:], before[1:])


def test_the_paper_rule_is_unchanged_by_default():
    s = make_strategy("de", WeightSpace(), seed=3, params={"np": 4})
    requests = s.ask()
    assert all(r.stop == "decisive" and r.games == 4 and r.sprt is None for r in requests)
    before = s.population.copy()
    s.tell([MatchOutcome(points_a=5, points_b=3, games=4),
            MatchOutcome(points_a=4, points_b=4, games=4),
            MatchOutcome(points_a=3, points_b=5, games=4),
            MatchOutcome(points_a=6, points_b=2, games=4, verdict="H0")])  # a verdict is ignored
    replaced = [i for i in range(4) if not np.array_equal(s.population[i], before[i])]
    assert replaced == [0, 3]
    assert np.array_equal(s.population[3], np.array(requests[3].a))


def test_the_ea_races_each_offspring_against_its_parent():
    s = make_strategy("ea", WeightSpace(), seed=5, params={"np": 3, "selection": "race"})
    requests = s.ask()
    assert [r.tag for r in requests] == [(0,), (1,), (2,)] and requests[0].stop == "sprt"
    parents = s.population.copy()
    s.tell([MatchOutcome(points_a=20, points_b=28, games=24, verdict=None),
            MatchOutcome(points_a=30, points_b=18, games=24, verdict="H1"),
            MatchOutcome(points_a=2, points_b=14, games=8, verdict="H0")])
    assert np.array_equal(s.population[1], np.array(requests[1].a))
    assert np.array_equal(s.population[[0, 2]], parents[[0, 2]])
    assert list(s.ranking()) == [2, 1, 0]  # by the score of its last race: 14/16, 30/48, 28/48


def test_a_run_from_earlier_weights_races_and_cmaes_mirrors_by_default(tmp_path):
    spec = with_start_values(load_engine_spec("shannon"), list(START.values()), source="test")
    for strategy, expected in (("de", {"selection": "race"}), ("jde", {"selection": "race"}),
                               ("ea", {"selection": "race"}),
                               ("cmaes", {"mirrored": True, "cmean": 0.1})):
        cfg = with_start(build_run_config(strategy=strategy, max_games=1000), spec)
        params = cfg.params_dict()
        assert {k: params[k] for k in expected} == expected and params["init"] == "reference"
    chosen = with_start(build_run_config(strategy="de", params={"selection": "paper"}), spec)
    assert chosen.params_dict()["selection"] == "paper"  # the user's choice stays
    random_start = with_start(build_run_config(strategy="de"), load_engine_spec("shannon"))
    assert "selection" not in random_start.params_dict()  # the paper's problem keeps its rule


# ---- the final check's share of the budget ----------------------------------------------------

def test_final_check_games_are_a_share_of_the_budget_and_none_from_random_weights(tmp_path):
    ref = build_run_config(strategy="spsa", params={"init": "reference"})
    assert [resolve_final_check(ref, n) for n in (300, 1000, 20_000, 60_000, 100_000)] == \
        [150, 200, 2000, 4000, 4000]
    assert resolve_final_check(build_run_config(strategy="spsa"), 20_000) == 0  # a random start
    assert resolve_final_check(build_run_config(strategy="spsa", final_check_games=600,
                                                params={"init": "reference"}), 20_000) == 600
    spec = with_start_values(load_engine_spec("shannon"), list(START.values()), source="test")
    cfg = with_budget(build_run_config(strategy="spsa", max_games=20_000, generations=0), spec)
    assert cfg.final_check.games == 2000 and tuning_games(cfg) == 18_000
    assert cfg.params_dict()["budget"] == 18_000  # SPSA's schedule ends where the check starts
    # a run stored before final checks existed has none, and keeps its identity
    old = {k: v for k, v in cfg.to_dict().items() if k != "guard_games"}
    assert run_config_from_dict(old).final_check.games == 0


def test_bad_final_check_games_is_one_line_and_exit_2(tmp_path):
    res = _evotune("run", "--final-check-games", "3", "--runs-dir", str(tmp_path))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--final-check-games must be 0" in res.stderr and "even" in res.stderr
    assert not any(tmp_path.iterdir())


# ---- runs: determinism and the final check ----------------------------------------------------

RACE = dict(strategy="de", population=4, generations=2, games=2, depth=1, seed=5,
            params={"selection": "race", "race_games": 12, "race_elo": 100.0,
                    "race_alpha": 0.2, "race_beta": 0.2})


def test_a_racing_run_is_the_same_for_1_and_2_workers(tmp_path, stored_generations, stored_games):
    roots = []
    for workers in (1, 2):
        store, plan = new_run(build_run_config(workers=workers, **RACE), out_dir=tmp_path,
                              run_id=f"w{workers}")
        execute(store, plan)
        roots.append(store.root)
    assert stored_generations(roots[0]) == stored_generations(roots[1])
    assert stored_games(roots[0]) == stored_games(roots[1])
    gens = Store(roots[0]).generations()
    # races stop when their test decides: some comparisons ended before the cap of 12 games
    assert any(m.games < 12 for g in gens[1:] for m in g.matches)
    assert all(m.games % 2 == 0 for g in gens[1:] for m in g.matches)


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_a_racing_run_resumed_after_sigkill_equals_an_uninterrupted_one(
        tmp_path, kill_at_generation, stored_generations, stored_games):
    args = ["--strategy", "de", "--np", "4", "--generations", "5", "--depth", "2", "--seed", "11",
            "--workers", "1", "--param", "selection=race", "--param", "race_games=8",
            "--param", "race_elo=100", "--runs-dir", str(tmp_path)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args, "--run-id",
                             "killed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_at = kill_at_generation(proc, tmp_path / "killed" / "state.json")
    assert killed_at is not None and killed_at < 5, "the run ended before it could be killed"
    assert proc.returncode == -signal.SIGKILL
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")


def _worse_run(tmp_path, run_id: str, workers: int = 1, *extra: str):
    """A run from the reference whose population is drawn far from it (half of each bound
    width): its mean is much weaker than the start."""
    (tmp_path / "start.json").write_text(json.dumps(START))
    return CliRunner().invoke(cli, [
        "run", "--strategy", "de", "--engine", f"shannon:{tmp_path / 'start.json'}", "--np", "4",
        "--generations", "1", "--games", "2", "--depth", "1", "--seed", "3", "--workers",
        str(workers), "--param", "selection=paper", "--param", "finetune=false", "--param",
        "init_spread=0.5", "--final-check-games", "40", "--runs-dir", str(tmp_path),
        "--run-id", run_id, *extra])


def test_a_run_worse_than_its_start_recommends_its_start(tmp_path):
    res = _worse_run(tmp_path, "worse")
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "worse")
    check = store.read_final_check()
    assert check is not None and not check.better and check.verdict in ("H0", "undecided")
    assert check.elo < 0 and 0 < check.games <= 40
    assert check.tuned != check.start and check.start == tuple(float(v) for v in START.values())
    lines = res.output.strip().splitlines()
    last = lines[-1]
    assert last == check.sentence and "not better than the start" in last
    # above it the check's results block, from its record
    block = lines.index("Results of tuned vs start (1 plies, 8moves_v3.pgn.zip):")
    assert lines[block + 3].startswith(f"Games: {check.games}, Wins: {check.wins}, ")
    assert lines[block + 4] == f"Ptnml(0-2): {list(check.pentanomial)}"
    assert lines[block + 5].endswith("(-2.94, 2.94) [0.00, 5.00]")
    exported = CliRunner().invoke(cli, ["export", "worse", "--format", "json", "--runs-dir",
                                        str(tmp_path)])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout) == START
    assert check.sentence in exported.stderr
    notes = export_run("worse", fmt="json", runs_dir=tmp_path).notes
    assert notes == (check.sentence,)  # a tuple, as Export declares (it was a list here)
    status = CliRunner().invoke(cli, ["status", "worse", "--runs-dir", str(tmp_path)])
    assert status.output.strip().splitlines()[-1] == check.sentence
    as_json = json.loads(CliRunner().invoke(cli, ["status", "worse", "--runs-dir", str(tmp_path),
                                                  "--json"]).stdout)
    assert as_json["final_check"]["better"] is False
    assert as_json["final_check"]["games"] == check.games
    assert as_json["guard"] == as_json["final_check"]  # its old key, kept for scripts
    assert (tmp_path / "worse" / "final-check.pgn").read_text().count("[Event ") == check.games


def test_the_final_check_is_the_same_for_1_and_2_workers_and_not_replayed(tmp_path):
    for workers in (1, 2):
        assert _worse_run(tmp_path, f"g{workers}", workers).exit_code == 0
    one, two = ((tmp_path / f"g{w}" / "final-check.json").read_text() for w in (1, 2))
    assert one == two
    # resuming a finished run reads its check instead of playing it again
    pgn = tmp_path / "g1" / "final-check.pgn"
    before = pgn.stat().st_mtime_ns
    res = CliRunner().invoke(cli, ["resume", "g1", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert pgn.stat().st_mtime_ns == before
    last = res.output.strip().splitlines()[-1]
    assert last == Store(tmp_path / "g1").read_final_check().sentence


def _check_openings(run: Path) -> set[str]:
    pgn = (run / "final-check.pgn").read_text()
    return {line.split('"')[1].rsplit(":", 1)[0] for line in pgn.splitlines()
            if line.startswith("[OpeningSource ")}


def test_the_final_check_plays_held_out_openings_unless_told_otherwise(tmp_path, stored_games):
    """The run tunes on the Polyglot book; its check plays the held-out 8moves_v3 suite (tuned
    weights can gain on the openings they were selected on and not elsewhere), or the run's own
    openings with --final-check-openings run. Only the check differs: the tuning's games are the
    same."""
    assert _worse_run(tmp_path, "held").exit_code == 0
    res = _worse_run(tmp_path, "own", 1, "--final-check-openings", "run")
    assert res.exit_code == 0, res.output
    held, own = (Store(tmp_path / r).read_final_check() for r in ("held", "own"))
    assert held is not None and own is not None and held.games > 0 and own.games > 0
    assert _check_openings(tmp_path / "held") == {"8moves_v3.pgn.zip"}
    assert _check_openings(tmp_path / "own") == {"book"}
    assert (held.openings, own.openings) == ("8moves_v3.pgn.zip", "gnuchess-book.bin")
    assert "openings 8moves_v3.pgn.zip" in held.sentence
    assert stored_games(tmp_path / "held") == stored_games(tmp_path / "own")
    manifests = [json.loads((tmp_path / r / "manifest.json").read_text()) for r in ("held", "own")]
    assert [m["config"]["guard_openings"] for m in manifests] == ["held-out", "run"]
    assert manifests[0]["identity"] == manifests[1]["identity"]


@pytest.mark.parametrize("value,message", [
    ("no-such-suite.epd", "--final-check-openings: openings 'no-such-suite.epd': no such file"),
    ("", "--final-check-openings must be 'held-out', 'run' or openings"),
])
def test_bad_final_check_openings_is_one_line_and_exit_2_before_anything_is_written(tmp_path, value,
                                                                                message):
    res = _evotune("run", "--strategy", "spsa", "--engine", "shannon", "--param",
                   "init=reference", "--max-games", "40", "--generations", "0",
                   "--final-check-openings", value, "--runs-dir", str(tmp_path / "runs"))
    assert res.returncode == 2 and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()


def test_a_check_lost_or_won_game_by_game_says_so_instead_of_a_capped_elo():
    from evotune.kinds.games.finalmatch import ELO_CAP
    from evotune.runs.finalcheck import FinalCheck

    def check(wins: int, losses: int, elo: float) -> FinalCheck:
        return FinalCheck(generation=3, tuned=(1.0,), start=(2.0,), games=8, wins=wins,
                          draws=0, losses=losses,
                          pentanomial=(0, 0, 0, 0, 4) if wins else (4, 0, 0, 0, 0), elo=elo,
                          elo_error=ELO_CAP, verdict="H1" if wins else "H0",
                          better=bool(wins))
    lost = check(0, 8, -ELO_CAP)
    assert "999" not in lost.sentence
    assert "the tuned weights lost all 8 games (0-0-8), SPRT [0, 5] H0" in lost.sentence
    assert "recommends its start" in lost.sentence
    won = check(8, 0, ELO_CAP)
    assert "the tuned weights won all 8 games (8-0-0)" in won.sentence
    mixed = FinalCheck(generation=3, tuned=(1.0,), start=(2.0,), games=8, wins=2, draws=1,
                       losses=5, pentanomial=(1, 2, 1, 0, 0), elo=-120.4, elo_error=300.2,
                       verdict="undecided", better=False)
    assert "-120.4 +- 300.2 Elo over 8 games (2-1-5)" in mixed.sentence
