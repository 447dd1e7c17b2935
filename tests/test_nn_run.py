"""A net training is a run of kind 'train': its files, resume (in-process and after kill -9),
the run commands on it (status, plot, report, export; verify: tests/test_nn_verify.py) and bad
input."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine.net.network import read_net
from evotune.errors import StoreError
from evotune.kinds.training import TrainConfig, execute_training, new_training, open_training
from evotune.learn.nn.trainer import TrainSettings, train
from evotune.runs.manifest import FORMAT_VERSION
from evotune.runs.trainrecords import EpochLine

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 320, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}
SMALL = dict(hidden=16, batch=128, lr=0.003, lr_drop=2, gamma=0.5, seed=5)


def cli(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=600, **kw)


@pytest.fixture(scope="module")
def data_file(random_positions, tmp_path_factory) -> Path:
    """2,000 positions of random games scored by material, results by its sign."""
    folder = tmp_path_factory.mktemp("nnrun")
    lines = []
    for b in random_positions(2000, 23):
        s = sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in b.piece_map().values())
        lines.append(f"{b.fen()} | {s} | {1.0 if s > 150 else 0.0 if s < -150 else 0.5}\n")
    path = folder / "m.txt"
    path.write_text("".join(lines))
    return path


def config(data_file: Path, epochs: int, **over) -> TrainConfig:
    settings = TrainSettings(epochs=epochs, **{**SMALL, **over})
    return TrainConfig(data=(str(data_file),), settings=settings)


def stored_lines(root: Path) -> list[dict]:
    """The epoch records without their timings."""
    out = []
    for p in sorted((root / "epochs").iterdir()):
        d = json.loads(p.read_text())
        d.pop("seconds")
        out.append(d)
    return out


@pytest.fixture(scope="module")
def stored(data_file, tmp_path_factory):
    """A 4-epoch training run 'r4' and the plain trainer's result on the same settings."""
    runs = tmp_path_factory.mktemp("runs")
    cfg = config(data_file, 4)
    store, data = new_training(cfg, out_dir=runs, run_id="r4")
    summary = execute_training(store, cfg, data=data)
    plain = train([data_file], epochs=4, **SMALL)
    return runs, store, summary, plain


def test_a_training_is_a_run_of_kind_train(stored, data_file):
    runs, store, summary, plain = stored
    root = store.root
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["format"] == FORMAT_VERSION and manifest["kind"] == "train"
    assert manifest["config"]["settings"]["hidden"] == 16
    assert manifest["data_files"][0]["name"] == "m.txt"
    cache = next(data_file.parent.glob("m.txt.*.nncache"))
    assert manifest["identity"]["cache"][:16] in cache.name
    # one record per epoch, equal to the plain trainer's epochs (digest, checksum, losses)
    lines = stored_lines(root)
    assert [d["epoch"] for d in lines] == [1, 2, 3, 4]
    assert [d["lr"] for d in lines] == [0.003, 0.003, 0.0015, 0.0015]
    for d, rec in zip(lines, plain.records):
        assert (d["digest"], d["checksum"], d["train_loss"], d["val_loss"]) == \
               (rec.digest, rec.checksum, rec.train_loss, rec.val_loss)
    assert lines[-1]["val_loss"] < lines[0]["val_loss"]
    # the net file is the last epoch's quantised net; the initial net is kept
    assert read_net(root / "net.nnue").checksum == lines[-1]["checksum"] == summary.checksum
    assert read_net(root / "initial.nnue").checksum != summary.checksum
    arrays, meta = store.read_checkpoint()
    assert meta["epoch"] == 4 and meta["steps"] == 4 * -(-summary.train_positions // 128)
    assert 1700 < summary.train_positions < 1900
    assert np.array_equal(arrays["params"], plain.net.flat)
    state = json.loads((root / "state.json").read_text())
    assert state["generation"] == 4 and state["finished"] is True


def test_continued_training_equals_uninterrupted(stored, data_file, tmp_path):
    _, _, summary, _ = stored
    cfg2 = config(data_file, 2)
    store, data = new_training(cfg2, out_dir=tmp_path, run_id="r2")
    execute_training(store, cfg2, data=data)
    # a crash between epoch 3's record and its checkpoint leaves a record beyond the commit
    store.write_epoch(EpochLine(3, 0.1, 0.5, 0.5, 1, 1.0, "ab", "cd"))
    cfg4 = open_training(store)
    cfg4 = TrainConfig(data=cfg4.data, settings=replace(cfg4.settings, epochs=4))
    again = execute_training(store, cfg4)
    assert again.checksum == summary.checksum
    assert stored_lines(store.root) == stored_lines(summary.net_path.parent)


def test_resume_refuses_changed_data_and_damaged_checkpoint(data_file, tmp_path):
    copy = tmp_path / "d.txt"
    copy.write_bytes(data_file.read_bytes())
    cfg = config(copy, 1)
    store, data = new_training(cfg, out_dir=tmp_path / "runs", run_id="r")
    saved = copy.read_bytes()
    with copy.open("a") as f:
        f.write("8/8/8/8/8/8/8/K6k w - - 0 1 | 0 | 0.5\n")
    with pytest.raises(StoreError, match="data changed"):
        open_training(store)
    copy.write_bytes(saved)
    (store.root / "checkpoint.npz").write_bytes(b"not a zip")
    with pytest.raises(StoreError, match="checkpoint.npz is damaged"):
        execute_training(store, open_training(store))
    store.unlock()


def test_run_commands_on_a_training(stored, tmp_path):
    runs, store, summary, _ = stored
    got = cli(["status", "r4", "--runs-dir", str(runs), "--json"], tmp_path)
    assert got.returncode == 0, got.stderr
    info = json.loads(got.stdout)
    assert (info["kind"], info["epoch"], info["epochs"], info["finished"], info["checksum"]) == \
        ("train", 4, 4, True, summary.checksum)
    assert len(info["records"]) == 4
    text = cli(["status", "r4", "--runs-dir", str(runs)], tmp_path).stdout
    assert "epoch 4/4" in text and text.count("loss train") == 4
    for fmt in ("evotune", "bullet"):
        out = tmp_path / f"n.{fmt}"
        got = cli(["export", "r4", "--runs-dir", str(runs), "--format", fmt, "--out", str(out)],
                  tmp_path)
        assert got.returncode == 0, got.stderr
        net = read_net(out, format=fmt, hidden=16) if fmt == "bullet" else read_net(out)
        assert net.checksum == summary.checksum
    got = cli(["plot", "r4", "--runs-dir", str(runs), "--reports", str(tmp_path / "rep")], tmp_path)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "rep" / "r4" / "loss.png").stat().st_size > 1000
    got = cli(["report", "r4", "--runs-dir", str(runs), "--reports", str(tmp_path / "rep")], tmp_path)
    assert got.returncode == 0, got.stderr
    md = (tmp_path / "rep" / "r4" / "report.md").read_text()
    assert "net training" in md and summary.checksum in md and md.count("\n| ") == 5
    assert "data:image/png;base64" in (tmp_path / "rep" / "r4" / "report.html").read_text()
    # export of a binary net needs --out, and a net format: one line, exit 2
    for args in (["export", "r4", "--format", "bullet"],
                 ["export", "r4", "--format", "json", "--out", "x"]):
        got = cli(args + ["--runs-dir", str(runs)], tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("flags, says", [
    (["--hidden", "3"], "--hidden must be an integer from 8"),
    (["--wdl", "1.5"], "--wdl must be a number in [0, 1]"),
    (["--activation", "relu"], "'relu' is not one of 'screlu', 'crelu'"),  # a Choice, as nn init's
    (["--init", "missing.nnue"], "missing.nnue"),
    (["--val-share", "0.95"], "--val-share must be a number"),
    (["--run-id", "a/b"], "run id 'a/b' is not allowed"),
    (["--workers", "-1"], "--workers -1"),
])
def test_bad_input_is_one_line_and_writes_nothing(data_file, tmp_path, flags, says):
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes())
    got = cli(["nn", "train", str(data), "--runs-dir", "runs", *flags], tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and says in got.stderr, got.stderr
    assert got.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.txt"]


@pytest.mark.slow
def test_kill_9_mid_training_then_resume_equals_uninterrupted(data_file, tmp_path,
                                                               kill_at_generation):
    """Two trainings of 6 epochs in subprocesses: one killed once its state reports epoch 2
    (it is then inside epoch 3), resumed; both end with the same net and epoch records."""
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes() * 8)
    args = ["nn", "train", str(data), "--hidden", "32", "--batch", "64", "--epochs", "6",
            "--lr-drop", "2", "--runs-dir", "runs"]
    twin = cli(args + ["--run-id", "twin"], tmp_path)
    assert twin.returncode == 0, twin.stderr
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args, "--run-id", "killed"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    killed_at = kill_at_generation(proc, tmp_path / "runs" / "killed" / "state.json", 2)
    assert killed_at is not None and killed_at < 6
    got = cli(["resume", "killed", "--runs-dir", "runs"], tmp_path)
    assert got.returncode == 0, got.stderr
    a, b = tmp_path / "runs" / "twin", tmp_path / "runs" / "killed"
    assert stored_lines(a) == stored_lines(b)
    assert (a / "net.nnue").read_bytes() == (b / "net.nnue").read_bytes()
    assert json.loads(cli(["status", "killed", "--runs-dir", "runs", "--json"],
                          tmp_path).stdout)["epoch"] == 6


def test_few_optimiser_steps_an_epoch_draw_a_note(data_file, tmp_path):
    # ~1,800 training positions at --batch 1024 are 2 steps an epoch: the summary says so on
    # stderr and names a batch that makes at least 20; at --batch 64 (29 steps) it says nothing
    args = ["nn", "train", str(data_file), "--hidden", "8", "--epochs", "1", "--runs-dir",
            str(tmp_path)]
    few = cli([*args, "--batch", "1024", "--run-id", "few"], tmp_path)
    assert few.returncode == 0, few.stderr
    note = [ln for ln in few.stderr.splitlines() if ln.startswith("evotune: note:")]
    assert len(note) == 1 and "make 2 optimiser step(s) an epoch at --batch 1024" in note[0]
    assert "e.g. 64," in note[0]
    enough = cli([*args, "--batch", "64", "--run-id", "enough"], tmp_path)
    assert enough.returncode == 0, enough.stderr
    assert "evotune: note:" not in enough.stderr


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_a_training_stopped_before_its_first_checkpoint_resumes(data_file, tmp_path):
    """Issue 38 item 3: `ulimit -f 200; evotune nn train ... --hidden 64` fails writing
    checkpoint.npz; resume said the checkpoint was missing and nn train that the run existed.
    Resume now starts it (nothing was trained) and ends with the uninterrupted training's net."""
    import resource

    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes())
    args = ["nn", "train", str(data), "--hidden", "64", "--epochs", "2", "--batch", "64",
            "--runs-dir", "runs"]
    assert cli(["nn", "train", str(data), "--hidden", "8", "--epochs", "1", "--run-id", "c",
                "--runs-dir", "cache"], tmp_path).returncode == 0  # the data cache, unlimited

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, 200 * 1024))

    full = cli(args + ["--run-id", "dfull"], tmp_path, preexec_fn=small_files)
    assert full.returncode == 2 and full.stderr.count("\n") == 1, full.stderr
    root = tmp_path / "runs" / "dfull"
    assert (root / "manifest.json").exists() and not (root / "checkpoint.npz").exists()
    for cmd in (["status", "dfull"], ["export", "dfull", "--format", "evotune", "--out", "n.nnue"]):
        got = cli(cmd + ["--runs-dir", "runs"], tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
        assert "evotune resume dfull" in got.stderr
    got = cli(["resume", "dfull", "--runs-dir", "runs"], tmp_path)
    assert got.returncode == 0, got.stderr
    twin = cli(args + ["--run-id", "twin"], tmp_path)
    assert twin.returncode == 0, twin.stderr
    assert (root / "net.nnue").read_bytes() == (tmp_path / "runs/twin/net.nnue").read_bytes()
    assert stored_lines(root) == stored_lines(tmp_path / "runs" / "twin")


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_an_empty_checkpoint_is_one_line_exit_2_for_every_command(stored, tmp_path):
    """Issue 38 item 4: numpy's EOFError on an empty checkpoint.npz became click's Abort:
    'evotune: aborted', exit 130. Item 15: resume printed 'training X in ...' before its error,
    and resume --generations 0 named --epochs."""
    import shutil

    runs, store, _, _ = stored
    shutil.copytree(runs / "r4", tmp_path / "runs" / "r4")
    assert cli(["resume", "r4", "--runs-dir", "runs", "--generations", "0"],
               tmp_path).stderr.startswith("evotune: error: --generations must be an integer")
    (tmp_path / "runs" / "r4" / "checkpoint.npz").write_bytes(b"")
    for cmd in (["status", "r4"], ["status", "r4", "--json"], ["resume", "r4"],
                ["resume", "r4", "--generations", "6"],
                ["export", "r4", "--format", "evotune", "--out", "n.nnue"],
                ["verify", "r4", "--games", "2"]):
        got = cli(cmd + ["--runs-dir", "runs"], tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1, (cmd, got.stderr)
        assert "checkpoint.npz is damaged (EOFError)" in got.stderr, (cmd, got.stderr)
    assert not (tmp_path / "n.nnue").exists()


def test_the_few_steps_note_never_advises_a_larger_batch():
    """Issue 38 item 11: at --batch 32 the note advised 'a smaller --batch (e.g. 64, 2 steps)':
    larger, with fewer steps (the suggestion is floored at 64)."""
    from evotune.kinds.training import few_steps_note

    note = few_steps_note(100, 32)
    assert "make 4 optimiser step(s) an epoch at --batch 32" in note
    assert "smaller --batch" not in note and "more positions" in note
    assert "e.g. 64, 29 steps" in few_steps_note(1800, 1024)
    assert "e.g. 64, 32 steps" in few_steps_note(2000, 256)
    assert few_steps_note(2000, 64) == ""  # 32 steps
