"""Losses on time of evotune's own UCI engine against itself under a real time control.

    python benchmarks/time_losses.py [--games 400] [--tc 2+0.05] [--workers 2] [--seed 0]
                                     [--engine shannon-uci] [--openings 2moves] [--json]

Plays ``--games`` games of the engine spec ``--engine`` (default the shipped
engines/shannon-uci.toml: ``evotune uci`` with the reference weights) against itself through
the match runner (:func:`evotune.match.play_match`, as ``evotune match shannon-uci shannon-uci
--tc ...`` does: joblib workers, one engine process per side and worker, real clocks ``go wtime
btime winc binc`` kept by the runner). Printed: games, time losses (termination
'time-forfeit', with the engines' ply at which each flag fell), other forfeits, the mean game
length in plies played by the engines (the opening not counted) and the
mean wall time per game, the load average before and after, and the commit. Run it while the
machine is busy to see what a loaded machine does to the clocks.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from evotune.limits import Limits
from evotune.match import MatchSettings, play_match
from evotune.match.resolve import check_player_starts, close_external_players, resolve_players
from evotune.paths import resolve_openings_path

ROOT = Path(__file__).resolve().parent.parent


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _progress(event) -> None:
    """One line per finished game on stderr (a long run shows its losses as they happen)."""
    rec = event.record
    print(f"game {event.done}/{event.planned} {rec.termination} {len(rec.moves)} plies "
          f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=400, help="games (even; default 400)")
    ap.add_argument("--tc", default="2+0.05", help="time control BASE+INC in seconds")
    ap.add_argument("--workers", type=int, default=2, help="worker processes")
    ap.add_argument("--seed", type=int, default=0, help="seed of the openings")
    ap.add_argument("--engine", default="shannon-uci", help="UCI engine spec (both sides)")
    ap.add_argument("--openings", default="2moves", help="opening suite")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    args = ap.parse_args(argv)

    a, b = resolve_players(args.engine, args.engine)
    path = resolve_openings_path(args.openings)
    settings = MatchSettings(limits=Limits(tc=args.tc), openings=None if path is None else str(path))
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    try:
        check_player_starts(a)
        result = play_match(a, b, games=args.games, settings=settings, seed=args.seed,
                            workers=args.workers, progress=_progress)
    finally:
        close_external_players()
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    recs = result.records
    plies = [len(r.moves) for r in recs]  # plies the engines played (the opening not counted)
    flags = [p + 1 for r, p in zip(recs, plies) if r.termination == "time-forfeit"]
    terms = Counter(r.termination for r in recs)
    out = {
        "games": len(recs), "tc": args.tc, "workers": args.workers, "engine": args.engine,
        "time_losses": len(flags), "time_loss_plies": sorted(flags),
        "other_forfeits": sum(n for t, n in terms.items() if t.startswith("forfeit")),
        "mean_plies": round(sum(plies) / max(1, len(plies)), 1), "max_plies": max(plies, default=0),
        "mean_game_seconds": round(sum(r.seconds for r in recs) / max(1, len(recs)), 2),
        "wall_seconds": round(wall, 1), "terminations": dict(sorted(terms.items())),
        "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in load1],
        "cpus": os.cpu_count(), "commit": _commit(), "python": sys.version.split()[0],
    }
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:18s} {value}")
    return out


if __name__ == "__main__":
    main()
