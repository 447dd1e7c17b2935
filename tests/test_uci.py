"""`evotune uci`: the built-in engine behind the UCI protocol, driven by python-chess as the client."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import time

import chess
import chess.engine
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.engine import search
from evotune.engine.uci.commands import format_score, parse_go, parse_position
from evotune.engine.uci.frontend import UciEngine
from evotune.limits import Limits
from evotune.rules import MATE

UCI_COMMAND = [sys.executable, "-m", "evotune.cli", "uci"]
FORK = chess.Board("7k/8/8/3n1b2/4P3/8/8/4K3 w - - 0 1")  # exd5 (knight) or exf5 (bishop)


@pytest.fixture(scope="module")
def engine():
    search(chess.STARTING_FEN, [100, 300, 330, 500, 900, 10], depth=1)  # warm the numba cache
    eng = chess.engine.SimpleEngine.popen_uci(UCI_COMMAND, timeout=120)
    eng.ping()
    yield eng
    eng.quit()


@pytest.fixture
def reference_options(engine):
    yield
    engine.configure({"KnightValue": 300, "BishopValue": 330, "MobilityWeight": 10})


def test_options_listed_with_bounds(engine):
    assert engine.id["name"].startswith("evotune")
    opts = engine.options
    expected = {"PawnValue": (100, 100, 100), "KnightValue": (300, 0, 1000),
                "BishopValue": (330, 0, 1000), "RookValue": (500, 0, 1000),
                "QueenValue": (900, 0, 1000), "MobilityWeight": (10, 0, 1000)}
    for name, (default, lo, hi) in expected.items():
        assert opts[name].type == "spin"
        assert (opts[name].default, opts[name].min, opts[name].max) == (default, lo, hi)


def test_configure_changes_the_evaluation_and_the_best_move(engine, reference_options):
    limit = chess.engine.Limit(depth=3)
    base = engine.analyse(FORK, limit)
    assert base["pv"][0] == chess.Move.from_uci("e4f5")  # bishop 330 > knight 300
    engine.configure({"KnightValue": 1000})
    knight = engine.analyse(FORK, limit)
    assert knight["pv"][0] == chess.Move.from_uci("e4d5")
    # same position, same depth: the score is the core's with the new weights
    core = search(FORK, [100, 1000, 330, 500, 900, 10], depth=3)
    assert knight["score"].white().score() == core.score and knight["pv"][0].uci() == core.move
    engine.configure({"KnightValue": 300, "MobilityWeight": 0})
    flat = engine.analyse(FORK, limit)
    assert flat["score"].white().score() == search(FORK, [100, 300, 330, 500, 900, 0], depth=3).score


def test_whole_game_against_the_random_mover(engine, fake_engine):
    rnd = chess.engine.SimpleEngine.popen_uci(fake_engine("random_mover"))
    try:
        board = chess.Board()
        limit = chess.engine.Limit(depth=2)
        while not board.is_game_over(claim_draw=True) and board.ply() < 200:
            player = engine if board.turn == chess.WHITE else rnd
            board.push(player.play(board, limit).move)  # python-chess rejects illegal moves
        assert board.is_checkmate() and board.turn == chess.BLACK  # evotune mates a random mover
    finally:
        rnd.quit()


def test_go_movetime_returns_in_time(engine):
    t0 = time.perf_counter()
    result = engine.play(chess.Board(), chess.engine.Limit(time=0.3))
    elapsed = time.perf_counter() - t0
    assert result.move in chess.Board().legal_moves
    assert 0.25 <= elapsed < 1.0, elapsed  # wall clock on a shared machine: a generous margin


def test_clock_moves_use_a_share_of_the_clock(engine):
    board = chess.Board()
    t0 = time.perf_counter()
    result = engine.play(board, chess.engine.Limit(white_clock=3.0, black_clock=3.0))
    elapsed = time.perf_counter() - t0
    assert result.move in board.legal_moves
    assert elapsed < 0.6, elapsed  # about (3 s - overhead) / 30 moves = 0.1 s, plus I/O


def test_go_infinite_runs_until_stop(engine):
    with engine.analysis(chess.Board()) as analysis:
        time.sleep(0.4)
        assert analysis.info.get("depth", 0) >= 3  # still searching, deeper and deeper
    t0 = time.perf_counter()
    best = analysis.wait()
    assert best.move in chess.Board().legal_moves and time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("fen, depth, mate", [
    ("k7/8/1K6/8/8/8/8/7R w - - 0 1", 2, 1),    # Rh8#
    ("k7/8/1K6/8/8/8/8/7R b - - 0 1", 3, -1),   # Kb8 Rh8#
    ("k7/8/2K5/8/8/8/8/7R w - - 0 1", 4, 2),    # Kb6 Kb8 Rh8#
])
def test_mate_scores_reported_as_mate(engine, fen, depth, mate):
    info = engine.analyse(chess.Board(fen), chess.engine.Limit(depth=depth))
    assert info["score"].relative == chess.engine.Mate(mate)


def test_nodes_limit(engine):
    info = engine.analyse(chess.Board(), chess.engine.Limit(nodes=5000))
    assert 0 < info["nodes"] <= 5000 + 2000  # the core checks its limit every ~1024 nodes


# ---- the state machine in-process (fast, no subprocess) ----------------------------------------------

def converse(*lines: str, **kwargs) -> list[str]:
    out = io.StringIO()
    UciEngine(out=out, **kwargs).run(io.StringIO("".join(line + "\n" for line in lines)))
    return out.getvalue().splitlines()


def test_go_depth_is_one_search_with_an_info_line_per_iteration():
    """'go depth 5' runs one iterative deepening (the shallower iterations are not searched
    again for each depth): an info line per iteration, the last one's nodes, score and PV and
    the best move those of the core's search to depth 5."""
    out = io.StringIO()
    eng = UciEngine(out=out)
    for line in ("uci", f"position fen {FORK.fen()}", "go depth 5"):
        eng.handle(line)
    eng.wait()  # (a 'quit' at once would stop the search: the end of input)
    lines = out.getvalue().splitlines()
    infos = [line.split() for line in lines if line.startswith("info depth")]
    assert [int(i[2]) for i in infos] == [1, 2, 3, 4, 5]
    core = search(FORK, [100, 300, 330, 500, 900, 10], depth=5)
    last = infos[-1]
    assert int(last[last.index("nodes") + 1]) == core.nodes
    assert int(last[last.index("cp") + 1]) == core.score
    assert last[last.index("pv") + 1:] == list(core.pv)
    assert lines[-1] == f"bestmove {core.move}"
    nodes = [int(i[i.index("nodes") + 1]) for i in infos]
    assert nodes == [search(FORK, [100, 300, 330, 500, 900, 10], depth=d).nodes
                     for d in range(1, 6)]


def test_garbage_is_answered_with_info_string_and_ignored():
    out = converse("hello", "setoption name Hash value 16", "setoption name KnightValue value 5000",
                   "setoption KnightValue", "position fen not a fen", "position startpos moves e2e5",
                   "go depth x", "go sideways", "isready", "position startpos moves e2e4", "go depth 2",
                   "quit")
    strings = [line for line in out if line.startswith("info string")]
    assert len(strings) == 8, strings
    assert "unknown option 'Hash'" in strings[1] and "outside [0, 1000]" in strings[2]
    assert out[-1].startswith("bestmove ") and "readyok" in out
    after_e4 = parse_position(["startpos", "moves", "e2e4"])
    assert chess.Move.from_uci(out[-1].split()[1]) in after_e4.legal_moves


def test_undecodable_bytes_on_stdin_do_not_kill_the_engine():
    proc = subprocess.run(UCI_COMMAND, input=b"\xff\xfe garbage\nposition startpos\ngo depth 1\nquit\n",
                          capture_output=True, timeout=60)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 0 and lines[0].startswith("info string unknown command")
    assert lines[-1].startswith("bestmove ")


def test_weights_from_file_become_option_defaults_and_search_weights(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"knight": 1000, "bishop": 330, "rook": 500, "queen": 900, "mobility": 10}))
    out = io.StringIO()
    from evotune.engine.uci.frontend import run
    run(weights_file=path, stdout=out,
        stdin=io.StringIO(f"uci\nposition fen {FORK.fen()}\ngo depth 3\nquit\n"))
    lines = out.getvalue().splitlines()
    assert "option name KnightValue type spin default 1000 min 0 max 1000" in lines
    assert lines[-1] == "bestmove e4d5"


def test_cli_bad_weights_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2, 3]")
    proc = subprocess.run([*UCI_COMMAND, "--weights", str(bad)], capture_output=True, text=True,
                          input="quit\n", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "got 3 values, need 6" in proc.stderr
    result = CliRunner().invoke(cli, ["uci", "--weights", str(tmp_path / "missing.json")])
    assert result.exit_code != 0 and "cannot read it" in str(result.exception)


def test_parse_go_and_format_score():
    white = chess.WHITE
    assert parse_go(["depth", "5"], white) == parse_go(["depth", "5"], white)
    plan = parse_go(["depth", "5"], white)
    assert (plan.depth, plan.nodes, plan.seconds, plan.infinite) == (5, 0, 0.0, False)
    assert parse_go([], white).infinite and parse_go(["infinite"], white).infinite
    plan = parse_go(["wtime", "60000", "btime", "1000", "winc", "1000", "movestogo", "20"], white)
    assert plan.seconds == pytest.approx((60 - 10 * 1) / 20 + 0.75)  # reserve: 10 increments
    plan = parse_go(["wtime", "60000", "btime", "1000"], chess.BLACK)
    assert plan.seconds == pytest.approx((1 - 0.3) / 30)  # reserve: 0.3 s
    assert parse_go(["movetime", "250", "nodes", "900"], white).seconds == 0.25
    with pytest.raises(ValueError):
        parse_go(["depth", "deep"], white)
    assert parse_go(["searchmoves", "e2e4", "d2d4", "depth", "3"], white).depth == 3
    assert format_score(35) == "cp 35" and format_score(-7) == "cp -7"
    assert format_score(MATE - 1) == "mate 1" and format_score(MATE - 3) == "mate 2"
    assert format_score(-(MATE - 2)) == "mate -1" and format_score(-(MATE - 4)) == "mate -2"


def test_evotune_uci_as_an_external_player_replays_the_core():
    """`evotune uci` driven by the players game loop plays exactly the core's moves."""
    from evotune.engine import play_game
    from evotune.players import PlayerSpec, builtin, external
    from evotune.players.gameloop import play_players_game

    other = (100, 280, 350, 520, 880, 6)
    ours = PlayerSpec(name="evotune-uci", kind="uci", command=tuple(UCI_COMMAND),
                      options=(("KnightValue", 310), ("MobilityWeight", 12)))
    start = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    try:
        loop = play_players_game(builtin(other), ours, start, Limits(depth=2, max_plies=60))
    finally:
        external.close_all()
    core = play_game(start, other, (100, 310, 330, 500, 900, 12),
                     limits=Limits(depth=2, max_plies=60))
    assert loop.moves == core.moves and (loop.result, loop.termination) == (core.result, core.termination)
    assert (loop.scores == core.scores).all()  # the UCI 'score cp' lines carry the core's scores


@pytest.mark.parametrize("go", ["go depth 64", "go movetime 100000"])
def test_end_of_input_stops_a_limited_search_at_once(go):
    """Issue 38 item 13: with stdin closed after 'go depth 64' (or a long movetime) the engine
    searched until killed; the end of input is 'quit' now: a bestmove, exit 0, in seconds."""
    proc = subprocess.Popen(UCI_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(f"uci\nisready\nposition startpos\n{go}\n", timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"'{go}' with stdin closed still searched after 40 s")
    lines = out.splitlines()
    assert proc.returncode == 0, err
    assert "readyok" in lines and lines[-1].startswith("bestmove ")
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves
