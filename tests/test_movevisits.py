"""UCT's visit distribution as the move model's target (issue 40): ``label --visits``'s fifth
field, its parser, the core game's last search's root visits, and ``nn train-moves --target
visits`` (the cross-entropy of the visit shares, its gradient against numpy)."""
from __future__ import annotations

import hashlib
import math
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest
from test_moverun import cli
from test_movetrain import _hidden_model_data

from evotune.engine import play_game, search
from evotune.engine.movemodel import modelfile as MM
from evotune.errors import ConfigError
from evotune.kinds.moves import MODEL_FILE
from evotune.learn.labels import format_line, parse_scored_line, parse_visits_line
from evotune.learn.movetrain import (
    MoveTrainSettings,
    _step,
    n_params,
    read_move_data,
    train_moves,
)
from evotune.learn.relabel import LabelSettings, label
from evotune.limits import Limits
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings

START = chess.STARTING_FEN
W = (100, 300, 330, 500, 900, 10)
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
        "r3k2r/ppp2ppp/2n5/3qp3/8/2N5/PPPP1PPP/R1BQK2R w KQkq - 0 9"]


def test_the_fifth_field_round_trips_and_bad_ones_are_named():
    line = format_line(START, 0.5, "text", 20, "e2e4", (("e2e4", 30), ("d2d4", 12), ("g1f3", 0)))
    assert line == f"{START} | 20 | 0.5 | e2e4 | e2e4:30 d2d4:12 g1f3:0"
    assert parse_visits_line(line) == (START, "e2e4", {"e2e4": 30, "d2d4": 12, "g1f3": 0})
    assert parse_scored_line(line) == (START, 0.5, 20.0)  # the score trainers read it too
    assert parse_visits_line(f"{START} | 20 | 0.5 | e2e4") == (START, "e2e4", None)
    for field, why in (("e2e4:3 e2e4:1", "listed twice"), ("e2e4:0", "every count is 0"),
                       ("e2e5:3", "e2e5 is not a legal move"), ("e2e4=3", "expected moves and"),
                       ("", "expected moves and")):
        got = parse_visits_line(f"{START} | 20 | 0.5 | e2e4 | {field}")
        assert isinstance(got, str) and why in got, (field, got)
    assert "a fifth is a search's visits" in parse_scored_line(f"{START} | 1 | 0.5 | e2e4 | x")
    with pytest.raises(ValueError, match="needs the move"):
        format_line(START, 0.5, "text", 20, "", (("e2e4", 1),))


def test_a_game_keeps_its_last_uct_search_s_root_visits():
    settings = SearchSettings(algorithm="uct")
    for fen in FENS:
        alone = search(fen, W, nodes=400, settings=settings)
        white = chess.Board(fen).turn == chess.WHITE
        sides = (settings, SearchSettings()) if white else (SearchSettings(), settings)
        game = play_game(fen, W, W, limits=Limits(nodes=400, max_plies=1), settings=sides)
        assert game.moves == (alone.move,)
        assert game.last_visits == tuple((m, n) for m, n, _ in alone.children if n)
        assert sum(n for _, n in game.last_visits) >= 400 - 1
    ab = play_game(FENS[0], W, W, limits=Limits(depth=2, max_plies=1))
    assert ab.last_visits == ()


def test_label_visits_writes_the_uct_search_s_visits_and_refuses_alpha_beta(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("".join(f"{f} [0.5]\n" for f in FENS) + "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1 [0]\n")
    out = tmp_path / "v.txt"
    summary = label(LabelSettings(engine="shannon-uct", limits=Limits(nodes=300), visits=True),
                    [src], out)
    lines = out.read_text().splitlines()
    assert summary.written == len(lines) == 4 and summary.left_out == 0
    assert parse_visits_line(lines[3])[1:] == ("e1e2", {"e1e2": 300})  # the one legal move
    player = player_from_engine_spec(load_engine_spec("shannon-uct"))
    for fen, line in zip(FENS, lines):
        got = parse_visits_line(line)
        assert not isinstance(got, str) and got[0] == fen and got[2] is not None
        alone = search(fen, player.weights, nodes=300, settings=player.search)
        assert got[1] == alone.move
        assert list(got[2].items()) == [(m, n) for m, n, _ in alone.children if n]
    two = tmp_path / "v2.txt"  # the same bytes on two workers, in chunks of 3
    label(LabelSettings(engine="shannon-uct", limits=Limits(nodes=300), visits=True, chunk=3),
          [src], two, workers=2)
    assert two.read_text() == out.read_text()
    bad = tmp_path / "ab.txt"
    code, _, err = cli(capsys, "label", str(src), "--engine", "shannon", "--depth", "2",
                       "--visits", "--out", str(bad))
    assert code == 2 and err.count("\n") == 1 and "searching by UCT" in err
    assert not bad.exists() and not (tmp_path / "ab.txt.progress.json").exists()


def _softmax_reference(w, data, positions):
    """Loss and gradient of the visit shares' cross-entropy, in numpy."""
    loss, grad = 0.0, np.zeros_like(w)
    for p in positions:
        a, b = data.starts[p], data.starts[p + 1]
        s = w[data.feats[a:b]].sum(axis=1)
        q = np.exp(s - s.max())
        q /= q.sum()
        t = data.dist[a:b]
        loss -= float((t[t > 0] * np.log(q[t > 0])).sum())
        np.add.at(grad, data.feats[a:b], np.repeat((q - t)[:, None], data.feats.shape[1], 1))
    return loss, grad


def _visits_file(path, rng: np.random.Generator, positions: int) -> None:
    lines = []
    board = chess.Board()
    while len(lines) < positions:
        moves = [m.uci() for m in board.legal_moves]
        if not moves or board.ply() > 60:
            board = chess.Board()
            continue
        counts = rng.integers(0, 20, len(moves))
        counts[0] += 1
        visited = " ".join(f"{m}:{int(n)}" for m, n in zip(moves, counts))
        lines.append(f"{board.fen()} | 0 | 0.5 | {moves[int(np.argmax(counts))]} | {visited}\n")
        board.push_uci(moves[int(rng.integers(len(moves)))])
    path.write_text("".join(lines))


def test_the_visit_target_s_loss_and_gradient_match_numpy(tmp_path):
    rng = np.random.default_rng(5)
    _visits_file(tmp_path / "v.txt", rng, 40)
    data = read_move_data([tmp_path / "v.txt"], target="visits")
    starts = data.starts
    for p in range(len(data)):
        share = data.dist[starts[p]:starts[p + 1]]
        assert math.isclose(share.sum(), 1.0) and share[data.target[p] - starts[p]] == share.max()
    nf = MM.SET_FEATURES[2]
    w = rng.normal(0, 0.3, n_params(0, 2))
    batch = np.arange(len(data), dtype=np.int64)
    grad = np.zeros_like(w)
    buf, acc = np.zeros(256), np.zeros((256, 1))
    loss = _step(w.copy(), np.zeros_like(w), np.zeros_like(w), 1, nf, 0, batch, starts,
                 np.ascontiguousarray(data.feats), data.dist, 0.0, 0.0, buf, acc, grad)
    ref_loss, ref_grad = _softmax_reference(w, data, batch)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-12)
    assert read_move_data([tmp_path / "v.txt"]).dist.sum() == len(data)  # one-hot: the move


def test_visits_on_the_chosen_move_alone_train_the_bytes_of_the_move_target(tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    (tmp_path / "v.txt").write_text("".join(
        f"{ln.rstrip()} | {ln.rsplit('|', 1)[1].strip()}:7\n"
        for ln in (tmp_path / "d.txt").read_text().splitlines(keepends=True)))
    models = {}
    for name, target in (("d", "move"), ("v", "visits")):
        code, out, err = cli(capsys, "nn", "train-moves", str(tmp_path / f"{name}.txt"),
                             "--target", target, "--epochs", "2", "--batch", "32", "--hidden",
                             "4", "--out", str(tmp_path / f"{name}.evomove"), "--runs-dir",
                             str(tmp_path / "runs"))
        assert code == 0, err
        models[target] = (tmp_path / f"{name}.evomove").read_bytes()
    assert models["move"] == models["visits"]
    code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "d.txt"), "--target",
                       "visits", "--out", str(tmp_path / "x.evomove"), "--runs-dir",
                       str(tmp_path / "runs2"))
    assert code == 2 and err.count("\n") == 1 and "d.txt:1: no visits" in err
    assert not (tmp_path / "x.evomove").exists() and not (tmp_path / "runs2").exists()


def test_soft_visits_train_toward_their_shares(tmp_path):
    rng = np.random.default_rng(9)
    _visits_file(tmp_path / "v.txt", rng, 400)
    data = read_move_data([tmp_path / "v.txt"], target="visits")
    reports = []
    train_moves(data, MoveTrainSettings(epochs=6, lr=0.05, target="visits", val_block=20),
                report=reports.append)
    assert reports[-1].train_loss < reports[0].train_loss
    with pytest.raises(ConfigError, match="no visits"):
        read_move_data([tmp_path / "v.txt", _hidden_dup(tmp_path)], target="visits")


def _hidden_dup(tmp_path):
    _hidden_model_data(tmp_path / "m.txt", 20, seed=1)
    return tmp_path / "m.txt"


def test_a_visits_training_resumed_gives_the_bytes_of_one_at_once(tmp_path, capsys):
    _visits_file(tmp_path / "v.txt", np.random.default_rng(3), 300)
    runs = str(tmp_path / "runs")
    for out, run_id, epochs in (("four.evomove", "four", "4"), ("two.evomove", "two", "2")):
        code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "v.txt"), "--target",
                           "visits", "--out", str(tmp_path / out), "--epochs", epochs,
                           "--batch", "32", "--run-id", run_id, "--runs-dir", runs)
        assert code == 0, err
    code, out, err = cli(capsys, "status", "two", "--runs-dir", runs)
    assert code == 0 and "UCT's visit distribution" in out, out
    code, _, err = cli(capsys, "resume", "two", "--generations", "4", "--runs-dir", runs)
    assert code == 0, err
    four = (tmp_path / "four.evomove").read_bytes()
    assert (tmp_path / "runs" / "two" / MODEL_FILE).read_bytes() == four
    code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "v.txt"), "--out",
                       str(tmp_path / "m.evomove"), "--epochs", "4", "--batch", "32",
                       "--run-id", "move", "--runs-dir", runs)
    assert code == 0, err  # the same lines' fourth field: another model
    assert (tmp_path / "m.evomove").read_bytes() != four


RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


@pytest.mark.parametrize("name", ["visits-study-move-h16", "visits-study-v20k-h16",
                                  "visits-study-v100k-h16", "visits-study-loop-h16"])
def test_the_visit_study_models_are_the_ones_the_page_names(name):
    """docs/results/move-model-searches.md's "UCT's visits as the target" ships its three models with
    their SHA-256 and checksums; each is a 16-unit set-2 model that PUCT plays."""
    path = RESULTS / "artefacts" / "move-model" / f"{name}.evomove"
    page = "".join(f.read_text() for f in sorted(RESULTS.glob("move-model*.md")))
    assert hashlib.sha256(path.read_bytes()).hexdigest() in page
    model = MM.read_move_model(path)
    assert (model.hidden, model.features) == (16, 2) and model.checksum in page
    r = search(FENS[2], W, nodes=300, settings=SearchSettings(algorithm="uct", model=str(path)))
    assert r.move and sum(n for _, n, _ in r.children) >= 299


def test_common_positions_keeps_the_positions_every_file_has_in_order(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(f"{FENS[0]} | 1 | 0.5 | e1e2\n{FENS[1]} | 2 | 0.5 | e7e6\n"
                 f"{FENS[0]} | 9 | 0.5 | e1e2\n{FENS[2]} | 3 | 1.0 | e1g1\n")
    b.write_text(f"{FENS[2]} | 5 | 1.0 | e1g1 | e1g1:3\n{FENS[0]} | 4 | 0.5 | f3e5 | f3e5:1\n")
    script = RESULTS / "artefacts" / "move-model" / "common_positions.py"
    done = subprocess.run([sys.executable, str(script), str(a), str(b)], capture_output=True,
                          text=True, check=True)
    assert "a.common.txt: 2 of 3 positions" in done.stdout
    assert (tmp_path / "a.common.txt").read_text().splitlines() == [
        f"{FENS[0]} | 1 | 0.5 | e1e2", f"{FENS[2]} | 3 | 1.0 | e1g1"]
    assert (tmp_path / "b.common.txt").read_text().splitlines() == [
        f"{FENS[0]} | 4 | 0.5 | f3e5 | f3e5:1", f"{FENS[2]} | 5 | 1.0 | e1g1 | e1g1:3"]


def test_the_cheaper_split_model_is_the_one_the_page_names():
    """move-model.md's "A cheaper model for the split at equal time" ships its linear set-1 model
    with the SHA-256 and checksum it names; the probability split plays it."""
    path = RESULTS / "artefacts" / "move-model" / "split-set1-lin.evomove"
    page = "".join(f.read_text() for f in sorted(RESULTS.glob("move-model*.md")))
    assert hashlib.sha256(path.read_bytes()).hexdigest() in page
    model = MM.read_move_model(path)
    assert (model.hidden, model.features) == (0, 1) and model.checksum in page
    r = search(FENS[2], W, nodes=2000,
               settings=SearchSettings(algorithm="probability", model=str(path)))
    assert r.move and r.nodes > 0
