"""Scratch (docs/results/move-model.md, "How much a quiet-move order could save"): with the
counters of order-ceiling.patch in negamax, the nodes alpha-beta spends, at nodes cut off by a
quiet move, on the quiet moves searched before it (what a perfect quiet order would save, to
first order), and at every cut node on the moves searched before the cutting one (what a
perfect order of all moves would save). It reads the counters after each search, so evotune
must come from a worktree with the patch applied:

    PYTHONPATH=WORKTREE python docs/results/artefacts/move-model/order_ceiling.py ENGINE DEPTH
"""
import json
import sys

import chess

import evotune.engine.api as A
from evotune.engine.bench import BENCH_FENS
from evotune.engine.core import layout as T
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec

_core = A.search_core
_counters = {}


def _counting(U, S, *args):
    r = _core(U, S, *args)
    _counters["c"] = [int(S[T.S_RAW + i]) for i in range(4)]
    return r


A.search_core = _counting
eng, depth = sys.argv[1], int(sys.argv[2])
spec = load_engine_spec(eng)
w, fs = evaluation(player_from_engine_spec(spec)), spec.features
A.search(chess.STARTING_FEN, w, depth=2, features=fs)
nodes, c = 0, [0, 0, 0, 0]
for fen in BENCH_FENS:
    r = A.search(fen, w, depth=depth, features=fs)
    nodes += r.nodes
    c = [a + b for a, b in zip(c, _counters["c"])]
print(json.dumps({"engine": eng, "depth": depth, "nodes": nodes,
                  "before_a_quiet_cut": c[0], "quiet_share": round(c[0] / nodes, 4),
                  "quiet_cuts_after_another_quiet": c[1], "quiet_cuts_on_the_first_quiet": c[2],
                  "before_any_cut": c[3], "any_share": round(c[3] / nodes, 4)}))
