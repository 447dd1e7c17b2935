"""Move models are files like nets (issue 60): a model's bytes are part of the identity of every
run and output that plays it, ``nn info`` shows a model of any legal scale, a training checks
its own state (the settings it was trained with), and a training's --out is never its data or a
file of a run. The bad inputs of these commands are the table of tests/test_bad_input_moves.py."""
from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from badinput import SPEC
from test_movetrain import _hidden_model_data

from evotune.engine.movemodel import modelfile as MM
from evotune.learn.datagen import engine_identity
from evotune.spec.file import load_engine_spec

MODEL_SPEC = SPEC.replace('kind = "builtin"\n',
                          'kind = "builtin"\n[search]\nprior = "model:m.evomove"\n', 1)


def _one_line(code: int, err: str, *words: str) -> None:
    assert code == 2 and err.count("\n") == 1 and err.startswith("evotune: error: "), err
    for w in words:
        assert w in err, err


def test_a_runs_identity_holds_its_move_models_bytes(tmp_path, call_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    MM.write_move_model(MM.random_model(seed=1, spread=60), tmp_path / "m.evomove")
    (tmp_path / "s.toml").write_text(MODEL_SPEC)
    code, _, err = call_cli("run", "--engine", "s.toml", "--np", "4", "--generations", "1",
                       "--games", "2", "--depth", "1", "--workers", "1", "--runs-dir", "pop",
                       "--run-id", "r")
    assert code == 0, err
    # the same model again: verify plays it (with a node limit, as match takes one)
    code, out, err = call_cli("verify", "r", "--games", "2", "--depth", "1", "--nodes", "300",
                         "--workers", "1", "--runs-dir", "pop")
    assert code == 0, err
    assert json.loads((tmp_path / "pop" / "r" / "verify.json").read_text())["nodes"] == 300
    before = (tmp_path / "pop" / "r").stat().st_mtime_ns, sorted(
        p.name for p in (tmp_path / "pop" / "r").iterdir())
    MM.write_move_model(MM.random_model(seed=2, spread=60), tmp_path / "m.evomove")
    for args in (("verify", "r", "--games", "2", "--depth", "1"), ("resume", "r"),
                 ("resume", "r", "--generations", "2"), ("status", "r")):
        code, _, err = call_cli(*args, "--runs-dir", "pop")
        _one_line(code, err, "move-model file", "m.evomove", "changed since the run started")
    assert sorted(p.name for p in (tmp_path / "pop" / "r").iterdir()) == before[1]


def test_an_outputs_identity_holds_its_move_models_bytes(tmp_path):
    MM.write_move_model(MM.random_model(seed=1, spread=60), tmp_path / "m.evomove")
    (tmp_path / "s.toml").write_text(MODEL_SPEC)
    spec = load_engine_spec(str(tmp_path / "s.toml"))
    first = engine_identity(str(tmp_path / "s.toml"), spec)
    assert first["move_model_sha256"] == hashlib.sha256(
        (tmp_path / "m.evomove").read_bytes()).hexdigest()
    MM.write_move_model(MM.random_model(seed=2, spread=60), tmp_path / "m.evomove")
    again = engine_identity(str(tmp_path / "s.toml"), load_engine_spec(str(tmp_path / "s.toml")))
    assert again["engine_spec_sha256"] == first["engine_spec_sha256"]
    assert again["move_model_sha256"] != first["move_model_sha256"]
    plain = load_engine_spec("shannon")  # a spec without a model keeps the identity it had
    assert set(engine_identity("shannon", plain)) == {"engine_spec_sha256", "weights_sha256"}


def test_nn_info_shows_a_model_of_any_legal_scale(tmp_path, call_cli):
    n = MM.SET_FEATURES[1]
    MM.write_move_model(MM.MoveModel(weights=np.full(n, MM.WEIGHT_MAX, dtype=np.int32), scale=1),
                        tmp_path / "x.evomove")
    code, out, err = call_cli("nn", "info", str(tmp_path / "x.evomove"))
    assert code == 0, err
    shares = [float(w.rstrip("%,")) for w in out.splitlines()[-1].split()[2::2]]
    assert len(shares) == 3 and all(0 <= s <= 100 for s in shares)  # 20 moves tie: 5.0% each
    assert shares == [5.0, 5.0, 5.0]


def _train(call_cli, tmp_path, *extra: str) -> tuple[int, str, str]:
    return call_cli("nn", "train-moves", str(tmp_path / "d.txt"), "--out",
               str(tmp_path / "m.evomove"), "--epochs", "1", "--batch", "32", "--run-id", "t",
               "--runs-dir", str(tmp_path / "runs"), *extra)


def test_a_training_checks_the_settings_it_was_trained_with(tmp_path, call_cli):
    _hidden_model_data(tmp_path / "d.txt", 120, seed=5)
    code, out, err = _train(call_cli, tmp_path)
    assert code == 0, err
    runs = str(tmp_path / "runs")
    code, out, err = call_cli("status", "t", "--runs-dir", runs)
    assert code == 0 and "epoch 1/1 (finished)" in out, err
    manifest = tmp_path / "runs" / "t" / "manifest.json"
    good = manifest.read_text()
    for key, value in (("lr", 0.02), ("seed", 7), ("val_share", 0.2), ("l2", 0.0)):
        doc = json.loads(good)
        doc["config"]["settings"][key] = value
        manifest.write_text(json.dumps(doc))
        for args in (("status", "t"), ("resume", "t", "--generations", "2"),
                     ("export", "t", "--format", "evotune", "--out", str(tmp_path / "e.evomove"))):
            code, _, err = call_cli(*args, "--runs-dir", runs)
            _one_line(code, err, f"sets {key} other than", "manifest.json")
    manifest.write_text(good)
    code, out, err = call_cli("resume", "t", "--generations", "2", "--runs-dir", runs)
    assert code == 0 and "epoch 2:" in err, err
    assert not (tmp_path / "e.evomove").exists()


def test_a_trainings_out_is_never_its_data_nor_a_runs_file(tmp_path, call_cli):
    _hidden_model_data(tmp_path / "d.txt", 120, seed=5)
    data = (tmp_path / "d.txt").read_bytes()
    code, _, err = _train(call_cli, tmp_path)
    assert code == 0, err
    checkpoint = (tmp_path / "runs" / "t" / "moves-checkpoint.npz").read_bytes()
    for out, words in ((tmp_path / "d.txt", "is the move data file"),
                       (tmp_path / "runs" / "t" / "moves-checkpoint.npz", "folder of run 't'"),
                       (tmp_path / "runs" / "m.evomove", "inside the runs folder")):
        code, _, err = call_cli("nn", "train-moves", str(tmp_path / "d.txt"), "--out",
                           str(out), "--epochs", "1", "--run-id", "u", "--runs-dir",
                           str(tmp_path / "runs"))
        _one_line(code, err, "--out", words)
    assert (tmp_path / "d.txt").read_bytes() == data
    assert (tmp_path / "runs" / "t" / "moves-checkpoint.npz").read_bytes() == checkpoint
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["t"]
    assert Path(tmp_path / "m.evomove").exists()


@pytest.mark.parametrize("args", [
    ("export", "r1", "--format", "json", "--out", "{run}/x.json"),
    ("datagen", "--games", "2", "--depth", "1", "--out", "{run}/d.txt"),
    ("nn", "init", "--hidden", "8", "--out", "{run}/n.nnue"),
])
def test_no_command_writes_its_out_inside_a_run_folder(tmp_path, make_fake_run, args):
    """Only a run's store writes in its folder: --out of export, datagen, label and the nn
    commands is refused there in one line, exit 2, before anything is written (issue 60)."""
    make_fake_run(tmp_path, "r1", generations=1)
    run = tmp_path / "r1"
    before = sorted(p.name for p in run.rglob("*"))
    argv = [a.replace("{run}", str(run)) for a in args]
    res = subprocess.run([sys.executable, "-m", "evotune.cli", *argv, "--runs-dir", str(tmp_path)]
                         if argv[0] == "export" else [sys.executable, "-m", "evotune.cli", *argv],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "lies inside the folder of run 'r1'" in res.stderr
    assert sorted(p.name for p in run.rglob("*")) == before


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.mark.slow
def test_a_training_cut_by_a_full_disk_resumes_to_the_uninterrupted_model(tmp_path, call_cli,
                                                                         monkeypatch):
    """Second adversarial pass of issue 60: ``nn train-moves`` cut by the file size limit (as a
    full disk cuts it) at its first checkpoint; ``resume`` then trains to the model of an
    uninterrupted training, and, having no --out, says where that model is and how to copy it."""
    monkeypatch.chdir(tmp_path)
    _hidden_model_data(tmp_path / "d.txt", 400, seed=2)
    args = ["nn", "train-moves", "d.txt", "--out", "o.evomove", "--epochs", "3",
            "--runs-dir", "pop", "--run-id", "t"]
    code, _, err = call_cli("nn", "train-moves", "d.txt", "--out", "ref.evomove", "--epochs",
                            "3", "--runs-dir", "ref", "--run-id", "t")
    assert code == 0, err
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, preexec_fn=_limited)
    assert proc.returncode == 2 and "could not write" in proc.stderr, proc.stderr
    assert not (tmp_path / "o.evomove").exists()
    code, out, err = call_cli("resume", "t", "--runs-dir", "pop")
    assert code == 0, err
    model = tmp_path / "pop" / "t" / "model.evomove"
    assert model.read_bytes() == (tmp_path / "ref.evomove").read_bytes()
    assert f"model {Path('pop') / 't' / 'model.evomove'} ('evotune export t --format evotune " \
           "--out FILE' copies it)" in out + err
