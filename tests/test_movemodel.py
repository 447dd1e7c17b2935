"""The move model (issue 40): the core's features and scores equal the python-chess reference on
every legal move of random games; the file format round-trips and refuses bad files."""
from __future__ import annotations

import os
import random

import chess
import numpy as np
import pytest

from evotune.engine.api import board_arrays, decode_move
from evotune.engine.core import mcts as M
from evotune.engine.core.game import move_scores_core
from evotune.engine.movemodel import chessref
from evotune.engine.movemodel import corescores as movecore
from evotune.engine.movemodel import modelfile as MM
from evotune.errors import EvotuneError, MoveModelError
from evotune.spec.movefeatures import BLOCK_START


def _random_positions(games: int, plies: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        b = chess.Board()
        for _ in range(plies):
            moves = list(b.legal_moves)
            if not moves:
                break
            out.append(b.copy(stack=False))
            b.push(rng.choice(moves))
    return out


def test_block_layout_adds_up():
    assert MM.N_FEATURES == sum(size for _, size in MM.BLOCKS) == 1646
    assert MM.N_BLOCKS == 16
    assert MM.SET_FEATURES == {1: 897, 2: 1646}
    assert MM.SET_BLOCKS == {1: 8, 2: 16}


def test_core_features_equal_the_reference_on_random_games():
    boards = _random_positions(40, 150, seed=7)
    assert len(boards) > 4000
    seen = {"ep": 0, "castle": 0, "promo": 0, "check": 0, "capture": 0, "defended": 0,
            "fork": 0, "threat on the king": 0, "king zone 3+": 0, "passed": 0,
            "blocked": 0, "from defended": 0, "phase 0-5": 0, "phase 18+": 0, "mobility 7": 0}
    o = BLOCK_START
    for b in boards:
        moves, feats = movecore.move_features(b)
        assert sorted(m.uci() for m in moves) == sorted(m.uci() for m in b.legal_moves)
        for mv, f in zip(moves, feats):
            ref = chessref.reference_features(b, mv)
            assert tuple(int(x) for x in f) == ref, (b.fen(), mv.uci())
            seen["ep"] += b.is_en_passant(mv)
            seen["castle"] += b.is_castling(mv)
            seen["promo"] += mv.promotion is not None
            seen["check"] += ref[4] == BLOCK_START[4] + 1
            seen["capture"] += b.is_capture(mv)
            seen["defended"] += ref[6] == BLOCK_START[6] + 1
            kind = (ref[0] - o[0]) // 64
            seen["fork"] += (ref[10] - o[10]) // 6 % 2
            seen["threat on the king"] += (ref[10] - o[10]) // 12 == 6
            seen["king zone 3+"] += ref[11] - o[11] >= 18
            seen["passed"] += ref[15] - o[15] >= 9
            seen["blocked"] += 1 <= ref[15] - o[15] <= 8
            seen["from defended"] += (ref[8] - o[8]) // 6 % 2
            seen["phase 0-5"] += (ref[14] - o[14]) // 8 // 6 == 0
            seen["phase 18+"] += (ref[14] - o[14]) // 8 // 6 == 3
            seen["mobility 7"] += ref[13] - o[13] == 6 * 7 + kind
            assert (ref[15] == o[15]) == (kind != 0)
    # the special moves occur, so the comparison covers them
    assert min(seen.values()) >= 10, seen


@pytest.mark.parametrize("features", [1, 2])
def test_core_scores_equal_the_reference_for_a_random_model(features):
    model = MM.random_model(seed=3, spread=400, features=features)
    assert model.features == features and model.n_blocks == MM.SET_BLOCKS[features]
    boards = _random_positions(20, 120, seed=11)
    assert len(boards) > 2000
    clamped = 0
    for b in boards:
        core = movecore.move_scores(model, b)
        assert core == chessref.reference_scores(model, b), b.fen()
    big = MM.MoveModel(weights=np.full(MM.N_FEATURES, 400, dtype=np.int32))
    for b in boards[:50]:
        scores = movecore.move_scores(big, b)
        clamped += sum(s == MM.SCORE_CLAMP for s in scores.values())
        assert scores == chessref.reference_scores(big, b)
    assert clamped > 0  # 8 x 400 = 3200 is clamped to 2000 alike


@pytest.mark.parametrize("hidden, features", [(1, 1), (16, 1), (MM.HIDDEN_MAX, 1), (1, 2),
                                             (16, 2), (MM.HIDDEN_MAX, 2)])
def test_core_scores_equal_the_numpy_reference_for_a_hidden_model(hidden, features):
    model = MM.random_model(seed=hidden, spread=300, hidden=hidden, features=features)
    assert model.hidden == hidden
    boards = _random_positions(10, 120, seed=hidden)
    assert len(boards) > 1000
    below = inside = above = 0
    for b in boards:
        assert movecore.move_scores(model, b) == chessref.reference_scores(model, b), b.fen()
        _, feats = movecore.move_features(b)
        feats = feats[:, :model.n_blocks]
        acc = model.hidden_bias + model.hidden_weights.astype(np.int64)[feats].sum(axis=1)
        below += int((acc < 0).sum())
        inside += int(((acc > 0) & (acc < 64)).sum())
        above += int((acc > 64).sum())
    # every side of the clip occurs, so the comparison covers it
    assert min(below, inside, above) > 100, (below, inside, above)


def test_a_linear_model_loaded_after_a_hidden_one_scores_linearly():
    hidden = MM.random_model(seed=2, spread=300, hidden=MM.HIDDEN_MAX)
    linear = MM.random_model(seed=3, spread=300)
    b = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    U, S = board_arrays(b, 10)
    moves = np.zeros(256, dtype=np.int64)
    out = np.zeros(256, dtype=np.int64)
    for model in (hidden, linear, hidden):
        params = np.zeros(M.NP)
        params[M.P_MODEL:] = model.params()
        n = int(move_scores_core(U, S, params, moves, out))
        ref = chessref.reference_scores(model, b)
        assert {chess.Move.from_uci(u): v for u, v in ref.items()} == {
            decode_move(int(m)): int(x) for m, x in zip(moves[:n], out[:n])}


def test_a_hidden_model_is_its_linear_part_plus_the_layer():
    model = MM.random_model(seed=4, spread=200, hidden=8, features=2)
    linear = MM.MoveModel(weights=model.weights)
    b = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    _, feats = movecore.move_features(b)
    acc = model.hidden_bias + model.hidden_weights.astype(np.int64)[feats].sum(axis=1)
    layer = (np.clip(acc, 0, 64) * model.out_weights).sum(axis=1) // 64
    assert np.array_equal(model.scores(feats), linear.scores(feats) + layer)
    assert np.any(layer != 0)
    silent = MM.MoveModel(weights=model.weights, hidden_weights=model.hidden_weights,
                          hidden_bias=model.hidden_bias, out_weights=np.zeros(8, np.int32))
    assert movecore.move_scores(silent, b) == movecore.move_scores(linear, b)
    assert silent.checksum != linear.checksum


def test_gives_check_cases_the_core_must_see():
    # discovered check by en passant, castling rook check, promotion to a knight with check
    cases = [("8/8/8/1k1pP2R/8/8/8/4K3 w - d6 0 1", "e5d6", 1),  # discovered along the rank
             ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", 1),       # the castling rook checks
             ("1r2k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "e1c1", 0),
             ("5k2/3P4/8/8/8/8/8/4K3 w - - 0 1", "d7d8q", 1),      # the queen on the rank
             ("1k6/3P4/8/8/8/8/8/4K3 w - - 0 1", "d7d8n", 0),
             ("4k3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c7c8n", 0),
             ("8/3P4/5k2/8/8/8/8/4K3 w - - 0 1", "d7d8n", 0),
             ("8/3P4/4k3/8/8/8/8/4K3 w - - 0 1", "d7d8r", 0),
             ("3k4/8/8/8/8/8/3B4/3R2K1 w - - 0 1", "d2f4", 1)]      # discovered by the bishop
    for fen, uci, expected in cases:
        b = chess.Board(fen)
        mv = chess.Move.from_uci(uci)
        assert mv in b.legal_moves, (fen, uci)
        moves, feats = movecore.move_features(b)
        got = dict(zip((m.uci() for m in moves), feats))
        assert int(got[uci][4]) - BLOCK_START[4] == int(b.gives_check(mv)) == expected, \
            (fen, uci)


def test_black_moves_are_mirrored():
    w = chess.Board()
    b = chess.Board()
    b.push_uci("a2a3")
    fw = chessref.reference_features(w, chess.Move.from_uci("g1f3"))
    fb = chessref.reference_features(b, chess.Move.from_uci("g8f6"))
    assert fw == fb
    assert fw[0] == BLOCK_START[0] + 64 * 1 + chess.F3


@pytest.mark.parametrize("hidden", [0, 6])
def test_a_set_1_model_scores_as_a_set_2_model_with_zero_weights_on_the_new_blocks(hidden):
    old = MM.random_model(seed=12, spread=300, hidden=hidden, features=1)
    n1, n2 = MM.SET_FEATURES[1], MM.SET_FEATURES[2]
    pad = MM.MoveModel(weights=np.concatenate([old.weights, np.zeros(n2 - n1, np.int32)]),
                       hidden_weights=np.concatenate(
                           [old.hidden_weights, np.zeros((n2 - n1, hidden), np.int32)]),
                       hidden_bias=old.hidden_bias, out_weights=old.out_weights)
    assert pad.features == 2 and pad.checksum != old.checksum
    new = MM.random_model(seed=12, spread=300, hidden=hidden, features=2)
    differ = 0
    for b in _random_positions(3, 60, seed=5):
        assert movecore.move_scores(old, b) == movecore.move_scores(pad, b), b.fen()
        differ += movecore.move_scores(new, b) != movecore.move_scores(old, b)
    assert differ > 100  # the set-2 blocks do count when their weights are not zero


def test_new_features_on_hand_made_positions():
    o = BLOCK_START
    # Nc3-d5 forks the queen on c7 and the rook on e7 (and attacks f6 and the king's zone)
    b = chess.Board("6k1/2q1r3/8/8/8/2N5/8/4K3 w - - 0 1")
    f = chessref.reference_features(b, chess.Move.from_uci("c3d5"))
    assert f[10] == o[10] + 6 * (2 * 5 + 1) + 1  # threat: the queen, a fork, a knight
    assert f[12] == o[12] + 6 * 3 + 1             # d5 is three king moves from g8
    assert f[14] == o[14] + 8 * (6 * 1 + 1) + 4   # phase 1 + 4 + 2 = 7: bucket 1, rank 5
    # a passed pawn's push and a blocked one's, for black (mirrored ranks)
    b = chess.Board("4k3/8/8/p7/8/8/P6p/4K3 b - - 0 1")
    assert chessref.reference_features(b, chess.Move.from_uci("a5a4"))[15] == o[15] + 1 + 4
    assert chessref.reference_features(b, chess.Move.from_uci("h2h1q"))[15] == o[15] + 1 + 8 + 7
    assert chessref.reference_features(b, chess.Move.from_uci("e8d8"))[15] == o[15]
    for fen in ("6k1/2q1r3/8/8/8/2N5/8/4K3 w - - 0 1", "4k3/8/8/p7/8/8/P6p/4K3 b - - 0 1"):
        moves, feats = movecore.move_features(chess.Board(fen))
        for mv, row in zip(moves, feats):
            assert tuple(int(x) for x in row) == chessref.reference_features(chess.Board(fen), mv)


# ---- files --------------------------------------------------------------------------------------

def test_round_trip_and_size(tmp_path):
    model = MM.random_model(seed=5)
    p = tmp_path / "m.evomove"
    MM.write_move_model(model, p)
    assert p.stat().st_size == MM.HEADER_SIZE + 4 * 897 == 3628
    back = MM.read_move_model(p)
    assert back == model and back.checksum == model.checksum and back.scale == 100
    assert MM.is_move_model_file(p)
    assert "897 features" in back.describe() and model.checksum in back.describe()


SHIPPED = os.path.join(os.path.dirname(MM.__file__), "..", "..", "engines",
                       "pesto-moves.evomove")


def test_the_shipped_linear_file_keeps_its_bytes_and_checksum():
    data = open(SHIPPED, "rb").read()
    model = MM.read_move_model(SHIPPED)
    assert model.hidden == 0 and model.checksum == "57a12f3c792037ca"
    assert MM.move_model_bytes(model) == data and data[8:12] == (1).to_bytes(4, "little")


SHIPPED_H16 = os.path.join(os.path.dirname(MM.__file__), "..", "..", "engines",
                           "pesto-moves-h16.evomove")


def test_the_shipped_hidden_file_keeps_its_bytes_and_checksum():
    data = open(SHIPPED_H16, "rb").read()
    model = MM.read_move_model(SHIPPED_H16)
    assert model.hidden == 16 and model.features == 1 and model.checksum == "bb5815b6e9cfa7fa"
    assert MM.move_model_bytes(model) == data and data[12:16] == (1).to_bytes(4, "little")
    assert len(data) == MM.hidden_file_size(16, 1) == 61172


@pytest.mark.parametrize("hidden", [0, 5])
def test_set_2_round_trip_and_size(tmp_path, hidden):
    model = MM.random_model(seed=7, hidden=hidden, features=2)
    p = tmp_path / "s2.evomove"
    MM.write_move_model(model, p)
    data = p.read_bytes()
    assert len(data) == MM.file_size(hidden, 2) == (
        40 + 4 * 1646 if not hidden else 48 + 4 * (1646 + hidden * 1648))
    assert data[12:16] == (2).to_bytes(4, "little") and data[16:20] == (1646).to_bytes(4, "little")
    back = MM.read_move_model(p)
    assert back == model and back.checksum == model.checksum and back.features == 2
    assert "feature set 2: 1646 features" in back.describe() and "pawn 17" in back.describe()


@pytest.mark.parametrize("fset, n, match", [
    (2, 897, "feature set 2 of 897 features"), (1, 1646, "feature set 1 of 1646 features"),
    (3, 1646, "feature set 3 of 1646 features")])
def test_a_file_of_a_mismatched_feature_set_is_refused(tmp_path, fset, n, match):
    p = tmp_path / "bad.evomove"
    MM.write_move_model(MM.random_model(seed=1, features=2), p)
    data = p.read_bytes()
    p.write_bytes(data[:12] + fset.to_bytes(4, "little") + n.to_bytes(4, "little") + data[20:])
    with pytest.raises(MoveModelError, match=match) as info:
        MM.read_move_model(p)
    assert str(p) in str(info.value) and "\n" not in str(info.value)


def test_hidden_round_trip_and_size(tmp_path):
    model = MM.random_model(seed=6, hidden=12)
    p = tmp_path / "h.evomove"
    MM.write_move_model(model, p)
    data = p.read_bytes()
    assert len(data) == MM.hidden_file_size(12) == 40 + 8 + 4 * (897 + 12 * 899)
    assert data[8:12] == (2).to_bytes(4, "little")
    back = MM.read_move_model(p)
    assert back == model and back.checksum == model.checksum and back.hidden == 12
    assert back != MM.MoveModel(weights=model.weights)
    assert "12 hidden units" in back.describe()


@pytest.mark.parametrize("how, match", [
    ("hidden0", "0 hidden units"), ("hidden33", "33 hidden units"), ("shift", "shift 5"),
    ("short", "truncated: 39592 bytes, expected 39596"), ("header", "shorter than its 48-byte header"),
    ("flip", "damaged: checksum"), ("long", "too long"),
    ("big", "damaged: move model out_weights must lie within")])
def test_bad_hidden_files_raise_one_line_naming_the_file(tmp_path, how, match):
    p = tmp_path / "bad.evomove"
    MM.write_move_model(MM.random_model(seed=1, hidden=10), p)
    data = p.read_bytes()
    edit = {"hidden0": lambda d: d[:40] + (0).to_bytes(4, "little") + d[44:],
            "hidden33": lambda d: d[:40] + (33).to_bytes(4, "little") + d[44:],
            "shift": lambda d: d[:44] + (5).to_bytes(4, "little") + d[48:],
            "short": lambda d: d[:-4],
            "header": lambda d: d[:44],
            "flip": lambda d: d[:-10] + bytes([d[-10] ^ 1]) + d[-9:],
            "long": lambda d: d + bytes(4),
            "big": lambda d: d[:-4] + (200_000).to_bytes(4, "little")}[how]
    p.write_bytes(edit(data))
    with pytest.raises(MoveModelError, match=match) as info:
        MM.read_move_model(p)
    assert str(p) in str(info.value) and "\n" not in str(info.value)


def _damaged(data: bytes, how: str) -> bytes:
    if how == "truncated":
        return data[:-4]
    if how == "header":
        return data[:20]
    if how == "trailing":
        return data + b"\0\0\0\0"
    if how == "flip":
        return data[:100] + bytes([data[100] ^ 1]) + data[101:]
    if how == "magic":
        return b"EVONNUE\0" + data[8:]
    if how == "version":
        return data[:8] + (3).to_bytes(4, "little") + data[12:]
    if how == "features":
        return data[:16] + (896).to_bytes(4, "little") + data[20:]
    if how == "scale":
        return data[:20] + (0).to_bytes(4, "little") + data[24:]
    if how == "empty":
        return b""
    raise AssertionError(how)


@pytest.mark.parametrize("how, match", [
    ("truncated", "truncated"), ("header", "truncated"), ("trailing", "too long: 3632 bytes"),
    ("flip", "damaged: checksum"), ("magic", "not a move model"), ("version", "version 3"),
    ("features", "feature set 1 of 896"), ("scale", "damaged: move model scale 0"),
    ("empty", "is empty")])
def test_bad_files_raise_one_line_naming_the_file(tmp_path, how, match):
    p = tmp_path / "bad.evomove"
    MM.write_move_model(MM.random_model(seed=1), p)
    p.write_bytes(_damaged(p.read_bytes(), how))
    with pytest.raises(MoveModelError, match=match) as info:
        MM.read_move_model(p)
    assert str(p) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, EvotuneError)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(MoveModelError, match="move-model file"):
        MM.read_move_model(tmp_path / "nope.evomove")
    with pytest.raises(MoveModelError, match="move-model file"):
        MM.read_move_model(tmp_path)
    assert not MM.is_move_model_file(tmp_path / "nope")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not MM.is_move_model_file(fifo)  # not opened: opening a FIFO would block


@pytest.mark.parametrize("kwargs, match", [
    ({"weights": np.zeros(10, dtype=np.int32)}, "897 or 1646 integers"),
    ({"weights": np.zeros(897)}, "897 or 1646 integers"),
    ({"weights": np.full(897, 100_001, dtype=np.int64)}, "within"),
    ({"weights": np.zeros(897, dtype=np.int32), "scale": 0}, "scale 0"),
    ({"weights": np.zeros(897, dtype=np.int32), "scale": True}, "scale True"),
    ({"weights": np.zeros(897, dtype=np.int32), "hidden_bias": np.zeros(33, np.int32)},
     "0 to 32 hidden units"),
    ({"weights": np.zeros(897, dtype=np.int32), "hidden_bias": np.zeros(4, np.int32),
      "out_weights": np.zeros(4, np.int32)}, "hidden_weights must be integers of shape"),
    ({"weights": np.zeros(897, dtype=np.int32), "hidden_bias": np.zeros(2, np.int32),
      "hidden_weights": np.zeros((897, 2), np.int32), "out_weights": np.zeros(3, np.int32)},
     "out_weights must be")])
def test_model_refuses_bad_fields(kwargs, match):
    with pytest.raises(MoveModelError, match=match):
        MM.MoveModel(**kwargs)
