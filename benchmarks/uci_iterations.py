"""What `evotune uci`'s alpha-beta saves by continuing one search iteration by iteration
(engine.iterate) instead of a fresh search to each depth 1..D (what it did before): on the
bench's 8 positions, with an engine spec's evaluation.

Prints one JSON object:
  restart_nodes / iterate_nodes     nodes to reach depth --depth, summed over the positions
  restart_seconds / iterate_seconds wall time of the same (Python calls included)
  node_ratio / time_ratio           iterate / restart (the same process, the same positions)
The final iteration's move and score are checked equal (the same search).

    python benchmarks/uci_iterations.py --engine net11 --depth 6
"""
from __future__ import annotations

import argparse
import json
import time

from evotune.engine import iterate, search
from evotune.engine.bench import BENCH_FENS
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="net11", help="A builtin spec (net11, pst-pesto, ...).")
    ap.add_argument("--depth", type=int, default=6)
    args = ap.parse_args()
    spec = load_engine_spec(args.engine)
    w, fs = evaluation(player_from_engine_spec(spec)), spec.features
    search(BENCH_FENS[0], w, depth=2, features=fs)  # warm up
    out: dict = {"engine": spec.name, "depth": args.depth, "positions": len(BENCH_FENS)}
    rn = rs = itn = its = 0.0
    for fen in BENCH_FENS:
        t0 = time.perf_counter()
        for d in range(1, args.depth + 1):
            r = search(fen, w, depth=d, features=fs)
            rn += r.nodes
        rs += time.perf_counter() - t0
        t0 = time.perf_counter()
        last = list(iterate(fen, w, depth=args.depth, features=fs))[-1]
        its += time.perf_counter() - t0
        itn += last.nodes
        assert (last.move, last.score) == (r.move, r.score), fen
    out.update(restart_nodes=int(rn), iterate_nodes=int(itn), restart_seconds=round(rs, 3),
               iterate_seconds=round(its, 3), node_ratio=round(itn / rn, 3),
               time_ratio=round(its / rs, 3))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
