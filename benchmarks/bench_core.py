"""Speed of the numba engine core: search nodes/s, perft nodes/s, depth-3 game time, and the
time a fresh process needs to import, load the compiled cache and search the start position.

    python benchmarks/bench_core.py [--reference]

``--reference`` also times the python-chess reference search (slow) for the speed ratio.
Timings are wall-clock and depend on the machine's load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
W = [100, 300, 330, 500, 900, 10]
MIDDLEGAMES = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "2rq1rk1/pp1bppbp/2np1np1/8/3NP3/1BN1BP2/PPPQ2PP/2KR3R b - - 0 11",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "r2q1rk1/pp2ppbp/2np1np1/2p5/4P3/2NP1NP1/PPP2PBP/R1BQ1RK1 w - - 0 9",
    "rnbqkb1r/pp3ppp/4pn2/2pp4/2PP4/2N1PN2/PP3PPP/R1BQKB1R w KQkq - 0 5",
    "r1bq1rk1/ppp2ppp/2n1pn2/3p4/1bPP4/2NBPN2/PP3PPP/R1BQK2R w KQ - 1 7",
]
PERFT = [(MIDDLEGAMES[1], 4), ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 5),
         ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 6)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", action="store_true", help="also time the reference search")
    ap.add_argument("--games", type=int, default=12, help="depth-3 games from 2moves_v1")
    args = ap.parse_args()

    import chess

    from evotune.engine import perft, play_game, search
    from evotune.limits import Limits

    search(MIDDLEGAMES[0], W, depth=1)  # load / compile
    perft(PERFT[0][0], 1)
    for depth in (3, 4, 5):
        nodes, secs = 0, 0.0
        for fen in MIDDLEGAMES:
            r = search(fen, W, depth=depth)
            nodes, secs = nodes + r.nodes, secs + r.seconds
        print(f"search depth {depth}: {nodes} nodes, {nodes / secs:,.0f} nodes/s")
    total, t0 = 0, time.perf_counter()
    for fen, depth in PERFT:
        total += perft(fen, depth)
    dt = time.perf_counter() - t0
    print(f"perft: {total} nodes, {total / dt:,.0f} nodes/s")

    openings = (ROOT / "evotune" / "data" / "2moves_v1.epd").read_text().splitlines()
    times, plies = [], []
    for fen in openings[:args.games]:
        g = play_game(fen.strip(), W, W, limits=Limits(depth=3, max_plies=400))
        times.append(g.seconds)
        plies.append(len(g.moves))
    print(f"depth-3 games: median {statistics.median(times):.3f} s, max {max(times):.3f} s, "
          f"median plies {statistics.median(plies)}")

    code = ("import evotune.engine as e; e.search('" + chess.STARTING_FEN
            + "', [100, 300, 330, 500, 900, 10], depth=1)")
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
        walls.append(time.perf_counter() - t0)
    print(f"fresh process ready (import + cache load + depth-1 search): "
          f"{', '.join(f'{w:.2f}' for w in walls)} s")

    if args.reference:
        from evotune.engine import reference
        nodes, secs = 0, 0.0
        cnodes, csecs = 0, 0.0
        for fen in MIDDLEGAMES[:4]:
            t0 = time.perf_counter()
            r = reference.search(fen, W, depth=3)
            secs += time.perf_counter() - t0
            nodes += r.nodes
            c = search(fen, W, depth=3)
            cnodes, csecs = cnodes + c.nodes, csecs + c.seconds
        print(f"reference depth 3: {nodes / secs:,.0f} nodes/s; core depth 3 "
              f"{cnodes / csecs:,.0f} nodes/s; ratio {cnodes / csecs / (nodes / secs):.0f}x")


if __name__ == "__main__":
    main()
