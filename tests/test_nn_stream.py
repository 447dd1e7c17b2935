"""Training from bullet data files larger than memory: streamed in windows with a seeded
shuffle, deterministic, never more than a window in memory, the same as a run and on resume."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evotune.errors import FieldError
from evotune.kinds.training import TrainConfig, execute_training, new_training
from evotune.learn.labels import DataError
from evotune.learn.nn import stream as nnstream
from evotune.learn.nn.bulletdata import RECORD, load_positions
from evotune.learn.nn.stream import BulletStream, held_out, train_stream
from evotune.learn.nn.trainer import TrainSettings, TrainState, train

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "bullet" / "sample.bin"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture()
def files(tmp_path) -> list[Path]:
    """The 64 sample records as three files of 20, 30 and 14 positions (read as one sequence)."""
    raw = SAMPLE.read_bytes()
    out = []
    for name, a, b in (("a.bin", 0, 20), ("b.bin", 20, 50), ("c.data", 50, 64)):
        (tmp_path / name).write_bytes(raw[a * RECORD:b * RECORD])
        out.append(tmp_path / name)
    return out


SETTINGS = dict(hidden=8, epochs=3, batch=8, lr=0.01, wdl=0.3, val_share=0.25, val_block=4)


def test_windows_hold_the_files_positions_in_order(files):
    whole = load_positions(files)
    source = BulletStream(files, 24)
    assert len(source) == 64 and source.windows == 3
    got = [source.read(w) for w in range(3)]
    assert [(lo, len(d)) for d, lo in got] == [(0, 24), (24, 24), (48, 16)]
    for name in ("occ", "pcs", "score", "result", "stm"):
        joined = np.concatenate([getattr(d, name) for d, _ in got])
        assert np.array_equal(joined, getattr(whole, name)), name


def test_the_held_out_blocks_are_whole_and_about_the_share():
    s = TrainSettings(val_share=0.2, val_block=64, seed=5)
    mask = held_out(0, 640_000, s)
    blocks = mask.reshape(-1, 64)
    assert (blocks.all(axis=1) | ~blocks.any(axis=1)).all()  # a block is in or out whole
    assert 0.19 < mask.mean() < 0.21
    assert np.array_equal(held_out(1000, 5000, s), mask[1000:6000])  # addressed by place
    assert not held_out(0, 100, TrainSettings(val_share=0.0)).any()
    assert not np.array_equal(mask, held_out(0, 640_000, TrainSettings(val_share=0.2, seed=6)))


def test_streaming_is_deterministic_and_holds_one_window(files, monkeypatch):
    settings = TrainSettings(**SETTINGS, stream=24)
    widest = []
    real_read = BulletStream.read

    def read(self, w):
        got = real_read(self, w)
        widest.append(len(got[0]))
        return got

    monkeypatch.setattr(BulletStream, "read", read)
    a = train_stream(BulletStream(files, 24), settings)
    assert max(widest) == 24  # never more than a window read at once
    b = train_stream(BulletStream(files, 24), settings, workers=2)
    assert [r.digest for r in a.records] == [r.digest for r in b.records]
    held = int(sum(held_out(0, 64, settings)))
    assert 0 < held < 64 and all(r.positions == 64 - held for r in a.records)
    assert all(r.val_loss is not None for r in a.records)
    # another window is another order of the same positions: another net
    c = train_stream(BulletStream(files, 64), TrainSettings(**SETTINGS, stream=64))
    assert c.records[-1].digest != a.records[-1].digest
    assert c.records[0].positions == a.records[0].positions
    assert c.records[0].val_loss == pytest.approx(a.records[0].val_loss, rel=0.2)


def test_continuing_a_stored_state_equals_an_uninterrupted_training(files):
    settings = TrainSettings(**SETTINGS, stream=24)
    whole = train_stream(BulletStream(files, 24), settings)
    kept = {}
    train_stream(BulletStream(files, 24), TrainSettings(**{**settings.record(), "epochs": 1}),
                 on_epoch=lambda rec, st: kept.update(arrays={k: a.copy() for k, a in
                                                              st.to_arrays()[0].items()},
                                                      meta=dict(st.to_arrays()[1])))
    state = TrainState.from_arrays(kept["arrays"], kept["meta"])
    rest = train_stream(BulletStream(files, 24), settings, state=state)
    assert [r.digest for r in rest.records] == [r.digest for r in whole.records[1:]]


def test_the_training_learns(files):
    settings = TrainSettings(hidden=16, epochs=12, batch=8, lr=0.02, wdl=0.0, val_share=0.0,
                             stream=16)
    got = train_stream(BulletStream(files, 16), settings)
    losses = [r.train_loss for r in got.records]
    assert losses[-1] < 0.6 * losses[0]


def test_refusals(files, tmp_path):
    text = tmp_path / "t.txt"
    shutil.copy(ROOT / "tests" / "data" / "bullet" / "sample.txt", text)
    with pytest.raises(FieldError, match="streams bullet's binary data"):
        BulletStream([text], 10)
    with pytest.raises(FieldError, match="stream"):
        train([files[0]], hidden=8, stream=10)
    bad = tmp_path / "bad.bin"
    raw = bytearray(SAMPLE.read_bytes())
    raw[40 * RECORD + 26] = 7  # record 40's result
    bad.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="record 40 .* a result that is not 0, 1 or 2"):
        train_stream(BulletStream([bad], 16), TrainSettings(hidden=8, stream=16))


def test_a_streamed_run_and_its_command(files, tmp_path):
    settings = TrainSettings(**SETTINGS, stream=24)
    cfg = TrainConfig(data=tuple(map(str, files)), settings=settings)
    store, data = new_training(cfg, out_dir=tmp_path / "runs", run_id="s")
    summary = execute_training(store, cfg, data=data)
    plain = train_stream(BulletStream(files, 24), settings)
    assert [e.digest for e in summary.epochs] == [r.digest for r in plain.records]
    assert summary.positions == 64 and summary.train_positions == plain.records[0].positions
    got = subprocess.run([sys.executable, "-m", "evotune.cli", "nn", "train", *map(str, files),
                          "--hidden", "8", "--epochs", "1", "--batch", "8", "--stream", "24",
                          "--val-block", "4",
                          "--run-id", "c", "--runs-dir", "runs"], cwd=tmp_path, env=ENV,
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "1 epochs on" in got.stdout and "of 64 positions" in got.stdout
    text = tmp_path / "t.txt"
    shutil.copy(ROOT / "tests" / "data" / "bullet" / "sample.txt", text)
    got = subprocess.run([sys.executable, "-m", "evotune.cli", "nn", "train", "t.txt",
                          "--stream", "24", "--runs-dir", "runs"], cwd=tmp_path, env=ENV,
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert "--stream streams bullet's binary data" in got.stderr
    assert nnstream.BulletStream is BulletStream
