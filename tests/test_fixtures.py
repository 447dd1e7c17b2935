"""Fixtures and the runner: stop rules with a scripted game function, scheduling, validation,
and identical results for 1 and 2 workers with real games."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.limits import Limits
from evotune.match import fixtures as fx_mod
from evotune.match import runner
from evotune.match.fixtures import Fixture, MatchSettings, decisive_settled, games_before_verdict
from evotune.match.gamerecord import GameRecord
from evotune.match.scoring import SprtParams
from evotune.paths import DEFAULT_BOOK, HELD_OUT_OPENINGS
from evotune.players import builtin

A = builtin([100, 300, 330, 500, 900, 10], name="A")
B = builtin([100, 280, 330, 500, 900, 0], name="B")
NO_OPENINGS = MatchSettings(openings=None)


class Scripted:
    """Replaces map_games: A's result of game i of fixture f is script[f][i] ('W', 'D', 'L')."""

    def __init__(self, scripts: dict[int, str]) -> None:
        self.scripts = scripts
        self.rounds: list[list[tuple]] = []

    def __call__(self, tasks, *, workers=1, backend="loky", on_result=None):
        self.rounds.append([t.key for t in tasks])
        out = []
        for t in tasks:
            g, f, p, i = t.key
            a_res = self.scripts[f][i]
            a_white = i % 2 == 0
            result = {"D": "1/2-1/2", "W": "1-0" if a_white else "0-1",
                      "L": "0-1" if a_white else "1-0"}[a_res]
            rec = GameRecord(key=t.key, white_name=t.white.name, black_name=t.black.name,
                             white_weights=t.white.weights, black_weights=t.black.weights,
                             opening=t.opening, moves=(), result=result, termination="scripted")
            out.append(rec)
            if on_result:
                on_result(rec)
        return out


@pytest.fixture
def scripted(monkeypatch):
    def make(scripts):
        s = Scripted(scripts)
        monkeypatch.setattr(runner, "map_games", s)
        return s
    return make


def fixture(f, games, stop="none", sprt=None):
    return Fixture(key=(1, f), a=A, b=B, games=games, stop=stop, sprt=sprt)


def test_decisive_rule_arithmetic():
    # 4 games: after LL A has 0, B 4, 2 games left: A can at best tie 4-4 -> settled (A loses)
    assert decisive_settled(0, 4, 2)
    # after WW: 4-0 with 2 left: B can tie 4-4, and a tie is not a win for A -> not settled
    assert not decisive_settled(4, 0, 2)
    # 5-1 with 1 left: B reaches at most 3 -> settled; 4-2 with 1 left: B can tie 4-4 -> open
    assert decisive_settled(5, 1, 1) and not decisive_settled(4, 2, 1)
    # from 0-0 with 4 games left: 2 games (LL) could settle it, not 1
    assert games_before_verdict(0, 0, 4) == 2
    assert games_before_verdict(0, 0, 6) == 3
    assert games_before_verdict(2, 4, 3) == 1


def test_decisive_stops_at_the_right_game(scripted):
    s = scripted({0: "LLWW", 1: "WWWW", 2: "WLWL", 3: "DDLLWW", 4: "DWDD"})
    fixtures = [fixture(0, 4, "decisive"), fixture(1, 4, "decisive"), fixture(2, 4, "decisive"),
                fixture(3, 6, "decisive"), fixture(4, 4, "decisive")]
    res = runner.run_fixtures(fixtures, settings=NO_OPENINGS, seed=5)
    # f0: LL -> 0-4 with 2 left: stop after 2; f1: WWW -> 6-0 with 1 left: stop after 3
    # f2: all 4 (4-4: A does not win); f3: DDL -> 2-4 with 3 left, L -> 2-6 with 2 left: stop
    # f4: DWD -> 4-2 with 1 left: B could tie 4-4 -> play it; D -> 5-3, A wins
    assert [r.games for r in res] == [2, 3, 4, 4, 4]
    assert [r.stopped_early for r in res] == [True, True, False, True, False]
    assert [r.a_wins for r in res] == [False, True, False, False, True]
    assert [(r.points_a, r.points_b) for r in res] == [(0, 4), (6, 0), (4, 4), (2, 6), (5, 3)]
    # round 1: every fixture plays the games that cannot settle it (2 + 2 + 2 + 3 + 2 = 11);
    # round 2: one game for f1, f2, f3, f4 (each could now settle after one game);
    # round 3: f2 (4-2, B can still tie) and f4 (4-2 likewise)
    assert [len(r) for r in s.rounds] == [11, 4, 2]
    assert sorted(k[3] for k in s.rounds[1] if k[1] == 3) == [3]


def test_none_plays_everything_in_one_round(scripted):
    s = scripted({0: "LLLL", 7: "WDWD"})
    res = runner.run_fixtures([fixture(0, 4), fixture(7, 4)], settings=NO_OPENINGS, seed=1)
    assert len(s.rounds) == 1 and [r.games for r in res] == [4, 4]
    assert res[1].pentanomial == (0, 0, 0, 2, 0) and not res[0].stopped_early


def test_sprt_stops_and_lookahead_does_not_change_results(scripted):
    p = SprtParams(0, 10)
    s = scripted({0: "W" * 200})
    one = runner.run_fixtures([fixture(0, 200, "sprt", p)], settings=NO_OPENINGS, seed=1,
                              workers=1)
    rounds_one = len(s.rounds)
    s = scripted({0: "W" * 200})
    six = runner.run_fixtures([fixture(0, 200, "sprt", p)], settings=NO_OPENINGS, seed=1,
                              workers=6)
    assert one[0].sprt.verdict == "H1" and one[0].stopped_early
    # all WW pairs: the LLR is past the upper bound from the first pair on, and the verdict
    # comes at the 4th pair (SprtParams.min_pairs = 4): 8 games
    assert one[0].games == 8 and one[0].pentanomial == (0, 0, 0, 0, 4)
    assert one == six  # speculative pairs past the stop are discarded
    # 1 worker: one pair per round (4 rounds); 6 workers: 3 pairs per round (2 rounds)
    assert rounds_one == 4 and [len(r) for r in s.rounds] == [6, 6]


def test_pairs_share_openings_with_colours_swapped(scripted):
    scripted({0: "WDLW"})
    settings = MatchSettings()  # the default 2moves_v1 suite
    r = runner.run_fixtures([fixture(0, 4)], settings=settings, seed=11)[0]
    g = r.records
    assert g[0].opening == g[1].opening and g[2].opening == g[3].opening
    assert g[0].opening != g[2].opening
    assert (g[0].white_name, g[1].white_name, g[2].white_name) == ("A", "B", "A")
    again = runner.run_fixtures([fixture(0, 4)], settings=settings, seed=11)[0]
    other = runner.run_fixtures([fixture(0, 4)], settings=settings, seed=12)[0]
    assert again == r and other.records[0].opening != g[0].opening


def test_progress_events(scripted):
    scripted({0: "WW", 1: "LLLL"})
    events = []
    runner.run_fixtures([fixture(0, 2), fixture(1, 4, "decisive")], settings=NO_OPENINGS,
                        seed=1, progress=events.append)
    assert [e.done for e in events] == [1, 2, 3, 4]
    assert all(e.planned == 6 for e in events) and events[-1].scheduled == 4
    assert {e.fixture for e in events} == {(1, 0), (1, 1)}


def test_validation():
    with pytest.raises(ConfigError, match="even"):
        fixture(0, 3)
    with pytest.raises(ConfigError, match="even"):
        fixture(0, 0)
    with pytest.raises(ConfigError, match="stop"):
        fixture(0, 2, stop="sudden")
    with pytest.raises(ConfigError, match="SprtParams"):
        fixture(0, 2, stop="sprt")
    with pytest.raises(ConfigError, match="unique"):
        runner.run_fixtures([fixture(0, 2), fixture(0, 2)], settings=NO_OPENINGS, seed=0)
    with pytest.raises(ConfigError, match="depth"):
        MatchSettings(limits=Limits(depth=0))
    with pytest.raises(ConfigError, match="kind"):
        MatchSettings(openings_kind="txt")
    assert fx_mod.Fixture(key=[2, 3], a=A, b=B).key == (2, 3)
    assert Fixture(key=(0, 0), a=A, b=B, games=np.int64(4)).games == 4


def _engine_ready() -> bool:
    try:
        from evotune.engine import play_game  # noqa: F401
    except ImportError:
        return False
    return True


needs_engine = pytest.mark.skipif(not _engine_ready(),
                                  reason="the numba core (evotune.engine.play_game) is not there")


@needs_engine
def test_real_games_identical_for_one_and_two_workers():
    settings = MatchSettings(limits=Limits(depth=2, max_plies=60))
    fixtures = [Fixture(key=(4, f), a=A, b=B, games=4, stop=stop, record_leaves=(f == 0))
                for f, stop in enumerate(("none", "decisive", "none"))]
    one = runner.run_fixtures(fixtures, settings=settings, seed=3, workers=1)
    events = []
    two = runner.run_fixtures(fixtures, settings=settings, seed=3, workers=2,
                              progress=events.append)
    assert one == two
    assert [e.done for e in events] == list(range(1, sum(r.games for r in two) + 1))
    assert [r.records for r in one] == [r.records for r in two]
    rec = one[0].records[0]
    assert rec.scores is not None and len(rec.scores) == rec.plies == len(rec.leaf_phi)
    plain = one[1].records[0]  # without leaves: scores and depths (the PGN's comments) only
    assert plain.leaf_phi is None and plain.predicted is None
    assert len(plain.scores) == len(plain.depths) == plain.plies and plain.move_ms is None
    assert all(r.result in ("1-0", "0-1", "1/2-1/2") for m in one for r in m.records)
    assert all(r.plies <= 60 for m in one for r in m.records)


@needs_engine
@pytest.mark.parametrize("openings", [str(HELD_OUT_OPENINGS), str(DEFAULT_BOOK)])
def test_real_games_replay_on_python_chess(openings):
    settings = MatchSettings(limits=Limits(depth=1, max_plies=40), openings=openings,
                             book_plies=6)
    r = runner.run_fixtures([Fixture(key=(0, 9), a=A, b=B, games=4)], settings=settings,
                            seed=2)[0]
    assert r.records[0].opening.moves and r.records[0].opening == r.records[1].opening
    for rec in r.records:
        board = rec.opening.board()
        for uci in rec.moves:
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves, (rec.key, uci)
            board.push(move)
        if rec.termination == "checkmate":
            assert board.is_checkmate()
            assert rec.result == ("0-1" if board.turn == chess.WHITE else "1-0")
        else:
            assert rec.result == "1/2-1/2" or rec.termination.startswith("adjudication")


@needs_engine
def test_dask_backend_gives_the_same_results():
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] is an optional extra")
    settings = MatchSettings(limits=Limits(depth=1, max_plies=30))
    fixtures = [Fixture(key=(0, i), a=A, b=B, games=4, stop="decisive") for i in range(3)]
    local = runner.run_fixtures(fixtures, settings=settings, seed=1, workers=1)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None):
        remote = runner.run_fixtures(fixtures, settings=settings, seed=1, workers=2,
                                     backend="dask")
    assert remote == local
    with pytest.raises(ConfigError, match="backend"):
        runner.map_games([runner.game_task(fixtures[0], 0, runner.Opening(), settings)] * 2,
                         workers=2, backend="nope")


def test_games_stopped_early_leave_no_joblib_warning():
    """An exception while games arrive (Ctrl-C in a run) stops the pool there and then: joblib's
    'tasks have been successfully executed but not used' warning, printed when its generator was
    collected, came after the command's one line (a flaky test_ctrl_c)."""
    import gc
    import warnings

    settings = MatchSettings(limits=Limits(depth=1, max_plies=20))
    fixture = Fixture(key=(0, 0), a=A, b=B, games=8)
    tasks = [runner.game_task(fixture, i, runner.Opening(), settings) for i in range(8)]

    def stop(rec: GameRecord) -> None:
        raise KeyboardInterrupt

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            runner.map_games(tasks, workers=2, on_result=stop)
        gc.collect()
    assert [str(w.message) for w in seen] == []
