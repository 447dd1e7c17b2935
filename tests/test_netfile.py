"""Network values and files (engine/net/network.py): bullet's Chess768 inputs, the integer inference
with bullet's rounding, evotune's and bullet's file layouts, and the refusal of bad files."""
from __future__ import annotations

import os
import random
import struct

import chess
import numpy as np
import pytest

from evotune.engine.net.network import (
    BULLET_PAD,
    HEADER_SIZE,
    MAX_FILE_SIZE,
    Net,
    bullet_hidden,
    evaluate_reference,
    feature_index,
    features,
    from_floats,
    net_bytes,
    random_net,
    read_net,
    write_net,
)
from evotune.errors import ConfigError, NetError
from evotune.spec.features import NNUE_EVAL_LIMIT


def big_net(hidden=16, seed=1, activation="screlu"):
    """A net with large weights: accumulators reach the clamps, outputs reach thousands."""
    rng = np.random.default_rng(seed)
    return Net(hidden=hidden, activation=activation,
               l0w=rng.integers(-300, 301, (768, hidden)).astype(np.int16),
               l0b=rng.integers(-200, 201, hidden).astype(np.int16),
               l1w=rng.integers(-64, 65, 2 * hidden).astype(np.int16),
               l1b=int(rng.integers(-5000, 5001)))


def tiny_net(activation="screlu", bias0=10, w=-3, l1b=-20000):
    l0w = np.zeros((768, 8), np.int16)
    l0b = np.zeros(8, np.int16)
    l0b[0] = bias0
    l1w = np.zeros(16, np.int16)
    l1w[0] = w
    return Net(hidden=8, activation=activation, l0w=l0w, l0b=l0b, l1w=l1w, l1b=l1b)


def random_boards(n, seed=3):
    rnd = random.Random(seed)
    out = []
    while len(out) < n:
        b = chess.Board()
        for _ in range(rnd.randrange(0, 120)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rnd.choice(moves))
        out.append(b)
    return out


# ---- inputs -------------------------------------------------------------------------------------

def test_chess768_indices_of_the_start_position():
    # bullet's Chess768 (crates/bullet_lib/src/game/inputs/chess768.rs on bulletformat's
    # side-to-move-relative board): own pieces 0..383, the other side's 384..767, 64 per type
    assert feature_index(chess.WHITE, chess.PAWN, chess.E2, chess.WHITE) == 12
    assert feature_index(chess.WHITE, chess.PAWN, chess.E2, chess.BLACK) == 384 + 52
    assert feature_index(chess.BLACK, chess.KING, chess.E8, chess.WHITE) == 384 + 320 + 60
    assert feature_index(chess.BLACK, chess.KING, chess.E8, chess.BLACK) == 320 + 4
    stm, nstm = features(chess.Board())
    assert len(stm) == len(nstm) == 32
    # the start position is symmetric: both perspectives see the same features
    assert sorted(stm) == sorted(nstm)
    own = set(range(8, 16)) | {64 + 1, 64 + 6, 128 + 2, 128 + 5, 192 + 0, 192 + 7, 256 + 3,
                                320 + 4}
    other = {384 + i for i in range(48, 56)} | {384 + x for x in (64 + 57, 64 + 62, 128 + 58,
                                                                  128 + 61, 192 + 56, 192 + 63,
                                                                  256 + 59, 320 + 60)}
    assert set(stm.tolist()) == own | other


def test_features_are_the_loop_over_pieces():
    for b in random_boards(30):
        stm, nstm = features(b)
        want_stm = sorted(feature_index(p.color, p.piece_type, s, b.turn)
                          for s, p in b.piece_map().items())
        want_nstm = sorted(feature_index(p.color, p.piece_type, s, not b.turn)
                           for s, p in b.piece_map().items())
        assert sorted(stm.tolist()) == want_stm and sorted(nstm.tolist()) == want_nstm


# ---- inference ----------------------------------------------------------------------------------

def test_screlu_output_truncates_toward_zero_twice():
    # acc unit 0 = 10 on both sides; s = 10^2 * -3 = -300; -300 / 255 -> -1 (floor: -2);
    # (-1 - 20000) * 400 = -8000400; / 16320 -> -490 (floor: -491)
    assert evaluate_reference(tiny_net(), chess.Board()) == -490
    # positive: s = 100 * 3 = 300 -> 1; (1 + 20000) * 400 / 16320 = 490.2 -> 490
    assert evaluate_reference(tiny_net(w=3, l1b=20000), chess.Board()) == 490


def test_crelu_output_has_one_division():
    # s = 10 * -3 = -30; (-30 - 20000) * 400 = -8012000; / 16320 = -490.93 -> -490
    assert evaluate_reference(tiny_net("crelu"), chess.Board()) == -490
    # clamp at qa: bias 1000 counts as 255: (255 * 3 + 0) * 400 / 16320 = 18.75 -> 18
    assert evaluate_reference(tiny_net("crelu", bias0=1000, w=3, l1b=0), chess.Board()) == 18
    # and below zero as 0
    assert evaluate_reference(tiny_net("crelu", bias0=-1000, w=3, l1b=163), chess.Board()) == 3


def _python_eval(net, board):
    """The simple example's inference, written with Python ints and loops."""
    def acc(persp):
        a = [int(x) for x in net.l0b]
        for s, p in board.piece_map().items():
            row = net.l0w[feature_index(p.color, p.piece_type, s, persp)]
            a = [x + int(r) for x, r in zip(a, row)]
        return a
    vals = acc(board.turn) + acc(not board.turn)
    out = 0
    for v, w in zip(vals, net.l1w):
        c = min(max(v, 0), net.qa)
        out += (c * c if net.activation == "screlu" else c) * int(w)
    if net.activation == "screlu":
        out = abs(out) // net.qa * (1 if out >= 0 else -1)      # Rust's i32 `/`
    out = (out + net.l1b) * net.scale
    q = net.qa * net.qb
    return abs(out) // q * (1 if out >= 0 else -1)


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
def test_reference_matches_a_loop_implementation(activation):
    net = big_net(activation=activation)
    values = []
    for b in random_boards(40):
        v = evaluate_reference(net, b)
        assert v == _python_eval(net, b)
        values.append(v)
    assert len(set(values)) > 30 and max(map(abs, values)) > 500


def test_mirrored_position_evaluates_the_same():
    net = big_net(seed=5)
    for b in random_boards(20, seed=9):
        assert evaluate_reference(net, b) == evaluate_reference(net, b.mirror())


def test_clamp_limits_the_engine_value():
    net = tiny_net("crelu", bias0=255, w=32767, l1b=32767)
    raw = evaluate_reference(net, chess.Board())
    assert raw == (255 * 32767 + 32767) * 400 // 16320 > NNUE_EVAL_LIMIT
    assert evaluate_reference(net, chess.Board(), clamp=True) == NNUE_EVAL_LIMIT


# ---- making nets --------------------------------------------------------------------------------

def test_from_floats_rounds_half_away_from_zero_like_bullet():
    h = 8
    l0w = np.zeros((768, h))
    l0w[0, :4] = [0.25, -0.25, 0.75, 1.25]          # x qa 2: 0.5, -0.5, 1.5, 2.5
    net = from_floats(l0w, np.zeros(h), np.zeros(2 * h), 0.0, qa=2, qb=1)
    assert net.l0w[0, :4].tolist() == [1, -1, 2, 3]
    with pytest.raises(NetError, match="l0w.*int16"):
        from_floats(l0w * 1e5, np.zeros(h), np.zeros(2 * h), 0.0)


def test_random_net_is_seeded_and_small():
    a, b, c = random_net(32, 7), random_net(32, 7), random_net(32, 8)
    assert a == b and a.checksum == b.checksum
    assert a != c and a.checksum != c.checksum
    assert a.hidden == 32 and a.activation == "screlu"
    # uniform +-1/sqrt(768) x 255 = +-9.2 for l0; +-1/sqrt(64) x 64 = +-8 for l1w
    assert int(np.abs(a.l0w).max()) == 9 and int(np.abs(a.l1w).max()) == 8
    assert random_net(8, 1, "crelu").activation == "crelu"


@pytest.mark.parametrize("kwargs, match", [
    (dict(hidden=4), "hidden 4"),
    (dict(hidden=2000), "hidden 2000"),
    (dict(activation="relu"), "activation 'relu'"),
    (dict(l0w=np.zeros((768, 8), np.int32)), "l0w must be an int16"),
    (dict(l0w=np.zeros((767, 8), np.int16)), r"l0w has shape \(767, 8\)"),
    (dict(l1w=np.zeros(8, np.int16)), "l1w has shape"),
    (dict(l1b=40000), "l1b 40000"),
    (dict(qa=0), "qa 0"),
    (dict(l0w=np.full((768, 8), 1100, np.int16)), "int16 accumulator"),
])
def test_net_refuses_bad_fields(kwargs, match):
    base = dict(hidden=8, activation="screlu", l0w=np.zeros((768, 8), np.int16),
                l0b=np.zeros(8, np.int16), l1w=np.zeros(16, np.int16), l1b=0)
    base.update(kwargs)
    with pytest.raises(NetError, match=match):
        Net(**base)
    assert issubclass(NetError, ConfigError)


def test_net_arrays_are_read_only_copies():
    src = np.zeros((768, 8), np.int16)
    net = Net(hidden=8, activation="screlu", l0w=src, l0b=np.zeros(8, np.int16),
              l1w=np.zeros(16, np.int16), l1b=0)
    src[0, 0] = 5
    assert net.l0w[0, 0] == 0
    with pytest.raises(ValueError):
        net.l0w[0, 0] = 1


# ---- files --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["evotune", "bullet"])
@pytest.mark.parametrize("hidden", [8, 32, 100])
def test_round_trip(tmp_path, fmt, hidden):
    net = big_net(hidden, seed=hidden)
    path = tmp_path / f"n.{fmt}"
    write_net(net, path, fmt)
    back = read_net(path)  # the format is recognised from the file
    assert back == net and back.checksum == net.checksum
    boards = random_boards(10)
    assert [evaluate_reference(back, b) for b in boards] == \
        [evaluate_reference(net, b) for b in boards]


def test_evotune_layout(tmp_path):
    net = random_net(16, 3, "crelu")
    data = net_bytes(net, "evotune")
    assert data[:8] == b"EVONNUE\0" and len(data) == HEADER_SIZE + 2 * (771 * 16 + 1)
    assert struct.unpack_from("<IIIiii", data, 8) == (1, 16, 1, 255, 64, 400)
    assert data[32:40].hex() == net.checksum
    assert np.array_equal(np.frombuffer(data, "<i2", 768 * 16, HEADER_SIZE).reshape(768, 16),
                          net.l0w)


def test_bullet_layout_and_padding():
    net = big_net(32)
    data = net_bytes(net, "bullet")
    raw = 2 * (768 * 32 + 32 + 64 + 1)               # 49346 bytes of arrays
    assert len(data) == 49408 and len(data) % 64 == 0
    assert data[raw:] == (b"bullet" * 11)[:49408 - raw]
    a = np.frombuffer(data[:raw], "<i2")
    assert np.array_equal(a[:768 * 32].reshape(768, 32), net.l0w)        # l0w column by column
    assert np.array_equal(a[768 * 32:768 * 32 + 32], net.l0b)
    assert np.array_equal(a[768 * 32 + 32:-1], net.l1w)
    assert int(a[-1]) == net.l1b


def test_a_hand_made_bullet_file_with_zero_padding_loads(tmp_path):
    # older bullet versions pad with zero bytes; build such a file by hand
    net = big_net(24, seed=4)
    raw = b"".join([net.l0w.astype("<i2").tobytes(), net.l0b.astype("<i2").tobytes(),
                    net.l1w.astype("<i2").tobytes(), struct.pack("<h", net.l1b)])
    path = tmp_path / "quantised.bin"
    path.write_bytes(raw + bytes(-len(raw) % 64))
    back = read_net(path)
    assert back == net
    assert read_net(path, format="bullet", hidden=24, activation="crelu").activation == "crelu"


def test_bullet_sizes_name_one_hidden_size():
    sizes = {}
    for h in range(8, 1025):
        for size in {2 * (771 * h + 1), -(-2 * (771 * h + 1) // 64) * 64}:
            assert bullet_hidden(size) == h
            sizes.setdefault(size, set()).add(h)
    assert all(len(v) == 1 for v in sizes.values())
    assert bullet_hidden(1000) is None and bullet_hidden(2 * (771 * 8 + 1) + 1) is None


def _bad(tmp_path, data: bytes, name="bad.nnue"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("damage, kwargs, match", [
    (lambda d: d[:-10], {}, "truncated"),
    (lambda d: d[:30], {}, "truncated"),
    (lambda d: d + b"\0", {}, "trailing"),
    (lambda d: d[:100] + bytes([d[100] ^ 1]) + d[101:], {}, "checksum"),
    (lambda d: d[:8] + struct.pack("<I", 9) + d[12:], {}, "version 9"),
    (lambda d: d[:12] + struct.pack("<I", 5000) + d[16:], {}, "damaged"),
    (lambda d: b"X" + d[1:], {"format": "evotune"}, "not an evotune net"),
    (lambda d: d, {"hidden": 64}, "hidden size 16, not the 64"),
    (lambda d: d, {"activation": "crelu"}, "uses screlu, not the crelu"),
    (lambda d: b"", {}, "empty"),
])
def test_bad_evotune_files_raise_one_error_naming_the_file(tmp_path, damage, kwargs, match):
    good = net_bytes(big_net(16), "evotune")
    p = _bad(tmp_path, damage(good))
    with pytest.raises(NetError, match=match) as err:
        read_net(p, **kwargs)
    assert str(p) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("damage, kwargs, match", [
    (lambda d: d[:-64], {}, "size of no bullet"),
    (lambda d: d[:-1], {}, "size of no bullet"),
    (lambda d: d[:-3] + b"xyz", {}, "padding"),
    (lambda d: d, {"hidden": 24}, "hidden size of 16"),
])
def test_bad_bullet_files(tmp_path, damage, kwargs, match):
    good = net_bytes(big_net(16), "bullet")
    assert good.endswith(BULLET_PAD[:1]) or len(good) % 64 == 0
    p = _bad(tmp_path, damage(good), "quantised.bin")
    with pytest.raises(NetError, match=match) as err:
        read_net(p, **kwargs)
    assert str(p) in str(err.value)


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(NetError, match="format 'onnx' is unknown"):
        read_net(tmp_path / "x", format="onnx")
    with pytest.raises(NetError, match="format 'onnx' is unknown"):
        write_net(random_net(8), tmp_path / "x", "onnx")
    assert not (tmp_path / "x").exists()


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(NetError, match="no such file"):
        read_net(tmp_path / "none.nnue")
    with pytest.raises(NetError, match="is a folder"):
        read_net(tmp_path)


def test_a_fifo_a_device_and_an_oversized_file_are_refused_before_reading(tmp_path):
    """Issue 38 item 12: reading a FIFO blocked for good, /dev/zero under a memory limit was
    a MemoryError; a net file is checked (regular file, size bound) before it is read."""
    fifo = tmp_path / "fifo.nnue"
    os.mkfifo(fifo)
    with pytest.raises(NetError, match=f"net file {fifo} is not a regular file"):
        read_net(fifo)  # blocked here before: nothing ever writes to the FIFO
    with pytest.raises(NetError, match="net file /dev/zero is not a regular file"):
        read_net("/dev/zero")
    big = tmp_path / "big.nnue"
    with open(big, "wb") as f:          # sparse: the largest net's file size, one byte more
        f.truncate(MAX_FILE_SIZE + 1)
    with pytest.raises(NetError, match=f"net file {big} has {big.stat().st_size} bytes, more "
                                       f"than the {MAX_FILE_SIZE}"):
        read_net(big)
    assert MAX_FILE_SIZE >= len(net_bytes(random_net(1024, 1), "bullet"))


def test_a_bullet_file_whose_weights_overflow_int16_accumulators_is_refused(tmp_path):
    l0w = np.full((768, 8), 2000, "<i2")
    raw = l0w.tobytes() + bytes(2 * 8) + bytes(2 * 16) + bytes(2)
    p = _bad(tmp_path, raw + bytes(-len(raw) % 64), "big.bin")
    with pytest.raises(NetError, match="int16 accumulator") as err:
        read_net(p)
    assert str(p) in str(err.value)


def test_the_checksum_is_kept_and_a_changed_net_gets_its_own():
    import dataclasses
    import hashlib
    import pickle
    net = random_net(16, 3)
    want = hashlib.sha256(struct.pack("<IIiii", 16, net.activation_code, net.qa, net.qb,
                                      net.scale) + net.arrays_bytes()).hexdigest()[:16]
    assert net.checksum == want and net.checksum == want       # computed once, then kept
    other = dataclasses.replace(net, l1b=net.l1b + 1)
    assert other.checksum != want and other.checksum == other.describe().split()[-1]
    assert pickle.loads(pickle.dumps(net)).checksum == want
    with pytest.raises(ValueError):                             # the arrays stay read-only
        net.l1w[0] = 1
