"""Players: engine spec -> PlayerSpec, external UCI engines (scripted fakes), the game loop."""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine import Adjudication, play_game
from evotune.errors import EngineError, WeightsError
from evotune.limits import Limits
from evotune.players import PlayerSpec, builtin, external, uciproto
from evotune.players.external import ExternalEngine, Forfeit, MoveLimit, engine_for
from evotune.players.gameloop import play_players_game
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec

HERE = Path(__file__).resolve().parent
REF = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)


@pytest.fixture
def fake(fake_engine):
    """``fake(mode, *extra, name=None, options=())``: a PlayerSpec for one of the scripted fake
    engines."""

    def make(mode: str, *extra: str, name: str | None = None, options=()) -> PlayerSpec:
        return PlayerSpec(name=name or mode, kind="uci", command=tuple(fake_engine(mode, *extra)),
                          options=options)

    return make


@pytest.fixture(autouse=True)
def _no_live_engines():
    yield
    external.close_all()


def replay(start: chess.Board, moves) -> chess.Board:
    """Replay UCI moves with python-chess, asserting each is legal."""
    board = start.copy()
    for uci in moves:
        move = chess.Move.from_uci(uci)
        assert move in board.legal_moves, (uci, board.fen())
        board.push(move)
    return board


# ---- player_from_engine_spec --------------------------------------------------------------------

def test_builtin_spec_gives_builtin_player_with_reference_or_given_weights():
    spec = load_engine_spec("shannon")
    p = player_from_engine_spec(spec)
    assert p.is_builtin and p.weights == REF and p.name == "shannon"
    q = player_from_engine_spec(spec, [100, 310, 320, 480, 950, 12], name="cand")
    assert q.weights == (100.0, 310.0, 320.0, 480.0, 950.0, 12.0) and q.name == "cand"
    with pytest.raises(WeightsError, match="bounds"):
        player_from_engine_spec(spec, [100, 310, 320, 480, 950, 2000])


def test_uci_spec_maps_weights_to_option_names_and_scales():
    spec = load_engine_spec(HERE / "data" / "fake_engine.toml")
    p = player_from_engine_spec(spec, [350, 7])
    assert p.kind == "uci" and p.command == ("python3", "tests/fake_engines/random_mover.py")
    # fixed start-up options apart from the weights (mobility has scale 2: 7 -> 14)
    assert p.options == (("Seed", 7),)
    assert p.weight_options == (("KnightValue", 350), ("MobilityWeight", 14))
    assert p.weights == (350.0, 7.0)
    assert player_from_engine_spec(spec).weight_options == (("KnightValue", 300),
                                                            ("MobilityWeight", 10))


def test_uci_spec_options_reach_the_engine(fake_engine):
    spec = load_engine_spec(HERE / "data" / "fake_engine.toml")
    spec = dataclasses.replace(spec, command=tuple(fake_engine("random_mover")))
    eng = engine_for(player_from_engine_spec(spec, [420, 7]))
    eng.new_game()
    reply = eng.play(chess.Board(), MoveLimit(depth=1))
    assert reply.score == 420  # the fake engine reports KnightValue as its score
    assert reply.move in chess.Board().legal_moves and reply.nodes == 20


# ---- external engines ------------------------------------------------------------------------------

def test_engine_that_does_not_start_names_the_command():
    with pytest.raises(EngineError, match="/no/such/engine.*did not start"):
        ExternalEngine(PlayerSpec(name="x", kind="uci", command=("/no/such/engine",)))
    with pytest.raises(EngineError, match="exited during the UCI handshake"):
        ExternalEngine(PlayerSpec(name="x", kind="uci", command=(sys.executable, "-c", "pass")))


def test_unknown_option_is_named(fake):
    with pytest.raises(EngineError, match="no UCI option 'Hash'.*KnightValue"):
        engine_for(fake("random_mover", options=(("Hash", 16),)))
    with pytest.raises(EngineError, match="at least 0"):
        engine_for(fake("random_mover", options=(("Seed", -1),)))


def test_engines_are_cached_per_spec_and_restarted_after_discard(fake):
    spec = fake("random_mover")
    a = engine_for(spec)
    assert engine_for(spec) is a and external.live_count() == 1
    other = engine_for(fake("random_mover", options=(("Seed", 3),)))
    assert other is not a and external.live_count() == 2
    external.discard(spec)
    assert not a.alive
    b = engine_for(spec)
    assert b is not a and b.alive


@pytest.mark.parametrize("mode, reason", [("crash", "crash"), ("hang", "timeout"),
                                          ("illegal", "illegal-move")])
def test_misbehaving_engine_raises_forfeit(mode, reason, fake):
    eng = engine_for(fake(mode, "--after", "2"))
    eng.new_game()
    board = chess.Board()
    board.push(eng.move(board, MoveLimit(depth=1, timeout=1.0)))
    t0 = time.perf_counter()
    with pytest.raises(Forfeit) as info:
        eng.move(board, MoveLimit(depth=1, timeout=1.0))
    assert info.value.reason == reason
    assert time.perf_counter() - t0 < 5.0


def test_move_limit_go_command_and_timeouts():
    assert MoveLimit(depth=3).go_command() == "go depth 3"
    assert MoveLimit(nodes=500, movetime=0.2).go_command() == "go nodes 500 movetime 200"
    clocks = MoveLimit(wtime=1.25, btime=0.5, winc=0.01, binc=0.01)
    assert clocks.go_command() == "go wtime 1250 btime 500 winc 10 binc 10"
    assert clocks.hard_timeout(chess.BLACK) == pytest.approx(0.5 + external.TIMEOUT_MARGIN)
    assert MoveLimit(movetime=0.5).hard_timeout() == pytest.approx(2.5)
    assert MoveLimit(depth=3).hard_timeout() == external.MOVE_TIMEOUT
    assert MoveLimit(depth=3, timeout=1.5).hard_timeout() == 1.5


def test_uci_option_lines_are_parsed_with_spaces_ranges_and_choices():
    opt = uciproto.parse_option("option name Skill Level type spin default 20 min -20 max 20")
    assert (opt.name, opt.type, opt.default, opt.min, opt.max) == ("Skill Level", "spin", "20", -20, 20)
    assert opt.parse(-20) == "-20"
    with pytest.raises(EngineError, match="'Skill Level' = 21: must be at most 20"):
        opt.parse(21)
    combo = uciproto.parse_option("option name Style type combo default Normal var Solid var Normal")
    assert combo.choices == ("Solid", "Normal") and combo.parse("solid") == "Solid"
    assert uciproto.parse_option("option name Clear Hash type button").type == "button"
    assert uciproto.parse_option("option type spin") is None
    assert uciproto.parse_info_score("info depth 3 score mate 2 pv e2e4") == uciproto.MATE - 3
    assert uciproto.parse_info_score("info depth 3 score cp -41 nodes 9") == -41


# ---- the game loop ---------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, reason", [("crash", "crash"), ("hang", "timeout"),
                                          ("illegal", "illegal-move")])
def test_misbehaving_engine_loses_and_is_restarted_for_the_next_game(mode, reason, tmp_path,
                                                                     fake):
    # the fault happens on the engine's 3rd move, in the first process only (--once marker):
    # the restarted engine then plays the next game to its end
    bad = fake(mode, "--after", "3", "--once", str(tmp_path / "faulted"), name=f"bad-{mode}")
    good = fake("random_mover", name="random")
    start = chess.Board()
    first = play_players_game(good, bad, start, Limits(depth=1), move_timeout=1.0)
    assert first.termination == f"forfeit-{reason}"
    assert first.result == "1-0"  # black (the faulty engine) loses
    assert len(first.moves) == 5  # white's 3rd move was played, black's 3rd never came
    replay(start, first.moves)
    # colours swapped: now white is the (restarted, well-behaved) engine; the game finishes
    second = play_players_game(bad, good, start, Limits(depth=1, max_plies=40), move_timeout=1.0)
    assert not second.termination.startswith("forfeit")
    assert len(second.moves) > 6


def test_builtin_against_random_mover_is_legal_and_consistent_with_python_chess(fake):
    start = chess.Board()
    out = play_players_game(builtin(REF), fake("random_mover"), start, Limits(depth=2))
    end = replay(start, out.moves)
    assert out.termination == "checkmate" and out.result == "1-0"
    assert end.is_checkmate() and end.outcome().result() == out.result
    n = len(out.moves)
    assert out.scores.shape == (n,) and out.leaf_phi.shape == (n, 6) and out.predicted.shape == (n,)
    assert (out.scores[1::2] == 300).all()  # the fake reports KnightValue: 300 by default
    assert (out.leaf_phi[1::2] == 0).all()  # no phi for external moves
    assert out.nodes > 0


def test_two_builtin_players_replay_the_core_exactly():
    """The move-by-move loop and the core's whole-game call agree on everything."""
    start = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    a, b = builtin(REF, name="a"), builtin((100, 280, 350, 520, 880, 6), name="b")
    for adj in (Adjudication(), Adjudication(resign_score=300, resign_moves=3, draw_score=20,
                                             draw_moves=4, draw_start_ply=10)):
        core = play_game(start, a.weights, b.weights,
                         limits=Limits(depth=2, max_plies=120, adjudication=adj))
        loop = play_players_game(a, b, start, Limits(depth=2, max_plies=120, adjudication=adj))
        assert loop.moves == core.moves
        assert (loop.result, loop.termination, loop.nodes) == (core.result, core.termination, core.nodes)
        np.testing.assert_array_equal(loop.scores, core.scores)
        np.testing.assert_array_equal(loop.leaf_phi, core.leaf_phi)
        np.testing.assert_array_equal(loop.predicted, core.predicted)


def test_rules_end_games_as_the_core_does(fake):
    # a position already over: no move is asked for
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    out = play_players_game(fake("random_mover"), builtin(REF), mated, Limits(depth=1))
    assert (out.result, out.termination, out.moves) == ("1-0", "checkmate", ())
    bare = chess.Board("8/8/4k3/8/8/3K4/8/8 w - - 0 1")
    out = play_players_game(fake("random_mover"), fake("random_mover"), bare, Limits(depth=1))
    assert out.termination == "insufficient-material" and out.moves == ()
    # ply cap: two random movers, 10 plies
    out = play_players_game(fake("random_mover"), fake("random_mover", options=(("Seed", 9),)),
                            chess.Board(), Limits(depth=1, max_plies=10))
    assert (out.result, out.termination, len(out.moves)) == ("1/2-1/2", "ply-cap", 10)
