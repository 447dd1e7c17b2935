"""Each move's evaluation, depth and time, from the core's whole games and from the move-by-move
loop with an external engine, into the records and the PGN (read back by python-chess), and the
interim results block of a match."""
from __future__ import annotations

import json
import re

import chess
import chess.pgn

from evotune.limits import Limits
from evotune.match import MatchSettings, play_match
from evotune.match.openings import Opening
from evotune.players.gameloop import play_players_game
from evotune.players.spec import player_from_engine_spec
from evotune.players.uciproto import info_depth
from evotune.space import SHANNON_REFERENCE
from evotune.spec.file import load_engine_spec

COMMENT = re.compile(r"^[+-]?(\d+\.\d\d|M\d+)/\d+( \d+(\.\d+)?s)?$")



def test_info_depth():
    assert info_depth("info depth 12 seldepth 18 score cp 35 nodes 100 pv e2e4") == 12
    assert info_depth("info score cp 35") == 0 and info_depth("info depth x score cp 1") == 0


def test_core_games_keep_each_move_depth_and_score(tmp_path, call_cli):
    pgn = tmp_path / "m.pgn"
    code, out, err = call_cli("match", "shannon", "pst", "--games", "2", "--depth", "2",
                         "--max-plies", "24", "--seed", "1", "--openings", "book", "--book-plies", "4",
                         "--pgn", str(pgn), "--json")
    assert code == 0, err
    with open(pgn) as fh:
        games = [chess.pgn.read_game(fh) for _ in range(2)]
    for g in games:
        assert g.headers["TimeControl"] == "-" and g.headers["Depth"] == "2"
        nodes = list(g.mainline())
        book = [n for n in nodes if n.comment == "book"]
        engine = nodes[len(book):]
        assert len(book) == 4 and engine and all(n.comment != "book" for n in engine)
        for n in engine:  # '+0.35/2': the core measures no time per move
            assert COMMENT.match(n.comment) and n.comment.endswith("/2"), n.comment
    # the records hold what the comments show, and the JSON summary is unchanged by them
    assert json.loads(out)["games"] == 2


def test_records_of_a_core_match_equal_for_1_and_2_workers():
    a = player_from_engine_spec(load_engine_spec("shannon"), SHANNON_REFERENCE, name="a")
    b = player_from_engine_spec(load_engine_spec("pst"), None, name="b")
    settings = MatchSettings(limits=Limits(depth=2, max_plies=16))
    one = play_match(a, b, games=4, settings=settings, seed=5, workers=1)
    two = play_match(a, b, games=4, settings=settings, seed=5, workers=2)
    assert one.records == two.records
    for rec in one.records:
        assert rec.depths == (2,) * rec.plies and rec.move_ms is None
        assert len(rec.scores) == rec.plies and all(c for c in rec.comments())


def test_external_engine_moves_carry_depth_and_time(fake_engine_spec, tmp_path):
    fake = player_from_engine_spec(load_engine_spec(str(fake_engine_spec(tmp_path))), None,
                                   name="fake")
    me = player_from_engine_spec(load_engine_spec("shannon"), SHANNON_REFERENCE, name="me")
    board = Opening().board()
    out = play_players_game(me, fake, board, Limits(depth=2, max_plies=10))
    assert len(out.depths) == len(out.move_seconds) == len(out.moves) == 10
    assert list(out.depths[1::2]) == [1] * 5  # the fake says 'info depth 1 score cp 300'
    assert list(out.scores[1::2]) == [300] * 5
    assert list(out.depths[0::2]) == [2] * 5  # the built-in side searched to depth 2
    assert all(t > 0 for t in out.move_seconds)


def test_interim_block_every_n_games(call_cli):
    code, out, err = call_cli("match", "shannon", "pst", "--games", "6", "--depth", "1",
                         "--max-plies", "16", "--rating-interval", "2")
    assert code == 0, err
    assert err.count("Results of shannon vs pst (1 plies, 2moves_v1.epd):") == 2  # at 2 and 4
    assert "Games: 2, " in err and "Games: 4, " in err and "Games: 6, " not in err
    assert out.count("Results of shannon vs pst") == 1 and "Games: 6, " in out
    code, out, err = call_cli("match", "shannon", "pst", "--games", "4", "--depth", "1",
                         "--max-plies", "16", "--rating-interval", "0")
    assert code == 0 and "Results of" not in err
