"""Bucketed nets (issue 39 item 1): king buckets (bullet's ChessBucketsMirrored) and output
buckets (MaterialCount<N>) in the Net, the numpy reference and the files."""
from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from evotune.cli import main
from evotune.engine.net.inputs import KING_BUCKET_PRESETS, features, output_bucket
from evotune.engine.net.network import (
    Net,
    evaluate_reference,
    net_bytes,
    random_net,
    read_net,
    write_net,
)
from evotune.errors import NetError

MAP4 = KING_BUCKET_PRESETS[4]


def bucketed(hidden=16, seed=0, bmap=MAP4, n=4, activation="screlu"):
    rng = np.random.default_rng(seed)
    k = max(bmap) + 1
    return Net(hidden=hidden, activation=activation, king_buckets=bmap, output_buckets=n,
               l0w=rng.integers(-300, 301, (768 * k, hidden)).astype(np.int16),
               l0b=rng.integers(-200, 201, hidden).astype(np.int16),
               l1w=rng.integers(-64, 65, (n, 2 * hidden)).astype(np.int16),
               l1b=rng.integers(-3000, 3001, n).astype(np.int16))


def test_output_buckets_are_bullets_material_count():
    # (pieces - 2) // ceil(32 / N)
    assert [output_bucket(p, 8) for p in (2, 5, 6, 32)] == [0, 0, 1, 7]
    assert [output_bucket(p, 3) for p in (2, 12, 13, 32)] == [0, 0, 1, 2]   # divisor 11
    assert [output_bucket(p, 5) for p in (8, 9, 32)] == [0, 1, 4]           # divisor 7
    assert {output_bucket(p, 1) for p in range(2, 33)} == {0}


def test_king_bucketed_features_by_hand():
    # white king g2 (files e-h: mirrored; mirrored square index 5 -> bucket 2 of MAP4), black
    # king b8 (from Black's side b1: index 1 -> bucket 0, not mirrored), a white rook on a1
    board = chess.Board("1k6/8/8/8/8/8/6K1/R7 w - - 0 1")
    stm, nstm = features(board, MAP4)
    assert sorted(stm.tolist()) == [768 * 2 + 192 + 7, 768 * 2 + 320 + 9,
                                    768 * 2 + 384 + 320 + 62]
    assert sorted(nstm.tolist()) == [320 + 1, 384 + 192 + 56, 384 + 320 + 54]
    # a plain map (one bucket) is Chess768: no mirroring
    stm, _ = features(board)
    assert sorted(stm.tolist()) == [192, 320 + 14, 384 + 320 + 57]


def _hand_net():
    """hidden 8, crelu, MAP4, 8 output buckets: only the two rows of the rook on a1 (White's
    view: bucket 2, mirrored; Black's: bucket 0) are non-zero (10 and 20)."""
    l0w = np.zeros((768 * 4, 8), np.int16)
    l0w[768 * 2 + 192 + 7] = 10
    l0w[384 + 192 + 56] = 20
    l1w = np.zeros((8, 16), np.int16)
    l1w[0, :8], l1w[0, 8:] = 1, 2
    l1w[1, :8] = 3
    l1b = np.zeros(8, np.int16)
    l1b[1] = 16320                         # 1.0 in qa * qb units
    return Net(hidden=8, activation="crelu", king_buckets=MAP4, output_buckets=8, l0w=l0w,
               l0b=np.zeros(8, np.int16), l1w=l1w, l1b=l1b)


def test_the_reference_on_a_hand_made_bucketed_net():
    net = _hand_net()
    # 3 pieces: output bucket 0; us 8 x 10 x 1 + them 8 x 20 x 2 = 400; 400 x 400 // 16320
    assert evaluate_reference(net, chess.Board("1k6/8/8/8/8/8/6K1/R7 w - - 0 1")) == 9
    # Black to move: us 8 x 20 x 1 + them 8 x 10 x 2 = 320 -> 7
    assert evaluate_reference(net, chess.Board("1k6/8/8/8/8/8/6K1/R7 b - - 0 1")) == 7
    # 6 pieces: output bucket 1; 8 x 10 x 3 + 16320 = 16560 -> 16560 x 400 // 16320 = 405
    assert evaluate_reference(net, chess.Board("1k6/8/8/8/8/P7/P5KP/R7 w - - 0 1")) == 405
    # the white king on d2 (bucket 2, not mirrored): White's row of the rook is another, zero;
    # Black's is unchanged: us 0 + them 8 x 20 x 2 = 320 -> 7
    assert evaluate_reference(net, chess.Board("1k6/8/8/8/8/8/3K4/R7 w - - 0 1")) == 7


def _dense_reference(net: Net, board: chess.Board) -> int:
    """bullet's inference written out from its source, independently of net.inputs: the 64-square
    map expanded as ChessBucketsMirrored::new does, the perspective's own king square in its
    view, features ^ 7 on files e-h; MaterialCount by popcount."""
    expanded = [net.king_buckets[(i // 8) * 4 + [0, 1, 2, 3, 3, 2, 1, 0][i % 8]]
                for i in range(64)]
    k = net.king_bucket_count
    accs = {}
    for persp in (chess.WHITE, chess.BLACK):
        ksq = board.king(persp) ^ (0 if persp == chess.WHITE else 56)
        flip = 7 if (ksq % 8 > 3 and k > 1) else 0
        base = 768 * (expanded[ksq] if k > 1 else 0)
        acc = net.l0b.astype(np.int64).copy()
        for sq, piece in board.piece_map().items():
            rel = sq ^ (0 if persp == chess.WHITE else 56)
            f = 384 * (piece.color != persp) + 64 * (piece.piece_type - 1) + rel
            acc += net.l0w[base + (f ^ flip)]
        accs[persp] = acc
    bucket = (len(board.piece_map()) - 2) // -(-32 // net.output_buckets)
    a = np.clip(np.concatenate((accs[board.turn], accs[not board.turn])), 0, net.qa)
    w = net.l1w_rows[bucket].astype(np.int64)
    s = int((a * a) @ w) if net.activation == "screlu" else int(a @ w)
    if net.activation == "screlu":
        s = int(s / net.qa)                # toward zero
    return int((s + net.l1b_values[bucket]) * net.scale / (net.qa * net.qb))


@pytest.mark.parametrize("bmap,n,act", [(MAP4, 4, "screlu"), (KING_BUCKET_PRESETS[16], 8,
                                                                "crelu"),
                                        (KING_BUCKET_PRESETS[1], 3, "screlu"),
                                        (KING_BUCKET_PRESETS[2], 1, "crelu")])
def test_the_reference_equals_bullets_inference_written_out(bmap, n, act):
    net = bucketed(16, 3, bmap, n, act)
    rnd = random.Random(5)
    seen_buckets, seen_flips = set(), set()
    for _ in range(8):
        board = chess.Board()
        for _ in range(rnd.randrange(20, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rnd.choice(moves))
            assert evaluate_reference(net, board) == _dense_reference(net, board)
            seen_buckets.add(output_bucket(len(board.piece_map()), n))
            seen_flips.add(board.king(chess.WHITE) % 8 > 3)
    assert seen_flips == {True, False}
    assert len(seen_buckets) >= min(n, 2)


def test_a_plain_net_is_todays_net():
    net = random_net(32, 4)
    assert net.king_bucket_count == 1 and net.output_buckets == 1 and not net.bucketed
    assert net.l1w.shape == (64,) and isinstance(net.l1b, int)
    assert net_bytes(net)[8:12] == (1).to_bytes(4, "little")     # format version 1
    assert net.shape == "(768 -> 32) x 2 -> 1"


def test_bad_bucket_values_are_one_line_errors():
    good = bucketed()
    with pytest.raises(NetError, match="32 whole numbers"):
        Net(hidden=16, activation="screlu", king_buckets=(0, 1), l0w=good.l0w[:768],
            l0b=good.l0b, l1w=good.l1w[0], l1b=0)
    with pytest.raises(NetError, match="skips bucket 1"):
        Net(hidden=16, activation="screlu", king_buckets=(0,) * 31 + (2,),
            l0w=np.zeros((768 * 3, 16), np.int16), l0b=good.l0b, l1w=good.l1w[0], l1b=0)
    with pytest.raises(NetError, match="bucket ids must be 0..15"):
        Net(hidden=16, activation="screlu", king_buckets=tuple(range(32)),
            l0w=np.zeros((768 * 32, 16), np.int16), l0b=good.l0b, l1w=good.l1w[0], l1b=0)
    with pytest.raises(NetError, match=r"l0w has shape \(768, 16\); expected \(3072, 16\)"):
        Net(hidden=16, activation="screlu", king_buckets=MAP4, l0w=good.l0w[:768],
            l0b=good.l0b, l1w=good.l1w[0], l1b=0)
    with pytest.raises(NetError, match=r"l1w has shape \(4, 32\); expected \(8, 32\)"):
        Net(hidden=16, activation="screlu", king_buckets=MAP4, output_buckets=8,
            l0w=good.l0w, l0b=good.l0b, l1w=good.l1w, l1b=np.zeros(8, np.int16))
    with pytest.raises(NetError, match="output buckets 9 is invalid"):
        random_net(16, 0, output_buckets=9)


# ---- files --------------------------------------------------------------------------------------

def test_evotune_files_of_bucketed_nets_round_trip_as_version_2(tmp_path):
    net = bucketed(24, 1, KING_BUCKET_PRESETS[8], 8)
    path = tmp_path / "b.nnue"
    write_net(net, path)
    raw = path.read_bytes()
    assert raw[8:12] == (2).to_bytes(4, "little")
    assert raw[40:72] == bytes(KING_BUCKET_PRESETS[8]) and raw[72] == 8
    assert len(raw) == 80 + 2 * (768 * 8 * 24 + 24 + 8 * 48 + 8)
    back = read_net(path)
    assert back == net and back.checksum == net.checksum
    assert back.king_buckets == KING_BUCKET_PRESETS[8] and back.output_buckets == 8
    assert read_net(path, king_buckets=KING_BUCKET_PRESETS[8], output_buckets=8) == net
    with pytest.raises(NetError, match="has 8 output buckets, not the 4 asked for"):
        read_net(path, output_buckets=4)
    with pytest.raises(NetError, match="king bucket map .* not the one asked for"):
        read_net(path, king_buckets=MAP4)


def test_damaged_bucket_headers_are_refused(tmp_path):
    raw = bytearray(net_bytes(bucketed()))
    bad = tmp_path / "bad.nnue"
    for at, value, msg in ((45, 200, "damaged bucket map .*bucket ids must be 0..15"),
                           (72, 0, "damaged .0 output buckets"),
                           (72, 9, "damaged .9 output buckets")):
        b = bytearray(raw)
        b[at] = value
        bad.write_bytes(bytes(b))
        with pytest.raises(NetError, match=f"net file {bad} .*{msg}"):
            read_net(bad)
    bad.write_bytes(bytes(raw[:-2]))
    with pytest.raises(NetError, match="truncated.*4 king and 4 output buckets"):
        read_net(bad)
    bad.write_bytes(bytes(raw[:60]))
    with pytest.raises(NetError, match="shorter than its 80-byte header"):
        read_net(bad)


def test_bullet_files_of_bucketed_nets_round_trip_in_bullets_order(tmp_path):
    net = bucketed(16, 2, MAP4, 4)
    path = tmp_path / "b.bin"
    write_net(net, path, "bullet")
    raw = path.read_bytes()
    a = np.frombuffer(raw, "<i2")
    n0 = 768 * 4 * 16
    # l0w rows bucket by bucket, l0b, l1w one output bucket's 2 H after another (bullet's
    # `.transpose()` save of the (N x 2 H) output layer), then the N biases
    assert np.array_equal(a[:n0].reshape(768 * 4, 16), net.l0w)
    assert np.array_equal(a[n0:n0 + 16], net.l0b)
    assert np.array_equal(a[n0 + 16:n0 + 16 + 128].reshape(4, 32), net.l1w)
    assert np.array_equal(a[n0 + 144:n0 + 148], net.l1b)
    assert len(raw) % 64 == 0
    assert read_net(path, format="bullet", king_buckets=MAP4, output_buckets=4) == net
    with pytest.raises(NetError, match=r"the size of no bullet net with K 1 king and N 1 output "
                                       r"buckets \(2 x \(H \(768 K \+ 1 \+ 2 N\) \+ N\)"):
        read_net(path, format="bullet")
    with pytest.raises(NetError, match="K 4 king and N 8 output buckets"):
        read_net(path, format="bullet", king_buckets=MAP4, output_buckets=8)


def run(capsys, *args):
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_nn_init_info_and_export_of_a_bucketed_net(tmp_path, capsys):
    out = tmp_path / "k.nnue"
    code, _, _ = run(capsys, "nn", "init", "--hidden", "16", "--king-buckets", "4",
                     "--output-buckets", "8", "--out", out)
    assert code == 0
    net = read_net(out)
    assert net.king_buckets == MAP4 and net.output_buckets == 8
    code, text, _ = run(capsys, "nn", "info", out)
    assert code == 0
    assert "(768 x 4 -> 16) x 2 -> 8" in text
    assert "king buckets 4, mirrored on files e-h; map 0 0 1 1 / 2 2 2 2 / 3 3 3 3" in text
    assert "output buckets 8 (MaterialCount: (pieces - 2) // 4)" in text
    bullet = tmp_path / "k.bin"
    code, _, err = run(capsys, "nn", "export", out, "--format", "bullet", "--out", bullet)
    assert code == 0 and "--king-buckets 0,0,1,1,2,2,2,2,3" in err
    code, text, _ = run(capsys, "nn", "info", "--input-format", "bullet", "--king-buckets", "4",
                        "--output-buckets", "8", bullet)
    assert code == 0 and f"checksum    {net.checksum}" in text
    code, _, err = run(capsys, "nn", "info", "--input-format", "bullet", bullet)
    assert code == 2 and "K 1 king and N 1 output buckets" in err


@pytest.mark.parametrize("args,msg", [
    (["--king-buckets", "5"], "king buckets 5: give a preset's bucket count"),
    (["--king-buckets", "0,1"], "32 whole numbers"),
    (["--output-buckets", "0"], "output buckets 0 is invalid"),
])
def test_nn_init_bad_buckets_are_one_line_and_exit_2(tmp_path, capsys, args, msg):
    out = tmp_path / "x.nnue"
    code, _, err = run(capsys, "nn", "init", "--hidden", "16", *args, "--out", out)
    assert code == 2 and msg in err and err.count("\n") == 1
    assert not out.exists()


def test_nn_train_refuses_a_start_of_other_buckets_in_one_line(tmp_path, capsys):
    """nn train trains bucketed nets (tests/test_nn_train_buckets.py); an --init net whose
    buckets are not those the flags ask for is one line, exit 2, before anything is written."""
    net = tmp_path / "b.nnue"
    write_net(random_net(16, 1, king_buckets=MAP4), net)
    data = tmp_path / "d.txt"
    data.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 10 | 0.5\n")
    code, _, err = run(capsys, "nn", "train", data, "--hidden", "16", "--init", net,
                       "--king-buckets", "8", "--runs-dir", tmp_path / "runs")
    assert code == 2 and err.count("\n") == 1
    assert f"--init {net} is a 16-neuron screlu net with 4 king buckets (map 4) and 1 output " \
           "bucket; the training's net is a 16-neuron screlu net with 8 king buckets (map 8)" in err
    assert not (tmp_path / "runs").exists()


def test_the_output_layer_of_a_net_with_output_buckets_is_not_tuned_yet():
    from evotune.engine.net.outputlayer import output_values, with_output

    assert output_values(random_net(8, 1, king_buckets=MAP4)).shape == (18,)   # K only: fine
    net = random_net(8, 1, output_buckets=2)
    with pytest.raises(NetError, match="output layer of a net with 2 output buckets as weights "
                                       "is not yet supported"):
        output_values(net)
    with pytest.raises(NetError, match="not yet supported"):
        with_output(net, np.zeros(18))
