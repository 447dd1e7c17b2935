"""A move-model training is a run of its own kind, ``moves`` (issue 40, part 2): a checkpoint per
epoch, ``evotune resume`` continues it to the bytes an uninterrupted training writes (after a
stop or a kill -9), ``evotune status`` shows its epochs' loss and held-out top-1 / top-3,
``evotune plot`` draws them and ``nn train-moves DATA --out FILE`` still writes FILE."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_movetrain import _hidden_model_data

from evotune.cli import main
from evotune.engine.movemodel import modelfile as MM
from evotune.kinds import MOVES, kind_of
from evotune.kinds.moves import CHECKPOINT_FILE, MODEL_FILE, read_checkpoint, write_checkpoint
from evotune.runs.store import Store

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _train(capsys, tmp_path, out: str, run_id: str, epochs: int) -> tuple[int, str, str]:
    return cli(capsys, "nn", "train-moves", str(tmp_path / "d.txt"), "--out", str(tmp_path / out),
               "--epochs", str(epochs), "--batch", "32", "--run-id", run_id, "--runs-dir",
               str(tmp_path / "runs"))


def test_resumed_to_four_epochs_gives_the_bytes_of_four_at_once(tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    code, out, err = _train(capsys, tmp_path, "four.evomove", "four", 4)
    assert code == 0, err
    assert "held-out baseline (ordering prior)" in out and "epoch 4:" in out
    code, out, err = _train(capsys, tmp_path, "two.evomove", "two", 2)
    assert code == 0, err
    assert "epoch 2:" in out and "epoch 3:" not in out
    four = (tmp_path / "four.evomove").read_bytes()
    assert (tmp_path / "two.evomove").read_bytes() != four

    code, out, err = cli(capsys, "resume", "two", "--generations", "4", "--runs-dir",
                         str(tmp_path / "runs"))
    assert code == 0, err
    assert "epoch 3:" in err and "epoch 4:" in err and "epoch 2:" not in err
    store = Store.open("two", tmp_path / "runs")
    assert kind_of(store) is MOVES
    assert (store.root / MODEL_FILE).read_bytes() == four
    cp = read_checkpoint(store)
    assert [e.epoch for e in cp.epochs] == [1, 2, 3, 4] and cp.state.epoch == 4
    assert cp.epochs == read_checkpoint(Store.open("four", tmp_path / "runs")).epochs

    (store.root / MODEL_FILE).write_bytes(b"stale")  # export reads the checkpoint, the commit
    code, out, err = cli(capsys, "export", "two", "--format", "evotune", "--out", str(tmp_path / "e.evomove"),
                         "--runs-dir", str(tmp_path / "runs"))
    assert code == 0, err
    assert (tmp_path / "e.evomove").read_bytes() == four


def test_a_hidden_training_resumed_gives_the_bytes_of_one_at_once(tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    runs = str(tmp_path / "runs")
    for out, run_id, epochs in (("three.evomove", "three", "3"), ("one.evomove", "one", "1")):
        code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "d.txt"), "--out",
                           str(tmp_path / out), "--epochs", epochs, "--batch", "32", "--hidden",
                           "6", "--run-id", run_id, "--runs-dir", runs)
        assert code == 0, err
    three = (tmp_path / "three.evomove").read_bytes()
    assert MM.read_move_model(tmp_path / "three.evomove").hidden == 6
    assert (tmp_path / "one.evomove").read_bytes() != three
    code, _, err = cli(capsys, "resume", "one", "--generations", "3", "--runs-dir", runs)
    assert code == 0, err
    store = Store.open("one", tmp_path / "runs")
    assert (store.root / MODEL_FILE).read_bytes() == three
    cp = read_checkpoint(store)
    assert cp.state.w.size == 1646 + 6 * 1648  # feature set 2, the default
    # a checkpoint of another model's size is refused in one line, not rounded into a model
    zero = np.zeros(897)
    write_checkpoint(store, dataclasses.replace(
        cp, state=dataclasses.replace(cp.state, w=zero, m=zero, v=zero)))
    code, _, err = cli(capsys, "export", "one", "--format", "evotune", "--out",
                       str(tmp_path / "e.evomove"), "--runs-dir", runs)
    assert code == 2 and err.count("\n") == 1 and "not a model of 6 hidden units" in err


def _resumed_without(capsys, tmp_path, key: str, args: list[str]) -> Path:
    """Train 3 epochs at once and 1 epoch (both with ``args``), delete ``key`` from the second
    run's settings (a manifest written before that setting existed), resume it to 3 epochs and
    check it gives the bytes of the first; returns the first's model file."""
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    runs = str(tmp_path / "runs")
    for out, run_id, epochs in (("three.evomove", "three", "3"), ("one.evomove", "old", "1")):
        code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "d.txt"), "--out",
                           str(tmp_path / out), "--epochs", epochs, "--batch", "32", *args,
                           "--run-id", run_id, "--runs-dir", runs)
        assert code == 0, err
    manifest = tmp_path / "runs" / "old" / "manifest.json"
    d = json.loads(manifest.read_text())
    del d["config"]["settings"][key]
    manifest.write_text(json.dumps(d))
    code, _, err = cli(capsys, "resume", "old", "--generations", "3", "--runs-dir", runs)
    assert code == 0, err
    three = tmp_path / "three.evomove"
    assert (tmp_path / "runs" / "old" / MODEL_FILE).read_bytes() == three.read_bytes()
    return three


def test_a_run_made_before_feature_set_2_resumes_as_set_1(tmp_path, capsys):
    # a manifest written before --features existed has no 'features' setting: it trained set 1
    three = _resumed_without(capsys, tmp_path, "features", ["--features", "1"])
    assert MM.read_move_model(three).features == 1
    code, out, _ = cli(capsys, "nn", "train-moves", str(tmp_path / "d.txt"), "--out",
                       str(tmp_path / "two.evomove"), "--epochs", "3", "--batch", "32",
                       "--features", "2", "--run-id", "new", "--runs-dir",
                       str(tmp_path / "runs"))
    assert code == 0 and MM.read_move_model(tmp_path / "two.evomove").features == 2
    assert (tmp_path / "two.evomove").read_bytes() != three.read_bytes()


def test_a_run_made_before_visit_targets_resumes_on_the_chosen_move(tmp_path, capsys):
    # a manifest written before --target existed has no 'target' setting: it learnt the move
    _resumed_without(capsys, tmp_path, "target", [])


def test_status_and_plot_show_loss_and_held_out_accuracy(tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 300, seed=5)
    code, out, err = _train(capsys, tmp_path, "m.evomove", "m", 3)
    assert code == 0, err
    epoch3 = [line for line in out.splitlines() if line.startswith("epoch 3:")][0]
    runs = str(tmp_path / "runs")
    code, out, err = cli(capsys, "status", "m", "--runs-dir", runs)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("move-model training m: epoch 3/3 (finished)")
    assert lines[2] == "target      the chosen move" and "(ordering prior)" in lines[3]
    # the epoch's figures as the training printed them
    assert lines[-1].split(None, 2)[2] == epoch3.split(None, 2)[2]
    code, out, err = cli(capsys, "status", "m", "--runs-dir", runs, "--json")
    info = json.loads(out)
    assert code == 0 and info["epoch"] == 3 and info["finished"] is True
    assert info["target"] == "move"
    assert [e["epoch"] for e in info["history"]] == [1, 2, 3]
    last = info["history"][-1]
    assert 0 < last["top1"] <= last["top3"] <= 1 and last["loss"] < info["baseline"]["loss"]

    code, out, err = cli(capsys, "plot", "m", "--runs-dir", runs, "--reports",
                         str(tmp_path / "reports"))
    assert code == 0, err
    png = tmp_path / "reports" / "m" / "moves.png"
    assert png.stat().st_size > 10_000 and (tmp_path / "reports" / "m" / "moves.svg").exists()
    code, out, err = cli(capsys, "runs", "--runs-dir", runs)
    assert code == 0 and out.splitlines()[1].split()[:5] == ["m", "moves", "-", "epoch", "3/3"]


def test_the_same_command_again_asks_to_resume_and_bad_data_writes_no_run(tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 100, seed=5)
    assert _train(capsys, tmp_path, "m.evomove", "m", 1)[0] == 0
    code, _, err = _train(capsys, tmp_path, "m.evomove", "m", 1)
    assert code == 2 and err.count("\n") == 1 and "evotune resume m" in err
    (tmp_path / "bad.txt").write_text("not a fen | 0 | 0.5 | e2e4\n")
    code, _, err = cli(capsys, "nn", "train-moves", str(tmp_path / "bad.txt"), "--out",
                       str(tmp_path / "b.evomove"), "--runs-dir", str(tmp_path / "runs2"))
    assert code == 2 and err.count("\n") == 1
    assert not (tmp_path / "runs2").exists() and not (tmp_path / "b.evomove").exists()


def test_a_run_stopped_before_its_first_checkpoint_starts_again_and_a_lost_one_is_refused(
        tmp_path, capsys):
    _hidden_model_data(tmp_path / "d.txt", 100, seed=5)
    assert _train(capsys, tmp_path, "whole.evomove", "whole", 2)[0] == 0
    cfg = Store.open("whole", tmp_path / "runs").manifest().config
    job = MOVES.new(cfg, out_dir=tmp_path / "runs", run_id="cut", workers=0, ui=None)
    job.store.unlock()
    (job.store.root / CHECKPOINT_FILE).unlink()  # as if killed right after the manifest
    runs = str(tmp_path / "runs")
    code, _, err = cli(capsys, "resume", "cut", "--runs-dir", runs)
    assert code == 0, err
    assert (job.store.root / MODEL_FILE).read_bytes() == (tmp_path / "whole.evomove").read_bytes()
    (job.store.root / CHECKPOINT_FILE).unlink()  # lost after training: refused, not restarted
    code, _, err = cli(capsys, "resume", "cut", "--runs-dir", runs)
    assert code == 2 and err.count("\n") == 1 and "moves-checkpoint.npz is missing" in err
    (job.store.root / CHECKPOINT_FILE).write_bytes(b"junk")
    code, _, err = cli(capsys, "status", "cut", "--runs-dir", runs)
    assert code == 2 and err.count("\n") == 1 and "moves-checkpoint.npz is damaged (" in err


@pytest.mark.slow
@pytest.mark.parametrize("hidden, features", [("0", "2"), ("8", "2"), ("8", "1")])
def test_a_training_killed_mid_run_resumes_to_the_same_model(tmp_path, hidden, features):
    _hidden_model_data(tmp_path / "d.txt", 2000, seed=3)
    cmd = [sys.executable, "-m", "evotune.cli", "nn", "train-moves", "d.txt", "--epochs", "12",
           "--batch", "16", "--hidden", hidden, "--features", features, "--runs-dir", "runs"]
    whole = subprocess.run(cmd + ["--out", "whole.evomove", "--run-id", "whole"], cwd=tmp_path,
                           env=ENV, capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    # unbuffered, so "epoch 2:" is read when it is printed, not when the pipe's buffer flushes
    proc = subprocess.Popen(cmd + ["--out", "cut.evomove", "--run-id", "cut"], cwd=tmp_path,
                            env={**ENV, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:  # kill -9 in the epoch after the second
        if line.startswith("epoch 2:"):
            time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and not (tmp_path / "cut.evomove").exists()
    done = read_checkpoint(Store.open("cut", tmp_path / "runs")).state.epoch
    assert 2 <= done < 12
    res = subprocess.run([sys.executable, "-m", "evotune.cli", "resume", "cut", "--runs-dir",
                          "runs"], cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "runs" / "cut" / MODEL_FILE).read_bytes() == (
        tmp_path / "whole.evomove").read_bytes()
    whole_model = MM.read_move_model(tmp_path / "whole.evomove")
    assert whole_model.scale == 100 and whole_model.features == int(features)
