"""External-engine throughput: evotune's runner against a minimal plain-pipes driver.

    python benchmarks/bench_external.py [--pairs 8] [--workers 2] [--repeat 2] [--tc 1+0.01]
                                        [--skip-tc] [--json]

Both sides are `evotune uci` (the reference weights against a slightly different vector), from
the same openings (drawn from the 2moves_v1 suite with evotune's seeding, handed to the driver as
plain FEN + moves). Printed, all measured in this run:

- evotune_gps: games per second through ``run_fixtures`` (the runner of every run and match:
  joblib workers, one engine process per side per worker, reused; setoption/ucinewgame per game);
- plain_gps: games per second of the plain driver written below: ``multiprocessing`` workers,
  each with two engine processes on plain pipes (write ``position``/``go``, read until
  ``bestmove``, python-chess only for the rules), no evotune code in the game loop;
- evotune_over_plain: evotune_gps / plain_gps (target >= 0.9 with 2 workers);
- builtin_gps and builtin_over_external (depth only): the same games played by the built-in
  engine in-process (``run_fixtures`` with built-in players, same workers) against the external
  engines through evotune.

Figures are given at fixed depth (--depth, default 3) and at the time control --tc (default
1+0.01: real clocks, go wtime/btime/winc/binc). Each figure is the best of --repeat runs,
interleaved, to damp the noise of other processes on the machine; note the load (uptime).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import select
import subprocess
import time

import chess

CMD = ["evotune", "uci"]
A_WEIGHTS = (100, 300, 330, 500, 900, 10)
B_WEIGHTS = (100, 320, 310, 520, 880, 8)
OPTION_NAMES = ("PawnValue", "KnightValue", "BishopValue", "RookValue", "QueenValue",
                "MobilityWeight")


# ---- the minimal plain-pipes driver (no evotune imports below this line until the next one) ------

class _Pipe:
    def __init__(self) -> None:
        self.p = subprocess.Popen(CMD, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=0)
        self.buf = b""
        self.send("uci")
        self.wait_for("uciok")

    def send(self, line: str) -> None:
        self.p.stdin.write((line + "\n").encode())

    def line(self) -> str:
        while b"\n" not in self.buf:
            select.select([self.p.stdout], [], [])
            self.buf += os.read(self.p.stdout.fileno(), 65536)
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def wait_for(self, token: str) -> str:
        while True:
            line = self.line()
            if line.startswith(token):
                return line


_ENGINES: list[_Pipe] = []


def _plain_init() -> None:
    _ENGINES[:] = [_Pipe(), _Pipe()]


def _plain_game(job) -> str:
    fen, opening, white_weights, black_weights, depth, tc, max_plies = job
    engines = {chess.WHITE: _ENGINES[0], chess.BLACK: _ENGINES[1]}
    for colour, weights in ((chess.WHITE, white_weights), (chess.BLACK, black_weights)):
        e = engines[colour]
        for name, value in zip(OPTION_NAMES, weights):
            e.send(f"setoption name {name} value {value}")
        e.send("ucinewgame")
        e.send("isready")
        e.wait_for("readyok")
    board = chess.Board(fen)
    for m in opening:
        board.push_uci(m)
    head = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
    moves = list(opening)
    clock = {chess.WHITE: tc[0], chess.BLACK: tc[0]} if tc else None
    plies = 0
    while not (board.is_game_over() or board.is_repetition(3)) and plies < max_plies:
        e = engines[board.turn]
        e.send(head + (" moves " + " ".join(moves) if moves else ""))
        if clock:
            ms = {c: max(0, int(clock[c] * 1000)) for c in clock}
            go = (f"go wtime {ms[chess.WHITE]} btime {ms[chess.BLACK]} "
                  f"winc {int(tc[1] * 1000)} binc {int(tc[1] * 1000)}")
        else:
            go = f"go depth {depth}"
        t0 = time.perf_counter()
        e.send(go)
        best = e.wait_for("bestmove").split()[1]
        if clock:
            clock[board.turn] += tc[1] - (time.perf_counter() - t0)
            if clock[board.turn] < -0.1:
                return "time"
        board.push_uci(best)
        moves.append(best)
        plies += 1
    return board.result(claim_draw=True)


class PlainDriver:
    """A pool of ``workers`` processes, each with two engines, playing jobs in parallel."""

    def __init__(self, workers: int) -> None:
        self.pool = mp.get_context("spawn").Pool(workers, initializer=_plain_init)

    def play(self, jobs) -> int:
        return len(self.pool.map(_plain_game, jobs, chunksize=1))

    def close(self) -> None:
        self.pool.terminate()


# ---- evotune ---------------------------------------------------------------------------------------

def _openings(pairs: int, seed: int):
    from evotune.match import draw_opening, opening_generator
    from evotune.paths import DEFAULT_OPENINGS

    return [draw_opening(str(DEFAULT_OPENINGS), opening_generator(seed, 0, 0, p))
            for p in range(pairs)]


def _jobs(openings, depth, tc, max_plies):
    jobs = []
    for op in openings:
        for w, b in ((A_WEIGHTS, B_WEIGHTS), (B_WEIGHTS, A_WEIGHTS)):
            jobs.append((op.fen, tuple(op.moves), w, b, depth, tc, max_plies))
    return jobs


def _players(external: bool):
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    spec = load_engine_spec("shannon-uci" if external else "shannon")
    return (player_from_engine_spec(spec, A_WEIGHTS, name="a"),
            player_from_engine_spec(spec, B_WEIGHTS, name="b"))


def _evotune(pairs, settings, seed, workers, external=True) -> tuple[float, int]:
    from evotune.match import Fixture, run_fixtures

    a, b = _players(external)
    fx = Fixture(key=(0, 0), a=a, b=b, games=2 * pairs)
    t0 = time.perf_counter()
    res = run_fixtures([fx], settings=settings, seed=seed, workers=workers)
    return time.perf_counter() - t0, res[0].games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8, help="opening pairs (2 games each)")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--tc", default="1+0.01")
    ap.add_argument("--skip-tc", action="store_true", help="only the fixed-depth figures")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--max-plies", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from evotune.limits import Limits, parse_tc
    from evotune.match import MatchSettings
    from evotune.paths import DEFAULT_OPENINGS

    openings = _openings(args.pairs, args.seed)
    tc = parse_tc(args.tc)
    out: dict = {"pairs": args.pairs, "games": 2 * args.pairs, "workers": args.workers,
                 "load": os.getloadavg()[0]}
    plain = PlainDriver(args.workers)
    modes = [("depth", None)] + ([] if args.skip_tc else [("tc", tc)])
    try:
        for label, clock in modes:
            settings = MatchSettings(limits=Limits(depth=args.depth, max_plies=args.max_plies,
                                                   tc=clock),
                                     openings=str(DEFAULT_OPENINGS))
            jobs = _jobs(openings, args.depth, (clock.base, clock.inc) if clock else None,
                         args.max_plies)
            _evotune(1, settings, args.seed, args.workers)  # start workers and their engines
            plain.play([j[:-1] + (2,) for j in jobs[:2 * args.workers]])
            best = {"evotune": 0.0, "plain": 0.0, "builtin": 0.0}
            for _ in range(args.repeat):
                secs, n = _evotune(args.pairs, settings, args.seed, args.workers)
                best["evotune"] = max(best["evotune"], n / secs)
                t0 = time.perf_counter()
                n = plain.play(jobs)
                best["plain"] = max(best["plain"], n / (time.perf_counter() - t0))
                if clock is None:
                    secs, n = _evotune(args.pairs, settings, args.seed, args.workers,
                                       external=False)
                    best["builtin"] = max(best["builtin"], n / secs)
            out[f"{label}_evotune_gps"] = round(best["evotune"], 3)
            out[f"{label}_plain_gps"] = round(best["plain"], 3)
            out[f"{label}_evotune_over_plain"] = round(best["evotune"] / best["plain"], 3)
            if clock is None:
                out["depth_builtin_gps"] = round(best["builtin"], 3)
                out["depth_builtin_over_external"] = round(best["builtin"] / best["evotune"], 2)
    finally:
        plain.close()
        from evotune.players.external import close_all

        close_all()
    out["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['games']} games per measurement, {args.workers} workers, evotune uci on both "
          f"sides, load average {out['load']:.2f} -> {out['load_after']:.2f}")
    for label, desc in (("depth", f"depth {args.depth}"), ("tc", f"--tc {args.tc}")):
        if f"{label}_evotune_gps" not in out:
            continue
        print(f"{desc:>14}: evotune runner {out[f'{label}_evotune_gps']:.2f} games/s, plain "
              f"pipes {out[f'{label}_plain_gps']:.2f} games/s, ratio "
              f"{out[f'{label}_evotune_over_plain']:.3f} (target >= 0.9)")
    print(f"built-in engine in-process, same games at depth {args.depth}: "
          f"{out['depth_builtin_gps']:.2f} games/s = {out['depth_builtin_over_external']:.1f}x "
          "the external engine")


if __name__ == "__main__":
    main()
