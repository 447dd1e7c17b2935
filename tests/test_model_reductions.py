"""Alpha-beta's reductions (issue 40's ordering target): ``[search] reduce = "late:K"`` searches
a node's quiet moves after its first K a ply shallower first, ``reduce = "model:GAP"`` (with
``prior = "model:FILE"``) those the move model scores more than GAP below the node's first quiet
move; a reduced move that beats alpha is searched again to the full depth."""
from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine import play_game, search
from evotune.engine.bench import BENCH_FENS
from evotune.engine.movemodel import modelfile as MM
from evotune.errors import ConfigError
from evotune.limits import Limits
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.rules import MATE
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import MAX_REDUCE_GAP, MAX_REDUCE_LATE, SearchSettings

W = (100, 300, 330, 500, 900, 10)
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5"]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("m") / "r.evomove"
    MM.write_move_model(MM.random_model(seed=7, spread=500), p)
    return str(p)


def test_reductions_that_reduce_nothing_leave_the_tree_as_it_was(model):
    """A gap wider than any two model scores differ, or more quiet moves than a position has,
    reduce nothing: the same tree, node for node, as without reductions."""
    for fen in FENS[:3]:
        ordered = search(fen, W, depth=5, settings=SearchSettings(model=model))
        plain = search(fen, W, depth=5)
        for s, same in ((SearchSettings(model=model, reduce_gap=MAX_REDUCE_GAP), ordered),
                        (SearchSettings(reduce_late=MAX_REDUCE_LATE), plain),
                        (SearchSettings(model=model, reduce_late=MAX_REDUCE_LATE), ordered)):
            r = search(fen, W, depth=5, settings=s)
            assert (r.nodes, r.score, r.pv) == (same.nodes, same.score, same.pv)


@pytest.mark.parametrize("field, values", [("reduce_gap", (800, 200, 50)),
                                           ("reduce_late", (12, 4, 1))])
def test_reductions_shrink_the_tree_more_as_they_reduce_more(model, field, values):
    nodes = {}
    for v in (0, *values):
        s = SearchSettings(model=model, **{field: v})
        results = [search(fen, W, depth=6, settings=s) for fen in FENS]
        nodes[v] = sum(r.nodes for r in results)
        again = [search(fen, W, depth=6, settings=s) for fen in FENS]
        assert [(r.nodes, r.score, r.pv) for r in again] == \
            [(r.nodes, r.score, r.pv) for r in results]
        assert all(r.depth == 6 and r.move for r in results)
    assert nodes[0] > nodes[values[0]] > nodes[values[1]] > nodes[values[2]]
    assert nodes[values[1]] < 0.8 * nodes[0]


def test_a_model_with_equal_scores_reduces_nothing(tmp_path):
    """Every quiet move scored alike: none is below the first, so no reduction at any gap."""
    p = tmp_path / "zero.evomove"
    MM.write_move_model(MM.MoveModel(weights=np.zeros(MM.N_FEATURES, dtype=np.int32)), p)
    plain = search(FENS[1], W, depth=5, settings=SearchSettings(model=str(p)))
    cut = search(FENS[1], W, depth=5, settings=SearchSettings(model=str(p), reduce_gap=1))
    assert (cut.nodes, cut.score, cut.pv) == (plain.nodes, plain.score, plain.pv)


@pytest.mark.parametrize("kw", [{"reduce_gap": 50}, {"reduce_late": 1}])
def test_a_reduced_search_still_scores_its_line_and_finds_a_mate(model, kw):
    """The score is the evaluation at the end of the principal variation (a reduced move that
    becomes best was searched again to the full depth), and a mate in two is still found: moves
    that give check are never reduced."""
    s = SearchSettings(model=model, **kw)
    g = play_game(FENS[0], W, W, limits=Limits(depth=4, max_plies=40), settings=(s, s))
    w = np.array(W, dtype=np.int64)
    quiet = [t for t in range(len(g.moves)) if abs(g.scores[t]) < MATE - 1000]
    explained = sum(int(w @ g.leaf_phi[t]) == g.scores[t] for t in quiet)
    assert explained >= len(quiet) - 2
    mate2 = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1"  # Nf6+ gxf6 Bxf7#
    r = search(mate2, W, depth=4, settings=s)
    assert r.score == MATE - 3 and r.pv[:3] == ("d5f6", "g7f6", "c4f7")


def test_a_game_reduces_each_side_by_its_own_setting(model):
    sides = (SearchSettings(model=model, reduce_gap=100), SearchSettings(reduce_late=2))
    g = play_game(chess.STARTING_FEN, W, W, limits=Limits(depth=4, max_plies=12), settings=sides)
    board = chess.Board()
    for i, move in enumerate(g.moves[:8]):
        r = search(board, W, depth=4, settings=sides[i % 2])
        assert r.score == g.scores[i] and r.move == move
        board.push_uci(move)
    # the setting does not outlive its search: a search without it after it is unreduced
    for after in (SearchSettings(model=model), SearchSettings()):
        before = search(FENS[1], W, depth=5, settings=after).nodes
        for s in sides:
            search(FENS[1], W, depth=5, settings=s)
            assert search(FENS[1], W, depth=5, settings=after).nodes == before


SPEC = """name = "r"
kind = "builtin"
[search]
{search}
[[weight]]
name = "pawn"
reference = 100
"""


def test_the_spec_key(tmp_path, model):
    f = tmp_path / "r.toml"
    f.write_text(SPEC.format(search=f'prior = "model:{model}"\nreduce = "model:200"'))
    spec = load_engine_spec(str(f))
    assert (spec.search.reduce_gap, spec.search.reduce_late, spec.search.model) == (200, 0, model)
    assert spec.search.describe() == "alphabeta, quiet moves by model r.evomove, reduce model:200"
    f.write_text(SPEC.format(search='reduce = "late:3"'))
    spec = load_engine_spec(str(f))
    assert (spec.search.reduce_gap, spec.search.reduce_late, spec.search.model) == (0, 3, "")
    assert spec.search.describe() == "alphabeta, reduce late:3"
    both = SearchSettings(model=model, reduce_late=2, reduce_gap=300)  # the Python API only
    assert both.describe() == "alphabeta, quiet moves by model r.evomove, reduce late:2 or model:300"
    bad = [(f'prior = "model:{model}"\nreduce = "model:0"', 'reduce must be "late:K"'),
           ('reduce = "late:201"', 'reduce must be "late:K"'),
           ('reduce = "late:\u00b2"', 'reduce must be "late:K"'),
           ("reduce = 200", 'reduce must be "late:K"'),
           ('reduce = "early:2"', 'reduce must be "late:K"'),
           ('reduce = "model:200"', "needs a move model"),
           (f'algorithm = "probability"\nprior = "model:{model}"\nreduce = "late:2"',
            "reduce belongs to algorithm 'alphabeta', not 'probability'")]
    for text, match in bad:
        f.write_text(SPEC.format(search=text))
        with pytest.raises(ConfigError, match=match):
            load_engine_spec(str(f))


RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


@pytest.mark.parametrize("name, what", [("reduce-late", "alphabeta, reduce late:2"),
                                        ("reduce-model", "alphabeta, quiet moves by model "
                                         "tree-quiet-lin.evomove, reduce model:200")])
def test_the_shipped_specs_search_the_trees_the_page_counts(name, what):
    """The specs of docs/results/move-model-reductions.md's "The model in reductions" load from where they
    ship (the model beside them, net11 by a relative path) and reach depth 8 on the bench's
    positions in the nodes the page's table gives."""
    spec = load_engine_spec(str(RESULTS / "artefacts" / "move-model" / f"{name}.toml"))
    assert spec.search.describe() == what
    player = player_from_engine_spec(spec)
    net = evaluation(player)
    nodes = sum(search(fen, net, depth=8, features="nnue", settings=player.search).nodes
                for fen in BENCH_FENS)
    page = "".join(f.read_text() for f in sorted(RESULTS.glob("move-model*.md")))
    row = f"`{spec.search.reductions[len(', reduce '):]}`"
    assert any(line.startswith(f"| {row}") and f"| {nodes:,} |" in line
               for line in page.splitlines()), nodes
