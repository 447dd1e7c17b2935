"""Match runner throughput: the runner against calling the core directly, and 1 against 2 workers.

    python benchmarks/bench_match.py [--pairs 20] [--depth 3] [--repeat 2] [--json]

Prints, for the same depth-3 games (the same openings drawn from the default suite, reference
weights against a weaker vector, both measured in this run):

- direct_gps: games per second calling ``evotune.engine.play_game`` in a loop;
- runner1_gps: games per second through ``run_fixtures`` with one worker (in-process);
- runner_over_direct: runner1_gps / direct_gps (target >= 0.95);
- runner2_gps: games per second with two loky workers (pool started and warm before timing);
- two_over_one: runner2_gps / runner1_gps (target >= 1.7; needs two idle cores);
- de_two_over_one: the same ratio for a DE-like generation (20 fixtures of 4 games, stop
  'decisive', played in rounds).

Each figure is the best of ``--repeat`` runs (interleaved), to damp noise from other processes.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from evotune.engine import play_game
from evotune.limits import Limits
from evotune.match import Fixture, MatchSettings, draw_opening, opening_generator, run_fixtures, warm_up
from evotune.paths import DEFAULT_OPENINGS
from evotune.players import builtin

A = builtin([100, 300, 330, 500, 900, 10], name="reference")
B = builtin([100, 280, 300, 520, 880, 6], name="other")


def direct(pairs: int, settings: MatchSettings, seed: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = 0
    for p in range(pairs):
        op = draw_opening(str(DEFAULT_OPENINGS), opening_generator(seed, 0, 0, p))
        for white, black in ((A, B), (B, A)):
            play_game(op.board(), white.weights, black.weights, limits=settings.limits)
            n += 1
    return time.perf_counter() - t0, n


def runner(pairs: int, settings: MatchSettings, seed: int, workers: int) -> tuple[float, int]:
    fx = Fixture(key=(0, 0), a=A, b=B, games=2 * pairs)
    t0 = time.perf_counter()
    res = run_fixtures([fx], settings=settings, seed=seed, workers=workers)
    return time.perf_counter() - t0, res[0].games


def de_generation(settings: MatchSettings, seed: int, workers: int) -> tuple[float, int]:
    """A DE-like generation: 20 fixtures of 4 games with the 'decisive' stop rule."""
    fixtures = [Fixture(key=(1, i), a=A if i % 2 else B, b=B if i % 2 else A, games=4,
                        stop="decisive") for i in range(20)]
    t0 = time.perf_counter()
    res = run_fixtures(fixtures, settings=settings, seed=seed, workers=workers)
    return time.perf_counter() - t0, sum(r.games for r in res)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = MatchSettings(limits=Limits(depth=args.depth))
    warm_up()
    runner(1, settings, args.seed + 99, 2)  # start the loky pool and load the cache in workers
    best = {"direct": 0.0, "runner1": 0.0, "runner2": 0.0, "de1": 0.0, "de2": 0.0}
    for _ in range(args.repeat):
        for name, fn in (("direct", lambda: direct(args.pairs, settings, args.seed)),
                         ("runner1", lambda: runner(args.pairs, settings, args.seed, 1)),
                         ("runner2", lambda: runner(args.pairs, settings, args.seed, 2)),
                         ("de1", lambda: de_generation(settings, args.seed, 1)),
                         ("de2", lambda: de_generation(settings, args.seed, 2))):
            seconds, games = fn()
            best[name] = max(best[name], games / seconds)
    out = {
        "games": 2 * args.pairs, "depth": args.depth, "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "direct_gps": round(best["direct"], 2), "runner1_gps": round(best["runner1"], 2),
        "runner_over_direct": round(best["runner1"] / best["direct"], 3),
        "runner2_gps": round(best["runner2"], 2),
        "two_over_one": round(best["runner2"] / best["runner1"], 3),
        "de_two_over_one": round(best["de2"] / best["de1"], 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:20s} {v}")


if __name__ == "__main__":
    main()
