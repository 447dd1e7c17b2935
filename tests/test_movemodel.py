"""The move model (issue 40): the core's features and scores equal the python-chess reference on
every legal move of random games; the file format round-trips and refuses bad files."""
from __future__ import annotations

import os
import random

import chess
import numpy as np
import pytest

from evotune.engine import movecore
from evotune.engine import movemodel as MM
from evotune.engine.api import board_arrays, decode_move
from evotune.engine.core import mcts as M
from evotune.engine.core.game import move_scores_core
from evotune.errors import EvotuneError, MoveModelError


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
    assert MM.N_FEATURES == sum(size for _, size in MM.BLOCKS) == 897
    assert MM.N_BLOCKS == 8


def test_core_features_equal_the_reference_on_random_games():
    boards = _random_positions(40, 150, seed=7)
    assert len(boards) > 4000
    seen = {"ep": 0, "castle": 0, "promo": 0, "check": 0, "capture": 0, "defended": 0}
    for b in boards:
        moves, feats = movecore.move_features(b)
        assert sorted(m.uci() for m in moves) == sorted(m.uci() for m in b.legal_moves)
        for mv, f in zip(moves, feats):
            ref = MM.reference_features(b, mv)
            assert tuple(int(x) for x in f) == ref, (b.fen(), mv.uci())
            seen["ep"] += b.is_en_passant(mv)
            seen["castle"] += b.is_castling(mv)
            seen["promo"] += mv.promotion is not None
            seen["check"] += ref[4] == MM.BLOCK_START[4] + 1
            seen["capture"] += b.is_capture(mv)
            seen["defended"] += ref[6] == MM.BLOCK_START[6] + 1
    # the special moves occur, so the comparison covers them
    assert min(seen.values()) >= 10, seen


def test_core_scores_equal_the_reference_for_a_random_model():
    model = MM.random_model(seed=3, spread=400)
    boards = _random_positions(20, 120, seed=11)
    assert len(boards) > 2000
    clamped = 0
    for b in boards:
        core = movecore.move_scores(model, b)
        assert core == MM.reference_scores(model, b), b.fen()
    big = MM.MoveModel(weights=np.full(MM.N_FEATURES, 400, dtype=np.int32))
    for b in boards[:50]:
        scores = movecore.move_scores(big, b)
        clamped += sum(s == MM.SCORE_CLAMP for s in scores.values())
        assert scores == MM.reference_scores(big, b)
    assert clamped > 0  # 8 x 400 = 3200 is clamped to 2000 alike


@pytest.mark.parametrize("hidden", [1, 16, MM.HIDDEN_MAX])
def test_core_scores_equal_the_numpy_reference_for_a_hidden_model(hidden):
    model = MM.random_model(seed=hidden, spread=300, hidden=hidden)
    assert model.hidden == hidden
    boards = _random_positions(10, 120, seed=hidden)
    assert len(boards) > 1000
    below = inside = above = 0
    for b in boards:
        assert movecore.move_scores(model, b) == MM.reference_scores(model, b), b.fen()
        _, feats = movecore.move_features(b)
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
        ref = MM.reference_scores(model, b)
        assert {chess.Move.from_uci(u): v for u, v in ref.items()} == {
            decode_move(int(m)): int(x) for m, x in zip(moves[:n], out[:n])}


def test_a_hidden_model_is_its_linear_part_plus_the_layer():
    model = MM.random_model(seed=4, spread=200, hidden=8)
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
        assert int(got[uci][4]) - MM.BLOCK_START[4] == int(b.gives_check(mv)) == expected, \
            (fen, uci)


def test_black_moves_are_mirrored():
    w = chess.Board()
    b = chess.Board()
    b.push_uci("a2a3")
    fw = MM.reference_features(w, chess.Move.from_uci("g1f3"))
    fb = MM.reference_features(b, chess.Move.from_uci("g8f6"))
    assert fw == fb
    assert fw[0] == MM.BLOCK_START[0] + 64 * 1 + chess.F3


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


SHIPPED = os.path.join(os.path.dirname(MM.__file__), "..", "engines", "pesto-moves.evomove")


def test_the_shipped_linear_file_keeps_its_bytes_and_checksum():
    data = open(SHIPPED, "rb").read()
    model = MM.read_move_model(SHIPPED)
    assert model.hidden == 0 and model.checksum == "57a12f3c792037ca"
    assert MM.move_model_bytes(model) == data and data[8:12] == (1).to_bytes(4, "little")


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
    ({"weights": np.zeros(10, dtype=np.int32)}, "897 integers"),
    ({"weights": np.zeros(897)}, "897 integers"),
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
