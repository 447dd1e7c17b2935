"""evotune/rules.py: the game-over and adjudication rules in Python agree with the core's."""
from __future__ import annotations

import chess

from evotune.engine import play_game
from evotune.limits import Limits
from evotune.rules import MATE, MATE_BOUND, RESULTS, TERMINATIONS, Adjudication, Adjudicator, game_over

REF = (100, 300, 330, 500, 900, 10)


def test_constants():
    assert (MATE, MATE_BOUND) == (1_000_000, 999_000)
    assert RESULTS == ("1-0", "0-1", "1/2-1/2")
    assert TERMINATIONS[1:3] == ("checkmate", "stalemate") and len(TERMINATIONS) == 9


def test_game_over_by_each_rule():
    assert game_over(chess.Board()) is None
    assert game_over(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")) == ("1-0", "checkmate")
    assert game_over(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")) == ("1/2-1/2", "stalemate")
    assert game_over(chess.Board("8/8/4k3/8/8/3K4/8/8 w - - 0 1")) == \
        ("1/2-1/2", "insufficient-material")
    assert game_over(chess.Board("8/8/4k3/8/8/3K4/7R/8 w - - 100 80")) == ("1/2-1/2", "fifty-move")
    # mate given with the hundredth half move is mate, not a fifty-move draw
    assert game_over(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 100 80")) == ("1-0", "checkmate")
    b = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"):
        assert game_over(b) is None
        b.push_uci(uci)
    assert game_over(b) == ("1/2-1/2", "repetition")


def test_adjudicator_resign_needs_the_opponents_agreement_and_consecutive_moves():
    adj = Adjudicator(Adjudication(resign_score=300, resign_moves=2))
    assert adj.update(chess.WHITE, -400, 1) is None   # black has no score yet
    assert adj.update(chess.BLACK, 400, 2) is None
    assert adj.update(chess.WHITE, -400, 3) is None   # 1st agreed losing move
    assert adj.update(chess.BLACK, 400, 4) is None
    assert adj.update(chess.WHITE, -400, 5) == ("0-1", "adjudication-resign")
    adj = Adjudicator(Adjudication(resign_score=300, resign_moves=2))
    for ply, (colour, score) in enumerate([(chess.WHITE, 400), (chess.BLACK, -400),
                                           (chess.WHITE, 400), (chess.BLACK, None),
                                           (chess.WHITE, 400), (chess.BLACK, -400)], 1):
        assert adj.update(colour, score, ply) is None  # None broke black's run


def test_adjudicator_draw_counts_plies_from_the_start_ply():
    adj = Adjudicator(Adjudication(draw_score=10, draw_moves=2, draw_start_ply=2))
    verdicts = [adj.update(ply % 2 == 1, 0, ply) for ply in range(1, 7)]
    # plies 1 and 2 (0-based 0, 1) do not count; 3..6 are four drawish plies = 2 moves each
    assert verdicts == [None, None, None, None, None, ("1/2-1/2", "adjudication-draw")]


def test_python_rules_end_core_games_the_same_way():
    """Replay core games with the Python rules: they end at the same ply with the same verdict."""
    settings = [Adjudication(), Adjudication(resign_score=200, resign_moves=2),
                Adjudication(draw_score=100, draw_moves=2, draw_start_ply=4)]
    starts = ["rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
              "8/8/4k3/8/3K4/8/3P4/8 w - - 0 1", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"]
    seen = set()
    for fen in starts:
        for adj in settings:
            out = play_game(fen, REF, (100, 280, 350, 520, 880, 6),
                            limits=Limits(depth=2, max_plies=150, adjudication=adj))
            board, rules, verdict = chess.Board(fen), Adjudicator(adj), None
            for ply, (uci, score) in enumerate(zip(out.moves, out.scores), 1):
                assert verdict is None, (fen, adj, ply)
                colour = board.turn
                board.push_uci(uci)
                verdict = game_over(board) or rules.update(colour, int(score), ply)
            if out.termination == "ply-cap":
                assert verdict is None
            else:
                assert verdict == (out.result, out.termination), (fen, adj)
            seen.add(out.termination)
    assert {"checkmate", "adjudication-resign", "adjudication-draw"} <= seen, seen
