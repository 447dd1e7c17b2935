"""Weights: one validated value type from the plan to the engine. A vector is checked once, when
its Weights is made; players and the engine take it without checking it again, and the games are
those of plain vectors."""
from __future__ import annotations

import pickle

import chess
import numpy as np
import pytest

import evotune.engine.evaluation as evaluation_module
import evotune.space as space_module
from evotune.engine import play_game, search
from evotune.engine.evaluation import evaluation_of
from evotune.errors import WeightsError
from evotune.kinds.games.config import RunConfig
from evotune.kinds.games.plan import plan_run
from evotune.kinds.games.settings import Budget, PlaySettings
from evotune.kinds.games.solver import Solver
from evotune.limits import Limits
from evotune.match import Fixture, MatchSettings, run_fixtures
from evotune.players import builtin
from evotune.players.gameloop import play_players_game
from evotune.players.spec import player_from_engine_spec
from evotune.runs.store import Store
from evotune.space import MAX_ABS_WEIGHT, Weights, WeightSpace
from evotune.spec.file import load_engine_spec

REF = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)
CAND = (100.0, 280.0, 345.4, 470.0, 905.0, 7.6)


@pytest.fixture
def checks(monkeypatch):
    """Counts the numeric checks of weight vectors (space.check_weights, wherever called)."""
    calls = []
    real = space_module.check_weights

    def counted(*args, **kwargs):
        calls.append(kwargs.get("what"))
        return real(*args, **kwargs)

    monkeypatch.setattr(space_module, "check_weights", counted)
    monkeypatch.setattr(evaluation_module, "check_weights", counted)
    return calls


def test_a_weights_is_checked_when_made_and_immutable():
    sp = WeightSpace()
    w = sp.weights(CAND)
    assert w == CAND and type(w) is Weights and w.names == sp.names
    assert w.array.dtype == np.float64 and not w.array.flags.writeable
    assert w.engine.dtype == np.int64 and w.engine.tolist() == [100, 280, 345, 470, 905, 8]
    assert not w.engine.flags.writeable
    with pytest.raises(AttributeError):
        w.names = ("x",) * 6
    with pytest.raises(ValueError):
        w.array[0] = 1.0
    for bad, said in (((100, 300, 330, 500, 900), "got 5 values, need 6"),
                      ((100, 300, 330, 500, 900, float("nan")), "must be finite"),
                      ((100, 300, 330, 500, 900, "10"), "not a list of numbers"),
                      ((100, 300, 330, 500, 1900, 10), "queen outside the bounds"),
                      ((100, 300, 330, 500, 900, True), "not a list of numbers")):
        with pytest.raises(WeightsError, match=said):
            sp.weights(bad)
    with pytest.raises(WeightsError, match=f"within \\+-{MAX_ABS_WEIGHT}"):
        Weights((0,) * 5 + (MAX_ABS_WEIGHT + 1,), sp.names)
    assert sp.reference_weights() == REF


def test_a_pickled_weights_comes_back_equal_without_a_check(checks):
    w = WeightSpace().weights(CAND)
    assert len(checks) == 1
    back = pickle.loads(pickle.dumps(w))
    assert len(checks) == 1  # unpickling does not check again
    assert back == w and back.names == w.names and type(back) is Weights
    assert not back.array.flags.writeable and back.engine.tolist() == w.engine.tolist()


def test_a_run_checks_each_candidate_once_from_the_plan_to_the_engine(tmp_path, checks):
    plan = plan_run(RunConfig(population=4, budget=Budget(generations=1),
                              play=PlaySettings(games=2, limits=Limits(depth=1),
                                                openings="startpos")))
    solver = Solver(Store(tmp_path / "r"), plan)  # made, not opened: the store is not touched
    assert not (tmp_path / "r").exists()
    a, b = solver.player(CAND, "a"), solver.player(REF, "b")
    assert checks == ["shannon weights", "shannon weights"]
    assert a.weights == CAND and type(a.weights) is Weights
    out = play_game(chess.Board(), a.weights, b.weights, limits=Limits(depth=1, max_plies=40))
    move = search(chess.Board(), a.weights, depth=2)
    game = play_players_game(a, b, chess.Board(), Limits(depth=1, max_plies=6))
    assert len(checks) == 2  # the core's boundary and the move-by-move loop took them as made
    # ... and they play what plain vectors play (whose checks the engine still makes)
    plain = play_game(chess.Board(), CAND, REF, limits=Limits(depth=1, max_plies=40))
    assert (out.moves, out.result, out.scores.tolist()) == \
        (plain.moves, plain.result, plain.scores.tolist())
    again = search(chess.Board(), np.array(CAND), depth=2)
    assert (move.move, move.score, move.pv, move.nodes) == \
        (again.move, again.score, again.pv, again.nodes)
    assert game.moves == play_game(chess.Board(), CAND, REF,
                                   limits=Limits(depth=1, max_plies=6)).moves
    assert len(checks) == 2 + 5  # two games of two plain vectors and one search


def test_players_made_from_weights_are_those_of_plain_vectors(checks):
    spec = load_engine_spec("shannon")
    w = spec.space().weights(CAND)
    made = player_from_engine_spec(spec, w, name="x")
    assert made.weights is w and len(checks) == 1
    assert made == player_from_engine_spec(spec, list(CAND), name="x")
    assert builtin(w, name="x") == made and builtin(w, name="x").weights is w
    # a Weights of other names is checked as any vector would be
    pst = load_engine_spec("pst")
    with pytest.raises(WeightsError, match="got 6 values, need 778"):
        player_from_engine_spec(pst, w)
    with pytest.raises(WeightsError, match="got 6 values, need 778"):
        builtin(w, evaluation=evaluation_of("pst"))


def test_games_between_weights_players_store_plain_tuples():
    spec = load_engine_spec("shannon")
    a = player_from_engine_spec(spec, spec.space().weights(CAND), name="a")
    b = player_from_engine_spec(spec, None, name="b")
    assert type(b.weights) is Weights and b.weights == REF
    res, = run_fixtures([Fixture(key=(1, 0), a=a, b=b, games=2)],
                        settings=MatchSettings(openings=None), seed=3, workers=1)
    rec = res.records[0]
    white, black = (rec.white_weights, rec.black_weights)
    assert {white, black} == {CAND, REF} and type(white) is tuple and type(black) is tuple
