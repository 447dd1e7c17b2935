"""Dask cluster throughput: games/s of a LocalCluster (2 worker processes, 1 thread each, on
loopback) against 1 local worker on depth-3 DE-like generations, and the scheduler's overhead per
task (tiny depth-1 games).

Figures:
  local1_gps          games/s, 1 worker (games played in this process)
  dask2_gps           games/s, the same generations on the 2-worker cluster (joblib 'dask')
  dask_over_local     dask2_gps / local1_gps (target >= 1.5 on 2 cores)
  game_seconds        mean time of one game inside the engine (from the records)
  per_core_gps        1 / game_seconds: what one core plays when never idle
  dask_game_seconds   mean game time on the cluster's workers (shows CPU contention)
  worker_utilisation  game time played / (wall x worker threads) on the cluster
  joblib_overhead_ms  per tiny task through map_games on the cluster: wall per task minus
                      game time per task / worker threads (joblib batches tiny tasks)
  roundtrip_ms        one client.submit(play_task).result() at a time, minus its game time:
                      the latency of one task through the scheduler (no batching)
Timings are wall-clock on a shared machine: noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from evotune.limits import Limits
from evotune.match import Fixture, MatchSettings, Opening, map_games, run_fixtures, warm_up
from evotune.match.cluster import backend_session
from evotune.match.fixtures import game_task
from evotune.match.runner import play_task
from evotune.players import builtin

A = builtin([100, 300, 330, 500, 900, 10], name="reference")
B = builtin([100, 280, 300, 520, 880, 6], name="other")


def de_generations(settings: MatchSettings, *, generations: int, seed: int, workers: int,
                   backend: str) -> tuple[float, int, float]:
    """DE-like generations: 20 fixtures of 4 games each, 'decisive' stop, played in rounds."""
    t0 = time.perf_counter()
    games, game_seconds = 0, 0.0
    for g in range(1, generations + 1):
        fixtures = [Fixture(key=(g, i), a=A if i % 2 else B, b=B if i % 2 else A, games=4,
                            stop="decisive") for i in range(20)]
        for r in run_fixtures(fixtures, settings=settings, seed=seed, workers=workers,
                              backend=backend):
            games += r.games
            game_seconds += sum(rec.seconds for rec in r.records)
    return time.perf_counter() - t0, games, game_seconds


def tiny_tasks(n: int) -> list:
    settings = MatchSettings(limits=Limits(depth=1, max_plies=2))
    fx = Fixture(key=(0, 0), a=A, b=B, games=2)
    return [game_task(fx, i % 2, Opening(), settings) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=3)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--tiny", type=int, default=300, help="tiny tasks for the overhead figure")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from distributed import LocalCluster

    settings = MatchSettings(limits=Limits(depth=args.depth))
    warm_up()
    t, n, s1 = de_generations(settings, generations=args.generations, seed=args.seed,
                              workers=1, backend="loky")
    local1 = n / t
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as lc:
        with backend_session("dask", lc.scheduler_address) as session:
            threads = session.workers
            # one untimed generation: joblib/dask connections, workers' first tasks
            de_generations(settings, generations=1, seed=args.seed + 99,
                           workers=session.workers, backend="dask")
            t, n2, s2 = de_generations(settings, generations=args.generations, seed=args.seed,
                                       workers=session.workers, backend="dask")
            dask2 = n2 / t
            tasks = tiny_tasks(args.tiny)
            t0 = time.perf_counter()
            recs = map_games(tasks, workers=session.workers, backend="dask")
            wall = time.perf_counter() - t0
            tiny_game = sum(r.seconds for r in recs) / len(recs)
            joblib_overhead = wall / len(recs) - tiny_game / threads
            client = session.client
            rt = []
            for task in tasks[:50]:
                t0 = time.perf_counter()
                rec = client.submit(play_task, task, pure=False).result()
                rt.append(time.perf_counter() - t0 - rec.seconds)
            rt.sort()
            roundtrip = rt[len(rt) // 2]
    assert n2 == n, "the cluster played other games than the local worker"
    out = {
        "depth": args.depth, "games": n, "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "local1_gps": round(local1, 2), "dask2_gps": round(dask2, 2),
        "dask_over_local": round(dask2 / local1, 3),
        "game_seconds": round(s1 / n, 4), "per_core_gps": round(n / s1, 2),
        "dask_game_seconds": round(s2 / n2, 4),
        "worker_utilisation": round(s2 / (t * threads), 3),
        "tiny_game_ms": round(1000 * tiny_game, 3),
        "joblib_overhead_ms": round(1000 * joblib_overhead, 3),
        "roundtrip_ms": round(1000 * roundtrip, 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:20s} {v}")


if __name__ == "__main__":
    main()
