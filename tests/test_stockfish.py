"""A real opponent: a short match between the built-in engine and Debian's Stockfish, through the
match runner (``evotune.match.play_match``) and the move-by-move players game loop."""
from __future__ import annotations

import shutil
from pathlib import Path

import chess
import pytest

from evotune.limits import Limits
from evotune.players import PlayerSpec, builtin, external

STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish"
                                          if Path("/usr/games/stockfish").is_file() else None)
pytestmark = pytest.mark.skipif(STOCKFISH is None,
                                reason="no stockfish on PATH or at /usr/games/stockfish "
                                       "(Debian: apt-get install stockfish)")

match = pytest.importorskip("evotune.match", reason="the match package (evotune.match) is absent")


@pytest.fixture(autouse=True)
def _close_engines():
    yield
    external.close_all()


def test_short_match_against_stockfish():
    sf = PlayerSpec(name="stockfish", kind="uci", command=(STOCKFISH,),
                    options=(("Threads", 1), ("Hash", 16), ("Skill Level", 0)))
    ours = builtin((100, 300, 330, 500, 900, 10), name="evotune")
    settings = match.MatchSettings(limits=Limits(depth=2, max_plies=120))
    result = match.play_match(ours, sf, games=2, settings=settings, seed=7)
    assert result.games == 2 and len(result.records) == 2
    assert result.wins + result.draws + result.losses == 2
    whites = set()
    for rec in result.records:
        assert not rec.termination.startswith("forfeit"), rec.termination
        board = chess.Board(rec.opening.fen)
        for uci in (*rec.opening.moves, *rec.moves):
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves
            board.push(move)
        whites.add(rec.white_name)
        if rec.termination == "checkmate":
            assert board.is_checkmate() and board.outcome().result() == rec.result
        elif rec.termination == "ply-cap":
            assert len(rec.moves) == 120 and rec.result == "1/2-1/2"
    assert whites == {"evotune", "stockfish"}  # colours swapped over the opening pair
