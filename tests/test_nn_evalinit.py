"""``nn train --init eval:SPEC[:WEIGHTS]``: the initial net fitted to a linear evaluation's
quiescence scores of the training's own positions (issue 37 item 8: the README's first net),
then trained as any other; deterministic, resumable, verified, and bad values one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli as evotune_cli
from evotune.engine.net.network import read_net
from evotune.engine.quiet import qsearch
from evotune.kinds.training import TrainConfig, execute_training, new_training
from evotune.learn.nn.bulletdata import load_positions
from evotune.learn.nn.evalinit import eval_scores, parse_eval_init
from evotune.learn.nn.floatnet import FloatNet
from evotune.learn.nn.trainer import TrainSettings, evaluate
from evotune.spec.file import load_engine_spec

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 320, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}
SMALL = dict(hidden=16, batch=64, lr=0.0003, seed=5, wdl=0.0)


@pytest.fixture(scope="module")
def data_file(random_positions, tmp_path_factory) -> Path:
    """1,000 positions of random games scored by material x 1.2 (not shannon's evaluation)."""
    folder = tmp_path_factory.mktemp("evalinit")
    lines = []
    for b in random_positions(1000, 41):
        s = sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in b.piece_map().values())
        lines.append(f"{b.fen()} | {int(1.2 * s)} | {1.0 if s > 150 else 0.0 if s < -150 else 0.5}\n")
    path = folder / "m.txt"
    path.write_text("".join(lines))
    return path


def config(data_file: Path, *, epochs: int = 2, init: str = "eval:shannon",
           init_epochs: int = 12, **over) -> TrainConfig:
    return TrainConfig(data=(str(data_file),), init=init, init_epochs=init_epochs,
                       settings=TrainSettings(epochs=epochs, **{**SMALL, **over}))


@pytest.fixture(scope="module")
def trained(data_file, tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    cfg = config(data_file)
    store, data = new_training(cfg, out_dir=runs, run_id="e")
    summary = execute_training(store, cfg, data=data)
    return runs, store, summary, data


def test_the_scores_are_shannons_quiescence_scores_from_whites_view(data_file):
    data = load_positions([data_file])
    got = eval_scores(data, parse_eval_init("eval:shannon"))
    w = load_engine_spec("shannon").space().reference_array
    fens = [line.split("|")[0].strip() for line in data_file.read_text().splitlines()[:40]]
    want = [qsearch(f, w)[1] * (1 if " w " in f else -1) for f in fens]
    assert got[:40].tolist() == want
    assert np.count_nonzero(got) > 900  # not a column of zeros


def test_the_initial_net_plays_like_the_evaluation_and_the_training_starts_from_it(trained):
    runs, store, summary, data = trained
    root = store.root
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["config"]["init"] == "eval:shannon"
    assert manifest["config"]["init_epochs"] == 12
    initial = FloatNet.from_net(read_net(root / "initial.nnue"))
    random_start = TrainSettings(**SMALL).new_net()
    scored = type(data)(data.occ, data.pcs, eval_scores(data, parse_eval_init("eval:shannon")),
                        data.result, data.stm)
    idx = np.arange(len(data), dtype=np.int64)
    fitted_loss = evaluate(initial, scored, idx, 0.0)[1]
    random_loss = evaluate(random_start, scored, idx, 0.0)[1]
    # measured: 0.0133 against the random net's 0.0866 (the evaluation's scores as targets)
    assert fitted_loss < 0.3 * random_loss
    # the first epoch starts from initial.nnue: its net differs from it, and from the random
    # start's training (another run of the same settings)
    assert summary.checksum != read_net(root / "initial.nnue").checksum


def test_same_data_and_seed_give_the_same_net_bytes(data_file, tmp_path):
    for run_id in ("once", "again"):
        cfg = config(data_file)
        s2, d2 = new_training(cfg, out_dir=tmp_path, run_id=run_id)
        execute_training(s2, cfg, data=d2)
    for name in ("initial.nnue", "net.nnue"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "once" / name).read_bytes()
    other = config(data_file, seed=6)
    s3, d3 = new_training(other, out_dir=tmp_path, run_id="other")
    execute_training(s3, other, data=d3)
    assert (tmp_path / "other" / "initial.nnue").read_bytes() != \
        (tmp_path / "once" / "initial.nnue").read_bytes()


def test_resumed_to_more_epochs_equals_an_uninterrupted_training(trained, data_file, tmp_path):
    runs, store, _, _ = trained
    res = CliRunner().invoke(evotune_cli, ["resume", "e", "--generations", "3", "--runs-dir",
                                           str(runs), "--quiet"])
    assert res.exit_code == 0, res.output
    straight = config(data_file, epochs=3)
    s2, d2 = new_training(straight, out_dir=tmp_path, run_id="three")
    execute_training(s2, straight, data=d2)
    assert (tmp_path / "three" / "net.nnue").read_bytes() == (store.root / "net.nnue").read_bytes()


def test_a_training_stopped_before_its_first_checkpoint_fits_the_same_start(data_file, tmp_path):
    """Killed (or out of disk) right after its manifest: execute fits the initial net again from
    the data (it needs the positions) and ends with the uninterrupted training's bytes."""
    cfg = config(data_file)
    twin, packed = new_training(cfg, out_dir=tmp_path, run_id="twin")
    execute_training(twin, cfg, data=packed)
    s2, _ = new_training(cfg, out_dir=tmp_path, run_id="stopped")
    for name in ("checkpoint.npz", "initial.nnue", "net.nnue"):
        (s2.root / name).unlink()
    execute_training(s2, cfg)
    for name in ("initial.nnue", "net.nnue"):
        assert (s2.root / name).read_bytes() == (twin.root / name).read_bytes()


def test_verify_plays_an_eval_initialised_training(trained):
    runs, store, _, _ = trained
    res = CliRunner().invoke(evotune_cli, ["verify", "e", "--games", "2", "--depth", "1",
                                           "--workers", "1", "--runs-dir", str(runs)])
    assert res.exit_code == 0, res.output
    doc = json.loads((store.root / "verify.json").read_text())
    assert [m["games"] for m in doc["matches"]] == [2, 2]
    assert "eval:shannon" in json.dumps(doc)


def test_the_command_says_what_the_fit_made(data_file, tmp_path):
    got = subprocess.run([sys.executable, "-m", "evotune.cli", "nn", "train", str(data_file),
                          "--init", "eval:shannon", "--init-epochs", "2", "--hidden", "16",
                          "--epochs", "1", "--run-id", "c", "--runs-dir", "runs", "--quiet"],
                         capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=600)
    assert got.returncode == 0, got.stderr
    initial = read_net(tmp_path / "runs" / "c" / "initial.nnue").checksum
    assert f"initial net {initial}: 2 epochs on shannon's scores of the positions" in got.stderr


@pytest.mark.parametrize("flags, says", [
    (["--init", "eval:"], "name a built-in linear evaluation after 'eval:'"),
    (["--init", "eval:nosuch"], "--init eval:nosuch:"),
    (["--init", "eval:nnue"], "evaluates with a network"),
    (["--init", "eval:shannon:missing.json"], "missing.json"),
    (["--init", "eval:shannon", "--init-epochs", "0"], "--init-epochs 0: give a number"),
    (["--init-epochs", "5"], "--init-epochs 5: only an initial net fitted to an evaluation"),
    (["--init", "eval:shannon", "--stream", "1000"], "needs the positions in memory"),
])
def test_bad_values_are_one_line_exit_2_and_write_nothing(data_file, tmp_path, flags, says):
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes())
    got = subprocess.run([sys.executable, "-m", "evotune.cli", "nn", "train", str(data),
                          "--runs-dir", "runs", *flags], capture_output=True, text=True,
                         env=ENV, cwd=tmp_path, timeout=600)
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and says in got.stderr, got.stderr
    assert got.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.txt"]
