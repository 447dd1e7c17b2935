"""Overhead of the run loop: everything but playing games, as a share of wall time; and, with
--batches, how busy SPSA keeps the workers.

    python benchmarks/bench_run_overhead.py [--generations 3] [--np 20] [--games 4] [--depth 3]
    python benchmarks/bench_run_overhead.py --batches 8 32 --workers 2 --max-games 1280 \\
        [--engine extended-pesto-tables --init-weights texel.json]

The first form runs a real DE run on one worker (so game time adds up to wall time), then
compares the wall time of the whole run (ask, fixtures, scheduling, scoring, tell, store writes,
PGN) with the sum of the games' own wall times recorded in the game log. Prints the figures and
the overhead share. Target: under 3% for --np 20 --games 4 --depth 3.

The second runs SPSA on --workers workers once per batch size (the same seed, engine and game
budget, one after the other in this process) and prints each run's core use: the games' summed
wall time over wall time x workers (1.0 = no worker ever idle), and games per second. The idle
part is the end of each generation, while the last games finish.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run
from evotune.kinds.games.solver import execute
from evotune.match import warm_up


def timed_run(cfg, start=None) -> tuple[object, float, float]:
    """(summary, wall seconds, summed game seconds) of one run in a temporary folder (from
    ``start``, a :class:`~evotune.kinds.games.start.RunStart`, when given)."""
    with tempfile.TemporaryDirectory() as tmp:
        store, plan = new_run(cfg, out_dir=tmp, run_id="bench",
                              spec=start.spec if start else None,
                              init_from=start.init_from if start else None)
        t0 = time.perf_counter()
        summary = execute(store, plan)
        wall = time.perf_counter() - t0
        game_seconds = sum(r["seconds"] for r in store.read_games())
    return summary, wall, game_seconds


def overhead(args) -> None:
    cfg = build_run_config(strategy="de", population=args.np, generations=args.generations,
                           games=args.games, depth=args.depth, seed=args.seed, workers=1)
    summary, wall, game_seconds = timed_run(cfg)
    spent = wall - game_seconds
    print(f"generations        {summary.generation}")
    print(f"games              {summary.games}")
    print(f"wall_seconds       {wall:.3f}")
    print(f"game_seconds       {game_seconds:.3f}")
    print(f"overhead_seconds   {spent:.3f}")
    print(f"overhead_share     {spent / wall:.4f}  (target < 0.03)")
    print(f"games_per_second   {summary.games / wall:.2f}")


def batches(args) -> None:
    from evotune.kinds.games.lifecycle import with_budget
    from evotune.kinds.games.start import start_from_file
    from evotune.spec.file import load_engine_spec

    start = start_from_file(f"{args.engine}:{args.init_weights}") if args.init_weights else None
    spec = start.spec if start else load_engine_spec(args.engine)
    print(f"SPSA on {args.engine}, {args.max_games} games at depth {args.depth}, "
          f"{args.games} games a perturbation, {args.workers} workers")
    warm = build_run_config(strategy="spsa", engine=args.engine, games=args.games,
                            generations=1, depth=args.depth, seed=args.seed,
                            workers=args.workers, params={"batch": args.workers})
    timed_run(with_budget(warm, spec), start)  # the workers start and load the engine: untimed
    print("batch  games/generation  games  wall_s  games/s  core_use")
    for batch in args.batches:
        cfg = build_run_config(strategy="spsa", engine=args.engine, games=args.games,
                               generations=0, max_games=args.max_games, depth=args.depth,
                               seed=args.seed, workers=args.workers, params={"batch": batch})
        summary, wall, game_seconds = timed_run(with_budget(cfg, spec), start)
        print(f"{batch:5d}  {batch * args.games:16d}  {summary.games:5d}  {wall:6.1f}  "
              f"{summary.games / wall:7.2f}  {game_seconds / (wall * args.workers):8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=3)
    ap.add_argument("--np", type=int, default=20)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", type=int, nargs="*", default=None,
                    help="SPSA batch sizes to compare (the second form).")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-games", type=int, default=1280)
    ap.add_argument("--engine", default="shannon")
    ap.add_argument("--init-weights", default=None,
                    help="Start SPSA from this weights file (as --engine SPEC:WEIGHTS).")
    args = ap.parse_args()
    warm_up()
    if args.batches:
        batches(args)
    else:
        overhead(args)


if __name__ == "__main__":
    main()
