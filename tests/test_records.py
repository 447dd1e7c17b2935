"""GameRecord: JSON round trip, equality without wall time, PGN round trip."""
from __future__ import annotations

import io
import json

import chess
import chess.pgn
import numpy as np

from evotune.limits import Limits, parse_tc
from evotune.match.gamerecord import GameRecord, leaf_array, record_to_pgn_game, write_pgn, write_pgn_text
from evotune.match.openings import Opening
from evotune.match.pgnformat import move_comment, score_text, time_control_tags, time_text
from evotune.rules import MATE

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
    assert g.next().comment == "book"  # the opening's move, as cutechess marks book moves
    assert "TimeControl" not in g.headers  # no limits given: no tag


def test_cutechess_score_and_time_text():
    assert [score_text(x) for x in (35, 0, -120, 7, -3)] == ["+0.35", "0.00", "-1.20", "+0.07",
                                                            "-0.03"]
    # mates: the plies to mate, signed (the core's MATE - plies; UCI 'mate 3' is 5 plies)
    assert score_text(MATE - 5) == "+M5" and score_text(-(MATE - 4)) == "-M4"
    assert [time_text(ms) for ms in (0, 21, 210, 2100, 21000, 99, 999, 9999)] == [
        "0s", "0.021s", "0.21s", "2.1s", "21s", "0.099s", "1.00s", "10.0s"]  # rounded as cutechess
    assert move_comment(35, 12, 210) == "+0.35/12 0.21s"
    assert move_comment(35, 3, None) == "+0.35/3"  # the core's games: no time measured
    assert move_comment(0, 0, 1500) == "1.5s"  # an engine that sent no evaluation
    assert move_comment(0, 0, None) == ""


def test_time_control_tags():
    assert time_control_tags(Limits(depth=3)) == {"TimeControl": "-", "Depth": "3"}
    assert time_control_tags(Limits(depth=3, nodes=500)) == {"TimeControl": "-", "Depth": "3",
                                                             "Nodes": "500"}
    assert time_control_tags(Limits(depth=3, movetime=0.25)) == {"TimeControl": "0.25/move"}
    assert time_control_tags(Limits(tc=parse_tc("10+0.1"), nodes=9)) == {"TimeControl": "10+0.1"}


def evaluated() -> GameRecord:
    """Fool's mate with each move's evaluation, depth and time (an external engine's game)."""
    return GameRecord(key=(0, 0, 2, 5), white_name="sf", black_name="me",
                      white_weights=(), black_weights=(100.0,) * 6,
                      opening=Opening(moves=("f2f3", "e7e5")), moves=("g2g4", "d8h4"),
                      result="0-1", termination="checkmate", scores=(-MATE + 2, MATE - 1),
                      depths=(7, 1), move_ms=(1234, 8), white_engine="/usr/games/stockfish")


def test_pgn_comments_round_trip_through_python_chess(tmp_path):
    recs = [evaluated(), fools_mate(), from_fen()]
    limits = Limits(depth=5, nodes=2000)
    path = tmp_path / "c.pgn"
    write_pgn(recs, path, limits=limits)
    text = " ".join(path.read_text().split())  # python-chess wraps movetext at 80 columns
    assert "1. f3 { book } 1... e5 { book } 2. g4 { -M2/7 1.2s } 2... Qh4# { +M1/1 0.008s } 0-1" \
        in text
    with open(path) as fh:
        games = [chess.pgn.read_game(fh) for _ in recs]
    comments = [[n.comment for n in g.mainline()] for g in games]
    assert comments[0] == ["book", "book", "-M2/7 1.2s", "+M1/1 0.008s"]
    assert comments[1] == ["book", "", "", ""]  # a record made without depths: no evaluation
    assert comments[2] == ["", "", ""]
    for g, rec in zip(games, recs):
        assert [n.comment for n in g.mainline()][len(rec.opening.moves):] == \
            [c for c in rec.comments()]
        assert g.headers["TimeControl"] == "-" and g.headers["Depth"] == "5"
        assert g.headers["Nodes"] == "2000"
    back = GameRecord.from_dict(json.loads(json.dumps(evaluated().to_dict())))
    assert back == evaluated() and back.depths == (7, 1) and back.move_ms == (1234, 8)
    assert GameRecord.from_dict({**evaluated().to_dict(), "move_ms": [1, 2]}) == evaluated()


def test_a_stored_v1_game_reads_and_writes_its_pgn():
    from pathlib import Path

    from evotune.runs.records import parse_game_line
    log = Path(__file__).resolve().parent / "data" / "store-v1" / "games" / "games.jsonl"
    raw = log.read_bytes().splitlines()[0]
    rec = GameRecord.from_dict(parse_game_line(raw, 1, log).data)
    assert rec.depths is None and rec.move_ms is None
    g = record_to_pgn_game(rec, limits=Limits(depth=2))
    assert [n.comment for n in g.mainline()][len(rec.opening.moves):] == [""] * rec.plies
    assert g.headers["TimeControl"] == "-" and g.headers["Depth"] == "2"


def test_the_game_log_validator_checks_per_move_lists(tmp_path):
    import pytest

    from evotune.errors import StoreError
    from evotune.runs.records import parse_game_line
    d = evaluated().to_dict()
    assert parse_game_line(json.dumps(d).encode(), 1, tmp_path / "g.jsonl").data == d
    for k, bad in (("depths", [7]), ("move_ms", [1.5, 2]), ("scores", "x")):
        with pytest.raises(StoreError, match=f"'{k}' must be one integer per move"):
            parse_game_line(json.dumps({**d, k: bad}).encode(), 3, tmp_path / "g.jsonl")
