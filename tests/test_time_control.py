"""Time controls: the UCI engine's time allocation and the runner's clock accounting."""
from __future__ import annotations

import io

import chess
import pytest

from evotune.engine.uci.commands import parse_go, parse_position
from evotune.engine.uci.frontend import UciEngine
from evotune.engine.uci.timeman import INC_SHARE, LAG_WEIGHT, MIN_THINK, MOVE_OVERHEAD, allot, clock_reserve
from evotune.limits import Limits, TimeControl
from evotune.players import PlayerSpec, external
from evotune.players.external import ExternalEngine, MoveLimit
from evotune.players.gameloop import play_players_game


@pytest.fixture(autouse=True)
def _no_live_engines():
    yield
    external.close_all()


# ---- the engine's allocation --------------------------------------------------------------------

def test_a_low_clock_late_in_the_game_plans_less_than_what_is_left_after_the_overhead():
    # 0.3 s left, +0.01 s a move, move 150: the go line carries no move number, only the clock
    plan = parse_go(["wtime", "300", "btime", "900", "winc", "10", "binc", "10"], chess.WHITE)
    assert plan.seconds < 0.3 - MOVE_OVERHEAD
    assert plan.seconds <= 0.5 * (0.3 - MOVE_OVERHEAD)
    # at the reserve (0.3 s for +0.01) the increment's share is spent, not the clock
    assert clock_reserve(0.01) == pytest.approx(0.3)
    assert plan.seconds == pytest.approx(INC_SHARE * 0.01)
    # nothing left beyond the overhead (or a negative clock, sent as 0): the first iteration only
    for ms in ("0", "20", str(int(MOVE_OVERHEAD * 1000))):
        assert parse_go(["wtime", ms, "winc", "10"], chess.WHITE).seconds == MIN_THINK


@pytest.mark.parametrize("movestogo", [None, 1, 5, 40])
def test_no_plan_exceeds_half_of_the_clock_after_the_overhead(movestogo):
    for clock in (0.0, 0.01, 0.03, 0.031, 0.05, 0.1, 0.3, 1.0, 5.0, 60.0, 3600.0):
        for inc in (0.0, 0.01, 0.05, 0.1, 1.0, 30.0):
            plan = allot(clock, inc, movestogo)
            assert plan >= MIN_THINK
            assert plan <= max(MIN_THINK, 0.5 * (clock - MOVE_OVERHEAD)) + 1e-12, \
                (clock, inc, movestogo, plan)


def _increment_phase(base: float, inc: float, cost: float, moves: int = 300) -> list[float]:
    """One side's clock at each ``go`` when each move costs its plan plus ``cost`` seconds
    (what the runner measures beyond the engine's own timer: pipes, scheduling)."""
    clock, seen = base, []
    for _ in range(moves):
        seen.append(clock)
        clock -= allot(clock, inc) + cost
        assert clock > 0
        clock += inc
    return seen


def test_in_the_increment_phase_the_clock_settles_at_its_reserve_instead_of_draining():
    # 2+0.05 with 10 ms a move beyond the plan: above the reserve (0.5 s) the side saves a
    # quarter of its increment less the 10 ms each move, so it settles at 0.5 + 30 * 2.5 ms
    clocks = _increment_phase(2.0, 0.05, 0.01)
    assert min(clocks[100:]) > clock_reserve(0.05) == pytest.approx(0.5)
    assert clocks[-1] == pytest.approx(0.5 + 30 * (0.25 * 0.05 - 0.01), abs=0.01)
    # 1+0.01 with 5 ms a move beyond the plan (half the increment): below the reserve the
    # increment's share shrinks with the clock, which settles where plan + 5 ms = 10 ms:
    # 0.75 * 0.01 * c / 0.3 = 0.005, c = 0.2 s, a fifth of the base kept to the end
    clocks = _increment_phase(1.0, 0.01, 0.005)
    assert clocks[-1] == pytest.approx(0.2, abs=0.005)
    assert min(clocks) > 0.19
    # sudden death (no increment): the clock's share shrinks towards the reserve (0.3 s), and
    # below it a move plans MIN_THINK only
    clocks = _increment_phase(1.0, 0.0, 0.0)
    assert clocks[100] > 0.3 and clocks[-1] > 0.1
    assert all(a - b == pytest.approx(MIN_THINK) for a, b in zip(clocks, clocks[1:]) if a < 0.3)


def test_the_measured_lag_comes_off_the_increment():
    # 2+0.05 with 40 ms charged a move beyond the plan: without the lag the side would plan
    # 0.75 * 0.05 and lose 2.5 ms a move below its reserve; with it the share of what the
    # increment leaves (10 ms) is planned and the clock settles above the reserve again
    assert allot(0.4, 0.05, lag=0.04) == pytest.approx(INC_SHARE * 0.01 * 0.4 / 0.5)
    clock, seen = 2.0, []
    for _ in range(300):
        seen.append(clock)
        clock += 0.05 - allot(clock, 0.05, lag=0.04) - 0.04
    assert min(seen[100:]) > clock_reserve(0.05)
    # a lag beyond the increment: every move plans the least there is
    assert allot(1.0, 0.05, lag=0.06) == pytest.approx((1.0 - 0.5) / 30)
    assert allot(0.4, 0.05, lag=0.06) == MIN_THINK


def test_the_engine_measures_what_the_gui_charges_beyond_its_own_time():
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle("isready")  # the core is loaded before the clocks run, as a GUI does
    eng.handle("position startpos")
    eng.handle("go wtime 2000 btime 2000 winc 50 binc 50")
    eng.wait()
    own = eng._last[chess.WHITE][2]  # seconds from reading go to writing bestmove
    assert 0 < own < 1.0 and eng.lag() == 0.0
    # the GUI charged 0.2 s more than that: 2 - own - 0.2 + 0.05 left at the next go
    clock = int((2.0 - own - 0.2 + 0.05) * 1000)
    eng.handle("position startpos moves e2e4 e7e5")
    eng.handle(f"go wtime {clock} btime 2000 winc 50 binc 50")
    eng.wait()
    assert eng.lag() == pytest.approx(LAG_WEIGHT * 0.2, abs=0.002)
    # a clock from another game (higher than the last one) is no sample
    eng.handle("position startpos moves e2e4 e7e5 g1f3 b8c6")
    eng.handle("go wtime 60000 btime 60000 winc 50 binc 50")
    eng.wait()
    assert eng.lag() == pytest.approx(LAG_WEIGHT * 0.2, abs=0.002)
    eng.handle("quit")
    assert out.getvalue().count("bestmove") == 3 and out.getvalue().count("readyok") == 1


# ---- the engine's position handling -------------------------------------------------------------

def test_a_position_that_extends_the_last_one_pushes_only_the_new_moves():
    out = io.StringIO()
    eng = UciEngine(out=out, warm=False)
    game = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
    eng.handle("position startpos moves " + " ".join(game[:2]))
    first = eng.board
    eng.handle("position startpos moves " + " ".join(game))
    assert eng.board is first  # the same board, moved on
    assert eng.board.move_stack == parse_position(["startpos", "moves", *game]).move_stack
    assert eng.board.fen() == parse_position(["startpos", "moves", *game]).fen()
    # an illegal extension leaves the position as it was
    eng.handle("position startpos moves " + " ".join(game) + " b5c6 a1a8")
    assert "error" in out.getvalue() and [m.uci() for m in eng.board.move_stack] == game
    # the same game with a move taken back, or another start: parsed afresh
    eng.handle("position startpos moves " + " ".join(game[:5]))
    assert [m.uci() for m in eng.board.move_stack] == game[:5] and eng.board is not first
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    eng.handle(f"position fen {fen} moves e2e4")
    eng.handle(f"position fen {fen} moves e2e4 e8d7")
    assert eng.board.fen() == "8/3k4/8/8/4P3/8/8/4K3 w - - 1 2"
    eng.handle("ucinewgame")
    eng.handle("position startpos moves e2e4")
    assert eng.board.fen() == parse_position(["startpos", "moves", "e2e4"]).fen()


# ---- the runner's accounting ---------------------------------------------------------------------

def _delayed(fake_engine, go: float, position: float = 0.0) -> PlayerSpec:
    return PlayerSpec(name="delayed", kind="uci",
                      command=tuple(fake_engine("random_mover", "--delay", str(go),
                                                "--position-delay", str(position))))


def test_the_runner_charges_the_wall_time_from_go_to_bestmove(fake_engine):
    eng = ExternalEngine(_delayed(fake_engine, go=0.2, position=0.1))
    eng.new_game()
    reply = eng.play(chess.Board(), MoveLimit(wtime=5.0, btime=5.0))
    # the engine read 'go' only after its 0.1 s on 'position' (sent just before the clock
    # started) and then thought 0.2 s: both are its time, nothing else is (loose upper bound
    # for a loaded machine)
    assert 0.3 <= reply.seconds < 0.3 + 0.5


def test_a_side_that_thinks_longer_than_its_increment_flags_when_the_margin_is_gone(fake_engine):
    # 0.13 s a move at 0.3+0.05 with a 0.1 s margin: after k moves the clock shows
    # 0.25 - 0.08 k (plus latency), so the 4th move leaves -0.07 s (inside the margin, kept on
    # the clock) and the 5th -0.15 s: a loss on time
    spec = _delayed(fake_engine, go=0.13)
    out = play_players_game(spec, spec, chess.Board(),
                            Limits(tc=TimeControl(0.3, 0.05), time_margin=0.1, max_plies=40))
    assert out.termination == "time-forfeit"
    plies = len(out.moves)
    # white flags on its 5th move at the latest (8 plies played); a side's latency (pipes, a
    # loaded machine) may flag it a move or two earlier, never before its 3rd move (4 plies:
    # white would need 37 ms a move), and a runner that forgave overruns would not flag at all
    assert 4 <= plies <= 8, plies
    assert out.result == ("0-1" if plies % 2 == 0 else "1-0")
