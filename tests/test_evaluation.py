"""Evaluations as values (engine/evaluation.py): what each kind knows, the engine API taking one,
and a new kind registered in the two places a kind is declared (spec/features.py's names,
engine/evaluation.py's registry) playing through specs, players and runs with no other change."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from evotune.engine import api
from evotune.engine.evaluation import (
    EVALUATIONS,
    LinearEvaluation,
    NetEvaluation,
    evaluation_of,
    spec_evaluation,
)
from evotune.engine.net.network import random_net, write_net
from evotune.errors import ConfigError
from evotune.kinds.games.lifecycle import starts_at_reference
from evotune.limits import Limits
from evotune.match.resolve import resolve_player
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.runs.runspec import load_run_engine
from evotune.spec import features as feature_sets
from evotune.spec.file import load_engine_spec

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def test_each_kind_knows_its_sizes_phi_and_code():
    got = {name: (e.size, e.phi_width, e.denominator, e.code, e.reads_file)
           for name, e in EVALUATIONS.items()}
    assert got == {"shannon": (6, 6, 1, 0, False), "pst": (778, 778, 24, 1, False),
                   "extended": (824, 824, 24, 2, False), "nnue": (0, 0, 1, 3, True)}
    assert evaluation_of("pst") is EVALUATIONS["pst"]
    assert evaluation_of(EVALUATIONS["pst"]) is EVALUATIONS["pst"]
    with pytest.raises(ConfigError, match="unknown feature set 'bogus'; use one of shannon, pst, "
                                          "extended, nnue"):
        evaluation_of("bogus")
    assert spec_evaluation(load_engine_spec("extended")) == LinearEvaluation("extended")
    assert spec_evaluation(load_engine_spec("nnue")) == NetEvaluation("nnue")


def test_the_api_takes_an_evaluation_as_it_takes_its_name():
    spec = load_engine_spec("pst-pesto")
    w = spec.space().reference_array[:spec.eval_size]
    pst = evaluation_of("pst")
    assert api.evaluate(FEN, w, pst) == api.evaluate(FEN, w, "pst") != 0
    a = api.search(FEN, w, depth=2, features=pst)
    b = api.search(FEN, w, depth=2, features="pst")
    assert (a.move, a.score, a.nodes) == (b.move, b.score, b.nodes)
    q = api.qsearch(FEN, w, pst)
    assert q.leaf_phi.shape == (778,)
    g = api.play_game(chess.Board(), w, w, limits=Limits(depth=1, max_plies=6), features=(pst, pst))
    h = api.play_game(chess.Board(), w, w, limits=Limits(depth=1, max_plies=6), features="pst")
    assert g.moves == h.moves and g.leaf_phi.shape == (6, 778)
    assert (g.leaf_phi == h.leaf_phi).all()


def test_a_new_net_kind_plays_through_specs_players_and_runs(tmp_path, monkeypatch):
    """A second net kind ('nnue2': here the core's net code under another name) declared in
    spec/features.py (NETS) and registered in engine/evaluation.py is read from a spec, played
    as a player against a linear one, tuned by a run (its output layer) with nothing else
    changed."""
    monkeypatch.setattr(feature_sets, "NETS", ("nnue", "nnue2"))
    monkeypatch.setitem(EVALUATIONS, "nnue2", NetEvaluation("nnue2"))
    net = tmp_path / "toy.nnue"
    write_net(random_net(16, 5), net)
    spec_file = tmp_path / "toy.toml"
    spec_file.write_text('name = "toy"\nkind = "builtin"\nfeatures = "nnue2"\n'
                         'net = "toy.nnue"\n')
    player = resolve_player(str(spec_file))
    assert (player.features, player.net, player.evaluation.phi_width) == ("nnue2", str(net), 0)
    same = resolve_player(f"nnue:{net}")
    assert api.evaluate(FEN, evaluation(player), player.evaluation) == \
        api.evaluate(FEN, evaluation(same), "nnue")
    linear = resolve_player("shannon")
    game = api.play_game(chess.Board(), evaluation(player), evaluation(linear),
                         limits=Limits(depth=1, nodes=2000, max_plies=8),
                         features=(player.evaluation, linear.features))
    assert len(game.moves) == 8 and game.leaf_phi.shape == (8, 6)
    spec = load_run_engine(str(spec_file))  # a run tunes its output layer: 2 x 16 + 2 weights
    assert len(spec.weights) == 34 and spec.space().max_abs == 100_000
    assert starts_at_reference(spec)
    tuned = player_from_engine_spec(spec, spec.space().reference_array)
    assert np.array_equal(tuned.weights, spec.space().reference_array)
    assert api.evaluate(FEN, evaluation(tuned), "nnue2") == \
        api.evaluate(FEN, evaluation(same), "nnue")
