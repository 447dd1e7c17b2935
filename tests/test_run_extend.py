"""A run extended on resume (``resume RUN --max-games N``, ``--generations``, ``--max-seconds``)
equals, game for game, a run planned at the larger budget (DE, jDE, EA, CMA-ES); SPSA keeps the
schedule of its first budget (pinned here); a value that would shrink a run is one line and exit
2; the raise is kept in the run and shown; a final check of the old end is set aside and played
again at the new end (issue 56, item 3)."""
from __future__ import annotations

import json

import pytest

TINY = ["--np", "4", "--games", "2", "--depth", "1", "--max-plies", "16", "--openings",
        "startpos", "--workers", "1", "--seed", "3", "--generations", "0"]



def _run(call_cli, runs, run_id, strategy, games, *extra):
    code, out, err = call_cli("run", "--strategy", strategy, *TINY, "--max-games",
                          str(games), "--runs-dir", str(runs), "--run-id", run_id, *extra)
    assert code == 0, err
    return out


def _resume(call_cli, runs, run_id, *extra):
    return call_cli("resume", run_id, "--runs-dir", str(runs), "--workers", "1", *extra)


@pytest.mark.parametrize("strategy", ["de", "jde", "ea", "cmaes"])
def test_an_extended_run_equals_a_run_planned_at_the_larger_budget(
        tmp_path, call_cli, strategy, stored_generations, stored_games):
    runs = tmp_path / "runs"
    _run(call_cli, runs, "planned", strategy, 48)
    _run(call_cli, runs, "short", strategy, 24)
    assert len(stored_generations(runs / "short")) < len(stored_generations(runs / "planned"))
    identity = json.loads((runs / "short" / "manifest.json").read_text())["identity"]
    code, _, err = _resume(call_cli, runs, "short", "--max-games", "48")
    assert code == 0, err
    assert stored_generations(runs / "short") == stored_generations(runs / "planned")
    assert stored_games(runs / "short") == stored_games(runs / "planned")
    manifest = json.loads((runs / "short" / "manifest.json").read_text())
    assert manifest["identity"] == identity  # the identity is unchanged
    assert manifest["config"]["max_games"] == 48
    [ext] = manifest["extensions"]
    assert ext["changes"] == {"max_games": [24, 48]}
    assert ext["games"] >= 24 and ext["generation"] >= 1


def test_status_and_runs_show_the_new_budget_and_a_shrink_is_refused(tmp_path, call_cli):
    runs = tmp_path / "runs"
    _run(call_cli, runs, "r", "de", 16)
    code, out, err = _resume(call_cli, runs, "r", "--max-games", "8")
    assert code == 2 and out == ""
    assert err.strip() == ("evotune: error: --max-games 8 would shrink run 'r' (its limit is 16 "
                           "games); give more than 16 to extend it")
    # the reported case: --generations on a run that stopped at its --max-games
    code, _, err = _resume(call_cli, runs, "r", "--generations", "9")
    assert code == 2
    assert err.strip() == ("evotune: error: run 'r' has no --generations limit (its limits: "
                           "--max-games 16 games); a new one could only stop it earlier: raise "
                           "one of its own")
    code, _, err = _resume(call_cli, runs, "r", "--max-seconds", "0")
    assert code == 2 and "--max-seconds must be a positive number" in err
    before = (runs / "r" / "manifest.json").read_bytes()
    assert json.loads(before).get("extensions") is None  # nothing written by a refusal
    code, _, err = _resume(call_cli, runs, "r", "--max-games", "32")
    assert code == 0, err
    code, out, _ = call_cli("status", "r", "--runs-dir", str(runs))
    assert "(budget 32)" in out
    assert "extended at generation 2 (16 games): --max-games 16 games -> 32 games" in out
    code, out, _ = call_cli("runs", "--runs-dir", str(runs))
    assert "32/32 games" in out
    # a plain resume of the extended, finished run plays nothing more
    code, out, err = _resume(call_cli, runs, "r")
    assert code == 0 and "32 games" in out


def test_a_raise_that_another_limit_still_stops_is_refused(tmp_path, call_cli):
    runs = tmp_path / "runs"
    _run(call_cli, runs, "g", "de", 400, "--generations", "2")
    code, _, err = _resume(call_cli, runs, "g", "--max-games", "800")
    assert code == 2
    assert err.strip() == ("evotune: error: run 'g' would still stop where it stands: its "
                           "--generations 2 generations is reached; raise it too "
                           "(--generations N)")
    code, _, err = _resume(call_cli, runs, "g", "--max-games", "800", "--generations", "3")
    assert code == 0, err
    assert json.loads((runs / "g" / "state.json").read_text())["generation"] == 3


def test_spsa_extended_keeps_the_schedule_of_its_first_budget(tmp_path, call_cli,
                                                               stored_generations):
    """N (planned pairs) is fixed at the start: the extended run is the first run continued, its
    c_k = c / k^gamma with the first budget's c (c_end N^gamma), decaying past c_end beyond N;
    the run planned at the larger budget has the larger c from its first iteration."""
    runs = tmp_path / "runs"
    spsa = ("--param", "batch=2")
    _run(call_cli, runs, "short", "spsa", 16, *spsa)
    _run(call_cli, runs, "planned", "spsa", 32, *spsa)
    short = stored_generations(runs / "short")
    code, _, err = _resume(call_cli, runs, "short", "--max-games", "32")
    assert code == 0, err
    extended, planned = stored_generations(runs / "short"), stored_generations(runs / "planned")
    assert extended[:len(short)] == short  # the first run, continued
    assert len(extended) == len(planned) and extended != planned
    gamma = 0.101

    def c_scale(gen):  # c_k k^gamma = mean(c_end) N^gamma, constant along a schedule
        return gen["stats"]["c_k"] * gen["stats"]["k"] ** gamma

    first = c_scale(extended[1])
    assert all(c_scale(g) == pytest.approx(first, rel=1e-12) for g in extended[1:])
    assert c_scale(planned[1]) == pytest.approx(first * 2 ** gamma, rel=1e-12)  # N 16 vs 8
    n_old = 8  # pairs of the first budget (16 games)
    past = [g for g in extended[1:] if g["stats"]["k"] > n_old]
    c_end = first / n_old ** gamma
    assert past and all(g["stats"]["c_k"] < c_end for g in past)


def test_a_final_check_of_the_old_end_is_set_aside_and_played_at_the_new_end(
        tmp_path, call_cli, stored_generations):
    runs = tmp_path / "runs"
    check = ("--param", "init=reference", "--final-check-games", "4")
    _run(call_cli, runs, "planned", "de", 40, *check)
    _run(call_cli, runs, "short", "de", 20, *check)
    old = json.loads((runs / "short" / "final-check.json").read_text())
    code, out, err = _resume(call_cli, runs, "short", "--max-games", "40")
    assert code == 0, err
    aside = runs / "short" / f"final-check-g{old['generation']:04d}.json"
    assert json.loads(aside.read_text()) == old
    [ext] = json.loads((runs / "short" / "manifest.json").read_text())["extensions"]
    assert ext["final_check"] == old
    new = json.loads((runs / "short" / "final-check.json").read_text())
    assert new == json.loads((runs / "planned" / "final-check.json").read_text())
    assert new["generation"] > old["generation"]
    assert stored_generations(runs / "short") == stored_generations(runs / "planned")


def test_uh_cmaes_run_is_the_same_on_2_workers_and_when_extended(
        tmp_path, call_cli, stored_generations, stored_games):
    """UH-CMA-ES (``--param noise=true``) through run and resume: its replayed matches and
    the handler's state are stored, so 2 workers and a stop + resume play the same games."""
    runs = tmp_path / "runs"
    uh = ("--param", "noise=true")
    _run(call_cli, runs, "one", "cmaes", 64, *uh)
    _run(call_cli, runs, "two", "cmaes", 64, *uh, "--workers", "2")
    _run(call_cli, runs, "short", "cmaes", 24, *uh)
    code, _, err = _resume(call_cli, runs, "short", "--max-games", "64")
    assert code == 0, err
    gens = stored_generations(runs / "one")
    assert len(gens) >= 4 and "retold" in json.loads((runs / "one" / "state.json").read_text())[
        "strategy"]
    for other in ("two", "short"):
        assert stored_generations(runs / other) == gens
        assert stored_games(runs / other) == stored_games(runs / "one")
