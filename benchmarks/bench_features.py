"""Throughput of phi for many positions: ``evotune.engine.phi_batch`` (FENs parsed and phi
computed inside the numba core) against the python-chess reference (``reference.features``), per
feature set, in the same process.

    python benchmarks/bench_features.py [--positions 50000]

Positions come from seeded random games. Prints positions/s of each and their ratio. Timings are
wall-clock on one core and depend on the machine's load (note ``uptime``).
"""
from __future__ import annotations

import argparse
import random
import time

import chess


def random_fens(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < n:
        board = chess.Board()
        for _ in range(rng.randrange(4, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            fens.append(board.fen())
    return fens[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=50_000)
    ap.add_argument("--reference-positions", type=int, default=1_000)
    args = ap.parse_args()
    if args.positions < 1 or args.reference_positions < 1:
        ap.error("--positions and --reference-positions must be at least 1")
    from evotune.engine import phi_batch, reference

    fens = random_fens(args.positions)
    boards = [chess.Board(f) for f in fens[:args.reference_positions]]
    for features in ("shannon", "pst", "extended"):
        phi_batch(fens[:10], features)  # compile or load the cache, untimed
        t0 = time.perf_counter()
        batch = phi_batch(fens, features)
        core = len(fens) / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        for b in boards:
            reference.features(b, features)
        ref = len(boards) / (time.perf_counter() - t0)
        print(f"{features:<9} phi_batch {core:>12,.0f} positions/s   reference {ref:>9,.0f} "
              f"positions/s   ratio {core / ref:>6.0f}x   nnz/position "
              f"{len(batch.data) / len(fens):.1f}")


if __name__ == "__main__":
    main()
