"""Runs that tune an external UCI engine: the spec's engine really plays (and equals the built-in
engine when it is `evotune uci`), engines are reused, options are checked before anything is
written, faults forfeit games without stopping the run, time controls, gauntlets, determinism."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run
from evotune.kinds.games.plan import with_overrides
from evotune.kinds.games.solver import execute
from evotune.runs.store import Store

HERE = Path(__file__).resolve().parent
STOCKFISH = "/usr/games/stockfish"


def _evotune(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, **kw)


def _run(tmp_path: Path, run_id: str, **kw) -> Store:
    cfg = build_run_config(**kw)
    store, plan = new_run(cfg, out_dir=tmp_path, run_id=run_id)
    execute(store, plan)
    return store


FAKE_RUN = dict(strategy="de", population=4, generations=2, games=2, depth=1, seed=3, max_plies=40,
                openings="book")


# ---- the spec's engine plays -------------------------------------------------------------------

def test_shannon_uci_run_equals_the_builtin_run_game_for_game(tmp_path, stored_generations,
                                                             stored_games):
    """`evotune uci` at a fixed depth is an external engine whose games are known: the run
    through pipes (2 workers) plays exactly the built-in run's games (1 worker), from the same
    start and settings (a uci spec's run starts from the reference and fine-tunes unless told
    otherwise: both runs here are told the same)."""
    small = dict(strategy="de", population=4, generations=1, games=2, depth=2, seed=5,
                 params={"init": "reference", "finetune": False, "selection": "paper"})
    builtin = _run(tmp_path, "builtin", engine="shannon", workers=1, **small)
    external = _run(tmp_path, "external", engine="shannon-uci", workers=2, **small)
    assert stored_generations(external.root) == stored_generations(builtin.root)
    ext_games, own_games = stored_games(external.root), stored_games(builtin.root)
    assert len(ext_games) >= 4
    for e, b in zip(ext_games, own_games):
        assert (e["moves"], e["result"], e["termination"]) == (b["moves"], b["result"],
                                                              b["termination"])
        assert e["white_engine"] == e["black_engine"] == "evotune uci"
        assert b["white_engine"] == ""
    pgn = external.pgn_path.read_text()
    assert pgn.count('[WhiteEngine "evotune uci"]') == len(ext_games)
    assert "WhiteEngine" not in builtin.pgn_path.read_text()


def test_a_uci_run_reuses_one_engine_process_per_side(tmp_path, fake_engine_spec):
    from evotune.players import external

    spec = fake_engine_spec(tmp_path)
    before = external.started_count()
    store = _run(tmp_path, "reuse", engine=str(spec), workers=1, **FAKE_RUN)
    games = store.read_games()
    assert len(games) >= 8
    # one start to check the options, then one process per side for every game and vector
    assert external.started_count() - before == 3
    assert external.live_count() == 2
    assert all(g["white_engine"].endswith("random_mover.py") for g in games)
    weights = {tuple(g["white_weights"]) for g in games}
    assert len(weights) > 2  # many weight vectors went through the same two processes
    status = _evotune("status", "reuse", "--runs-dir", str(tmp_path), "--json")
    info = json.loads(status.stdout)  # games: the final check's too; the log holds the tuning's
    assert info.get("tuning_games", info["games"]) == len(games)
    # verify plays the engine with the recommended values against its reference values
    from evotune.reporting.export import export_run
    from evotune.verify.run import VerifySettings, verify_run

    doc = verify_run(store, settings=VerifySettings(games=2, workers=1))
    assert doc["engine"] == "fake" and [m["opponent"] for m in doc["matches"]] == [
        "start", "initial mean"]
    assert all(m["games"] == 2 for m in doc["matches"])
    assert doc["matches"][0]["b"][0] == 300.0  # the spec's reference knight
    text = export_run(store, fmt="uci").text
    assert "setoption name KnightValue value" in text
    external.close_all()


# ---- checks before anything is written -----------------------------------------------------------

def _refused(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "runs"
    res = _evotune("run", "--np", "4", "--generations", "1", "--games", "2", "--depth", "1",
                   *args, "--runs-dir", str(out))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())  # nothing written
    return res.stderr


def test_td_with_a_uci_engine_is_refused_up_front(tmp_path, fake_engine_spec):
    err = _refused(tmp_path, "--strategy", "td", "--engine", str(fake_engine_spec(tmp_path)))
    assert "strategy 'td'" in err and "feature vector" in err


def test_an_option_the_engine_lacks_or_a_range_it_refuses_stops_the_run(tmp_path,
                                                                       fake_engine_spec):
    err = _refused(tmp_path, "--engine", str(fake_engine_spec(tmp_path, options="Hash = 16")))
    assert "no UCI option 'Hash'" in err and "KnightValue" in err
    err = _refused(tmp_path, "--engine",
                   str(fake_engine_spec(tmp_path, knight_upper=3000, name="wide")))
    assert "weight 'knight'" in err and "KnightValue" in err and "at most 2000" in err
    err = _refused(tmp_path, "--engine", str(fake_engine_spec(tmp_path)), "--tc", "fast")
    assert "--tc 'fast'" in err


# ---- faults during a run ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode, flags, termination", [
    ("crash", ["movetime=0.01"], "forfeit-crash"),
    ("hang", ["movetime=0.01"], "forfeit-timeout"),
    ("illegal", ["movetime=0.01"], "forfeit-illegal-move"),
    ("slow", ["tc=0.5+0"], "time-forfeit"),
])
def test_a_faulty_engine_forfeits_that_game_and_the_run_goes_on(tmp_path, mode, flags,
                                                                termination, fake_engine_spec):
    spec = fake_engine_spec(tmp_path, mode, "--after", "4", "--once", str(tmp_path / "faulted"))
    kw = dict(FAKE_RUN, generations=1)
    for f in flags:
        k, v = f.split("=")
        kw[k] = float(v) if k == "movetime" else v
    store = _run(tmp_path, mode, engine=str(spec), workers=1, **kw)
    games = store.read_games()
    faults = [g for g in games if g["termination"] == termination]
    assert len(faults) == 1, [g["termination"] for g in games]
    bad = faults[0]
    # the side whose engine misbehaved lost, after 3 good moves of its own
    assert len(bad["moves"]) in (6, 7)
    loser_white = len(bad["moves"]) == 6
    assert bad["result"] == ("0-1" if loser_white else "1-0")
    assert len(games) >= 4 and store.read_state().finished
    assert all(not g["termination"].startswith(("forfeit", "time")) for g in games
               if g is not bad)


# ---- time controls ----------------------------------------------------------------------------------

def test_clocks_count_down_add_increments_and_flag_late_moves():
    import chess

    from evotune.errors import ConfigError
    from evotune.limits import parse_tc
    from evotune.players.clock import Clocks

    tc = parse_tc("2+0.05")
    assert (tc.base, tc.inc, str(tc)) == (2.0, 0.05, "2+0.05")
    assert parse_tc("") is None and parse_tc("60").inc == 0.0
    for bad in ("0+1", "1+-1", "x", "nan"):
        with pytest.raises(ConfigError, match="BASE\\+INC"):
            parse_tc(bad)
    clocks = Clocks(tc, margin=0.1)
    assert clocks.spend(chess.WHITE, 0.5)
    assert clocks.left[chess.WHITE] == pytest.approx(1.55)
    assert clocks.spend(chess.WHITE, 1.62)  # 0.07 s over, inside the margin
    assert clocks.left[chess.WHITE] == pytest.approx(-0.02)  # the overrun is not forgiven
    assert not clocks.spend(chess.WHITE, 0.09)  # -0.11: beyond the margin
    assert not clocks.spend(chess.BLACK, 2.2)
    board = chess.Board("8/8/4k3/8/8/3K4/8/7Q w - - 0 1")
    assert clocks.flag_result(board, chess.BLACK) == ("1-0", "time-forfeit")
    # the side that flags keeps a draw when its opponent cannot mate (a bare king)
    assert clocks.flag_result(board, chess.WHITE) == ("1/2-1/2", "time-forfeit")


@pytest.mark.slow
def test_no_game_is_lost_on_time_at_2_plus_0_05_with_evotune_uci_on_both_sides(tmp_path):
    store = _run(tmp_path, "tc", engine="shannon-uci", strategy="de", population=4, generations=1,
                 games=2, depth=3, seed=2, max_plies=80, tc="2+0.05", workers=2)
    games = store.read_games()
    assert len(games) >= 4
    assert not [g for g in games if g["termination"] in ("time-forfeit", "forfeit-timeout")]
    assert all(g["white_engine"] == "evotune uci" for g in games)


# ---- gauntlets ----------------------------------------------------------------------------------------

def test_gauntlet_run_against_two_opponents_one_of_them_a_uci_engine(tmp_path):
    store = _run(tmp_path, "gauntlet", engine="shannon", strategy="de", population=4, generations=1,
                 games=2, depth=1, seed=4, workers=2, opponents="shannon,shannon-uci")
    gens = store.generations()
    g1 = gens[1]
    gauntlet = g1.gauntlet
    assert gauntlet.opponents == ("shannon", "shannon-uci")
    cands = gauntlet.candidates
    assert len(cands) == 8  # 4 targets + 4 trials, each played once
    for c in cands:
        assert c.games == (2, 2) and all(0 <= p <= 4 for p in c.points)
        assert [w + d + lost for w, d, lost in zip(c.wins, c.draws, c.losses)] == [2, 2]
    games = store.read_games()
    assert len(games) == g1.games == 8 * 2 * 2
    assert sum(g["white_engine"] == "evotune uci" or g["black_engine"] == "evotune uci"
               for g in games) == 16
    # a target is replaced exactly when its trial scored more against the gauntlet
    points = {c.weights: sum(c.points) for c in cands}
    for i, m in enumerate(g1.matches):
        assert (m.gauntlet_points_a, m.gauntlet_points_b) == (points[m.a], points[m.b])
        won = points[m.a] > points[m.b]
        assert g1.population[i] == (m.a if won else gens[0].population[i])
    # every candidate met each opponent on the same openings
    by_opp: dict[int, set] = {}
    for g in games:
        fixture = g["key"][1]
        by_opp.setdefault(fixture % 2, set()).add((fixture // 2, json.dumps(g["opening"])))
    for seen in by_opp.values():
        assert len({o for _, o in seen}) == 1  # one opening pair per opponent (games=2)
    # the report plots the score against each opponent
    from evotune.reporting.gauntletplot import gauntlet_series
    from evotune.reporting.report import write_report
    from evotune.runs.rundata import load_run

    opps, gens_x, mean, best = gauntlet_series(load_run(store))
    assert opps == ("shannon", "shannon-uci") and list(gens_x) == [1]
    expected = [sum(c.points[j] for c in cands) / (4.0 * len(cands)) for j in range(2)]
    assert mean[0].tolist() == pytest.approx(expected)
    assert (best >= mean).all()
    files = write_report(store, out_dir=tmp_path / "reports")
    assert (files.plots.out_dir / "gauntlet.png").is_file()
    assert "gauntlet" in files.markdown.read_text()


@pytest.mark.skipif(not Path(STOCKFISH).exists(), reason="Debian's stockfish is not installed")
def test_gauntlet_against_stockfish_at_skill_level_0(tmp_path):
    store = _run(tmp_path, "sf", engine="shannon", strategy="de", population=4, generations=1,
                 games=2, depth=1, seed=4, workers=1,
                 opponents=f"{HERE / 'data' / 'stockfish.toml'},shannon")
    g1 = store.generations()[1]
    assert g1.gauntlet.opponents == ("stockfish", "shannon")
    games = store.read_games()
    sf = [g for g in games if "stockfish" in (g["white_engine"] + g["black_engine"])]
    assert len(sf) == 16 and all(g["termination"] and g["moves"] for g in sf)


def test_play_gauntlet_gives_points_per_opponent():
    from evotune.limits import Limits
    from evotune.match import MatchSettings
    from evotune.match.gauntlet import play_gauntlet
    from evotune.players import builtin

    ref = (100, 300, 330, 500, 900, 10)
    weak = (100, 100, 100, 100, 100, 0)
    settings = MatchSettings(limits=Limits(depth=2, max_plies=120))
    scores = play_gauntlet([builtin(ref, name="ref"), builtin(weak, name="weak")],
                           [builtin(weak, name="o-weak"), builtin(ref, name="o-ref")],
                           games=4, settings=settings, seed=1)
    strong, poor = scores
    assert strong.games == poor.games == (4, 4)
    assert strong.total_points > poor.total_points
    assert strong.points[0] >= 6  # the reference weights beat the weak ones
    # equal weights on both sides of a colour-swapped pair: exactly half the points
    assert strong.points[1] == poor.points[0] == 4
    assert 0.0 <= poor.score < strong.score <= 1.0


# ---- determinism ------------------------------------------------------------------------------------

def test_uci_gauntlet_run_resumed_equals_an_uninterrupted_run(tmp_path, fake_engine_spec,
                                                              stored_generations, stored_games):

    from evotune.kinds.games.lifecycle import open_run

    spec = fake_engine_spec(tmp_path)
    kw = dict(FAKE_RUN, engine=str(spec), workers=1, opponents="shannon")
    full = _run(tmp_path, "full", **kw)
    _run(tmp_path, "part", **{**kw, "generations": 1})
    store, plan = open_run("part", out_dir=tmp_path)
    execute(store, with_overrides(plan, generations=2))
    assert stored_generations(store.root) == stored_generations(full.root)
    assert stored_games(store.root) == stored_games(full.root)


@pytest.mark.slow
def test_uci_run_resumed_after_sigkill_equals_an_uninterrupted_run(tmp_path, fake_engine_spec,
                                                                   kill_at_generation,
                                                                   stored_generations,
                                                                   stored_games):
    spec = fake_engine_spec(tmp_path)
    config = tmp_path / "short.toml"
    config.write_text("max_plies = 40\n")
    args = ["--strategy", "de", "--np", "4", "--generations", "4", "--games", "2", "--depth", "1",
            "--seed", "9", "--workers", "2", "--engine", str(spec), "--runs-dir", str(tmp_path),
            "--opponents", f"shannon,{spec}", "--config", str(config)]
    full = _evotune("run", *args, "--run-id", "full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "run", *args,
                             "--run-id", "killed"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    state = tmp_path / "killed" / "state.json"
    killed_at = kill_at_generation(proc, state)
    assert killed_at is not None and killed_at < 4, "the run ended before it could be killed"
    res = _evotune("resume", "killed", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert stored_generations(tmp_path / "killed") == stored_generations(tmp_path / "full")
    assert stored_games(tmp_path / "killed") == stored_games(tmp_path / "full")
    try:  # the killed run's workers and engines are gone with it
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_uci_run_on_a_dask_cluster_equals_the_local_run(tmp_path, fake_engine_spec,
                                                        stored_generations, stored_games):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")
    spec = fake_engine_spec(tmp_path)
    kw = dict(FAKE_RUN, engine=str(spec), opponents=f"shannon,{spec}")
    local = _run(tmp_path, "local", workers=1, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=40) as lc:
        remote = _run(tmp_path, "dask", backend="dask", scheduler=lc.scheduler_address, **kw)
    assert stored_generations(remote.root) == stored_generations(local.root)
    assert stored_games(remote.root) == stored_games(local.root)


def test_match_at_a_time_control_with_a_uci_engine_and_the_builtin_one(tmp_path):
    pgn = tmp_path / "m.pgn"
    res = _evotune("match", "shannon-uci", "shannon", "--games", "2", "--tc", "1+0.05",
                   "--max-plies", "16", "--depth", "1", "--json", "--pgn", str(pgn))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["games"] == 2
    text = pgn.read_text()
    assert text.count('Engine "evotune uci"]') == 2  # White in one game, Black in the other
    assert "time-forfeit" not in text
    bad = _evotune("match", "shannon-uci", "shannon", "--games", "2", "--tc", "1+0.05",
                   "--movetime", "0.1")
    assert bad.returncode == 2 and "either --tc or --movetime" in bad.stderr
