"""GameRecord: JSON round trip, equality without wall time, PGN round trip."""
from __future__ import annotations

import io
import json

import chess
import chess.pgn
import numpy as np

from evotune.match.openings import Opening
from evotune.match.records import GameRecord, leaf_array, record_to_pgn_game, write_pgn, write_pgn_text

FEN = "rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3"


def fools_mate(key=(3, 1, 0, 0)) -> GameRecord:
    return GameRecord(key=key, white_name="g3-m1-A", black_name="g3-m1-B",
                      white_weights=(100.0, 300.0, 330.0, 500.0, 900.0, 10.0),
                      black_weights=(100.0, 280.5, 330.0, 500.0, 900.0, 0.0),
                      opening=Opening(moves=("f2f3",), label="book:x"),
                      moves=("e7e5", "g2g4", "d8h4"), result="0-1", termination="checkmate",
                      nodes=1234, seconds=0.5, scores=(10, -5, 999997),
                      leaf_phi=leaf_array([(0, 0, 0, 0, 0, 3), (0, 0, 0, 0, 0, -2),
                                           (0, 0, 0, 0, 0, 9)]),
                      predicted=(False, True, False))


def from_fen() -> GameRecord:
    return GameRecord(key=(0, 0, 1, 3), white_name="B", black_name="stockfish",
                      white_weights=(100.0,) * 6, black_weights=(), opening=Opening(fen=FEN),
                      moves=("e2e3", "e7e6", "b1c3"), result="1/2-1/2", termination="ply-cap",
                      black_engine="/usr/games/stockfish")


def test_json_round_trip_and_equality_ignores_seconds():
    r = fools_mate()
    d = json.loads(json.dumps(r.to_dict()))
    back = GameRecord.from_dict(d)
    assert back == r and back.scores == (10, -5, 999997) and back.predicted == (False, True, False)
    assert back.leaf_phi.dtype == np.int64 and back.leaf_phi.shape == (3, 6)
    assert back.leaf_phi.tolist() == r.leaf_phi.tolist() and not back.leaf_phi.flags.writeable
    assert back.plies == 3 and d["plies"] == 3
    assert GameRecord.from_dict({**d, "seconds": 9.0}) == r  # wall time is not identity
    assert GameRecord.from_dict({**d, "result": "1-0"}) != r
    plain = from_fen()
    assert "scores" not in plain.to_dict() and GameRecord.from_dict(plain.to_dict()) == plain


def test_points_from_a_view():
    assert fools_mate((0, 0, 0, 0)).points_a() == 0   # A white, 0-1
    assert fools_mate((0, 0, 0, 1)).points_a() == 2   # A black, 0-1
    assert from_fen().points_a() == 1


def test_pgn_round_trip(tmp_path):
    recs = [fools_mate(), from_fen()]
    path = tmp_path / "games.pgn"
    write_pgn(recs[:1], path)
    write_pgn(recs[1:], path)  # appends
    with open(path) as fh:
        games = [chess.pgn.read_game(fh) for _ in range(2)]
        assert chess.pgn.read_game(fh) is None
    g1, g2 = games
    assert [m.uci() for m in g1.mainline_moves()] == ["f2f3", "e7e5", "g2g4", "d8h4"]
    assert g1.headers["Result"] == "0-1" and g1.end().board().is_checkmate()
    assert "FEN" not in g1.headers and "SetUp" not in g1.headers
    assert g1.headers["WhiteWeights"] == "100,300,330,500,900,10"
    assert g1.headers["BlackWeights"] == "100,280.5,330,500,900,0"
    assert g1.headers["Termination"] == "checkmate" and g1.headers["Round"] == "3.1.1"
    for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result"):
        assert tag in g1.headers
    assert g2.headers["FEN"] == FEN and g2.headers["SetUp"] == "1"
    assert [m.uci() for m in g2.mainline_moves()] == ["e2e3", "e7e6", "b1c3"]
    assert g2.headers["BlackEngine"] == "/usr/games/stockfish" and "WhiteEngine" not in g2.headers
    assert g2.headers["Result"] == "1/2-1/2" and g2.headers["White"] == "B"
    assert "BlackWeights" not in g2.headers  # the external engine has no weight vector
    assert g1.headers["OpeningSource"] == "book:x"
    write_pgn(recs, path, append=False)
    assert path.read_text() == write_pgn_text(recs)
    buf = io.StringIO()
    write_pgn(recs, buf)
    assert buf.getvalue().count("[Event ") == 2


def test_pgn_game_object():
    g = record_to_pgn_game(fools_mate(), date="2024.01.02")
    assert g.headers["Date"] == "2024.01.02" and g.headers["PlyCount"] == "4"
    assert g.next().comment == "end of opening"
