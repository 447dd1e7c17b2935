"""Tuning a net's output layer by games (``evotune run --engine nnue:FILE``): the weight space a
net gives a run, candidates that are nets with another output layer, runs of spsa, de and cmaes
that complete, resume identically (in-process and after kill -9) and export the tuned net, and
bad input refused in one line. Random nets know nothing, so games run at depth 1 with a node
limit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.cli import main
from evotune.engine import api
from evotune.engine.net.network import Net, evaluate_reference, random_net, read_net, write_net
from evotune.engine.net.outputlayer import output_names, output_ranges, output_values, with_output
from evotune.errors import ConfigError, NetError, WeightsError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run, open_run
from evotune.kinds.games.plan import with_overrides
from evotune.kinds.games.solver import execute
from evotune.limits import Limits
from evotune.match.resolve import resolve_player
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.runs.rundata import load_run
from evotune.runs.runkind import recommend
from evotune.runs.runspec import load_run_engine
from evotune.spec.file import load_engine_spec
from evotune.strategies import strategy_class

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
RUN = dict(population=6, games=2, depth=1, nodes=1500, max_plies=160, seed=4)
"""Small games: depth 1 with a node limit (a random net's quiescence finds few cut-offs)."""
FENS = ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r3k2r/pp3ppp/2n1bn2/2bp4/8/2NB1N2/PPP2PPP/R1B1K2R b KQkq - 3 10",
        "8/5pk1/6p1/8/3R4/6P1/5PK1/2r5 w - - 0 40")


@pytest.fixture(scope="module")
def net_file(tmp_path_factory) -> Path:
    """The tiny random net of `evotune nn init --hidden 8 --seed 1`."""
    path = tmp_path_factory.mktemp("net") / "tiny.nnue"
    main(["nn", "init", "--hidden", "8", "--seed", "1", "--out", str(path)])
    return path


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=600)


def run_to_end(folder: Path, run_id: str, **kw):
    store, plan = new_run(build_run_config(**{**RUN, **kw}), out_dir=folder, run_id=run_id)
    execute(store, plan)
    return store


# ---- the weight space of a net ------------------------------------------------------------------

def test_a_runs_net_spec_has_the_output_layer_as_weights(net_file):
    net = read_net(net_file)
    spec = load_run_engine(f"nnue:{net_file}")
    names = output_names(8)
    assert spec.names == names and len(names) == 18
    assert names[:2] == ("out.us.0", "out.us.1") and names[8] == "out.them.0"
    assert names[-2:] == ("out.bias", "scale")
    space = spec.space()
    ref = output_values(net)
    assert np.array_equal(space.reference_array, ref)
    assert ref[-1] == 400 and ref[-2] == net.l1b and np.array_equal(ref[:16], net.l1w)
    # bounds: each weight +- max(|w|, qb / 4 = 16), the bias +- max(|b|, qa qb / 4 = 4080),
    # the scale 200..800
    w = int(net.l1w[0])
    assert (space.lower[0], space.upper[0]) == (w - max(abs(w), 16), w + max(abs(w), 16))
    b = net.l1b
    assert (space.lower[16], space.upper[16]) == (b - max(abs(b), 4080), b + max(abs(b), 4080))
    assert (space.lower[17], space.upper[17]) == (200, 800)
    assert not any(space.fixed) and space.max_abs == 100_000
    # the spec keeps the net in its text (what a run stores) and the net in its digest
    assert spec.net == str(net_file.resolve()) and spec.text.startswith(f'net = "{spec.net}"\n')
    other = net_file.parent / "other.nnue"
    write_net(random_net(8, 2), other)
    assert load_run_engine(f"nnue:{other}").digest != spec.digest
    # read to play (no run), a net's spec has no weights, as before
    assert load_engine_spec("nnue").names == ()


def test_the_default_bounds_stay_within_what_the_file_holds():
    base = random_net(8, 3)
    net = Net(hidden=8, activation="screlu", l0w=base.l0w, l0b=base.l0b,
              l1w=np.array([30000, -30000] + [0] * 14, dtype=np.int16), l1b=-20000, scale=60000)
    ranges = output_ranges(net)
    assert ranges[0] == (0, 32767, -32768, 32767)         # 30000 +- 30000, cut at int16
    assert ranges[1] == (-32768, 0, -32768, 32767)
    assert ranges[2] == (-16, 16, -32768, 32767)          # 0 +- qb / 4
    assert ranges[16] == (-32768, 0, -32768, 32767)       # the bias
    assert ranges[17] == (30000, 100000, 1, 100000)       # the scale: half to twice, <= 100000
    with pytest.raises(NetError, match="leaves int16"):
        with_output(net, [40000] + [0] * 17)


def test_a_spec_of_a_net_narrows_its_bounds_with_tables(tmp_path, net_file, call_cli):
    (tmp_path / "tiny.nnue").write_bytes(net_file.read_bytes())
    spec_file = tmp_path / "tune.toml"
    spec_file.write_text('name = "tune"\nfeatures = "nnue"\nnet = "tiny.nnue"\n'
                         '[[group]]\nmatch = "out.them.*"\nfixed = true\n'
                         '[[weight]]\nname = "scale"\nlower = 300\nupper = 500\n')
    spec = load_run_engine(str(spec_file))
    space = spec.space()
    assert sum(space.fixed) == 8 and all(space.fixed[8:16])
    assert (space.lower[-1], space.upper[-1]) == (300, 500)
    assert load_engine_spec(spec_file).names == ()  # played, not tuned: no weights
    for table, says in [
        ('[[weight]]\nname = "scale"\nupper = 200000\n', "what the net file can hold"),
        ('[[group]]\nmatch = "out.us.*"\nlower = -40000\n', "what the net file can hold"),
        ('[[weight]]\nname = "out.bias"\nreference = 7\n', "the file's value"),
        ('[[weight]]\nname = "out.us.0"\nlower = 0.5\n', "whole numbers"),
        ('[[weight]]\nname = "out.us.0"\nlower = 9\nupper = 3\n', "above upper bound"),
        ('[[weight]]\nname = "out.us.99"\nlower = 0\n', "unknown weight name"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text('features = "nnue"\nnet = "tiny.nnue"\n' + table)
        with pytest.raises(ConfigError, match=says):
            load_run_engine(str(bad))
        # issue 38 item 9: match, search and bench accepted these tables (run alone refused)
        with pytest.raises(ConfigError, match=says):
            resolve_player(str(bad))
        for cmd in (["search", FENS[0], "--engine", bad, "--depth", "1"],
                    ["bench", "--quick", "--engine", bad],
                    ["match", bad, "shannon", "--games", "2", "--depth", "1"]):
            code, out, err = call_cli(*cmd)
            assert code == 2 and err.count("\n") == 1 and says in err, (cmd, err)
    with pytest.raises(ConfigError, match="names its own net"):
        load_run_engine(f"{spec_file}:{net_file}")
    with pytest.raises(ConfigError, match="does not evaluate with a net"):
        load_run_engine(f"shannon:{net_file}")
    with pytest.raises(ConfigError, match="names no net"):
        load_run_engine("nnue")


@pytest.mark.parametrize("algorithm", ["uct", "probability"])
def test_a_net_spec_with_another_search_is_played_by_every_command(tmp_path, call_cli, algorithm):
    """A net evaluating for UCT (PUCT with the shipped move model as prior) or the probability-
    limited search (issue 40's study: net11 as every player's evaluation): search, bench, match,
    run (the net's output layer and the search's weights), datagen and uci play it with its
    search. (Issue 38 item 5 refused it: uci failed on the net's spin options, search ignored
    the table; a random net's quiescence made UCT crawl at 325 simulations/s.)"""
    net = ROOT / "evotune" / "engines" / "net11.nnue"
    model = ROOT / "evotune" / "engines" / "pesto-moves.evomove"
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "n"\nfeatures = "nnue"\nnet = "{net}"\n[search]\nalgorithm = '
                    f'"{algorithm}"\nprior = "model:{model}"\n')
    weights = {"uct": ["uct_c", "uct_k", "prior_temperature"],
               "probability": ["probability_factor", "prior_temperature"]}[algorithm]
    assert [w.name for w in load_engine_spec(spec).weights] == weights

    code, out, err = call_cli("search", FENS[1], "--engine", spec, "--nodes", "3000")
    assert code == 0, err
    played = load_engine_spec(spec)
    want = api.search(chess.Board(FENS[1]), read_net(net), nodes=3000, features="nnue",
                      settings=played.search)
    assert f"bestmove {want.move} score {want.score} depth {want.depth} nodes {want.nodes}" in out
    if algorithm == "uct":  # the root's visits: a UCT search, not alpha-beta
        assert want.simulations > 50 and "visits" in out and f"simulations {want.simulations}" in out
    else:  # the node budget is the probability search's (alpha-beta's depth 3 stops early)
        assert want.nodes >= 3000 and want.depth >= 2

    code, out, err = call_cli("bench", "--quick", "--engine", spec)
    assert code == 0 and f"algorithm              {algorithm}" in out, (out, err)
    code, out, err = call_cli("match", spec, "net11", "--games", "2", "--nodes", "800",
                          "--max-plies", "60")
    assert code == 0 and "Elo" in out, err
    code, out, err = call_cli("run", "--engine", spec, "--generations", "1", "--np", "4",
                          "--games", "2", "--nodes", "500", "--max-plies", "40", "--runs-dir",
                          tmp_path / "runs", "--run-id", "r")
    assert code == 0, err
    names = load_run(tmp_path / "runs" / "r").spec.space().names
    assert len(names) == 258 + len(weights) and list(names[-len(weights):]) == weights
    code, out, err = call_cli("datagen", "--engine", spec, "--games", "2", "--nodes", "500",
                          "--out", tmp_path / "d.txt")
    assert code == 0 and len((tmp_path / "d.txt").read_text().splitlines()) > 10, err

    option = {"uct": "UctC", "probability": "ProbabilityFactor"}[algorithm]
    uci = subprocess.Popen([sys.executable, "-m", "evotune.cli", "uci", "--engine", str(spec)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=ENV)
    uci.stdin.write(f"uci\nsetoption name {option} value 50\nisready\nposition startpos moves "
                    "e2e4\ngo nodes 2000\n")
    uci.stdin.flush()
    lines = []
    while not lines or not lines[-1].startswith("bestmove"):  # stdin open: the search ends itself
        lines.append(uci.stdout.readline().strip())
        assert lines[-1] or uci.poll() is None, lines
    out, err = uci.communicate("quit\n", timeout=60)
    assert uci.returncode == 0 and "Traceback" not in err, err
    assert any(ln.startswith(f"option name {option} type spin") for ln in lines)
    assert "uciok" in lines and not any("error" in ln for ln in lines), lines
    assert lines[-1] != "bestmove (none)", lines
    if algorithm == "uct":
        sims = [int(ln.split()[-1]) for ln in lines if ln.startswith("info string simulations ")]
        assert len(sims) == 1 and sims[0] > 50, lines
    else:
        assert any(" nodes 2000 " in ln for ln in lines if ln.startswith("info depth")), lines


# ---- candidates are nets --------------------------------------------------------------------------

def test_the_reference_candidate_plays_as_the_plain_net(net_file):
    spec = load_run_engine(f"nnue:{net_file}")
    plain = resolve_player(f"nnue:{net_file}")
    cand = player_from_engine_spec(spec, spec.space().reference_weights(), name="cand")
    assert cand.net == plain.net and cand.net_checksum == plain.net_checksum
    assert len(cand.weights) == 18 and plain.weights == ()
    assert evaluation(cand) == evaluation(plain)   # the same arrays, scale and bias
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    games = [api.play_game(board, evaluation(a), evaluation(b),
                           limits=Limits(depth=2, nodes=3000, max_plies=80), features="nnue")
             for a, b in ((cand, plain), (plain, plain), (cand, cand))]
    assert len(games[0].moves) > 20
    assert games[0].moves == games[1].moves == games[2].moves
    assert games[0].result == games[1].result


def test_a_candidate_evaluates_with_its_output_layer(net_file):
    spec = load_run_engine(f"nnue:{net_file}")
    ref = spec.space().reference_array
    w = ref.copy()
    w[:8] = 2 * ref[:8]         # the side to move's weights doubled (the bound: +- |w|)
    w[8:16] = 0                 # the other side's zero
    w[16] = ref[16] + 3000      # the bias moved
    w[17] = 700                 # the scale
    p = player_from_engine_spec(spec, w, name="tuned")
    net = evaluation(p)
    assert net.scale == 700 and net.l1b == int(w[16]) and np.array_equal(net.l1w, w[:16])
    assert np.array_equal(net.l0w, read_net(net_file).l0w)
    plain = read_net(net_file)
    for fen in FENS:
        board = chess.Board(fen)
        assert api.evaluate(board, net, features="nnue") == evaluate_reference(net, board,
                                                                              clamp=True)
        assert api.evaluate(board, net, features="nnue") != \
            api.evaluate(board, plain, features="nnue")
    for i, value in ((17, 900), (16, ref[16] + 9000), (9, 3 * ref[9])):
        with pytest.raises(WeightsError, match=f"{spec.names[i]} outside the bounds"):
            player_from_engine_spec(spec, np.where(np.arange(18) == i, value, ref))
    with pytest.raises(WeightsError, match="takes no weights"):
        player_from_engine_spec(load_engine_spec("nnue"), ref, net=str(net_file))
    with pytest.raises(NetError, match="whole numbers"):
        with_output(plain, ref + 0.5)


# ---- runs -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["spsa", "de", "cmaes"])
def test_a_net_run_completes_resumes_identically_and_exports_its_net(
        tmp_path, net_file, strategy, stored_generations, stored_games, call_cli):
    if strategy == "cmaes":
        pytest.importorskip("cma", reason="pycma is an optional extra")
    kw = dict(strategy=strategy, engine=f"nnue:{net_file}", generations=3)
    if "budget" in strategy_class(strategy).PARAMS:  # a schedule that the limit does not set
        kw["params"] = {"budget": 400}
    full = run_to_end(tmp_path, "full", workers=2, **kw)
    part = run_to_end(tmp_path, "part", workers=1, **{**kw, "generations": 1})
    store, plan = open_run("part", out_dir=tmp_path)
    execute(store, with_overrides(plan, generations=3))
    assert stored_generations(part.root) == stored_generations(full.root)
    assert stored_games(part.root) == stored_games(full.root)
    gens = stored_generations(full.root)
    assert len(gens) == 4 and gens[0]["names"] == list(output_names(8))
    assert len(stored_games(full.root)) >= 3 * 2
    # the run started at the net's own output layer and moved away from it
    ref = output_values(read_net(net_file))
    assert json.loads((full.root / "manifest.json").read_text())["config"]["params"]["init"] \
        == "reference"
    moved = np.array(gens[-1]["population"]) != ref
    assert moved.any()
    # the tuned net: the input layer of the file, the recommended output layer and scale
    rec = np.array(recommend(load_run(full.root)).weights)
    for fmt in ("evotune", "bullet"):
        out = tmp_path / f"tuned.{fmt}"
        code, _, err = call_cli("export", full.root, "--format", fmt, "--out", out)
        assert code == 0, err
        got = read_net(out)
        assert np.array_equal(got.l1w, rec[:16]) and got.l1b == rec[16]
        assert np.array_equal(got.l0w, read_net(net_file).l0w)
        assert got.scale == (rec[17] if fmt == "evotune" else 400)  # bullet's has no scale
        assert ("bullet's layout has no scale" in err) == (fmt == "bullet" and rec[17] != 400)
    assert resolve_player(f"nnue:{tmp_path / 'tuned.evotune'}").net_checksum == \
        with_output(read_net(net_file), rec).checksum


def test_run_commands_on_a_net_run(tmp_path, net_file, call_cli):
    store = run_to_end(tmp_path, "r", strategy="spsa", engine=f"nnue:{net_file}",
                       generations=2, workers=1)
    code, out, err = call_cli("status", "r", "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["generation"] == 2 and info["finished"] and info["names"][-1] == "scale"
    code, out, err = call_cli("report", "r", "--runs-dir", tmp_path, "--reports",
                          tmp_path / "rep")
    assert code == 0, err
    assert "out.bias" in (tmp_path / "rep" / "r" / "report.md").read_text()
    code, out, err = call_cli("verify", "r", "--runs-dir", tmp_path, "--games", "2",
                          "--workers", "1")
    assert code == 0, err
    doc = json.loads((store.root / "verify.json").read_text())
    # SPSA starts at the file's values: the initial mean is the reference, played once
    assert [m["label"] for m in doc["matches"]] == ["recommended vs start"]
    assert all(m["games"] == 2 for m in doc["matches"]) and len(doc["weights"]) == 18
    code, out, err = call_cli("export", "r", "--runs-dir", tmp_path, "--format", "json")
    assert code == 0 and json.loads(out)["scale"] == doc["weights"][-1]
    # a changed net file: resume and export refuse it, in one line
    saved = net_file.read_bytes()
    try:
        write_net(random_net(8, 5), net_file)
        code, _, err = call_cli("export", "r", "--runs-dir", tmp_path, "--format",
                            "evotune", "--out", tmp_path / "x.nnue")
        assert code == 2 and "changed since the run started" in err and err.count("\n") == 1
        code, _, err = call_cli("resume", "r", "--runs-dir", tmp_path)
        assert code == 2 and "changed since the run started" in err and err.count("\n") == 1
    finally:
        net_file.write_bytes(saved)
    assert not (tmp_path / "x.nnue").exists()


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_equals_uninterrupted(tmp_path, net_file, kill_at_generation,
                                                          stored_generations, stored_games):
    args = ["run", "--engine", f"nnue:{net_file}", "--strategy", "spsa", "--generations", "5",
            "--np", "6", "--games", "2", "--depth", "1", "--nodes", "1500", "--seed", "4",
            "--workers", "2", "--runs-dir", "runs"]
    full = cli(args + ["--run-id", "full"], tmp_path)
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args, "--run-id", "killed"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    killed_at = kill_at_generation(proc, tmp_path / "runs" / "killed" / "state.json", 2)
    assert killed_at is not None and killed_at < 5, "the run ended before it could be killed"
    got = cli(["resume", "killed", "--runs-dir", "runs"], tmp_path)
    assert got.returncode == 0, got.stderr
    a, b = tmp_path / "runs" / "full", tmp_path / "runs" / "killed"
    assert stored_generations(a) == stored_generations(b)
    assert stored_games(a) == stored_games(b)


def test_a_net_runs_net_file_is_part_of_its_identity_for_every_command(tmp_path, call_cli):
    """Issue 38 item 6: a smaller net made verify an internal error (broadcast shapes), a changed
    input layer was played by verify and exported without a word, a removed net made verify
    print 3 lines (item 15). Every command that reads the run refuses in one line naming it."""
    net = tmp_path / "n.nnue"
    write_net(random_net(8, 1), net)
    saved = net.read_bytes()
    run_to_end(tmp_path, "r", strategy="spsa", engine=f"nnue:{net}", generations=1, workers=1)
    commands = (["verify", "r", "--games", "2", "--workers", "1"],
                ["export", "r", "--format", "json"],
                ["export", "r", "--format", "evotune", "--out", tmp_path / "x.nnue"],
                ["report", "r", "--reports", tmp_path / "rep"],
                ["plot", "r", "--reports", tmp_path / "rep"],
                ["resume", "r", "--generations", "2"],
                ["status", "r"], ["status", "r", "--json"])
    other_input_layer = random_net(8, 9)
    for change, says in (("smaller", "changed since the run started"),
                         ("input layer", "changed since the run started"),
                         ("removed", "not found")):
        if change == "smaller":
            write_net(random_net(16, 1), net)
        elif change == "input layer":  # same size and output layer, another input layer
            write_net(with_output(other_input_layer, output_values(random_net(8, 1))), net)
        else:
            net.unlink()
        for cmd in commands:
            code, out, err = call_cli(*cmd, "--runs-dir", tmp_path)
            assert code == 2 and err.count("\n") == 1, (change, cmd, err)
            assert says in err and str(net) in err, (change, cmd, err)
            assert out == ""
        net.write_bytes(saved)
    assert not (tmp_path / "x.nnue").exists() and not (tmp_path / "rep").exists()
    assert not (tmp_path / "r" / "verify.json").exists()
    code, _, err = call_cli("export", "r", "--format", "json", "--runs-dir", tmp_path)
    assert code == 0, err


def test_init_from_a_net_run_starts_at_its_tuned_output_layer(tmp_path, net_file, call_cli):
    """Issue 38 item 7: --init-from a net-tuning run was refused with "engine spec 'nnue:...' not
    found", and --engine nnue:FILE (the advice) failed the same way."""
    src = run_to_end(tmp_path, "src", strategy="spsa", engine=f"nnue:{net_file}",
                     generations=1, workers=1)
    rec = recommend(load_run(src.root)).weights
    for run_id, extra in (("a", []), ("b", ["--engine", f"nnue:{net_file}"])):
        code, _, err = call_cli("run", "--init-from", "src", *extra, "--strategy", "spsa",
                            "--generations", "1", "--np", "6", "--games", "2", "--depth", "1",
                            "--nodes", "1500", "--runs-dir", tmp_path, "--run-id", run_id)
        assert code == 0, err
        manifest = json.loads((tmp_path / run_id / "manifest.json").read_text())
        assert manifest["init_from"]["source"] == "src"
        spec = load_run(tmp_path / run_id).spec
        assert [w.reference for w in spec.weights] == list(rec)
        assert spec.net == str(net_file.resolve())


# ---- bad input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags, says", [
    (["--engine", "nnue"], "names no net"),
    (["--engine", "nnue:missing.nnue"], "missing.nnue' not found"),
    # a linear spec with a file is a start from a weights file (--engine SPEC:WEIGHTS)
    (["--engine", "shannon:NET"], "unknown kind '.nnue'"),
    (["--engine", "NET", "--strategy", "td"], "learns a linear evaluation from its features"),
    (["--engine", "NET", "--strategy", "spsa", "--param", "init=middle"],
     "parameter 'init' = 'middle' is invalid"),
    (["--engine", "NET", "--strategy", "de", "--param", "F=3"], "parameter 'F' = 3 is invalid"),
    (["--engine", "NET", "--strategy", "spsa", "--param", "cmaes_sigma=1"], "unknown parameter"),
    (["--engine", "BAD"], "what the net file can hold"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, net_file, call_cli, flags, says):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'features = "nnue"\nnet = "{net_file}"\n'
                   '[[weight]]\nname = "scale"\nlower = 0\n')
    flags = [f.replace("NET", f"nnue:{net_file}") if f.startswith(("NET", "shannon:")) else f
             for f in flags]
    flags = [str(bad) if f == "BAD" else f for f in flags]
    code, out, err = call_cli("run", *flags, "--generations", "1", "--depth", "1",
                          "--runs-dir", tmp_path / "runs")
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "runs").exists()


def test_net_export_bad_input(tmp_path, net_file, call_cli):
    run_to_end(tmp_path, "lin", strategy="spsa", engine="shannon", generations=1, workers=1,
               population=4, nodes=0)
    run_to_end(tmp_path, "net", strategy="spsa", engine=f"nnue:{net_file}", generations=1,
               workers=1)
    out_file = str(tmp_path / "o.nnue")
    for args, says in [
        (["lin", "--format", "evotune", "--out", out_file], "writes a net; run lin tunes"),
        (["net", "--format", "bullet"], "give --out FILE"),
        (["net", "--format", "evotune", "--out", out_file, "--engine", "nnue"], "--engine"),
    ]:
        code, out, err = call_cli("export", *args[:1], "--runs-dir", tmp_path, *args[1:])
        assert code == 2 and err.count("\n") == 1 and says in err, err
        assert out == ""
    assert not Path(out_file).exists()
