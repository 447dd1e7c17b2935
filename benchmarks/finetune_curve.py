"""Elo against games, real games (issue 59, item 3): every --every games of each run, its
recommended weights against its start on the held-out openings, the same openings and games for
every method (``evotune.verify.curve.verify_checkpoints``: the run's seed, stored in each run's
verify-curve.json and reused by a second call), drawn on one figure with 95% error bars.

The runs are made first, with ``evotune run`` (the study's problem: docs/results/finetune-study.md):

    evotune run --engine extended-pesto-tables:docs/results/artefacts/finetune/start.json \\
        --strategy spsa --max-games 20000 --generations 0 --depth 3 --seed 1 --run-id spsa-scalars-20k-s1

then, naming each run with its method's label:

    python benchmarks/finetune_curve.py --runs populations --every 2500 --games 1000 \\
        --run "SPSA=spsa-scalars-20k-s1" --run "UH-CMA-ES=uh-cmaes-scalars-10k-s1" \\
        --json curve.json --figure curve.png

A method added later joins an earlier figure's points without replaying them (``--with``: the
same --every, --first and --games, or the script refuses):

    python benchmarks/finetune_curve.py --run "quad=quad-scalars-20k-s1" \\
        --with docs/results/artefacts/finetune/elo-vs-games-real.json --json curve.json

Prints one line per checkpoint (games, Elo +- its 95% error, W-D-L), then the run's own final
check as its last point (at the tuning games it ended with: the budget counts the check's games
too) and, where two methods share a checkpoint, the difference of the first method's Elo from
each other's.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def curve_of(runs: Path, run_id: str, *, every: int, games: int, first: int,
             workers: int) -> list[dict]:
    from evotune.runs.store import Store
    from evotune.verify.curve import verify_checkpoints

    doc = verify_checkpoints(Store.open(run_id, runs), every=every, games=games,
                             workers=workers, first=first)
    points = []
    for p in doc["points"]:
        m = p["match"]
        points.append({"checkpoint": p["checkpoint"], "generation": p["generation"],
                       "games": p["games"], "elo": m["elo"], "elo_error": m["elo_error"],
                       "wins": m["wins"], "draws": m["draws"], "losses": m["losses"],
                       "match_games": m["games"]})
    return points


def final_point(runs: Path, run_id: str) -> dict | None:
    """The run's own final check (its recommendation against the start on the held-out
    openings, at the run's end: an SPRT [0, 5] that may stop early), as the curve's last point;
    None for a run without one."""
    from evotune.runs.store import Store

    store = Store.open(run_id, runs)
    check = store.read_document("final-check") or store.read_document("guard")
    if not check:
        return None
    games = max(g.games_total for g in store.generations() if g.generation <= check["generation"])
    return {"checkpoint": games, "generation": check["generation"], "games": games,
            "elo": check["elo"], "elo_error": check["elo_error"], "wins": check["wins"],
            "draws": check["draws"], "losses": check["losses"], "match_games": check["games"],
            "final_check": True}


def mean_differences(a: dict[str, list[dict]], b: dict[str, list[dict]]
                     ) -> list[tuple[int, float, float]]:
    """(checkpoint, difference, its 95% error) of two methods' Elo means over their runs (their
    seeds) at each checkpoint every run of both played (the final checks left out): the error of
    a mean is the root of its runs' squared errors over their count."""
    def means(runs: dict[str, list[dict]]) -> dict[int, tuple[float, float]]:
        at = [{p["checkpoint"]: p for p in points if not p.get("final_check")}
              for points in runs.values()]
        shared = set.intersection(*(set(x) for x in at)) if at else set()
        return {c: (sum(x[c]["elo"] for x in at) / len(at),
                    math.sqrt(sum(x[c]["elo_error"] ** 2 for x in at)) / len(at))
                for c in shared}
    ma, mb = means(a), means(b)
    return [(c, ma[c][0] - mb[c][0], math.hypot(ma[c][1], mb[c][1]))
            for c in sorted(set(ma) & set(mb))]


def figure(methods: dict, out: Path, *, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    shift = {name: (i - (len(methods) - 1) / 2) * 120 for i, name in enumerate(methods)}
    for m, (name, runs) in enumerate(methods.items()):
        for k, (run_id, points) in enumerate(runs.items()):
            line = ax.errorbar([p["checkpoint"] + shift[name] for p in points],
                               [p["elo"] for p in points],
                               yerr=[p["elo_error"] for p in points], marker="os^v"[k % 4],
                               capsize=3, label=f"{name} ({run_id})", color=f"C{m % 10}",
                               linestyle="-" if k == 0 else "--")
            ends = [p for p in points if p.get("final_check")]
            if ends:
                ax.plot([p["checkpoint"] + shift[name] for p in ends], [p["elo"] for p in ends],
                        marker="*", markersize=14, color=line[0].get_color(),
                        linestyle="none")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("tuning games")
    ax.set_ylabel("Elo against the start (95% interval)")
    ax.set_title(title, fontsize=10)
    ax.plot([], [], marker="*", markersize=10, color="grey", linestyle="none",
            label="the run's final check (its end)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, default=Path("populations"), help="Runs folder.")
    ap.add_argument("--run", action="append", required=True, metavar="LABEL=RUN_ID",
                    help="A run and its method's label (repeat; runs of one label are seeds).")
    ap.add_argument("--every", type=int, default=2500, help="Games between checkpoints.")
    ap.add_argument("--first", type=int, default=None,
                    help="First checkpoint (default --every: the start itself is 0 Elo).")
    ap.add_argument("--games", type=int, default=1000, help="Games per checkpoint match.")
    ap.add_argument("--workers", type=int, default=0, help="Worker processes (0: per core).")
    ap.add_argument("--with", dest="with_", type=Path, action="append", default=[],
                    metavar="JSON", help="An earlier figure's points (this script's --json), "
                    "drawn beside the new runs' (repeat).")
    ap.add_argument("--json", type=Path, default=None, help="Write the points here.")
    ap.add_argument("--figure", type=Path, default=None, help="Draw the figure here (PNG).")
    args = ap.parse_args(argv)
    methods: dict[str, dict[str, list[dict]]] = {}
    for item in args.run:
        label, sep, run_id = item.partition("=")
        if not sep or not label or not run_id:
            print(f"finetune_curve: --run {item!r}: give LABEL=RUN_ID", file=sys.stderr)
            return 2
        methods.setdefault(label, {})[run_id] = []
    first = args.every if args.first is None else args.first
    earlier: list[dict] = []
    for path in args.with_:
        try:
            doc = json.loads(path.read_text())
            same = (doc["every"], doc["first"], doc["games_per_match"]) == (
                args.every, first, args.games)
            if not isinstance(doc["methods"], dict):
                raise TypeError("its 'methods' is not a table of runs")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"finetune_curve: --with {path}: not this script's points ({exc})",
                  file=sys.stderr)
            return 2
        if not same:
            print(f"finetune_curve: --with {path}: its checkpoints are every {doc['every']} "
                  f"from {doc['first']} at {doc['games_per_match']} games, not every "
                  f"{args.every} from {first} at {args.games}", file=sys.stderr)
            return 2
        earlier.append(doc)
    for label, runs in methods.items():
        for run_id in runs:
            runs[run_id] = curve_of(args.runs, run_id, every=args.every, games=args.games,
                                    first=first, workers=args.workers)
            end = final_point(args.runs, run_id)
            if end is not None and end["checkpoint"] > runs[run_id][-1]["checkpoint"]:
                runs[run_id].append(end)
            for p in runs[run_id]:
                print(f"{label:12s} {run_id:26s} {p['checkpoint']:>6,} games "
                      f"(generation {p['generation']}): {p['elo']:+6.1f} +- "
                      f"{p['elo_error']:4.1f}  ({p['wins']}-{p['draws']}-{p['losses']})"
                      + ("  the run's final check" if p.get("final_check") else ""),
                      flush=True)
    for doc in earlier:
        for label, runs in doc["methods"].items():
            for run_id, points in runs.items():
                if run_id in methods.get(label, {}):
                    print(f"finetune_curve: {run_id} is both a --run and in --with",
                          file=sys.stderr)
                    return 2
                methods.setdefault(label, {})[run_id] = points
    names = list(methods)
    for other in names[1:]:
        for a_id, a in methods[names[0]].items():
            for b_id, b in methods[other].items():
                at = {p["checkpoint"]: p for p in b}
                for p in a:
                    q = at.get(p["checkpoint"])
                    if q is not None and not p.get("final_check"):
                        d = p["elo"] - q["elo"]
                        e = math.hypot(p["elo_error"], q["elo_error"])
                        print(f"{names[0]} - {other} ({a_id} - {b_id}) at "
                              f"{p['checkpoint']:,}: {d:+.1f} +- {e:.1f}")
    for other in names[1:]:
        for c, d, e in mean_differences(methods[names[0]], methods[other]):
            print(f"{names[0]} - {other}, means over their runs, at {c:,}: {d:+.1f} +- {e:.1f}")
    doc = {"every": args.every, "first": first, "games_per_match": args.games,
           "methods": methods}
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {args.json} (sha256 {sha256(args.json)})")
    if args.figure:
        figure(methods, args.figure,
               title=f"Elo against games, {args.games} games a checkpoint, held-out openings")
        print(f"wrote {args.figure} (sha256 {sha256(args.figure)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
