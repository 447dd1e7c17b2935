"""The move model in the searches (docs/results/move-model.md): what its ordering and its prior
cost and save, with PeSTO's tables (engines/pst-pesto.toml; --engine another builtin spec, e.g.
net11) on the bench's positions.

Prints one JSON object:
  score_ns              the core's model score of one legal move (move_scores_core over the
                        positions' legal moves, generation and the weights' load included), ns
  ab_nodes / ab_nodes_model, ab_seconds / ab_seconds_model
                        alpha-beta to --depth on every position, quiet moves by history / by the
                        model (the scores are checked equal), summed
  ab_node_ratio         ab_nodes_model / ab_nodes
  prob_nps_uniform / prob_nps_ordering / prob_nps_model
                        probability-limited search of --nodes nodes per position, the split
                        uniform / by the ordering's softmax / by the model's, nodes per second
  model_time_ratio      prob_nps_uniform / prob_nps_model: the time a node costs with the model
                        against the uniform split's (the same process, the same positions)
Timings are wall-clock on a shared machine: noisy; node counts are exact.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import chess
import numpy as np

from evotune.engine import api
from evotune.engine.bench import BENCH_FENS
from evotune.engine.core import mcts as M
from evotune.engine.core.game import move_scores_core
from evotune.engine.core.layout import MAXMOVES
from evotune.engine.movemodel.modelfile import read_move_model
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings

ROOT = Path(__file__).resolve().parents[1]


def score_ns(model, fens, reps: int) -> float:
    params = np.zeros(M.NP, dtype=np.float64)
    params[M.P_MODEL:] = model.params()
    moves = np.zeros(MAXMOVES, dtype=np.int64)
    out = np.zeros(MAXMOVES, dtype=np.int64)
    states = [api.board_arrays(chess.Board(f), 10) for f in fens]
    n = sum(int(move_scores_core(U, S, params, moves, out)) for U, S in states)
    t0 = time.perf_counter()
    for _ in range(reps):
        for U, S in states:
            move_scores_core(U, S, params, moves, out)
    return (time.perf_counter() - t0) / (reps * n) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "evotune" / "engines" / "pesto-moves.evomove"))
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--engine", default="pst-pesto",
                    help="The evaluation: a builtin spec (pst-pesto, net11, a .toml file).")
    args = ap.parse_args()
    model = read_move_model(args.model)
    spec = load_engine_spec(args.engine)
    w, fs = evaluation(player_from_engine_spec(spec)), spec.features
    ordered = SearchSettings(model=str(Path(args.model).resolve()))
    out: dict = {"model": model.checksum, "engine": spec.name, "depth": args.depth,
                 "positions": len(BENCH_FENS)}
    api.search(chess.STARTING_FEN, w, depth=2, features=fs, settings=ordered)  # warm up
    out["score_ns"] = round(score_ns(model, BENCH_FENS, args.reps), 1)
    for key, settings in (("", None), ("_model", ordered)):
        nodes, secs = 0, 0.0
        for fen in BENCH_FENS:
            r = api.search(fen, w, depth=args.depth, features=fs, settings=settings)
            nodes += r.nodes
            secs += r.seconds
            out.setdefault("scores" + key, []).append(r.score)
        out["ab_nodes" + key] = nodes
        out["ab_seconds" + key] = round(secs, 3)
    assert out.pop("scores") == out.pop("scores_model"), "the ordering changed a score"
    out["ab_node_ratio"] = round(out["ab_nodes_model"] / out["ab_nodes"], 4)
    for key, settings in (("uniform", SearchSettings(algorithm="probability")),
                          ("ordering", SearchSettings(algorithm="probability", prior=True)),
                          ("model", SearchSettings(algorithm="probability", prior=True,
                                                   model=ordered.model))):
        api.search(BENCH_FENS[0], w, nodes=2000, features=fs, settings=settings)  # warm up
        nodes, secs = 0, 0.0
        for fen in BENCH_FENS:
            r = api.search(fen, w, nodes=args.nodes, features=fs, settings=settings)
            nodes += r.nodes
            secs += r.seconds
        out[f"prob_nps_{key}"] = round(nodes / secs)
    out["model_time_ratio"] = round(out["prob_nps_uniform"] / out["prob_nps_model"], 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
