"""Overhead of the run loop: everything but playing games, as a share of wall time.

    python benchmarks/bench_run_overhead.py [--generations 3] [--np 20] [--games 4] [--depth 3]

Runs a real DE run on one worker (so game time adds up to wall time), then compares the wall
time of the whole run (ask, fixtures, scheduling, scoring, tell, store writes, PGN) with the sum
of the games' own wall times recorded in the game log. Prints the figures and the overhead share.
Target: under 3% for --np 20 --games 4 --depth 3.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from evotune.match import warm_up
from evotune.runs.config import build_run_config
from evotune.runs.lifecycle import new_run
from evotune.tuning.loop import execute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=3)
    ap.add_argument("--np", type=int, default=20)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warm_up()
    cfg = build_run_config(strategy="de", np=args.np, generations=args.generations,
                           games=args.games, depth=args.depth, seed=args.seed, workers=1)
    with tempfile.TemporaryDirectory() as tmp:
        store, plan = new_run(cfg, out_dir=tmp, run_id="bench")
        t0 = time.perf_counter()
        summary = execute(store, plan)
        wall = time.perf_counter() - t0
        game_seconds = sum(r["seconds"] for r in store.read_games())
    overhead = wall - game_seconds
    print(f"generations        {summary.generation}")
    print(f"games              {summary.games}")
    print(f"wall_seconds       {wall:.3f}")
    print(f"game_seconds       {game_seconds:.3f}")
    print(f"overhead_seconds   {overhead:.3f}")
    print(f"overhead_share     {overhead / wall:.4f}  (target < 0.03)")
    print(f"games_per_second   {summary.games / wall:.2f}")


if __name__ == "__main__":
    main()
