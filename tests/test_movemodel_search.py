"""The move model in the searches (issue 40): ``[search] prior = "model:FILE"`` for
probability-limited search and PUCT, per side in a core game, and its bad inputs."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine import play_game, search
from evotune.engine.movemodel import modelfile as MM
from evotune.errors import ConfigError, MoveModelError
from evotune.limits import Limits
from evotune.paths import ENGINES_DIR
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.movefeatures import BLOCK_START
from evotune.spec.searchsettings import SearchSettings, search_settings

W = (100, 300, 330, 500, 900, 10)
SHIPPED_SHA256 = "f2c4b74925924becabe0d929d177c24a6994160711d30d5f02cc52325391a371"
SHIPPED_H16_SHA256 = "3566c5abb0fdbfd05538210aeccb0d30bf40cceeb8989f4adeee66dbca686955"
SHIPPED_F2_SHA256 = "6fe5ab2d003768208dbea4f50377d2266d4dbdb4836e945ae9a4115e8cde1706"
SHIPPED_NET11_SHA256 = "c9979c83a02f1a48dee3a85e27f167a291f830cc92fe12a12cf933d961416092"
MIDDLEGAME = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def _model(tmp_path, weights, name="m.evomove") -> str:
    p = tmp_path / name
    MM.write_move_model(MM.MoveModel(weights=np.asarray(weights, dtype=np.int32)), p)
    return str(p)


def _e4_model(tmp_path) -> str:
    """A model that likes one move: a pawn to e4 (e2e4 from the start)."""
    w = np.zeros(MM.N_FEATURES, dtype=np.int32)
    w[BLOCK_START[0] + 64 * 0 + chess.E4] = 1500
    return _model(tmp_path, w, "e4.evomove")


def prob(model: str = "", **kw) -> SearchSettings:
    return SearchSettings(algorithm="probability", prior=True, model=model, **kw)


def test_a_zero_model_splits_exactly_like_the_uniform_rule(tmp_path):
    zero = _model(tmp_path, np.zeros(MM.N_FEATURES))
    for fen in (chess.STARTING_FEN, MIDDLEGAME):
        uniform = search(fen, W, nodes=30000, settings=SearchSettings(algorithm="probability"))
        flat = search(fen, W, nodes=30000, settings=prob(zero))
        assert (flat.score, flat.nodes, flat.depth, flat.pv) == \
            (uniform.score, uniform.nodes, uniform.depth, uniform.pv)


def test_a_model_changes_the_split_and_differs_from_the_ordering_prior(tmp_path):
    rand = _model(tmp_path, MM.random_model(seed=4, spread=300).weights)
    ordering = search(MIDDLEGAME, W, nodes=1, settings=prob(factor=1 / 200))
    model = search(MIDDLEGAME, W, nodes=1, settings=prob(rand, factor=1 / 200))
    uniform = search(MIDDLEGAME, W, nodes=1,
                     settings=SearchSettings(algorithm="probability", factor=1 / 200))
    assert len({ordering.nodes, model.nodes, uniform.nodes}) == 3
    again = search(MIDDLEGAME, W, nodes=1, settings=prob(rand, factor=1 / 200))
    assert (again.nodes, again.score, again.pv) == (model.nodes, model.score, model.pv)


def test_a_hidden_model_splits_like_its_scores_say(tmp_path):
    hidden = MM.random_model(seed=4, spread=300, hidden=8)
    silent = MM.MoveModel(weights=hidden.weights, hidden_weights=hidden.hidden_weights,
                          hidden_bias=hidden.hidden_bias, out_weights=np.zeros(8, np.int32))
    paths = {}
    for name, m in (("h", hidden), ("s", silent), ("l", MM.MoveModel(weights=hidden.weights))):
        paths[name] = str(tmp_path / f"{name}.evomove")
        MM.write_move_model(m, paths[name])
    r = {k: search(MIDDLEGAME, W, nodes=1, settings=prob(p, factor=1 / 200))
         for k, p in paths.items()}
    assert (r["s"].nodes, r["s"].score, r["s"].pv) == (r["l"].nodes, r["l"].score, r["l"].pv)
    assert r["h"].nodes != r["l"].nodes
    # a game of the hidden model against its linear part: each side plays its own, and the
    # silent one (the same scores as the linear part) plays the linear part's game
    g1 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, max_plies=16),
                   settings=(prob(paths["h"]), prob(paths["l"])))
    g2 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, max_plies=16),
                   settings=(prob(paths["s"]), prob(paths["l"])))
    g3 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, max_plies=16),
                   settings=(prob(paths["l"]), prob(paths["l"])))
    assert g2.moves == g3.moves and g1.moves != g3.moves


def test_puct_follows_the_model(tmp_path):
    e4 = _e4_model(tmp_path)
    s = SearchSettings(algorithm="uct", prior=True, model=e4, temperature=100)
    r = search(chess.STARTING_FEN, W, nodes=400, settings=s)
    visits = {uci: n for uci, n, _ in r.children}
    assert max(visits, key=visits.get) == "e2e4" and visits["e2e4"] > 200
    plain = search(chess.STARTING_FEN, W, nodes=400,
                   settings=SearchSettings(algorithm="uct", prior=True))
    assert dict((u, n) for u, n, _ in plain.children)["e2e4"] < visits["e2e4"]


def test_each_side_of_a_core_game_plays_its_own_prior(tmp_path):
    rand = _model(tmp_path, MM.random_model(seed=9, spread=300).weights)
    sides = (prob(rand), prob())
    g1 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, max_plies=16),
                   settings=sides)
    g2 = play_game(chess.STARTING_FEN, W, W, limits=Limits(nodes=3000, max_plies=16),
                   settings=sides)
    assert g1.moves == g2.moves and g1.nodes == g2.nodes
    board = chess.Board()
    for i, move in enumerate(g1.moves[:8]):
        r = search(board, W, nodes=3000, settings=sides[i % 2])
        assert r.score == g1.scores[i] and r.move == move
        board.push_uci(move)


# ---- the spec ------------------------------------------------------------------------------------

SPEC = """name = "m"
kind = "builtin"
[search]
algorithm = "probability"
prior = {prior}
[[weight]]
name = "pawn"
reference = 100
[[weight]]
name = "knight"
reference = 300
[[weight]]
name = "bishop"
reference = 330
[[weight]]
name = "rook"
reference = 500
[[weight]]
name = "queen"
reference = 900
[[weight]]
name = "mobility"
reference = 10
"""


def _spec(folder, prior: str):
    path = folder / "m.toml"
    path.write_text(SPEC.format(prior=prior))
    return load_engine_spec(str(path))


def test_the_spec_key_finds_the_model_beside_the_spec(tmp_path):
    path = _e4_model(tmp_path)
    spec = _spec(tmp_path, '"model:e4.evomove"')
    assert spec.search.prior and spec.search.model == str(tmp_path / "e4.evomove")
    assert "prior model e4.evomove T 100" in spec.search.describe()
    assert spec.names[-1] == "prior_temperature"
    player = player_from_engine_spec(spec)
    assert player.search.model == path
    # the model is part of the engine's identity
    other = tmp_path / "b"
    other.mkdir()
    _model(other, np.ones(MM.N_FEATURES), "e4.evomove")
    spec2 = _spec(other, '"model:e4.evomove"')
    assert spec2.digest != spec.digest
    assert not search_settings({"algorithm": "uct", "prior": True}).model


@pytest.mark.parametrize("prior, match", [
    ('"model:nope.evomove"', "move model 'nope.evomove' not found"),
    ('"model:"', "must be true, false or \"model:FILE\""),
    ('"yes"', "must be true, false or \"model:FILE\""),
    ("1", "must be true, false or \"model:FILE\"")])
def test_bad_prior_values(tmp_path, prior, match):
    with pytest.raises(ConfigError, match=match):
        _spec(tmp_path, prior)


def test_a_damaged_model_is_refused_when_the_player_is_made(tmp_path):
    path = tmp_path / "bad.evomove"
    path.write_bytes(b"EVOMOVE\0" + bytes(10))
    spec = _spec(tmp_path, '"model:bad.evomove"')
    with pytest.raises(MoveModelError, match="truncated"):
        player_from_engine_spec(spec)


def test_a_match_with_a_damaged_model_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "bad.evomove").write_bytes(b"not a model at all, no header" * 3)
    (tmp_path / "m.toml").write_text(SPEC.format(prior='"model:bad.evomove"'))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "match", str(tmp_path / "m.toml"),
                           "shannon", "--games", "2", "--nodes", "500", "--max-plies", "10"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "not a move model" in proc.stderr


# ---- alpha-beta's quiet moves ordered by the model ------------------------------------------------

AB_FENS = [MIDDLEGAME, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
           "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"]


def test_alpha_beta_ordered_by_a_model_keeps_the_score_and_changes_the_tree(tmp_path):
    rand = _model(tmp_path, MM.random_model(seed=7, spread=500).weights)
    ab_model = SearchSettings(model=rand)
    assert ab_model.is_alphabeta and ab_model.weight_names() == ()
    changed = 0
    for fen in AB_FENS:
        plain = search(fen, W, depth=4)
        ordered = search(fen, W, depth=4, settings=ab_model)
        assert ordered.score == plain.score and ordered.depth == plain.depth == 4
        changed += ordered.nodes != plain.nodes
        again = search(fen, W, depth=4, settings=ab_model)
        assert (again.nodes, again.pv) == (ordered.nodes, ordered.pv)
        # the flag does not outlive its search: a plain search after it is plain again
        assert search(fen, W, depth=4).nodes == plain.nodes
    assert changed == len(AB_FENS)


def test_a_game_orders_each_alpha_beta_side_by_its_own_model(tmp_path):
    rand = _model(tmp_path, MM.random_model(seed=8, spread=500).weights)
    sides = (SearchSettings(model=rand), SearchSettings())
    g = play_game(chess.STARTING_FEN, W, W, limits=Limits(depth=3, max_plies=12), settings=sides)
    plain = play_game(chess.STARTING_FEN, W, W, limits=Limits(depth=3, max_plies=12))
    assert g.nodes != plain.nodes
    board = chess.Board()
    for i, move in enumerate(g.moves[:8]):
        r = search(board, W, depth=3, settings=sides[i % 2])
        assert r.score == g.scores[i] and r.move == move
        board.push_uci(move)


def test_alpha_beta_takes_a_model_but_not_the_ordering_prior(tmp_path):
    _e4_model(tmp_path)
    text = SPEC.replace('algorithm = "probability"\n', "")
    (tmp_path / "ab.toml").write_text(text.format(prior='"model:e4.evomove"'))
    spec = load_engine_spec(str(tmp_path / "ab.toml"))
    assert spec.search.is_alphabeta and spec.search.model and not spec.search.prior
    assert spec.names[-1] == "mobility"  # no prior_temperature
    assert spec.search.describe() == "alphabeta, quiet moves by model e4.evomove"
    (tmp_path / "ab.toml").write_text(text.format(prior="true"))
    with pytest.raises(ConfigError, match="prior = true belongs to algorithm"):
        load_engine_spec(str(tmp_path / "ab.toml"))
    (tmp_path / "ab.toml").write_text(text.format(prior="false"))  # the default, said
    spec = load_engine_spec(str(tmp_path / "ab.toml"))
    assert spec.search.is_alphabeta and not spec.search.model and not spec.search.prior


def test_the_shipped_model_and_its_specs():
    model_path = ENGINES_DIR / "pesto-moves.evomove"
    data = model_path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHIPPED_SHA256  # docs/results/move-model.md
    model = MM.read_move_model(model_path)
    assert model.scale == 100
    for name, algorithm in (("pst-pesto-probability-moves", "probability"),
                            ("pst-pesto-puct-moves", "uct")):
        spec = load_engine_spec(name)
        assert spec.search.algorithm == algorithm and spec.search.prior
        assert Path(spec.search.model) == model_path.resolve()
        assert spec.names[-1] == "prior_temperature"
        player = player_from_engine_spec(spec)
        assert player.search.temperature == 100


def test_the_shipped_hidden_model_and_its_spec():
    model_path = ENGINES_DIR / "pesto-moves-h16.evomove"
    assert hashlib.sha256(model_path.read_bytes()).hexdigest() == SHIPPED_H16_SHA256
    model = MM.read_move_model(model_path)
    assert model.hidden == 16 and model.scale == 100
    spec = load_engine_spec("pst-pesto-puct-moves-h16")
    assert spec.search.algorithm == "uct" and Path(spec.search.model) == model_path.resolve()
    r = search(MIDDLEGAME, W, nodes=300, settings=player_from_engine_spec(spec).search)
    assert r.nodes > 0 and r.pv


def test_the_shipped_set_2_model_plays_as_a_prior():
    model_path = ENGINES_DIR / "pesto-moves-f2-h16.evomove"
    assert hashlib.sha256(model_path.read_bytes()).hexdigest() == SHIPPED_F2_SHA256
    model = MM.read_move_model(model_path)
    assert model.features == 2 and model.hidden == 16 and model.checksum == "d35362104df50742"
    for settings in (SearchSettings(algorithm="uct", prior=True, model=str(model_path)),
                     SearchSettings(algorithm="probability", prior=True, model=str(model_path)),
                     SearchSettings(model=str(model_path))):
        r = search(MIDDLEGAME, W, nodes=300, settings=settings)
        assert r.nodes > 0 and r.pv


def test_the_shipped_net11_model_and_its_probability_spec():
    """net11-moves-h16.evomove (net11's depth-5 choices, docs/results/move-model.md) splits the
    probability of net11's probability-limited search (engines/net11-probability-moves.toml)."""
    from evotune.engine.net.network import read_net

    model_path = ENGINES_DIR / "net11-moves-h16.evomove"
    assert hashlib.sha256(model_path.read_bytes()).hexdigest() == SHIPPED_NET11_SHA256
    model = MM.read_move_model(model_path)
    assert model.features == 2 and model.hidden == 16 and model.checksum == "da629ec94074c83b"
    spec = load_engine_spec("net11-probability-moves")
    assert spec.features == "nnue" and Path(spec.net) == (ENGINES_DIR / "net11.nnue").resolve()
    assert spec.search.algorithm == "probability" and spec.search.prior
    assert Path(spec.search.model) == model_path.resolve()
    assert spec.names == ("probability_factor", "prior_temperature")
    player = player_from_engine_spec(spec)
    net = read_net(spec.net)
    r = search(MIDDLEGAME, net, nodes=3000, features="nnue", settings=player.search)
    uniform = search(MIDDLEGAME, net, nodes=3000, features="nnue",
                     settings=SearchSettings(algorithm="probability"))
    assert r.nodes >= 3000 and r.pv and (r.move, r.score) != (uniform.move, uniform.score)


def test_the_shipped_net11_puct_spec():
    """engines/net11-puct-moves.toml: PUCT with net11's move model at c 0.30 and temperature
    400 (the sweep of docs/results/search-study.md), its budget in nodes; its weights are what
    the search uses, and they change the search."""
    from evotune.engine.net.network import read_net

    spec = load_engine_spec("net11-puct-moves")
    assert spec.search.algorithm == "uct" and spec.search.prior
    assert spec.search.policy == "qsearch" and spec.search.budget_unit == "nodes"
    assert Path(spec.search.model) == (ENGINES_DIR / "net11-moves-h16.evomove").resolve()
    assert spec.names == ("uct_c", "uct_k", "prior_temperature")
    player = player_from_engine_spec(spec)
    assert (player.search.c, player.search.k, player.search.temperature) == (0.30, 1.0, 400.0)
    net = read_net(spec.net)
    r = search(MIDDLEGAME, net, nodes=3000, features="nnue", settings=player.search)
    default = search(MIDDLEGAME, net, nodes=3000, features="nnue",
                     settings=replace(player.search, c=1.41, temperature=100.0))
    assert r.pv and r.simulations > 0 and r.children != default.children


@pytest.mark.parametrize("name, checksum", [("tree-quiet-lin", "e3632859e1e22047"),
                                            ("tree-all-lin", None)])
def test_the_tree_models_are_the_ones_the_page_names(name, checksum):
    """The models of docs/results/move-model-order.md's "History and the model together" ship beside
    the page with the SHA-256 it names; each reads as a linear set-2 model and orders alpha-beta's
    quiet moves without changing its score."""
    root = Path(__file__).resolve().parents[1] / "docs" / "results"
    path = root / "artefacts" / "move-model" / f"{name}.evomove"
    page = "".join(f.read_text() for f in sorted(root.glob("move-model*.md")))
    assert hashlib.sha256(path.read_bytes()).hexdigest() in page
    model = MM.read_move_model(path)
    assert model.hidden == 0 and model.features == 2
    if checksum:
        assert model.checksum == checksum and checksum in page
    ab_model = SearchSettings(model=str(path))
    changed = 0
    for fen in AB_FENS:
        plain = search(fen, W, depth=4)
        ordered = search(fen, W, depth=4, settings=ab_model)
        assert ordered.score == plain.score
        changed += ordered.nodes != plain.nodes
    assert changed > 0


def test_every_move_model_artefact_is_named_by_its_page():
    """Each file under docs/results/artefacts/move-model/ (the tree models, the scratch patches
    the page's commands apply, the scripts that read the patched builds, the specs of the
    reductions) is named on
    docs/results/move-model.md; each patch changes files of the repository only (no new file:
    paths relative to it), and the ceiling patch adds the counters its script reads."""
    root = Path(__file__).resolve().parents[1] / "docs" / "results"
    page = "".join(f.read_text() for f in sorted(root.glob("move-model*.md")))
    files = sorted((root / "artefacts" / "move-model").iterdir())
    assert {f.suffix for f in files} == {".evomove", ".patch", ".py", ".toml"}
    for f in files:
        assert f"artefacts/move-model/{f.name}" in page, f.name
        if f.suffix == ".patch":
            heads = [x for x in f.read_text().splitlines() if x.startswith(("--- ", "+++ "))]
            assert heads and all(x[4:].startswith(("a/", "b/")) for x in heads), f.name
    ceiling = (root / "artefacts" / "move-model" / "order-ceiling.patch").read_text()
    script = (root / "artefacts" / "move-model" / "order_ceiling.py").read_text()
    assert "S_RAW" in ceiling and "S_RAW" in script
