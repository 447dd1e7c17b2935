"""A factoriser for king-bucketed nets (issue 39: bullet's ``l0f``): 768 input rows shared by
every king bucket, trained beside the buckets' own and merged into them when the net is saved.
The kernels against the numpy reference and the identity of shared gradients; the merged net plays
as the factorised one; threads, a stored state and a run; what it is for (held-out loss on small
data); bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import chess
import numpy as np
import pytest
from test_nn_train_buckets import ENV, MAP4, ROOT, material

from evotune.engine.net.network import read_net
from evotune.errors import FieldError
from evotune.learn.nn import numpystep as ref
from evotune.learn.nn.data import load_data
from evotune.learn.nn.trainer import (
    Buffers,
    FloatNet,
    TrainSettings,
    TrainState,
    evaluate,
    gradients,
    step,
    train_packed,
)
from evotune.runs.trainrecords import parse_checkpoint


@pytest.fixture(scope="module")
def data_file(random_positions, tmp_path_factory):
    path = tmp_path_factory.mktemp("fact") / "m.txt"
    path.write_text("".join(
        f"{b.fen()} | {material(b)} | "
        f"{1.0 if material(b) > 150 else 0.0 if material(b) < -150 else 0.5}\n"
        for b in random_positions(1500, 31)))
    return path


@pytest.fixture(scope="module")
def data(data_file):
    return load_data([data_file])


def lively(seed=3, n=8, activation="screlu") -> FloatNet:
    """A factorised net (K 4, H 16) whose shared rows are not zero and whose accumulators span
    both clamp ends."""
    net = FloatNet.random(16, seed, activation, king_buckets=MAP4, output_buckets=n,
                          factoriser=True)
    net.l0w[...] *= 6.0
    net.l0f[...] = np.random.default_rng(seed).uniform(-0.2, 0.2, net.l0f.shape)
    net.l0b[:] = np.linspace(-0.3, 1.3, 16)
    return net


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
def test_factorised_gradients_are_the_numpy_reference_and_share_their_rows(data, activation):
    net = lively(activation=activation)
    idx = np.arange(0, 1500, 3, dtype=np.int64)
    buf = Buffers(idx.size, 16, king_buckets=4, output_buckets=8, factoriser=True)
    loss = gradients(TrainState.start(net), data, idx, 0.3, buf)
    p64 = {k: a.astype(np.float64) for k, a in net.arrays().items() if k != "l0f"}
    p64["l0w"] = np.vstack([net.l0w, net.l0f]).astype(np.float64)  # the reference's rows
    loss64, g64 = ref.gradients(p64, data, idx, 0.3, activation == "screlu", MAP4, True)
    assert loss == pytest.approx(loss64, rel=1e-5)
    rows = np.vstack([buf.grads["l0w"], buf.grads["l0f"]])
    assert np.abs(rows - g64["l0w"]).max() <= 1e-5 * np.abs(g64["l0w"]).max()
    for name in ("l0b", "l1w", "l1b"):
        assert np.abs(buf.grads[name] - g64[name]).max() <= 1e-5 * np.abs(g64[name]).max() + 1e-9
    # a shared row's gradient is the sum of its buckets' rows' gradients
    per_bucket = buf.grads["l0w"].reshape(4, 768, 16).sum(axis=0)
    assert np.abs(buf.grads["l0f"] - per_bucket).max() <= 1e-5 * np.abs(per_bucket).max()
    assert np.abs(buf.grads["l0f"]).max() > 1e-4
    # the reference's loss is the loss of the merged net (no factoriser)
    merged = net.merged()
    m64 = {k: a.astype(np.float64) for k, a in merged.arrays().items()}
    assert ref.loss(m64, data, idx, 0.3, activation == "screlu", MAP4) == pytest.approx(
        loss64, rel=1e-6)  # merged in float32


def test_the_merged_net_plays_as_the_factorised_one(data):
    net = lively()
    idx = np.arange(1500, dtype=np.int64)
    out, loss = evaluate(net, data, idx, 0.25)
    m_out, m_loss = evaluate(net.merged(), data, idx, 0.25)
    assert np.abs(out - m_out).max() < 1e-4 * max(1.0, np.abs(out).max())
    assert np.std(out) > 0.1 and loss == pytest.approx(m_loss, rel=1e-4)
    q = net.quantised()
    assert q == net.merged().quantised() and q.king_buckets == MAP4 and q.output_buckets == 8
    want = np.round(np.abs((net.l0w.reshape(4, 768, 16) + net.l0f) * 255)) * np.sign(
        net.l0w.reshape(4, 768, 16) + net.l0f)
    assert np.abs(q.l0w.reshape(4, 768, 16) - want).max() <= 1
    # a zero factoriser changes nothing: with_factoriser() plays as the net without
    plain = FloatNet.random(16, 4, king_buckets=MAP4, output_buckets=2)
    assert plain.with_factoriser().quantised() == plain.quantised()
    assert plain.with_factoriser().digest() != plain.digest()


def test_the_factorised_step_is_the_numpy_step_for_any_threads(data):
    net = lively(seed=5, n=3)
    idx = np.arange(7, 1500, 2, dtype=np.int64)
    settings = TrainSettings(hidden=16, wdl=0.25, king_buckets="4", output_buckets=3,
                             factoriser=True)
    state = TrainState.start(net.copy())
    buf = Buffers.of(idx.size, settings)
    params = {k: a.astype(np.float64) for k, a in net.arrays().items() if k != "l0f"}
    params["l0w"] = np.vstack([net.l0w, net.l0f]).astype(np.float64)
    m = {k: np.zeros_like(a) for k, a in params.items()}
    v = {k: np.zeros_like(a) for k, a in params.items()}
    for t in (1, 2, 3):
        step(state, data, idx, settings, 0.01, buf)
        ref.step(params, m, v, t, data, idx, wdl=0.25, screlu=True, lr=0.01, bucket_map=MAP4,
                 factoriser=True)
    got = np.vstack([state.net.l0w, state.net.l0f])
    assert np.abs(got - params["l0w"]).max() < 1e-5
    assert np.abs(state.net.l1w - params["l1w"]).max() < 1e-5
    train = TrainSettings(hidden=16, epochs=2, batch=100, lr=0.01, king_buckets="4",
                          output_buckets=3, factoriser=True, seed=6)
    one, two = train_packed(data, train, workers=1), train_packed(data, train, workers=2)
    assert [r.digest for r in one.records] == [r.digest for r in two.records]
    assert np.abs(one.net.l0f).max() > 0.01  # the shared rows learned


def test_a_stored_factorised_state_continues_as_an_uninterrupted_training(data):
    settings = TrainSettings(hidden=16, epochs=3, batch=200, lr=0.01, king_buckets="4",
                             output_buckets=2, factoriser=True, seed=4)
    whole = train_packed(data, settings)
    part = train_packed(data, TrainSettings(**{**settings.record(), "epochs": 2}))
    arrays, meta = part.state.to_arrays()
    assert meta["factoriser"] == 1 and arrays["params"].size == 768 * 5 * 16 + 16 + 2 * (2 * 16 + 1)
    meta = {**meta, "seconds": 1.0}
    parse_checkpoint(arrays, meta, "checkpoint.npz")  # the store's validator takes it
    state = TrainState.from_arrays({k: a.copy() for k, a in arrays.items()}, dict(meta))
    assert state.net.factorised
    rest = train_packed(data, settings, state=state)
    assert [r.digest for r in part.records + rest.records] == [r.digest for r in whole.records]
    assert rest.net.quantised().checksum == whole.net.quantised().checksum


def test_the_factoriser_lowers_a_bucketed_net_s_held_out_loss_on_small_data(tmp_path):
    """What it is for: 3,000 positions spread over 4 king buckets and 8 output buckets. Measured
    (6 epochs, seed 2): held-out loss 0.0660 without, 0.0495 with it."""
    rng = np.random.default_rng(31)
    lines = []
    while len(lines) < 3000:
        b = chess.Board()
        for _ in range(int(rng.integers(4, 80))):
            legal = list(b.legal_moves)
            if not legal:
                break
            b.push(legal[int(rng.integers(len(legal)))])
        if not b.is_game_over():
            s = material(b)
            lines.append(f"{b.fen()} | {s} | {1.0 if s > 150 else 0.0 if s < -150 else 0.5}\n")
    (tmp_path / "m.txt").write_text("".join(lines))
    data = load_data([tmp_path / "m.txt"])
    val = {}
    for f in (False, True):
        s = TrainSettings(hidden=32, epochs=6, batch=128, lr=0.005, wdl=0.25, king_buckets="4",
                          output_buckets=8, seed=2, factoriser=f)
        val[f] = train_packed(data, s).records[-1].val_loss
    assert val[True] < 0.85 * val[False], val


def test_settings_and_the_command(data_file, tmp_path):
    with pytest.raises(FieldError, match="factoriser shares rows between king buckets: give"):
        TrainSettings(factoriser=True)
    with pytest.raises(FieldError, match="must be true or false"):
        TrainSettings(king_buckets="4", factoriser=1)
    assert "factoriser" not in TrainSettings(king_buckets="4").record()  # identities kept
    assert TrainSettings(king_buckets="4", factoriser=True).record()["factoriser"] is True
    cmd = [sys.executable, "-m", "evotune.cli", "nn", "train", str(data_file), "--hidden", "16",
           "--epochs", "2", "--batch", "256", "--runs-dir", str(tmp_path), "--workers", "1",
           "--quiet"]
    bad = subprocess.run([*cmd, "--factoriser", "--run-id", "bad"], capture_output=True,
                         text=True, env=ENV, cwd=ROOT)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "factoriser" in bad.stderr and not (tmp_path / "bad").exists()
    good = subprocess.run([*cmd, "--factoriser", "--king-buckets", "4", "--run-id", "f"],
                          capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert good.returncode == 0, good.stderr
    net = read_net(tmp_path / "f" / "net.nnue")
    assert net.king_buckets == MAP4 and net.hidden == 16
    manifest = json.loads((tmp_path / "f" / "manifest.json").read_text())
    assert manifest["config"]["settings"]["factoriser"] is True
    status = subprocess.run([sys.executable, "-m", "evotune.cli", "status", "f", "--runs-dir",
                             str(tmp_path)], capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert status.returncode == 0 and "factorised" in status.stdout, status.stdout
