"""evotune datagen's fast mode (--per-game 0 --filter bestmove, --format bullet): the core's record
of each game's positions equals python-chess's; the file is every position a python-chess replay
says passes the filter; bullet's records are the text file's positions; the same file for any
worker count and after kill -9 + rerun; bad values are one line, exit 2."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest
from datagenkill import kill_in_second_chunk

from evotune.engine import play_game
from evotune.engine.gameboards import (
    B_CAPTURE,
    B_CHECK,
    B_PROMO,
    board_fens,
    board_rows,
    flags,
    packed_boards,
)
from evotune.learn import datagen as dg
from evotune.learn.labels import format_line
from evotune.learn.nn.bulletdata import bullet_bytes, read_bullet
from evotune.learn.nn.data import load_data, pack_fen
from evotune.limits import Limits
from evotune.match.fixtures import GameTask, MatchSettings
from evotune.match.resolve import close_external_players
from evotune.match.runner import play_task
from evotune.space import SHANNON_REFERENCE

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

FAST = dg.DatagenSettings(games=6, limits=Limits(depth=2), per_game=0, seed=13, chunk=4,
                          fmt="text", filter="bestmove")
# an en passant capture available at the start (e3), a promotion, castling rights lost on the way
STARTS = ["rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
          "8/P7/8/8/8/8/k7/7K w - - 0 1",
          "r3k2r/pppq1ppp/2npbn2/4p3/4P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8"]


@pytest.fixture(scope="module")
def fast(tmp_path_factory):
    d = tmp_path_factory.mktemp("fast")
    text, binary = d / "fast.txt", d / "fast.bin"
    summary = dg.datagen(FAST, text, workers=1)
    dg.datagen(dataclasses.replace(FAST, fmt="bullet"), binary, workers=1)
    return text, binary, summary


def _games():
    """Games from STARTS and from datagen's openings (shannon, depth 1 and 2)."""
    for fen in STARTS:
        board = chess.Board(fen)
        yield board, play_game(board, SHANNON_REFERENCE, SHANNON_REFERENCE,
                               limits=Limits(depth=1, max_plies=120), boards=True)
    for g in range(4):
        op, _ = dg.game_opening(FAST, g)
        board = op.board()
        yield board, play_game(board, SHANNON_REFERENCE, SHANNON_REFERENCE, limits=Limits(depth=2),
                               boards=True)


def test_the_cores_record_of_a_game_equals_python_chess():
    seen = 0
    for board, game in _games():
        assert game.boards.shape == (len(game.moves), 70)
        rows = board_rows(board, game.moves)
        assert np.array_equal(game.boards, rows)  # every square, right, clock and flag
        replay = board.copy()
        fens = []
        for uci in game.moves:
            fens.append(replay.fen())
            replay.push_uci(uci)
        assert board_fens(game.boards) == fens
        occ, pcs, stm = packed_boards(game.boards)
        for i, fen in enumerate(fens):
            o, p, s = pack_fen(fen)
            assert (int(occ[i]), pcs[i].tobytes(), int(stm[i])) == (o, p, s)
        seen |= int(np.bitwise_or.reduce(flags(game.boards)))
    assert seen == B_CHECK | B_CAPTURE | B_PROMO  # each flag was met
    first = next(_games())[1]
    assert board_fens(first.boards[:1])[0] == STARTS[0]  # the legal en passant square kept
    assert play_game(chess.Board(), SHANNON_REFERENCE, SHANNON_REFERENCE,
                     limits=Limits(depth=1, max_plies=4)).boards is None  # not asked for: none kept


def _expected_lines(settings) -> list[str]:
    """Every position of every game that a python-chess replay says bestmove keeps."""
    lines = []
    for g in range(settings.games):
        op, _ = dg.game_opening(settings, g)
        game = play_game(op.board(), SHANNON_REFERENCE, SHANNON_REFERENCE,
                         limits=Limits(depth=settings.limits.depth))
        value = {"1-0": 1.0, "0-1": 0.0}.get(game.result, 0.5)
        board = op.board()
        for uci, score in zip(game.moves, game.scores):
            move = chess.Move.from_uci(uci)
            if not (board.is_check() or board.is_capture(move) or move.promotion
                    or abs(int(score)) > 32000):
                white = int(score) if board.turn == chess.WHITE else -int(score)
                lines.append(format_line(board.fen(), value, "text", white) + "\n")
            board.push(move)
    return lines


def test_every_position_the_filter_keeps_in_game_order(fast):
    text, _, summary = fast
    expected = _expected_lines(FAST)
    assert text.read_text() == "".join(expected)
    assert summary.positions == len(expected) > 6 * 20  # every eligible one, not 10 a game


def test_bullet_records_are_the_text_files_positions(fast, tmp_path):
    text, binary, _ = fast
    assert binary.stat().st_size == 32 * len(text.read_text().splitlines())
    assert binary.read_bytes() == bullet_bytes(load_data([text], cache_dir=tmp_path)).tobytes()
    data, _ = read_bullet(binary)
    assert len(data) == binary.stat().st_size // 32


def test_same_file_for_any_worker_count_and_chunk(fast, tmp_path):
    text, binary, _ = fast
    two = tmp_path / "two.txt"
    dg.datagen(dataclasses.replace(FAST, chunk=5), two, workers=2)
    assert two.read_bytes() == text.read_bytes()
    two_bin = tmp_path / "two.bin"
    dg.datagen(dataclasses.replace(FAST, fmt="bullet"), two_bin, workers=2)
    assert two_bin.read_bytes() == binary.read_bytes()


def test_defaults_keep_their_identity_and_the_filter_is_part_of_it():
    spec = dg.resolve_engine("shannon")[0]
    old = dg._identity(dg.DatagenSettings(games=2), spec)
    assert "filter" not in old and old["per_game"] == 10
    new = dg._identity(FAST, spec)
    assert new["filter"] == "bestmove" and new["per_game"] == 0


def test_sampling_with_the_bestmove_filter_takes_k_of_those_positions(fast, tmp_path):
    text, _, _ = fast
    every = set(text.read_text().splitlines())
    some = tmp_path / "some.txt"
    s = dg.datagen(dataclasses.replace(FAST, per_game=3), some, workers=1)
    lines = some.read_text().splitlines()
    assert s.positions == len(lines) == 3 * FAST.games and set(lines) <= every


@pytest.mark.parametrize("fmt,suffix", [  # ~18 s each on the loaded 2-core machine
    ("bullet", ".bin"), pytest.param("text", ".txt", marks=pytest.mark.slow)])
def test_sigkill_and_rerun_equal_uninterrupted(tmp_path, fast, fmt, suffix):
    text, binary, _ = fast
    part = tmp_path / f"killed{suffix}"
    cmd = [sys.executable, "-m", "evotune.cli", "datagen", "--games", "6", "--depth", "2",
           "--per-game", "0", "--filter", "bestmove", "--format", fmt, "--seed", "13",
           "--chunk", "2", "--out", str(part)]
    state = kill_in_second_chunk(cmd, part, ENV, tmp_path)
    # a torn unrecorded tail, as a write cut off mid-record
    os.truncate(part, state["bytes"])
    with open(part, "ab") as fh:
        fh.write((binary if fmt == "bullet" else text).read_bytes()[state["bytes"]:][:45])
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert part.read_bytes() == (binary if fmt == "bullet" else text).read_bytes()
    assert "continued after game" in r.stdout


@pytest.mark.parametrize("args,message", [
    (["--filter", "nope"], "--filter"),
    (["--per-game", "-1"], "--per-game must be an integer from 0 to 10000, got -1"),
    (["--format", "bullet"], "bullet's records go to a file ending .bin or .data"),
    (["--format", "text", "--out-bin"], "bullet's records go to a file ending .bin or .data"),
    (["--format", "fen", "--target", "td"], "--target td needs the text format"),
])
def test_bad_values_are_one_line_exit_2(tmp_path, args, message):
    out = tmp_path / ("x.bin" if "--out-bin" in args else "x.txt")
    args = [a for a in args if a != "--out-bin"]
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "datagen", "--games", "2",
                        "--depth", "1", "--out", str(out), *args],
                       env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_td_target_in_bullet_records_is_the_text_files(tmp_path):
    td = dataclasses.replace(FAST, games=3, target="td")
    text, binary = tmp_path / "td.txt", tmp_path / "td.bin"
    dg.datagen(td, text, workers=1)
    dg.datagen(dataclasses.replace(td, fmt="bullet"), binary, workers=1)
    assert binary.read_bytes() == bullet_bytes(load_data([text], cache_dir=tmp_path)).tobytes()
    plain = tmp_path / "plain.txt"
    dg.datagen(dataclasses.replace(td, target="score"), plain, workers=1)
    fens = [line.split(" | ")[0] for line in text.read_text().splitlines()]
    assert fens == [line.split(" | ")[0] for line in plain.read_text().splitlines()]


STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish"
                                          if Path("/usr/games/stockfish").is_file() else None)


@pytest.mark.skipif(STOCKFISH is None, reason="no stockfish on PATH or at /usr/games/stockfish "
                                              "(Debian: apt-get install stockfish)")
def test_a_uci_engines_games_give_the_positions_of_a_python_chess_replay(tmp_path):
    """External games have no core record: datagen replays them in python-chess instead."""
    spec = tmp_path / "sf.toml"
    spec.write_text(f'name = "stockfish"\nkind = "uci"\ncommand = ["{STOCKFISH}"]\n')
    settings = dataclasses.replace(FAST, games=2, engine=str(spec), chunk=2,
                                   limits=Limits(nodes=1000, depth=3, max_plies=40))
    out = tmp_path / "sf.txt"
    dg.datagen(settings, out)
    player = dg.resolve_engine(str(spec))[1]
    match = MatchSettings(limits=settings.limits, openings=None)
    expected = []
    try:
        for g in range(settings.games):  # the same games again (a node limit: deterministic)
            op, _ = dg.game_opening(settings, g)
            rec = play_task(GameTask(key=(0, 0, g, g), white=player, black=player, opening=op,
                                     settings=match, record_leaves=True))
            assert rec.boards is None
            value = {"1-0": 1.0, "0-1": 0.0}.get(rec.result, 0.5)
            board = op.board()
            for uci, score in zip(rec.moves, rec.scores):
                move = chess.Move.from_uci(uci)
                if not (board.is_check() or board.is_capture(move) or move.promotion
                        or abs(score) > 32000):
                    white = score if board.turn == chess.WHITE else -score
                    expected.append(format_line(board.fen(), value, "text", white) + "\n")
                board.push(move)
    finally:
        close_external_players()
    assert out.read_text() == "".join(expected) and len(expected) >= 10


def test_positions_cuts_bullet_records_exactly(fast, tmp_path):
    _, binary, _ = fast
    cut = tmp_path / "cut.bin"
    s = dg.datagen(dataclasses.replace(FAST, fmt="bullet", positions=50), cut, workers=1)
    assert s.positions == 50 and cut.read_bytes() == binary.read_bytes()[:50 * 32]
