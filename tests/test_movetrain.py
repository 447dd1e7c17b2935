"""The move model's data and trainer (issue 40): ``label --move``'s fourth field, its parser,
``nn train-moves`` (learns a hidden model's choices, deterministic for a seed) and ``nn info``."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import chess
import numpy as np
import pytest

from evotune.engine import search
from evotune.engine.movemodel import chessref
from evotune.engine.movemodel import modelfile as MM
from evotune.errors import ConfigError, FieldError
from evotune.learn.labels import parse_move_line, parse_scored_line
from evotune.learn.movetrain import MoveTrainSettings, baseline, read_move_data, split, train_moves
from evotune.learn.relabel import LabelSettings, label
from evotune.limits import Limits

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
START = chess.STARTING_FEN


def test_the_fourth_field_is_a_legal_move():
    assert parse_move_line(f"{START} | 20 | 0.5 | e2e4") == (START, "e2e4")
    assert parse_scored_line(f"{START} | 20 | 0.5 | e2e4") == (START, 0.5, 20.0)
    assert "not a legal move" in parse_move_line(f"{START} | 20 | 0.5 | e2e5")
    assert "no move" in parse_move_line(f"{START} | 20 | 0.5")
    assert "a fourth is a UCI move, such as e2e4, not 'castle'" in \
        parse_scored_line(f"{START} | 20 | 0.5 | castle")
    assert "not a legal FEN" in parse_move_line("rnbqk | 20 | 0.5 | e2e4")


def test_label_writes_the_move_its_search_chose(tmp_path):
    fens = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
            "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1"]
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{f} [0.5]\n" for f in fens))
    out = tmp_path / "moves.txt"
    summary = label(LabelSettings(engine="shannon", limits=Limits(depth=2), move=True),
                    [src], out)
    lines = out.read_text().splitlines()
    assert summary.written == len(lines) == 3
    for fen, line in zip(fens, lines):
        got = parse_move_line(line)
        assert got == (fen, search(fen, (100, 300, 330, 500, 900, 10), depth=2).move)
    assert lines[2].endswith("| e1e2")  # the only legal move takes the queen
    plain = tmp_path / "plain.txt"
    label(LabelSettings(engine="shannon", limits=Limits(depth=2)), [src], plain)
    assert plain.read_text().splitlines() == [ln.rsplit(" | ", 1)[0] for ln in lines]


def _hidden_model_data(path, positions: int, seed: int) -> MM.MoveModel:
    """Positions of random games, each labelled with the best move of a hidden random model."""
    hidden = MM.random_model(seed=seed, spread=150)
    rng = random.Random(seed)
    lines = []
    while len(lines) < positions:
        b = chess.Board()
        for _ in range(60):
            moves = list(b.legal_moves)
            if not moves:
                break
            scores = chessref.reference_scores(hidden, b)
            lines.append(f"{b.fen()} | 0 | 0.5 | {max(scores, key=scores.get)}\n")
            b.push(rng.choice(moves))
    path.write_text("".join(lines[:positions]))
    return hidden


def test_the_trainer_learns_a_hidden_models_choices_and_is_deterministic(tmp_path):
    _hidden_model_data(tmp_path / "d.txt", 1200, seed=2)
    data = read_move_data([tmp_path / "d.txt"])
    assert len(data) == 1200 and data.feats.shape[1] == MM.N_BLOCKS
    settings = MoveTrainSettings(epochs=12, lr=0.05, seed=3)
    reports = []
    model = train_moves(data, settings, report=reports.append)
    assert [r.epoch for r in reports] == list(range(1, 13))
    first, last = reports[0].held_out, reports[-1].held_out
    base = baseline(data, settings)
    assert last.top1 > 0.6 and last.top3 > 0.85 and last.loss < first.loss
    assert base.top1 < 0.3 and last.top1 > base.top1 + 0.3
    again = train_moves(data, settings)
    assert again == model and again.checksum == model.checksum
    other = train_moves(data, MoveTrainSettings(epochs=12, lr=0.05, seed=4))
    assert other != model


def test_a_hidden_layer_trains_deterministically_and_fits_better_than_linear(tmp_path):
    # a teacher with hidden units: its choices hold interactions the linear model cannot fit
    teacher = MM.random_model(seed=8, spread=300, hidden=8)
    rng = random.Random(4)
    lines = []
    while len(lines) < 1000:
        b = chess.Board()
        for _ in range(60):
            moves = list(b.legal_moves)
            if not moves:
                break
            scores = chessref.reference_scores(teacher, b)
            lines.append(f"{b.fen()} | 0 | 0.5 | {max(scores, key=scores.get)}\n")
            b.push(rng.choice(moves))
    (tmp_path / "d.txt").write_text("".join(lines[:1000]))
    data = read_move_data([tmp_path / "d.txt"])
    lin = []
    train_moves(data, MoveTrainSettings(epochs=8, lr=0.05, seed=3), report=lin.append)
    settings = MoveTrainSettings(epochs=8, lr=0.05, seed=3, hidden=8)
    hid = []
    model = train_moves(data, settings, report=hid.append)
    assert model.hidden == 8 and np.any(model.out_weights != 0)
    assert hid[-1].train_loss < lin[-1].train_loss - 0.05
    again = train_moves(data, settings)
    assert again == model and again.checksum == model.checksum
    assert train_moves(data, MoveTrainSettings(epochs=8, lr=0.05, seed=4, hidden=8)) != model


def test_the_split_holds_out_whole_blocks():
    train, held = split(105, MoveTrainSettings(val_share=0.2, val_block=10, seed=1))
    assert sorted(np.concatenate([train, held]).tolist()) == list(range(105))
    assert held.size in (20, 25) and len({int(i) // 10 for i in held}) == 2
    with pytest.raises(ConfigError, match="block"):
        split(8, MoveTrainSettings(val_block=10))


@pytest.mark.parametrize("kwargs, field", [({"epochs": 0}, "epochs"), ({"lr": -1.0}, "lr"),
                                           ({"val_share": 1.0}, "val_share"),
                                           ({"batch": True}, "batch"), ({"l2": float("nan")}, "l2"),
                                           ({"hidden": 33}, "hidden"), ({"hidden": -1}, "hidden")])
def test_bad_settings(kwargs, field):
    with pytest.raises(FieldError, match=field):
        MoveTrainSettings(**kwargs)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, timeout=600, env=ENV, cwd=cwd)


def test_the_cli_trains_and_info_describes_the_model(tmp_path):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    proc = _cli("nn", "train-moves", "d.txt", "--out", "m.evomove", "--epochs", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "held-out baseline (ordering prior)" in proc.stdout and "epoch 3:" in proc.stdout
    model = MM.read_move_model(tmp_path / "m.evomove")
    info = _cli("nn", "info", "m.evomove", cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert "(move model)" in info.stdout and model.checksum in info.stdout
    assert "startpos" in info.stdout


@pytest.mark.parametrize("content, match", [
    (f"{START} | 0 | 0.5 | e2e5\n", "d.txt:1: move 'e2e5' is not a legal move"),
    (f"{START} [0.5]\n", "d.txt:1: no move"),
    ("", "no 'FEN | score | result | move' lines")])
def test_bad_data_is_one_line_and_exit_2_before_writing(tmp_path, content, match):
    (tmp_path / "d.txt").write_text(content)
    proc = _cli("nn", "train-moves", "d.txt", "--out", "m.evomove", cwd=tmp_path)
    assert proc.returncode == 2 and match in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert not (tmp_path / "m.evomove").exists()


def test_the_cli_trains_a_hidden_model_and_refuses_too_many_units(tmp_path):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    proc = _cli("nn", "train-moves", "d.txt", "--out", "h.evomove", "--epochs", "2", "--hidden",
                "4", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    model = MM.read_move_model(tmp_path / "h.evomove")
    assert model.hidden == 4 and "4 hidden units" in proc.stdout
    info = _cli("nn", "info", "h.evomove", cwd=tmp_path)
    assert info.returncode == 0 and "linear plus 4 hidden units" in info.stdout
    assert model.checksum in info.stdout and "startpos" in info.stdout
    bad = _cli("nn", "train-moves", "d.txt", "--out", "x.evomove", "--hidden", "33", cwd=tmp_path)
    assert bad.returncode == 2 and "--hidden" in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and not (tmp_path / "x.evomove").exists()


@pytest.mark.parametrize("hidden", [0, 4])
def test_info_of_a_damaged_model_is_one_line_and_exit_2(tmp_path, hidden):
    MM.write_move_model(MM.random_model(seed=1, hidden=hidden), tmp_path / "m.evomove")
    data = (tmp_path / "m.evomove").read_bytes()
    (tmp_path / "m.evomove").write_bytes(data[:-8])
    proc = _cli("nn", "info", "m.evomove", cwd=tmp_path)
    assert proc.returncode == 2 and "truncated" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0


@pytest.mark.parametrize("hidden", [0, 4])
def test_a_set_2_model_trains_loads_in_info_and_a_mismatched_set_is_one_line_exit_2(tmp_path,
                                                                                    hidden):
    _hidden_model_data(tmp_path / "d.txt", 200, seed=3)
    proc = _cli("nn", "train-moves", "d.txt", "--out", "m.evomove", "--epochs", "2", "--hidden",
                str(hidden), "--runs-dir", "runs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    model = MM.read_move_model(tmp_path / "m.evomove")
    assert model.features == 2 and model.hidden == hidden  # set 2 is the default
    info = _cli("nn", "info", "m.evomove", cwd=tmp_path)
    assert info.returncode == 0 and "feature set 2: 1646 features" in info.stdout
    assert model.checksum in info.stdout
    data = (tmp_path / "m.evomove").read_bytes()  # a set-2 file whose header says set 1
    (tmp_path / "m.evomove").write_bytes(data[:12] + (1).to_bytes(4, "little") + data[16:])
    proc = _cli("nn", "info", "m.evomove", cwd=tmp_path)
    assert proc.returncode == 2 and "feature set 1 of 1646 features" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    bad = _cli("nn", "train-moves", "d.txt", "--out", "x.evomove", "--features", "3", cwd=tmp_path)
    assert bad.returncode == 2 and "--features" in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and not (tmp_path / "x.evomove").exists()
