"""spsa, cmaes and ng:NAME through the run loop and the CLI: exact resume after SIGKILL,
--spsa-params files, the export round trip, the comparison with its Elo-vs-games curves."""
from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.reporting.export import export_run
from evotune.runs.store import Store


def _evotune(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True)


@pytest.mark.parametrize("strategy,extra", [  # cmaes: 18 s, in the full suite
    ("spsa", ["--param", "batch=3"]), pytest.param("cmaes", ["--np", "4"], marks=pytest.mark.slow)])
def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path, strategy, extra,
                                                          kill_at_generation, stored_generations,
                                                          stored_games):
    args = ["--strategy", strategy, *extra, "--generations", "0", "--max-games", "48",
            "--games", "2", "--depth", "1", "--seed", "3", "--workers", "1", "--runs-dir",
            str(tmp_path)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args, "--run-id",
                             "killed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = tmp_path / "killed" / "state.json"
    killed_at = kill_at_generation(proc, state)
    assert killed_at is not None, "the run ended before it could be killed"
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")
    manifest = Store(tmp_path / "full").manifest()
    assert manifest.config.params_dict()["budget"] == 48  # the schedule's budget is fixed
    assert "pickle" not in (tmp_path / "full" / "state.json").read_text()


FISHTEST = "KnightValue,280,0,1000,40,0.02\nQueenValue,950,500,1000,25,0.01\n"


def test_spsa_params_file_sets_start_bounds_and_schedule(tmp_path):
    f = tmp_path / "params.txt"
    f.write_text(FISHTEST)
    res = CliRunner().invoke(cli, ["run", "--strategy", "spsa", "--spsa-params", str(f),
                                   "--generations", "1", "--games", "2", "--param", "batch=2",
                                   "--depth", "1", "--workers", "1", "--runs-dir", str(tmp_path),
                                   "--run-id", "t"])
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "t")
    params = store.manifest().config.params_dict()
    assert params["table"] == ("knight, int, 280, 0, 1000, 40, 0.02\n"
                               "queen, int, 950, 500, 1000, 25, 0.01\n")
    assert params["budget"] == 4  # --generations 1 x 2 perturbations x 2 games
    gen0 = store.read_generation(0)
    assert gen0.stats["recommended"] == [100, 280, 330, 500, 950, 10]  # others at reference
    for m in store.read_generation(1).matches:
        assert 500 <= m.a[4] <= 1000 and m.a[2] == 330  # bishop not tuned


@pytest.mark.parametrize("text,pattern", [
    ("KnightValue,280,0,1000\n", "line 1: 'KnightValue,280,0,1000': expected fishtest"),
    ("KingValue,1,0,9,1,1\n", "'KingValue' is not a parameter of engine spec shannon"),
    ("PawnValue,100,50,150,1,0.1\n", "'pawn' is fixed"),
    ("KnightValue,300,300,300,1,0.1\n", "line 1: min = max = 300 leaves 'KnightValue' nothing"),
    ("KnightValue,300,0,1000,1e300,0.1\n", "line 1: c_end 1e+300 or r_end 0.1 of 'KnightValue'"),
])
def test_bad_spsa_params_file_is_one_line_and_nothing_is_written(tmp_path, text, pattern):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    res = _evotune("run", "--strategy", "spsa", "--spsa-params", str(f), "--generations", "1",
                   "--runs-dir", str(tmp_path / "pop"))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and pattern in res.stderr
    assert not (tmp_path / "pop").exists()


@pytest.mark.parametrize("fmt", ["spsa", "spsa-fishtest"])
def test_export_then_spsa_params_round_trips_exactly(tmp_path, fmt):
    res = CliRunner().invoke(cli, ["run", "--strategy", "cmaes", "--np", "4", "--games", "2",
                                   "--generations", "2", "--depth", "1", "--workers", "1",
                                   "--runs-dir", str(tmp_path), "--run-id", "a"])
    assert res.exit_code == 0, res.output
    exported = export_run("a", fmt=fmt, runs_dir=tmp_path)
    f = tmp_path / "tuned.txt"
    f.write_text(exported.text)
    res = CliRunner().invoke(cli, ["run", "--strategy", "spsa", "--spsa-params", str(f),
                                   "--generations", "1", "--games", "2", "--depth", "1",
                                   "--workers", "1", "--runs-dir", str(tmp_path), "--run-id", "b"])
    assert res.exit_code == 0, res.output
    a_rec = Store(tmp_path / "a").read_generation(2).stats["recommended"]
    b0 = Store(tmp_path / "b").read_generation(0).stats["recommended"]
    assert b0 == a_rec  # the start is exactly the exported weights
    # and the table SPSA keeps renders back to the very same lines
    from evotune.strategies.spsa import fishtest_line, openbench_line, parse_spsa_lines

    table = Store(tmp_path / "b").manifest().config.params_dict()["table"]
    names = {"knight": "KnightValue", "bishop": "BishopValue", "rook": "RookValue",
             "queen": "QueenValue", "mobility": "MobilityWeight"}
    line = openbench_line if fmt == "spsa" else fishtest_line
    again = "".join(line(p.__class__(names[p.name], *list(p.__dict__.values())[1:])) + "\n"
                    for p in parse_spsa_lines(table))
    assert again == exported.text


def test_compare_new_strategies_with_checkpoint_verification(tmp_path):
    res = CliRunner().invoke(cli, [
        "compare", "--strategies", "spsa,cmaes,ng:OnePlusOne", "--max-games", "16",
        "--np", "4", "--depth", "1", "--verify-games", "2", "--verify-every", "8",
        "--workers", "1", "--runs-dir", str(tmp_path / "pop"), "--reports", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    rows = [ln.split() for ln in res.output.splitlines()
            if ln.startswith(("spsa ", "cmaes ", "ng:OnePlusOne "))]
    assert [r[0] for r in rows] == ["spsa", "cmaes", "ng:OnePlusOne"]
    for r in rows:
        assert r[1] == "1" and int(r[2]) >= 16  # seeds, tuning games
    curve = Store(tmp_path / "pop" / "compare-ng-OnePlusOne-b16-s1").read_document(
        "verify-curve")
    assert [p["checkpoint"] for p in curve["points"]] == [0, 8, 16]
    assert all(p["match"]["games"] == 2 for p in curve["points"])
    gens = Store(tmp_path / "pop" / "compare-ng-OnePlusOne-b16-s1").generations()
    assert curve["points"][1]["weights"] == next(g.stats["recommended"] for g in gens
                                                 if g.games_total >= 8)
    assert curve["verification_games"] == 6 and gens[-1].games_total == 16
    assert (tmp_path / "rep" / "compare-b16" / "elo-vs-games.png").stat().st_size > 1000
    # from the first checkpoint after the start (the start against itself is 0 Elo by
    # definition): the same points, read back from verify-curve.json, none played again
    from evotune.errors import ConfigError
    from evotune.verify.curve import verify_checkpoints

    store = Store(tmp_path / "pop" / "compare-ng-OnePlusOne-b16-s1")
    later = verify_checkpoints(store, every=8, games=2, workers=1, first=8)
    assert [p["checkpoint"] for p in later["points"]] == [8, 16]
    assert later["points"] == curve["points"][1:] and later["verification_games"] == 4
    with pytest.raises(ConfigError, match="first checkpoint must be at 0 games or later"):
        verify_checkpoints(store, every=8, games=2, first=-8)


def test_cmaes_fitness_is_the_gauntlet_score_with_opponents(tmp_path):
    res = CliRunner().invoke(cli, ["run", "--strategy", "cmaes", "--np", "3", "--games", "2",
                                   "--generations", "1", "--depth", "1", "--workers", "1",
                                   "--opponents", "reference", "--runs-dir", str(tmp_path),
                                   "--run-id", "g"])
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "g")
    gen = store.read_generation(1)
    by_weights = {c.weights: sum(c.points) / (2.0 * sum(c.games)) for c in gen.gauntlet.candidates}
    played = [m.a for m in gen.matches]
    told = store.read_state().strategy["told"]
    assert told == [[by_weights[w] for w in played]]  # each candidate's own gauntlet score


def test_batch_sets_the_perturbations_of_a_generation(tmp_path, stored_generations):
    args = ["--strategy", "spsa", "--generations", "2", "--games", "2", "--depth", "1",
            "--seed", "3", "--workers", "2", "--runs-dir", str(tmp_path)]
    res = CliRunner().invoke(cli, ["run", *args, "--batch", "3", "--run-id", "b"])
    assert res.exit_code == 0, res.output
    same = CliRunner().invoke(cli, ["run", *args, "--param", "batch=3", "--run-id", "p"])
    assert same.exit_code == 0, same.output
    assert Store(tmp_path / "b").manifest().config.params_dict()["batch"] == 3
    gens = Store(tmp_path / "b").generations()
    assert [g.games_total for g in gens] == [0, 6, 12]  # 3 perturbations x 2 games each
    assert stored_generations(tmp_path / "b") == stored_generations(tmp_path / "p")
