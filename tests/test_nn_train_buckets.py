"""Training bucketed nets (issue 39 item 2): king buckets (bullet's ChessBucketsMirrored) and
output buckets (MaterialCount<N>) in the trainer's kernels, against the numpy reference and the
engine's integer reference; the trained net's file plays as the float net predicts; a run's
manifest, checkpoint, resume and status; bad input."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine import api
from evotune.engine.net.inputs import KING_BUCKET_PRESETS, features, output_bucket
from evotune.engine.net.network import evaluate_reference, random_net, read_net, write_net
from evotune.errors import FieldError, StoreError
from evotune.kinds.training import TrainConfig, execute_training, load_state, new_training, open_training
from evotune.learn.nn import numpystep as ref
from evotune.learn.nn.data import PackedData, load_data, pack_fen
from evotune.learn.nn.trainer import (
    Buffers,
    FloatNet,
    TrainSettings,
    TrainState,
    check_data,
    evaluate,
    gradients,
    step,
    train_packed,
)
from evotune.runs.store import Store

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 320, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}
MAP4 = KING_BUCKET_PRESETS[4]
ODD = tuple((i * 7) % 5 for i in range(32))
"""A map that is no preset: 5 buckets spread over the board."""


def material(board: chess.Board) -> int:
    return sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())


def packed(boards) -> PackedData:
    cols: list[list] = [[], [], [], [], []]
    for b in boards:
        occ, nib, stm = pack_fen(b.fen())
        s = material(b)
        for c, v in zip(cols, (occ, np.frombuffer(nib, np.uint8), s,
                               2 if s > 150 else 0 if s < -150 else 1, stm)):
            c.append(v)
    return PackedData(np.array(cols[0], np.uint64), np.array(cols[1], np.uint8),
                      np.array(cols[2], np.int16), np.array(cols[3], np.uint8),
                      np.array(cols[4], np.uint8))


@pytest.fixture(scope="module")
def boards(random_positions):
    return random_positions(1500, 31)


@pytest.fixture(scope="module")
def data_file(boards, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("nnb")
    path = folder / "m.txt"
    path.write_text("".join(f"{b.fen()} | {material(b)} | "
                            f"{1.0 if material(b) > 150 else 0.0 if material(b) < -150 else 0.5}\n"
                            for b in boards))
    return path


@pytest.fixture(scope="module")
def data(data_file) -> PackedData:
    return load_data([data_file])


def lively(hidden, bmap, n, activation="screlu", seed=3) -> FloatNet:
    """A random bucketed net whose accumulators span both clamp ends."""
    net = FloatNet.random(hidden, seed, activation, king_buckets=bmap, output_buckets=n)
    net.l0w[...] *= 8.0
    net.l0b[:] = np.linspace(-0.3, 1.3, hidden)
    net.l1b[:] = np.linspace(-0.2, 0.2, n)
    return net


@pytest.mark.parametrize("bmap, n", [(MAP4, 8), (ODD, 3), (KING_BUCKET_PRESETS[1], 5),
                                     (KING_BUCKET_PRESETS[16], 1)])
def test_the_float_forward_uses_the_engine_s_features_and_output_buckets(boards, bmap, n):
    """The kernels' output of each position equals a float64 forward over the engine's own
    feature list (net.inputs.features) and output bucket (net.inputs.output_bucket)."""
    net = lively(16, bmap, n, "crelu")
    some = boards[:300]
    out, _ = evaluate(net, packed(some), np.arange(len(some)), 0.0)
    p = {k: a.astype(np.float64) for k, a in net.arrays().items()}
    w1 = p["l1w"].reshape(n, 32)
    want = []
    for b in some:
        us, them = features(b, bmap)
        o = output_bucket(chess.popcount(b.occupied), n)
        a = [np.clip(p["l0b"] + p["l0w"][f].sum(axis=0), 0, 1) for f in (us, them)]
        want.append(a[0] @ w1[o, :16] + a[1] @ w1[o, 16:] + p["l1b"][o])
    assert np.abs(out - np.array(want)).max() < 2e-5 * max(1.0, np.abs(want).max())
    assert np.std(want) > 0.05


@pytest.mark.parametrize("bmap, n, activation", [(MAP4, 8, "screlu"), (ODD, 3, "crelu")])
def test_bucketed_gradients_match_numpy_and_finite_differences(data, bmap, n, activation):
    net = lively(16, bmap, n, activation)
    idx = np.arange(0, 1500, 3, dtype=np.int64)
    buf = Buffers(idx.size, 16, king_buckets=max(bmap) + 1, output_buckets=n)
    loss = gradients(TrainState.start(net), data, idx, 0.3, buf)
    p64 = {k: a.astype(np.float64) for k, a in net.arrays().items()}
    screlu = activation == "screlu"
    loss64, g64 = ref.gradients(p64, data, idx, 0.3, screlu, bmap)
    assert loss == pytest.approx(loss64, rel=1e-5)
    for name, g in g64.items():
        assert np.abs(buf.grads[name] - g).max() <= 1e-5 * np.abs(g).max() + 1e-9, name
    # only the rows of the king buckets that the positions' kings stand in are touched, and
    # only their output buckets' rows
    feats = ref.expand_batch(data, idx, bmap)
    used = np.unique(feats[feats < 768 * (max(bmap) + 1)] // 768)
    grown = np.flatnonzero(np.abs(buf.grads["l0w"]).reshape(max(bmap) + 1, -1).sum(axis=1))
    assert set(grown) <= set(used) and len(grown) >= 2
    obs = ref.out_buckets(data, idx, n)
    assert set(np.flatnonzero(np.abs(buf.grads["l1w"].reshape(n, -1)).sum(axis=1))) \
        == set(np.unique(obs))
    # central differences of the float64 loss on entries that matter
    f0, o0 = feats[0, 0], obs[0]
    picks = [("l0w", (int(f0[0]), 2)), ("l0w", (int(f0[3]), 7)), ("l0b", (5,)),
             ("l1w", (int(o0), 4) if n > 1 else (4,)), ("l1b", (int(o0),))]
    for name, at in picks:
        eps = 1e-6
        plus = {k: a.copy() for k, a in p64.items()}
        plus[name][at] += eps
        minus = {k: a.copy() for k, a in p64.items()}
        minus[name][at] -= eps
        fd = (ref.loss(plus, data, idx, 0.3, screlu, bmap)
              - ref.loss(minus, data, idx, 0.3, screlu, bmap)) / (2 * eps)
        assert buf.grads[name][at] == pytest.approx(fd, rel=2e-3, abs=1e-9), (name, at)
        assert abs(fd) > 1e-7, (name, at)


def test_the_bucketed_step_is_the_numpy_step(data):
    net = lively(16, MAP4, 8)
    idx = np.arange(7, 1500, 2, dtype=np.int64)
    settings = TrainSettings(hidden=16, wdl=0.25, king_buckets="4", output_buckets=8)
    state = TrainState.start(net.copy())
    buf = Buffers.of(idx.size, settings)
    params = {k: a.astype(np.float64) for k, a in net.arrays().items()}
    m = {k: np.zeros_like(a) for k, a in params.items()}
    v = {k: np.zeros_like(a) for k, a in params.items()}
    for t in (1, 2, 3):
        step(state, data, idx, settings, 0.01, buf)
        ref.step(params, m, v, t, data, idx, wdl=0.25, screlu=True, lr=0.01, bucket_map=MAP4)
    for name, a in state.net.arrays().items():
        assert np.abs(a - params[name]).max() < 1e-5, name


def test_a_trained_bucketed_net_plays_as_the_float_net_predicts(data, random_positions):
    """After a short training (K 4, N 8, H 32), the quantised net's integer reference evaluation
    follows the float net's prediction within quantisation on 400 other positions, and the
    engine's core evaluates the file exactly as the reference."""
    settings = TrainSettings(hidden=32, epochs=3, batch=128, lr=0.01, wdl=0.0,
                             king_buckets="4", output_buckets=8)
    fnet = train_packed(data, settings).net
    qnet = fnet.quantised()
    assert (qnet.king_buckets, qnet.output_buckets, qnet.hidden) == (MAP4, 8, 32)
    test_boards = random_positions(400, 47)
    out, _ = evaluate(fnet, packed(test_boards), np.arange(400), 0.0)
    engine = np.array([evaluate_reference(qnet, b) for b in test_boards])
    err = np.abs(engine - 400 * out.astype(np.float64))
    # measured: median 2.9, max 13.6 centipawns (a plain net of this size: 2.9 and 11.8)
    assert np.median(err) < 5 and err.max() < 25, (np.median(err), err.max())
    assert np.std(400 * out) > 100
    # the dequantised float net predicts the integer net up to bullet's truncations
    deq = FloatNet.from_net(qnet)
    assert deq.quantised() == qnet
    d_out, _ = evaluate(deq, packed(test_boards), np.arange(400), 0.0)
    assert np.abs(engine - 400 * d_out.astype(np.float64)).max() < 1.1
    # the core: the file's net along a seeded random game, exactly the reference
    rng = np.random.default_rng(5)
    board, moves = chess.Board(), []
    want = [evaluate_reference(qnet, board, clamp=True)]
    while len(moves) < 120 and not board.is_game_over():
        legal = list(board.legal_moves)
        moves.append(legal[int(rng.integers(len(legal)))])
        board.push(moves[-1])
        want.append(evaluate_reference(qnet, board, clamp=True))
    got = api.evaluate_line(chess.Board(), moves, qnet, "nnue").tolist()
    assert got == want and len(moves) >= 40


def test_a_bucketed_net_beats_its_random_start_on_held_out_loss(data):
    settings = TrainSettings(hidden=32, epochs=4, batch=128, lr=0.005, wdl=0.25,
                             king_buckets="4", output_buckets=8, seed=2)
    _, val_idx = check_data(data, settings)
    start = settings.new_net()
    before = evaluate(start, data, val_idx, settings.wdl)[1]
    got = train_packed(data, settings, init=start)
    after = evaluate(got.net, data, val_idx, settings.wdl)[1]
    assert got.records[-1].val_loss == pytest.approx(after, rel=1e-6)
    # measured: 0.0401 -> 0.0242 on 150 held-out positions (0.0373, 0.0280, 0.0265, 0.0242)
    assert after < 0.7 * before, (before, after)


def test_continuing_a_stored_bucketed_state_equals_an_uninterrupted_training(data):
    settings = TrainSettings(hidden=16, epochs=3, batch=200, lr=0.01, king_buckets=",".join(
        map(str, ODD)), output_buckets=3, seed=4)
    whole = train_packed(data, settings)
    part = train_packed(data, TrainSettings(**{**settings.record(), "epochs": 2}))
    arrays, meta = part.state.to_arrays()
    assert meta["king_buckets"] == settings.king_buckets and meta["output_buckets"] == 3
    state = TrainState.from_arrays({k: a.copy() for k, a in arrays.items()}, dict(meta))
    rest = train_packed(data, settings, state=state)
    assert [r.digest for r in part.records + rest.records] == [r.digest for r in whole.records]
    assert rest.net.quantised().checksum == whole.net.quantised().checksum
    # the digest names a bucketed net's shape; a plain net's is that of before buckets
    plain = FloatNet.random(16, 1)
    assert plain.digest() == hashlib.sha256(b"screlu" + plain.flat.tobytes()).hexdigest()
    assert "king_buckets" not in TrainState.start(plain).to_arrays()[1]


def test_settings_name_and_check_the_shape():
    s = TrainSettings(king_buckets=",".join(map(str, MAP4)), output_buckets=8)
    assert s.king_buckets == "4" and s.bucket_map == MAP4           # a preset's ids: its count
    assert TrainSettings(king_buckets=MAP4).king_buckets == "4"
    assert TrainSettings().record()["king_buckets"] == "1"
    for bad, field in (({"king_buckets": "3"}, "king_buckets"),
                       ({"king_buckets": "0,1,2"}, "king_buckets"),
                       ({"king_buckets": ",".join(["2"] * 32)}, "king_buckets"),
                       ({"output_buckets": 9}, "output_buckets"),
                       ({"output_buckets": 0}, "output_buckets")):
        with pytest.raises(FieldError) as err:
            TrainSettings(**bad)
        assert err.value.field == field and "\n" not in str(err.value)
    net = FloatNet.random(16, 1, king_buckets=MAP4, output_buckets=2)
    with pytest.raises(FieldError, match="4 king buckets .* and 2 output buckets; the training's "
                                         "net is a 16-neuron screlu net with 4 king buckets .* "
                                         "and 8"):
        TrainSettings(hidden=16, king_buckets="4", output_buckets=8).check_net(net)


def run_config(data_file: Path, epochs: int, **over) -> TrainConfig:
    settings = TrainSettings(epochs=epochs, **{**dict(hidden=16, batch=128, lr=0.003, seed=5,
                                                     king_buckets="4", output_buckets=8),
                                               **over})
    return TrainConfig(data=(str(data_file),), settings=settings)


def test_a_bucketed_run_records_its_shape_and_resumes(data_file, tmp_path):
    cfg = run_config(data_file, 2)
    store, packed_data = new_training(cfg, out_dir=tmp_path, run_id="b2")
    manifest = json.loads((store.root / "manifest.json").read_text())
    assert manifest["config"]["settings"]["king_buckets"] == "4"
    assert manifest["config"]["settings"]["output_buckets"] == 8
    initial = read_net(store.root / "initial.nnue")
    assert (initial.king_buckets, initial.output_buckets) == (MAP4, 8)
    execute_training(store, cfg, data=packed_data)
    # continued to 3 epochs = 3 epochs at once
    more = TrainConfig(data=cfg.data, settings=replace(cfg.settings, epochs=3))
    store = Store.open("b2", tmp_path)
    open_training(store)
    s3 = execute_training(store, more)
    once = run_config(data_file, 3)
    st, d = new_training(once, out_dir=tmp_path, run_id="b3")
    t3 = execute_training(st, once, data=d)
    assert s3.checksum == t3.checksum
    assert [e.digest for e in s3.epochs] == [e.digest for e in t3.epochs]
    net = read_net(store.root / "net.nnue")
    assert (net.king_buckets, net.output_buckets, net.checksum) == (MAP4, 8, t3.checksum)
    # status names the buckets
    got = cli(["status", "b2", "--runs-dir", str(tmp_path)], tmp_path)
    assert got.returncode == 0 and "4 king buckets" in got.stdout and "8 output buckets" \
        in got.stdout, got.stdout + got.stderr
    # a checkpoint of another shape than its manifest's is damaged, in one line
    arrays, meta = store.read_checkpoint()
    store.write_checkpoint(arrays, {**meta, "output_buckets": 1,
                                    "king_buckets": "1"})
    with pytest.raises(StoreError, match="damaged"):
        load_state(store)


def test_an_old_manifest_without_buckets_reads_as_plain(data_file, tmp_path):
    """A training stored before buckets (its settings without king_buckets/output_buckets)
    resumes and trains the plain net, as a new plain training does."""
    new = TrainSettings(epochs=2, hidden=16, batch=128, seed=5)
    cfg_old = TrainConfig(data=(str(data_file),), settings=replace(new, epochs=1),
                          absent=frozenset({"king_buckets", "output_buckets"}))
    assert "king_buckets" not in cfg_old.to_dict()["settings"]
    store, d = new_training(cfg_old, out_dir=tmp_path, run_id="old")
    execute_training(store, cfg_old, data=d)
    store = Store.open("old", tmp_path)
    cfg = open_training(store)
    assert "king_buckets" not in cfg.to_dict()["settings"]
    assert cfg.absent == {"king_buckets", "output_buckets"}
    resumed = execute_training(store, replace(cfg, settings=replace(cfg.settings, epochs=2)))
    cfg_new = TrainConfig(data=(str(data_file),), settings=new)
    st, d = new_training(cfg_new, out_dir=tmp_path, run_id="new")
    fresh = execute_training(st, cfg_new, data=d)
    assert resumed.checksum == fresh.checksum
    assert not read_net(store.root / "net.nnue").bucketed


def cli(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=600, **kw)


def test_nn_train_takes_the_shape_from_flags_or_from_init(data_file, tmp_path):
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes())
    start = random_net(16, 2, king_buckets=ODD, output_buckets=3)
    write_net(start, tmp_path / "start.nnue")
    common = ["nn", "train", str(data), "--hidden", "16", "--epochs", "1", "--batch", "256",
              "--runs-dir", "runs"]
    got = cli(common + ["--init", "start.nnue", "--run-id", "a"], tmp_path)
    assert got.returncode == 0, got.stderr
    net = read_net(tmp_path / "runs" / "a" / "net.nnue")
    assert (net.king_buckets, net.output_buckets) == (ODD, 3)
    got = cli(common + ["--king-buckets", "2", "--output-buckets", "4", "--run-id", "b"],
              tmp_path)
    assert got.returncode == 0, got.stderr
    net = read_net(tmp_path / "runs" / "b" / "net.nnue")
    assert (net.king_buckets, net.output_buckets) == (KING_BUCKET_PRESETS[2], 4)
    assert "(768 x 2 -> 16) x 2 -> 4" in cli(["nn", "info", "runs/b/net.nnue"], tmp_path).stdout


@pytest.mark.parametrize("flags, says", [
    (["--king-buckets", "3"], "--king-buckets 3: give a preset's bucket count"),
    (["--king-buckets", "0,1"], "--king-buckets must hold 32 whole numbers"),
    (["--king-buckets", ",".join(["1"] * 32)], "--king-buckets skips bucket 0"),
    (["--output-buckets", "9"], "--output-buckets must be an integer from 1 to 8"),
    (["--output-buckets", "0"], "--output-buckets must be an integer from 1 to 8"),
    (["--init", "b.nnue", "--king-buckets", "8"], "training's net is a 16-neuron screlu net with 8 king"),
    (["--init", "b.nnue", "--output-buckets", "2"], "and 2 output buckets"),
    (["--init", "p.nnue", "--output-buckets", "2"], "p.nnue is a 16-neuron screlu net; the training's"),
])
def test_bad_bucket_input_is_one_line_and_writes_nothing(data_file, tmp_path, flags, says):
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes())
    write_net(random_net(16, 1, king_buckets=MAP4, output_buckets=8), tmp_path / "b.nnue")
    write_net(random_net(16, 1), tmp_path / "p.nnue")
    got = cli(["nn", "train", str(data), "--hidden", "16", "--runs-dir", "runs", *flags],
              tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and says in got.stderr, got.stderr
    assert got.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.nnue", "d.txt", "p.nnue"]


@pytest.mark.slow
def test_kill_9_mid_bucketed_training_then_resume_equals_uninterrupted(data_file, tmp_path,
                                                                        kill_at_generation):
    """As the plain test in test_nn_run.py, with K 4 and N 8."""
    data = tmp_path / "d.txt"
    data.write_bytes(data_file.read_bytes() * 8)
    args = ["nn", "train", str(data), "--hidden", "32", "--batch", "64", "--epochs", "6",
            "--lr-drop", "2", "--king-buckets", "4", "--output-buckets", "8", "--runs-dir",
            "runs"]
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
    assert (a / "net.nnue").read_bytes() == (b / "net.nnue").read_bytes()
    assert read_net(b / "net.nnue").output_buckets == 8
    status = json.loads(cli(["status", "killed", "--runs-dir", "runs", "--json"],
                            tmp_path).stdout)
    assert status["epoch"] == 6


def test_a_bucketed_net_streams_from_bullet_files(tmp_path):
    """--stream trains bucketed nets too: the same net twice (seeded), resumed from a stored
    state as uninterrupted, of the settings' shape."""
    from evotune.learn.nn.stream import BulletStream, train_stream

    sample = ROOT / "tests" / "data" / "bullet" / "sample.bin"
    settings = TrainSettings(hidden=8, epochs=3, batch=8, lr=0.01, wdl=0.3, val_share=0.25,
                             val_block=4, stream=24, king_buckets="2", output_buckets=4)
    a = train_stream(BulletStream([sample], 24), settings)
    b = train_stream(BulletStream([sample], 24), settings)
    assert [r.digest for r in a.records] == [r.digest for r in b.records]
    part = train_stream(BulletStream([sample], 24),
                        TrainSettings(**{**settings.record(), "epochs": 1}))
    rest = train_stream(BulletStream([sample], 24), settings, state=part.state)
    assert rest.records[-1].digest == a.records[-1].digest
    net = a.net.quantised()
    assert (net.king_buckets, net.output_buckets) == (KING_BUCKET_PRESETS[2], 4)
    assert all(r.val_loss is not None and r.val_loss < 0.5 for r in a.records)


def test_a_plain_training_keeps_the_identity_it_had_before_buckets():
    """A plain net's king_buckets "1" / output_buckets 1 are not part of the identity, so a
    plain training started with today's flags hashes (and names its run) as before; a bucketed
    one hashes differently."""
    new = TrainSettings(epochs=2, hidden=16, batch=128, seed=5)
    assert (new.king_buckets, new.output_buckets) == ("1", 1)
    plain = TrainConfig(data=("d.txt",), settings=new).identity_dict()
    assert plain == TrainConfig(data=("d.txt",), settings=new, absent=frozenset(
        {"king_buckets", "output_buckets"})).identity_dict()
    bucketed = TrainConfig(data=("d.txt",), settings=replace(new, king_buckets="4",
                                                             output_buckets=8)).identity_dict()
    assert bucketed["settings"]["king_buckets"] == "4"
    assert bucketed != plain
