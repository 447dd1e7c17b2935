"""Speed of `evotune datagen` (docs/results/nn-training.md, "Data generation speed").

Self-play games of one engine (default the shipped net11 at 5,000 nodes a move), written as
datagen writes them, in this one process, for each setting and worker count:
  today     --per-game 10 --filter qsearch --format text (the defaults but the trainers' format)
  fast      --per-game 0 --filter bestmove --format text (every position bullet-style datagen
            keeps: not in check, the move played not a capture or promotion, not a mate)
  bullet    --per-game 0 --filter bestmove --format bullet (the same positions as 32-byte records)
and prints games, moves (plies the engine played), positions written, wall seconds, positions/s,
moves/s, positions/s per worker and the ratio to the first worker count, with the load average
before and after each run (the machine may be shared), and the CPU seconds this process and its
worker processes used (Linux /proc): "cores" = CPU / wall, and positions and moves per
CPU-second, the per-core rate, which a loaded machine does not lower as it lowers the wall
rate. Warm-up (numba compile and cache loads, the worker processes started) is done first and
not timed. Every setting plays the same games (same
seed), so moves are equal across settings and worker counts. `--settings today` also runs on
the code before `--filter` existed (PYTHONPATH at an older checkout: the figure before the change).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

from evotune.learn import datagen as dg
from evotune.limits import Limits

SETTINGS = {"today": dict(per_game=10, fmt="text"),  # (filter qsearch: the default, and the
            # only filter of the code before it, which this setting also measures)
            "fast": dict(per_game=0, filter="bestmove", fmt="text"),
            "bullet": dict(per_game=0, filter="bestmove", fmt="bullet")}


def cpu_seconds() -> float:
    """CPU seconds of this process and its live child processes (joblib's workers)."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid; utime and stime are fields 14 and 15 of the line
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def timed(settings: dg.DatagenSettings, workers: int, folder: Path, moves: list) -> dict:
    """One datagen run to a new file: its counts and rates."""
    out = folder / f"{settings.fmt}-{settings.per_game}-{workers}-{time.monotonic_ns()}" \
        f"{'.bin' if settings.fmt == 'bullet' else '.txt'}"
    moves.clear()
    load0 = os.getloadavg()[0]
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    summary = dg.datagen(settings, out, workers=workers)
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - c0
    n_moves = sum(moves)
    return {"workers": workers, "games": summary.games, "moves": n_moves,
            "positions": summary.positions, "seconds": round(seconds, 2),
            "positions_per_s": round(summary.positions / seconds, 1),
            "moves_per_s": round(n_moves / seconds, 1),
            "positions_per_s_per_worker": round(summary.positions / seconds / workers, 1),
            "cpu_s": round(cpu, 2), "cores": round(cpu / seconds, 2),
            "positions_per_cpu_s": round(summary.positions / cpu, 1),
            "moves_per_cpu_s": round(n_moves / cpu, 1),
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2),
            "bytes": out.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="net11")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--games", type=int, default=32)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()

    moves: list[int] = []
    real_map = dg.map_games

    def counting(tasks, **kw):  # the plies of the games datagen plays (not timed apart)
        records = real_map(tasks, **kw)
        moves.extend(r.plies for r in records)
        return records

    dg.map_games = counting
    base = dg.DatagenSettings(games=args.games, engine=args.engine,
                              limits=Limits(depth=64, nodes=args.nodes), seed=args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        warm = dataclasses.replace(base, games=max(args.workers) * 2, seed=args.seed + 1000)
        for name in args.settings:  # compile, load the caches, start the worker processes
            for w in sorted(set(args.workers)):
                timed(dataclasses.replace(warm, **SETTINGS[name]), w, folder, moves)
        for name in args.settings:
            first = None
            for w in args.workers:
                row = {"setting": name, "filter": "qsearch", **SETTINGS[name],
                       **timed(dataclasses.replace(base, **SETTINGS[name]), w, folder, moves)}
                first = first or row
                row["ratio_to_first"] = round(row["positions_per_s"] / first["positions_per_s"],
                                              2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"{'setting':8} {'w':>2} {'games':>5} {'moves':>6} {'pos':>6} {'s':>7} {'pos/s':>8} "
          f"{'moves/s':>8} {'pos/s/w':>8} {'ratio':>5} {'cores':>5} {'pos/cpu-s':>9} "
          f"{'moves/cpu-s':>11} {'load':>11}")
    for r in rows:
        print(f"{r['setting']:8} {r['workers']:>2} {r['games']:>5} {r['moves']:>6} "
              f"{r['positions']:>6} {r['seconds']:>7.2f} {r['positions_per_s']:>8.1f} "
              f"{r['moves_per_s']:>8.1f} {r['positions_per_s_per_worker']:>8.1f} "
              f"{r['ratio_to_first']:>5.2f} {r['cores']:>5.2f} {r['positions_per_cpu_s']:>9.1f} "
              f"{r['moves_per_cpu_s']:>11.1f} {r['load_before']:>5.2f}-{r['load_after']:<5.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
