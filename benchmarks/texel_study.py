"""Texel study: error and Elo as functions of the number of positions and of the data source.

For every data source (a file of labelled positions, e.g. from `evotune datagen`) and every size
(the first N positions of the file), fit the `--engine` set from its untuned reference (a stored
fit, `evotune texel ... --max-positions N`), then play the tuned weights against `--opponent`
over `--games` games at `--depth` on the held-out 8moves_v3 openings (`evotune verify`). Prints a
table (markdown) and writes a plot of validation error and Elo against the number of positions,
one line per source. Fits and matches are runs under `--runs`: a second call reuses them, and a
killed call continues where it stopped.

    python benchmarks/texel_study.py --source sp2=sp2.txt --source sp4=sp4.txt \\
        --source stockfish=sf.txt --sizes 10000,100000,1000000 --games 200 --out study

A size larger than a source's file is reported as such (not fitted).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def fit(source: str, path: Path, size: int, args) -> dict:
    from evotune.kinds.fit import TexelConfig, execute_fit, new_fit, open_fit, plan_fit, read_data
    from evotune.limits import Limits
    from evotune.runs.store import Store

    safe = re.sub(r"[^A-Za-z0-9._-]", "-", f"{Path(args.engine).stem}-{source}")
    run_id = f"study-{safe}-{size}" + (f"-l2-{args.l2:g}" if args.l2 else "")
    root = Path(args.runs) / run_id
    cfg = TexelConfig.of(data=(str(path),), engine=args.engine, max_positions=size,
                      epochs=args.epochs, seed=args.seed, limits=Limits(depth=args.depth),
                      l2=args.l2)
    t0 = time.perf_counter()
    if (root / "manifest.json").exists():
        store = Store(root)
        summary = store.read_document("texel")
        if summary is None:  # texel.json is written when the fit ends: continue it
            plan = plan_fit(open_fit(store))
            summary = execute_fit(store, plan, read_data(plan))
    else:
        data = read_data(plan_fit(cfg))
        store = new_fit(plan_fit(cfg), data, out_dir=args.runs, run_id=run_id)
        summary = execute_fit(store, plan_fit(cfg), data)
    return {"run_id": run_id, "summary": summary, "fit_seconds": time.perf_counter() - t0}


def verify(run_id: str, args) -> dict:
    from evotune.limits import LimitChanges
    from evotune.runs.store import Store
    from evotune.verify.run import VerifySettings, verify_run

    store = Store(Path(args.runs) / run_id)
    doc = store.read_document("verify")
    if not (doc and doc.get("games") == args.games and doc.get("depth") == args.depth
            and [m["opponent"] for m in doc["matches"]] == [args.opponent]):
        doc = verify_run(store, settings=VerifySettings(games=args.games,
                                                        limits=LimitChanges(depth=args.depth),
                                                        workers=args.workers,
                                                        opponents=(args.opponent,)),
                         runs_dir=args.runs)
    return doc["matches"][0]


def elo_text(r: dict) -> str:
    e, err = r.get("elo"), r.get("elo_error")
    if e is not None and err is not None and math.isfinite(e) and math.isfinite(err):
        return f"{e:+.1f} +- {err:.1f}"
    return f"score {r['score']:.3f}"


def plot(rows: list[dict], out: Path, args) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for source in dict.fromkeys(r["source"] for r in rows):
        done = [r for r in rows if r["source"] == source and "note" not in r]
        if not done:
            continue
        x = [r["positions"] for r in done]
        ax1.plot(x, [r["val_error"] - r["val_error_start"] for r in done], "o-", label=source)
        finite = [r for r in done if r["elo"] is not None and r["elo_error"] is not None
                  and math.isfinite(r["elo"]) and math.isfinite(r["elo_error"])]
        ax2.errorbar([r["positions"] for r in finite], [r["elo"] for r in finite],
                     yerr=[r["elo_error"] for r in finite], fmt="o-", capsize=3, label=source)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("positions in the fit (training + validation)")
        ax.grid(alpha=0.3)
        ax.legend()
    ax1.set_ylabel("validation error: tuned - untuned start")
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set_title(f"Texel fit of `{args.engine}` from its untuned reference"
                  + (f" (l2 {args.l2:g})" if args.l2 else ""))
    ax2.set_ylabel(f"Elo vs {args.opponent} (95%)")
    ax2.set_title(f"{args.games} games, depth {args.depth}, held-out 8moves_v3")
    ax2.axhline(0, color="grey", lw=0.8)
    fig.tight_layout()
    png = out / "texel-study.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", action="append", required=True, metavar="NAME=FILE[:SIZES]",
                    help="a data source: its name in the table and its file (repeatable); "
                         "':0' or ':10000,0' after the file: its own sizes instead of --sizes")
    ap.add_argument("--sizes", default="10000,100000,1000000",
                    help="numbers of positions (the first N of each file; 0 = the whole file)")
    ap.add_argument("--engine", default="extended")
    ap.add_argument("--opponent", default="shannon", help="SPEC[:WEIGHTS] to verify against")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--l2", type=float, default=0.0, help="evotune texel --l2 of every fit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--runs", default="populations", help="folder of the fits (runs)")
    ap.add_argument("--out", default="reports/texel-study", help="folder of the table and plot")
    args = ap.parse_args(argv)

    def parse_sizes(text: str) -> list[int] | None:
        try:
            return sorted({int(x) for x in text.split(",") if x.strip()})
        except ValueError:
            return None

    sizes = parse_sizes(args.sizes)
    if not sizes:
        print(f"texel_study: --sizes {args.sizes}: give numbers, e.g. 10000,100000",
              file=sys.stderr)
        return 2
    sources = []
    for item in args.source:
        name, sep, file = item.partition("=")
        own = None
        head, colon, tail = file.rpartition(":")
        if colon and tail and all(c.isdigit() or c == "," for c in tail):
            file, own = head, parse_sizes(tail)
        if not sep or not name or not Path(file).is_file() or own == []:
            print(f"texel_study: --source {item}: give NAME=FILE[:SIZES] of an existing file",
                  file=sys.stderr)
            return 2
        sources.append((name, Path(file), own or sizes))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, path, source_sizes in sources:
        available = count_lines(path)
        for size in source_sizes:
            size = size or available
            row = {"source": name, "file": path.name, "size": size, "available": available}
            if size > available:
                rows.append({**row, "note": f"only {available:,} positions"})
                continue
            f = fit(name, path, size, args)
            s = f["summary"]
            m = verify(f["run_id"], args)
            row.update(run_id=f["run_id"], positions=s["train"] + s["validation"],
                       not_quiet=s["not_quiet"], K=s["K"],
                       train_error=s["error_after_rounding"]["train"],
                       val_error=s["error_after_rounding"]["validation"],
                       val_error_start=s["error_initial"]["validation"],
                       elo=m.get("elo"), elo_error=m.get("elo_error"), score=m["score"],
                       wdl=(m.get("wins"), m.get("draws"), m.get("losses")))
            rows.append(row)
            print(f"{name} {size}: validation error {row['val_error']:.5f}, {elo_text(row)}",
                  file=sys.stderr, flush=True)
    (out / "texel-study.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"| source | positions (train + validation) | K | train error | validation error "
          f"(start -> tuned) | Elo vs {args.opponent} ({args.games} games, depth {args.depth}) |")
    print("|---|---:|---:|---:|---|---:|")
    for r in rows:
        if "note" in r:
            print(f"| {r['source']} | {r['size']:,}: not fitted ({r['note']}) | | | | |")
            continue
        elo = elo_text(r)
        print(f"| {r['source']} | {r['positions']:,} | {r['K']:.3f} | {r['train_error']:.5f} | "
              f"{r['val_error_start']:.5f} -> {r['val_error']:.5f} | {elo} |")
    print(f"\nplot: {plot(rows, out, args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
