"""Speed of the network evaluation in the numba core (docs/results/nnue-speed.md).

For each hidden size H (random nets, seed 1, SCReLU), in this one process:
  search_nps            `evotune bench --engine nnue:FILE` nodes/s of the core over the bench's
                        search set (depth 7, at most net_nodes nodes per position)
  reference_nps         nodes/s of the python-chess reference search with the numpy evaluation
                        (engine/net/network.evaluate_reference), on the bench's reference share
  ratio                 search_nps / reference_nps
  signature             the bench's node total (this net and these limits)
  update_ns             one accumulator update of a quiet move in the core (both perspectives:
                        H int16 subtracted and added per perspective), ns per call
  capture_ns            the same for a capture (three rows per perspective)
  output_ns             the output layer (clamp, square, dot over 2 H, the integer rules), ns
  numpy_eval_us         one evaluate_reference (features, accumulators and output from scratch)
  finny_ns, refresh_ns  with king buckets: a Finny refresh of one perspective whose entry differs
                        from the board by two squares (a pawn on a2 / a4), and the root refresh
                        (the table reset, both perspectives from empty boards), ns per call
With --shannon, also `evotune bench` of the Shannon reference weights (signature 21833316); with
--king-buckets K and --output-buckets N, bucketed nets (random_net with the preset map of K
buckets; update_ns then includes reading each king's bucket, a quiet move is not a king move).
Timings are wall-clock on a shared machine: noisy.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import chess
import numpy as np

from evotune.engine import api
from evotune.engine.bench import BENCH_FENS, BenchSettings, run_bench
from evotune.engine.core import layout as L
from evotune.engine.core.game import eval_core
from evotune.engine.core.nnue import timing_core
from evotune.engine.net.corestate import rows
from evotune.engine.net.inputs import KING_BUCKET_PRESETS
from evotune.engine.net.network import evaluate_reference, random_net, write_net
from evotune.spec.file import load_engine_spec


def part_ns(net, which: int, reps: int) -> float:
    """ns per call of one part of the net's evaluation (core/nnue.timing_core)."""
    board = chess.Board(BENCH_FENS[0])
    (w,), tail = rows([net])
    U, S = api.board_arrays(board, 10, features="nnue", tail=tail)
    S[L.S_W:L.S_W + w.size] = w
    eval_core(U, S)                                  # refresh: offsets and accumulators
    timing_core(U, S, np.int64(10), np.int64(which))    # compiled, warm
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        timing_core(U, S, np.int64(reps), np.int64(which))
        best = min(best, time.perf_counter() - t0)
    return best / reps * 1e9


def numpy_eval_us(net, n: int = 300) -> float:
    boards = [chess.Board(f) for f in BENCH_FENS]
    t0 = time.perf_counter()
    for i in range(n):
        evaluate_reference(net, boards[i % len(boards)])
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, nargs="+", default=[32, 128, 256])
    ap.add_argument("--reps", type=int, default=2_000_000)
    ap.add_argument("--shannon", action="store_true", help="also bench the Shannon weights")
    ap.add_argument("--king-buckets", type=int, default=1, choices=sorted(KING_BUCKET_PRESETS),
                    help="king buckets of the nets (a preset map)")
    ap.add_argument("--output-buckets", type=int, default=1, help="output buckets of the nets")
    args = ap.parse_args()
    spec = load_engine_spec("nnue")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for h in args.hidden:
            net = random_net(h, 1, king_buckets=KING_BUCKET_PRESETS[args.king_buckets],
                             output_buckets=args.output_buckets)
            write_net(net, Path(tmp) / f"h{h}.nnue")   # what `evotune bench --engine` reads
            r = run_bench(BenchSettings(), spec, weights=net)
            out[f"H={h}"] = {"shape": net.shape,
                "search_nps": round(r.search_nps), "reference_nps": round(r.reference_search_nps),
                "ratio": round(r.speedup, 1), "signature": r.signature,
                "update_ns": round(part_ns(net, 0, args.reps), 1),
                "capture_ns": round(part_ns(net, 1, args.reps), 1),
                "output_ns": round(part_ns(net, 2, args.reps), 1),
                "numpy_eval_us": round(numpy_eval_us(net), 1),
            }
            if net.king_bucket_count > 1:
                out[f"H={h}"]["finny_ns"] = round(part_ns(net, 3, args.reps), 1)
                out[f"H={h}"]["refresh_ns"] = round(part_ns(net, 4, args.reps // 20), 1)
            print(f"H={h}", json.dumps(out[f"H={h}"]), flush=True)
    if args.shannon:
        r = run_bench()
        out["shannon"] = {"search_nps": round(r.search_nps), "signature": r.signature}
        print("shannon", json.dumps(out["shannon"]), flush=True)


if __name__ == "__main__":
    main()
