"""evotune datagen --target td: each written score is the TD(lambda) target of its position,
recomputed from a replay of its game; the same positions as --target score; the target is part
of the output's identity; bad combinations are one line, exit 2; any worker count, chunk or resume
gives the same file."""
from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from evotune.engine import play_game
from evotune.errors import ConfigError
from evotune.learn import datagen as dg
from evotune.learn.labels import read_positions
from evotune.learn.nn.tdtargets import td_scores
from evotune.limits import Limits
from evotune.space import SHANNON_REFERENCE

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

TD = dg.DatagenSettings(games=4, limits=Limits(depth=2), per_game=5, seed=3, chunk=2,
                        fmt="text", target="td")
SCORE = dataclasses.replace(TD, target="score")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("td")
    td, score = d / "td.txt", d / "score.txt"
    dg.datagen(TD, td, workers=1)
    dg.datagen(SCORE, score, workers=1)
    return td, score


def replay(settings, g):
    """(fens before each engine move, White-view root scores of those moves, result value) of
    game g, played again outside datagen."""
    opening, _ = dg.game_opening(settings, g)
    game = play_game(opening.board(), SHANNON_REFERENCE, SHANNON_REFERENCE,
                     limits=Limits(depth=settings.limits.depth))
    board = opening.board()
    fens, white = [], []
    for uci, s in zip(game.moves, game.scores):
        fens.append(board.fen())
        white.append(int(s) if board.turn == chess.WHITE else -int(s))
        board.push_uci(uci)
    assert len(fens) == len(game.scores) >= 2
    return fens, white, {"1-0": 1.0, "0-1": 0.0}.get(game.result, 0.5)


def lines_of(path):
    out = []
    for line in path.read_text().splitlines():
        fen, score, result = (x.strip() for x in line.split("|"))
        out.append((fen, int(score), float(result)))
    return out


def lambda_return(white, result, t, lam):
    """G_t by its closed form, (1 - lam) sum_k lam^(k-1) v_{t+k} + lam^(T-1-t) R, as a score."""
    v = [1 / (1 + math.exp(-max(-32000, min(32000, s)) / 400)) for s in white]
    n = len(white)
    g = (1 - lam) * sum(lam ** (k - 1) * v[t + k] for k in range(1, n - t)) \
        + lam ** (n - 1 - t) * result
    if g in (0.0, 1.0):
        return 32000 if g == 1.0 else -32000
    return 400 * math.log(g / (1 - g))


def test_each_score_is_the_td_target_of_its_game(files):
    td, score = files
    got, plain = lines_of(td), lines_of(score)
    # the same positions and results as the score target: only the score column differs
    assert [(f, r) for f, _, r in got] == [(f, r) for f, _, r in plain]
    i = decisive = differ = mates = 0
    for g in range(TD.games):
        fens, white, result = replay(TD, g)
        decisive += result != 0.5
        mates += any(abs(s) > 32000 for s in white)  # clipped to +-32000 first, as documented
        targets = td_scores([max(-32000, min(32000, s)) for s in white], result, 0.7)
        plies = []
        while i < len(got) and got[i][0] in fens and (not plies
                                                      or fens.index(got[i][0]) > plies[-1]):
            fen, value, res = got[i]
            t = fens.index(fen)
            assert res == result
            assert value == targets[t], (g, t)
            assert abs(value - lambda_return(white, result, t, 0.7)) <= 0.5 + 1e-6, (g, t)
            # the score target writes the position's own search score instead
            assert plain[i][1] == white[t]
            differ += value != white[t]
            plies.append(t)
            i += 1
        assert 1 <= len(plies) <= TD.per_game
    assert i == len(got)
    assert decisive >= 1 and mates >= 1 and differ >= len(got) // 2
    assert len(read_positions([td])) == len(got)  # the label reader takes the result column


def test_lambda_zero_is_the_next_positions_score(tmp_path, files):
    # lambda 0 (TD(0)): the next engine-move position's score, the last position the result
    zero = tmp_path / "zero.txt"
    dg.datagen(dataclasses.replace(TD, td_lambda=0.0, games=2), zero, workers=1)
    got = lines_of(zero)
    i = 0
    for g in range(2):
        fens, white, result = replay(TD, g)
        while i < len(got) and got[i][0] in fens:
            t = fens.index(got[i][0])
            nxt = white[t + 1] if t + 1 < len(white) else \
                {1.0: 32000, 0.0: -32000, 0.5: 0}[result]
            assert abs(got[i][1] - max(-32000, min(32000, nxt))) <= 1, (g, t)
            i += 1
    assert i == len(got) > 0


def test_score_target_is_the_default_and_keeps_its_identity(files):
    _, score = files
    default = dataclasses.replace(TD, target="score")
    assert default == dg.DatagenSettings(games=4, limits=Limits(depth=2), per_game=5, seed=3,
                                         chunk=2, fmt="text")
    spec = dg.resolve_engine("shannon")[0]
    ident = dg._identity(default, spec)
    assert "target" not in ident and "td_lambda" not in ident  # older outputs still continue
    td_ident = dg._identity(TD, spec)
    assert td_ident["target"] == "td" and td_ident["td_lambda"] == 0.7


def test_same_file_for_any_workers_chunk_and_resume(tmp_path, files):
    td, _ = files
    two = tmp_path / "two.txt"
    dg.datagen(dataclasses.replace(TD, chunk=3), two, workers=2)
    assert two.read_bytes() == td.read_bytes()
    part = tmp_path / "part.txt"
    first = dg.datagen(dataclasses.replace(TD, games=2), part, workers=1)
    assert first.games == 2
    again = dg.datagen(TD, part, workers=2)  # continued to 4 games
    assert again.resumed_from == 2 and part.read_bytes() == td.read_bytes()


def test_other_target_or_lambda_to_the_same_out_is_refused(tmp_path, files):
    td, score = files
    for src, settings, differ in ((td, SCORE, "target, td_lambda differ"),
                                  (td, dataclasses.replace(TD, td_lambda=0.5),
                                   "(td_lambda differ)"),
                                  (score, TD, "target, td_lambda differ")):
        copy = tmp_path / f"{src.stem}.txt"
        copy.write_bytes(src.read_bytes())
        Path(str(copy) + ".progress.json").write_bytes(
            Path(str(src) + ".progress.json").read_bytes())
        with pytest.raises(ConfigError, match=f"other settings \\({differ}"):
            dg.datagen(settings, copy)
        assert copy.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("args,message", [
    (["--target", "td"], "--target td needs the text format (--format text)"),
    (["--format", "epd", "--target", "td"], "--target td needs the text format"),
    (["--format", "text", "--td-lambda", "0.5"],
     "--td-lambda applies to the td target only (--target td)"),
    (["--format", "text", "--target", "td", "--td-lambda", "1.5"],
     "--td-lambda must be a number from 0 to 1, got 1.5"),
    (["--format", "text", "--target", "td", "--td-lambda", "nan"],
     "--td-lambda must be a number from 0 to 1, got nan"),
])
def test_bad_combinations_are_one_line_exit_2(tmp_path, args, message):
    out = tmp_path / "x.txt"
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "datagen", "--games", "2",
                        "--depth", "1", "--out", str(out), *args],
                       env=ENV, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []
