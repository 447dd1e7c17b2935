"""evotune datagen: labels agree with python-chess replays, quiet positions, determinism for any
worker count, kill + rerun neither loses nor doubles positions, bad input."""
from __future__ import annotations

import json
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
from evotune.engine.quiet import is_quiet, qsearch
from evotune.errors import ConfigError
from evotune.learn import datagen as dg
from evotune.learn.labels import read_positions
from evotune.limits import Limits
from evotune.space import SHANNON_REFERENCE

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

SETTINGS = dg.DatagenSettings(games=6, limits=Limits(depth=2), per_game=6, seed=11, chunk=4)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("dg") / "pos.txt"
    summary = dg.datagen(SETTINGS, out, workers=1)
    return out, summary


def test_labels_agree_with_python_chess_replays(generated):
    out, summary = generated
    lines = out.read_text().splitlines()
    assert summary.positions == len(lines) and summary.games == 6
    pos = read_positions([out])
    by_game = {}
    for g in range(SETTINGS.games):
        opening, _ = dg.game_opening(SETTINGS, g)
        assert len(opening.moves) >= SETTINGS.random_plies  # suite line + random plies
        game = play_game(opening.board(), SHANNON_REFERENCE, SHANNON_REFERENCE,
                         limits=Limits(depth=SETTINGS.limits.depth))
        board = opening.board()
        fens = []
        for uci in game.moves:
            fens.append(board.fen())
            board.push_uci(uci)
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:  # python-chess agrees on how and how the game ended
            assert outcome.result() == game.result
        else:
            assert game.termination == "ply-cap" and game.result == "1/2-1/2"
        by_game[g] = (fens, {"1-0": 1.0, "0-1": 0.0}.get(game.result, 0.5))
    # the file is the games' samples in game order, each a position before an engine move
    i = 0
    for g in range(SETTINGS.games):
        fens, value = by_game[g]
        plies = []
        while i < len(pos) and pos.fens[i] in fens and (not plies
                                                       or fens.index(pos.fens[i]) > plies[-1]):
            assert pos.results[i] == value
            plies.append(fens.index(pos.fens[i]))
            i += 1
        assert 1 <= len(plies) <= SETTINGS.per_game
    assert i == len(pos)


def test_samples_are_quiet_and_not_in_check(generated):
    out, _ = generated
    for fen in read_positions([out]).fens:
        static, score, check, _ = qsearch(fen, SHANNON_REFERENCE)
        assert not check and static == score
        assert not chess.Board(fen).is_check()


def test_quiet_test_on_known_positions():
    # a hanging queen: capturing it changes the score, so it is not quiet for the side to move
    assert not is_quiet("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1", SHANNON_REFERENCE)
    assert is_quiet(chess.STARTING_FEN, SHANNON_REFERENCE)
    assert not is_quiet("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1", SHANNON_REFERENCE)  # in check


def test_same_file_for_any_worker_count_and_format(tmp_path, generated):
    out, _ = generated
    two = tmp_path / "two.txt"
    dg.datagen(SETTINGS, two, workers=2)
    assert two.read_bytes() == out.read_bytes()
    epd = tmp_path / "pos.epd"
    import dataclasses

    dg.datagen(dataclasses.replace(SETTINGS, fmt="epd"), epd, workers=1)
    a, b = read_positions([out]), read_positions([epd])
    assert a.results == b.results
    assert [f.split()[:4] for f in a.fens] == [f.split()[:4] for f in b.fens]
    assert all(line.endswith(";") and " c9 " in line for line in epd.read_text().splitlines())


def test_crash_between_append_and_progress_then_rerun(tmp_path, generated, monkeypatch):
    out, _ = generated
    part = tmp_path / "part.txt"
    calls = {"n": 0}
    real = dg.atomic_write_json

    def failing(path, data):
        calls["n"] += 1
        if calls["n"] == 3:  # the first record, the first chunk; the second is never recorded
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(dg, "atomic_write_json", failing)
    with pytest.raises(KeyboardInterrupt):
        dg.datagen(SETTINGS, part, workers=1)
    monkeypatch.setattr(dg, "atomic_write_json", real)
    recorded = json.loads(Path(str(part) + ".progress.json").read_text())["bytes"]
    size = part.stat().st_size
    assert size > recorded  # the unrecorded chunk is in the file
    os.truncate(part, recorded + (size - recorded) // 2 + 7)  # torn mid-line, as a killed write
    summary = dg.datagen(SETTINGS, part, workers=1)
    assert summary.resumed_from == 4
    assert part.read_bytes() == out.read_bytes()


@pytest.mark.slow  # ~15 s; the same writer's kill and rerun stays in the fast set as
# tests/test_datagen_fast.py::test_sigkill_and_rerun_equal_uninterrupted[bullet-.bin]
def test_sigkill_and_rerun_equal_uninterrupted(tmp_path, generated):
    out, _ = generated
    part = tmp_path / "killed.txt"
    cmd = [sys.executable, "-m", "evotune.cli", "datagen", "--games", "6", "--depth", "2",
           "--per-game", "6", "--seed", "11", "--chunk", "2", "--out", str(part)]
    kill_in_second_chunk(cmd, part, ENV, tmp_path)
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ref = tmp_path / "ref.txt"
    r2 = subprocess.run(cmd[:-1] + [str(ref)], env=ENV, capture_output=True, text=True,
                        cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert part.read_bytes() == ref.read_bytes()
    assert "positions from 6 games (format fen: FEN [result], White's view; continued after " \
        "game" in r.stdout


def test_other_settings_or_foreign_file_refused(tmp_path, generated):
    out, _ = generated
    import dataclasses
    import shutil

    copy = tmp_path / "c.txt"
    shutil.copy(out, copy)
    shutil.copy(str(out) + ".progress.json", str(copy) + ".progress.json")
    with pytest.raises(ConfigError, match="depth differ"):
        dg.datagen(dataclasses.replace(SETTINGS, limits=Limits(depth=3)), copy)
    foreign = tmp_path / "f.txt"
    foreign.write_text("hello\n")
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "datagen", "--games", "2", "--out",
                        str(foreign)], env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and "not written by evotune datagen" in r.stderr
    assert r.stderr.count("\n") == 1 and foreign.read_text() == "hello\n"
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "datagen", "--games", "0", "--out",
                        str(tmp_path / "x.txt")], env=ENV, capture_output=True, text=True)
    assert r.returncode == 2 and "--games must be an integer from 1 to" in r.stderr
    assert not (tmp_path / "x.txt").exists()


STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish"
                                          if Path("/usr/games/stockfish").is_file() else None)


@pytest.mark.skipif(STOCKFISH is None, reason="no stockfish on PATH or at /usr/games/stockfish "
                                              "(Debian: apt-get install stockfish)")
def test_uci_engine_games_through_the_external_runner(tmp_path):
    spec = tmp_path / "sf.toml"
    # an engine that only plays declares no weights at all
    spec.write_text(f'name = "stockfish"\nkind = "uci"\ncommand = ["{STOCKFISH}"]\n'
                    'options = {{Threads = 1}}\n'.replace("{{", "{").replace("}}", "}"))
    settings = dg.DatagenSettings(games=2, engine=str(spec),
                                  limits=Limits(nodes=1500, depth=3, max_plies=60), per_game=5,
                                  seed=4, chunk=2)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    sa = dg.datagen(settings, a)
    dg.datagen(settings, b)
    assert a.read_bytes() == b.read_bytes()  # stockfish with a node limit is deterministic
    pos = read_positions([a])
    assert sa.positions == len(pos) and 2 <= len(pos) <= 10
    for fen in pos.fens:  # quiet under the shannon reference evaluation
        assert is_quiet(fen, SHANNON_REFERENCE)


@pytest.mark.parametrize("spec_name", ["shannon", "pst-pesto", "extended"])
def test_batch_quiescence_equals_one_position_path(spec_name):
    from evotune.engine.quiet import qsearch_batch
    from evotune.paths import DEFAULT_OPENINGS
    from evotune.spec.file import load_engine_spec

    spec = load_engine_spec(spec_name)
    w = spec.space().reference_array
    fs = spec.features
    fens = [" ".join(line.split()[:4]) + " 0 1"
            for line in DEFAULT_OPENINGS.read_text().splitlines()[:150]]
    fens += ["4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1",          # a hanging queen
             "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1",            # in check
             "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"]          # en passant capture available
    q = qsearch_batch(fens, w, fs)
    assert q.leaf.shape == (len(fens), len(w))
    for i, fen in enumerate(fens):
        static, score, check, phi = qsearch(fen, w, fs)
        assert (static, score, check) == (q.static[i], q.score[i], q.check[i])
        assert np.allclose(q.leaf[i].toarray().ravel(), phi)
        if not check and static == score:  # quiet: the leaf is the position, eval ~ w . phi
            assert abs(float(w @ phi) - static) < 1.0
    assert not q.quiet[-3] and q.check[-2] and not q.quiet[-1]


def test_a_spec_with_every_weight_fixed_labels_positions_but_cannot_be_tuned(tmp_path):
    """An engine that only plays (every weight fixed) is a valid datagen engine and opponent;
    a run or a fit of it is refused with one line before anything is written."""
    spec = tmp_path / "frozen.toml"
    spec.write_text((ROOT / "engines" / "shannon.toml").read_text()
                    .replace('name = "shannon"', 'name = "frozen"')
                    .replace("lower = 0\nupper = 1000", "fixed = true"))
    settings = dg.DatagenSettings(games=2, engine=str(spec), limits=Limits(depth=2), per_game=4,
                                  seed=3, chunk=2)
    out = tmp_path / "pos.txt"
    summary = dg.datagen(settings, out, workers=1)
    assert summary.games == 2 and len(read_positions([out])) == summary.positions >= 2
    run = subprocess.run([sys.executable, "-m", "evotune.cli", "run", "--engine", str(spec),
                          "--generations", "1", "--runs-dir", str(tmp_path / "runs")],
                         capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "the engine spec has no free weight" in run.stderr
    assert not (tmp_path / "runs").exists()
    fit = subprocess.run([sys.executable, "-m", "evotune.cli", "texel", str(out), "--engine",
                          str(spec), "--runs-dir", str(tmp_path / "fits")],
                         capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert fit.returncode == 2 and "the engine spec has no free weight" in fit.stderr
    assert not (tmp_path / "fits").exists()
