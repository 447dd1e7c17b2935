"""The numba net trainer: gradients, the step against numpy, determinism, resume, learning."""
from __future__ import annotations

import chess
import numba
import numpy as np
import pytest

from evotune.engine.net.network import evaluate_reference, random_net, read_net, write_net
from evotune.errors import FieldError, NetError
from evotune.learn.nn import data as nndata
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
    train,
    train_packed,
)

VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 320, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}


def material(board: chess.Board) -> int:
    return sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())


@pytest.fixture(scope="module")
def material_data(random_positions, tmp_path_factory):
    """1,500 positions of random games scored by their material (White's view), results by the
    material's sign."""
    folder = tmp_path_factory.mktemp("nn")
    lines = []
    for b in random_positions(1500, 11):
        s = material(b)
        lines.append(f"{b.fen()} | {s} | {1.0 if s > 150 else 0.0 if s < -150 else 0.5}\n")
    (folder / "m.txt").write_text("".join(lines))
    return load_data([folder / "m.txt"])


def lively(hidden: int, activation: str) -> FloatNet:
    """A random net whose accumulators span both clamp ends (every branch of the activation)."""
    net = FloatNet.random(hidden, 3, activation)
    net.l0w[...] *= 8.0
    net.l0b[:] = np.linspace(-0.3, 1.3, hidden)
    net.l1b[:] = 0.1
    return net


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
def test_gradients_match_numpy_and_finite_differences(material_data, activation):
    net = lively(16, activation)
    idx = np.arange(0, 1500, 3, dtype=np.int64)
    buf = Buffers(idx.size, 16)
    loss = gradients(TrainState.start(net), material_data, idx, 0.3, buf)
    p64 = {k: a.astype(np.float64) for k, a in net.arrays().items()}
    screlu = activation == "screlu"
    loss64, g64 = ref.gradients(p64, material_data, idx, 0.3, screlu)
    assert loss == pytest.approx(loss64, rel=1e-5)
    for name, g in g64.items():
        assert np.abs(buf.grads[name] - g).max() <= 1e-5 * np.abs(g).max() + 1e-9, name
    # central differences of the float64 loss on entries that matter
    feats = ref.expand_batch(material_data, idx[:1])[0, 0]
    picks = [("l0w", (int(feats[0]), 2)), ("l0w", (int(feats[3]), 7)), ("l0b", (5,)),
             ("l0b", (9,)), ("l1w", (4,)), ("l1w", (16 + 9,)), ("l1b", (0,))]
    checked = 0
    for name, at in picks:
        eps = 1e-6
        plus = {k: a.copy() for k, a in p64.items()}
        plus[name][at] += eps
        minus = {k: a.copy() for k, a in p64.items()}
        minus[name][at] -= eps
        fd = (ref.loss(plus, material_data, idx, 0.3, screlu)
              - ref.loss(minus, material_data, idx, 0.3, screlu)) / (2 * eps)
        assert buf.grads[name][at] == pytest.approx(fd, rel=1e-3, abs=1e-8), (name, at)
        checked += abs(fd) > 1e-5
    assert checked >= 5  # the entries are not all zero gradients


@pytest.mark.parametrize("size", [1, 5, 8, 203])
def test_batches_of_any_size_against_the_slices(material_data, size):
    # the batch is cut into 8 slices (empty ones when it is smaller) and 64-position groups
    net = lively(16, "screlu")
    idx = np.arange(7, 7 + 3 * size, 3, dtype=np.int64)
    buf = Buffers(size, 16)
    loss = gradients(TrainState.start(net), material_data, idx, 0.3, buf)
    p64 = {k: a.astype(np.float64) for k, a in net.arrays().items()}
    loss64, g64 = ref.gradients(p64, material_data, idx, 0.3, True)
    # a batch of one position with a small error d = pred - target loses a few of float32's
    # digits to the subtraction (relative 5e-5 at d ~ 1e-3): a looser bound than above
    assert loss == pytest.approx(loss64, rel=2e-4)
    for name, g in g64.items():
        assert np.abs(buf.grads[name] - g).max() <= 2e-4 * np.abs(g).max() + 1e-9, name
        assert np.abs(g).max() > 0, name


def test_the_step_is_the_numpy_step(material_data):
    settings = TrainSettings(hidden=16, wdl=0.4, lr=0.01)
    state = TrainState.start(lively(16, "screlu"))
    params = {k: a.copy() for k, a in state.net.arrays().items()}
    m = {k: np.zeros_like(a) for k, a in params.items()}
    v = {k: np.zeros_like(a) for k, a in params.items()}
    rng = np.random.default_rng(4)
    buf = Buffers(256, 16)
    for t in range(1, 6):
        idx = rng.choice(len(material_data), 256, replace=False).astype(np.int64)
        a = step(state, material_data, idx, settings, 0.01, buf)
        b = ref.step(params, m, v, t, material_data, idx, wdl=0.4, screlu=True, lr=0.01)
        assert a == pytest.approx(b, rel=1e-5)
    for name, p in params.items():
        # float32 sums in another order: Adam divides a gradient by its own size, so an entry
        # whose gradient is ~0 may move differently by a small share of a step (lr 0.01)
        diff = np.abs(state.net.arrays()[name] - p)
        assert diff.max() < 1e-4 and np.median(diff) < 1e-6, name


def test_weights_stay_inside_the_clip(material_data):
    settings = TrainSettings(hidden=8, lr=0.5, epochs=2, batch=64, clip=0.25, val_share=0.0)
    net = train_packed(material_data, settings).net
    assert np.abs(net.flat).max() == pytest.approx(0.25)
    assert np.abs(net.flat).max() <= 0.25


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                    reason="numba runs one thread on a one-core machine: nothing to compare")
def test_any_thread_count_gives_the_same_net(material_data):
    settings = TrainSettings(hidden=24, epochs=2, batch=200, lr=0.01)
    one = train_packed(material_data, settings, workers=1)
    two = train_packed(material_data, settings, workers=2)
    assert [r.digest for r in one.records] == [r.digest for r in two.records]
    assert [r.train_loss for r in one.records] == [r.train_loss for r in two.records]
    assert [r.val_loss for r in one.records] == [r.val_loss for r in two.records]


def test_continuing_a_stored_state_equals_an_uninterrupted_training(material_data):
    settings = TrainSettings(hidden=16, epochs=3, batch=128, lr=0.01, lr_drop=2, gamma=0.5)
    whole = train_packed(material_data, settings)
    stored = {}

    def keep(rec, state):
        if rec.epoch == 1:
            arrays, meta = state.to_arrays()
            stored.update(arrays={k: a.copy() for k, a in arrays.items()}, meta=dict(meta))

    train_packed(material_data, TrainSettings(**{**settings.record(), "epochs": 1}),
                 on_epoch=keep)
    state = TrainState.from_arrays(stored["arrays"], stored["meta"])
    assert state.epoch == 1 and state.steps == -(-1350 // 128)
    rest = train_packed(material_data, settings, state=state)
    assert [r.epoch for r in rest.records] == [2, 3]
    assert [r.lr for r in rest.records] == [0.01, 0.005]
    assert [r.digest for r in rest.records] == [r.digest for r in whole.records[1:]]
    assert rest.records[-1].checksum == whole.engine_net().checksum


def test_training_learns_the_material(material_data):
    settings = TrainSettings(hidden=32, epochs=8, batch=128, lr=0.01, wdl=0.0)
    seen = []
    result = train_packed(material_data, settings, progress=seen.append)
    train = [r.train_loss for r in result.records]
    val = [r.val_loss for r in result.records]
    # 1,350 training positions: the net fits them, and the held-out games improve less
    assert train[-1] < 0.06 * train[0] and val[-1] < 0.7 * val[0]
    idx, held = check_data(material_data, settings)
    for part, least in ((idx, 0.98), (held, 0.7)):
        out, _ = evaluate(result.net, material_data, part, 0.0)
        stm = np.where(material_data.stm[part] == 1, -1, 1)
        assert np.corrcoef(out * 400 * stm, material_data.score[part])[0, 1] > least
    assert seen[-1].epoch == 8 and seen[-1].done == seen[-1].total == 1350
    assert seen[-1].seconds_left == 0 and seen[-1].rate > 0


def test_settings_and_data_are_checked(material_data, tmp_path):
    for field, value in (("hidden", 4), ("activation", "relu"), ("wdl", 1.5), ("lr", 0.0),
                         ("batch", 0), ("val_share", 0.95), ("clip", 4.0)):
        with pytest.raises(FieldError) as err:
            TrainSettings(**{field: value})
        assert err.value.field == field
    assert [TrainSettings(lr=1.0, lr_drop=2, gamma=0.5).lr_at(e) for e in range(5)] == \
        [1.0, 1.0, 0.5, 0.5, 0.25]
    path = tmp_path / "r.txt"
    path.write_text(f"{chess.STARTING_FEN} [1.0]\n" * 20)
    results_only = load_data([path])
    with pytest.raises(FieldError) as err:
        train_packed(results_only, TrainSettings(hidden=8, wdl=0.5, epochs=1))
    assert err.value.field == "wdl" and "20 of the 20 positions have none" in str(err.value)
    assert train_packed(results_only, TrainSettings(hidden=8, wdl=1.0, epochs=1)).records
    with pytest.raises(FieldError) as err:
        train_packed(material_data, TrainSettings(hidden=8, epochs=1),
                     init=FloatNet.random(16, 1))
    assert err.value.field == "init"


def test_train_from_files_checks_everything_before_the_cache(tmp_path, monkeypatch):
    path = tmp_path / "r.txt"
    path.write_text(f"{chess.STARTING_FEN} [1.0]\n" * 30)
    with pytest.raises(FieldError) as err:
        train([path], hidden=8, wdl=0.25, epochs=1)
    assert err.value.field == "wdl" and list(tmp_path.iterdir()) == [path]
    with pytest.raises(FieldError) as err:
        train([path], hidden=8, wdl=1.0, epochs=1, workers=-1)
    assert err.value.field == "workers" and list(tmp_path.iterdir()) == [path]
    first = train([path], hidden=8, wdl=1.0, epochs=2, batch=8, seed=3)
    assert [r.epoch for r in first.records] == [1, 2] and len(list(tmp_path.iterdir())) == 2
    monkeypatch.setattr(nndata, "iter_labelled", None)  # the second training reads no text
    again = train([path], hidden=8, wdl=1.0, epochs=2, batch=8, seed=3)
    assert [r.digest for r in again.records] == [r.digest for r in first.records]


def packed(boards) -> PackedData:
    cols = [pack_fen(b.fen()) for b in boards]
    return PackedData(np.array([c[0] for c in cols], np.uint64),
                      np.array([np.frombuffer(c[1], np.uint8) for c in cols]),
                      np.zeros(len(cols), np.int16), np.ones(len(cols), np.uint8),
                      np.array([c[2] for c in cols], np.uint8))


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
def test_the_quantised_net_evaluates_as_the_float_net(material_data, random_positions,
                                                      activation):
    settings = TrainSettings(hidden=32, activation=activation, epochs=3, batch=128, lr=0.01,
                             wdl=0.0)
    fnet = train_packed(material_data, settings).net
    qnet = fnet.quantised()
    assert qnet.hidden == 32 and qnet.activation == activation
    boards = random_positions(500, 23)
    data = packed(boards)
    out, _ = evaluate(fnet, data, np.arange(len(boards)), 0.0)
    engine = np.array([evaluate_reference(qnet, b) for b in boards])
    # the integer net is the dequantised float net, up to bullet's truncations (< 1 cp + 1/40)
    deq = {k: a.astype(np.float64) for k, a in FloatNet.from_net(qnet).arrays().items()}
    exact = 400 * ref.forward(deq, ref.expand_batch(data, np.arange(len(boards))),
                              activation == "screlu")
    assert np.abs(engine - exact).max() < 1.03
    # the float net: within the worst case of rounding every weight to the nearest step
    f64 = {k: a.astype(np.float64) for k, a in fnet.arrays().items()}
    feats = ref.expand_batch(data, np.arange(len(boards)))
    w = np.vstack([f64["l0w"], np.zeros((1, 32))])
    acc = (f64["l0b"] + w[feats].sum(axis=2)).reshape(len(boards), 64)     # (n, 2H)
    c = np.clip(acc, 0, 1)
    n = (feats[:, 0] != ref.PAD).sum(axis=1)
    delta = ((n + 1) * 0.5 / 255)[:, None]                                  # accumulator error
    dact = delta * (2 * c + delta) if activation == "screlu" else delta
    act = c * c if activation == "screlu" else c
    bound = 400 * ((dact * (np.abs(f64["l1w"]) + 0.5 / 64)).sum(axis=1)
                   + (act * 0.5 / 64).sum(axis=1) + 0.5 / (255 * 64)) + 1.03
    err = np.abs(engine - 400 * out.astype(np.float64))
    assert (err <= bound).all()
    # ... and in practice the rounding errors cancel: a few centipawns
    assert np.median(err) < 5 and err.max() < 25  # measured: 2.9 and 11.8 (screlu)
    assert np.std(400 * out) > 100  # the evaluations are not all near 0


def test_training_starts_from_a_net_file(material_data, tmp_path):
    start = random_net(16, 5, "crelu")
    write_net(start, tmp_path / "start.nnue")
    (tmp_path / "m.txt").write_text("")
    settings = TrainSettings(hidden=16, activation="crelu", epochs=1, batch=128, lr=1e-12,
                             decay=0.0)
    net = FloatNet.from_net(read_net(tmp_path / "start.nnue"))
    assert net.quantised() == start  # the values the engine plays, exactly
    moved = train_packed(material_data, settings, init=net).net
    assert moved.digest() != net.digest() and moved.quantised() == start
    # a net file that cannot be read is refused before the data is read (m.txt is empty)
    with pytest.raises(NetError, match="none.nnue"):
        train([tmp_path / "m.txt"], init=tmp_path / "none.nnue", **settings.record())
    with pytest.raises(FieldError) as err:
        train([tmp_path / "m.txt"], init=tmp_path / "start.nnue",
              **{**settings.record(), "hidden": 32})
    assert err.value.field == "init"
