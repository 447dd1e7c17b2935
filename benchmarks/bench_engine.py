"""Engine speed: the ``evotune bench`` figures plus the time a fresh process needs to search.

Run: ``python benchmarks/bench_engine.py [--quick] [--engine SPEC ...]``. Prints the bench
figures for each engine spec (default shannon, pst, extended: core vs the python-chess reference
in the same run, see evotune/engine/bench.py), each set's search speed relative to the first's,
and ``fresh_ready_seconds``:
the wall time of a new Python process that imports evotune.engine and runs one depth-1 search.
That process is started twice; the first may compile the numba core into its cache, the second
loads the cache, and the second's time is the figure (what every worker process pays at start).
Timings depend on the machine and its load; compare figures from the same machine only.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

from evotune.engine.bench import QUICK, BenchSettings, format_bench, run_bench

READY_SNIPPET = ("import evotune.engine as e; "
                 "e.search('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', "
                 "[100, 300, 330, 500, 900, 10], depth=1)")


def fresh_ready_seconds() -> tuple[float, float]:
    """Wall time of two fresh processes that import the engine and search once (first, second)."""
    times = []
    for _ in range(2):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", READY_SNIPPET], check=True)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the few-seconds bench settings")
    parser.add_argument("--engine", action="append", default=None,
                        help="builtin engine spec(s) to bench (repeatable; default: shannon, pst, "
                             "extended)")
    args = parser.parse_args()
    first, second = fresh_ready_seconds()
    from evotune.spec.file import load_engine_spec

    results = []
    for name in args.engine or ["shannon", "pst", "extended"]:
        spec = None if name == "shannon" else load_engine_spec(name)
        results.append(run_bench(QUICK if args.quick else BenchSettings(), spec))
        print(format_bench(results[-1]))
        print()
    base = results[0]
    for r in results[1:]:
        print(f"{r.engine}: search_nps {r.search_nps / base.search_nps:.2f}x {base.engine}'s in "
              "the same process")
    print(f"{'fresh_ready_seconds':<22} {second:.3f}   (first process: {first:.3f})")


if __name__ == "__main__":
    main()
