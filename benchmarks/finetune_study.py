"""Fine-tuning study (docs/results/finetune-study.md): does tuning by games add Elo to a Texel fit
at a realistic budget?

Steps (each evotune command is printed before it runs; every step is skipped when its output
exists and a killed run is resumed, so a second call continues where the first stopped; results
go to OUT/results.json as they come, tables to OUT/tables.md, the plot to OUT/finetune-study.png):

1. Start: the Texel-tuned `extended` evaluation of the documented recipe
   (``benchmarks/texel_recipe.py --scale S`` in --recipe, default OUT/recipe; an existing fit
   there is used), exported to OUT/texel.json; its Elo against shannon and PeSTO's tables at
   depth 3.
2. Runs: for each experiment of --plan, budget of --budgets and seed of --seeds:

       evotune run --init-from RECIPE/runs/recipe --engine ENGINE --strategy S
                   --max-games B --generations 0 --depth 3 --seed SEED --run-id NAME-Bk-sSEED

   with the strategies' defaults for a run from earlier weights (finetune: SPSA's ends, DE's
   first population and CMA-ES's first step from each weight's scale). ENGINE is
   `extended-pesto-tables` for the 55 scalar terms (the fit's tables held fixed) and `extended`
   for all its free weights; ``spsa-net`` tunes the output layer of the net given with --net
   (``evotune run --engine nnue:NET``), starting from the file.
3. Curve: every --every games (0, E, 2E, ...; let it divide the budgets) the run's recommended
   weights play its start over --games games on the held-out openings (the run's seed;
   ``evotune.verify.curve.verify_checkpoints``, stored in the run's verify-curve.json).
4. Final SPRT [0, 5] of each experiment's run at its largest budget: its exported weights against
   the start, ``evotune match --sprt 0 5`` at depth 3 (at most --sprt-games games) and, unless
   that rejected it, at depth 5 (at most --d5-games; only the runs of --d5-runs when given),
   seed 5.
5. Tables with the games, hours and Elo of every run, and the games the best run would need to
   reach +15 Elo at its measured slope (in games, and in hours on --workers and on 64 cores).

    python benchmarks/finetune_study.py --out reports/finetune --scale 0.5 --workers 2
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

from studyio import Results, elo_text, evotune, log, match, texel_start

EXPERIMENTS = {
    "spsa-scalars": ("spsa", "extended-pesto-tables", "55 scalar terms"),
    "spsa-all": ("spsa", "extended", "all 791 free weights"),
    "de-scalars": ("de", "extended-pesto-tables", "55 scalar terms"),
    "cmaes-scalars": ("cmaes", "extended-pesto-tables", "55 scalar terms"),
    "jde-scalars": ("jde", "extended-pesto-tables", "55 scalar terms"),
    "ea-scalars": ("ea", "extended-pesto-tables", "55 scalar terms"),
    "tbpsa-scalars": ("ng:TBPSA", "extended-pesto-tables", "55 scalar terms"),
    "de-all": ("de", "extended", "all 791 free weights"),
    "cmaes-all": ("cmaes", "extended", "all 791 free weights"),
    "spsa-net": ("spsa", "nnue", "a net's output layer and scale (--net)"),
}
"""name: (strategy, engine spec, the weights it tunes). The net's run starts from the file given
with --net (``evotune run --engine nnue:NET``) instead of the Texel fit, and its final SPRTs
play the exported net against that file."""
TARGET = 15.0
"""The issue's target: +15 Elo over the start at depth 3."""


def run_id(name: str, budget: int, seed: int) -> str:
    return f"{name}-{budget // 1000}k-s{seed}"


def status(runs: Path, rid: str) -> dict | None:
    if not (runs / rid).is_dir():
        return None
    return json.loads(evotune("status", rid, "--runs-dir", str(runs), "--json", capture=True))


def tune(runs: Path, start: Path, name: str, budget: int, seed: int, workers: int,
         net: Path | None, max_seconds: float = 0.0) -> dict:
    """Play run ``name`` at ``budget`` games (resumed when it stopped before its budget); with
    ``max_seconds`` the run also stops after that much wall time (then plays its final check)."""
    strategy, engine, _ = EXPERIMENTS[name]
    rid = run_id(name, budget, seed)
    st = status(runs, rid)
    limit = ("--max-seconds", str(max_seconds)) if max_seconds else ()
    if st is None:
        origin = ("--engine", f"nnue:{net}") if engine == "nnue" else (
            "--init-from", str(start), "--engine", engine)
        evotune("run", *origin, "--strategy", strategy,
                "--max-games", str(budget), "--generations", "0", "--depth", "3", "--seed",
                str(seed), "--workers", str(workers), "--run-id", rid, "--runs-dir", str(runs),
                *limit)
    elif not st["finished"]:
        evotune("resume", rid, "--runs-dir", str(runs), "--workers", str(workers))
    st = status(runs, rid)
    return {"strategy": strategy, "engine": engine, "games": st["games"],
            "seconds": st["seconds"], "generations": st["generation"],
            "final_check": st.get("final_check")}


def final_check_of(info: dict) -> dict | None:
    """A stored result's final check (results kept before the rename hold it as 'guard')."""
    return info.get("final_check", info.get("guard"))


def curve(results: Results, runs: Path, rid: str, *, every: int, games: int,
          workers: int) -> list[dict]:
    """Elo of the run's recommended weights against its start every ``every`` games."""
    key = f"curve:{rid}"
    if results.get(key):
        return results.get(key)
    from evotune.runs.store import Store
    from evotune.verify.curve import verify_checkpoints

    log(f"# {rid}: Elo against the start every {every} games ({games} games each)")
    store = Store.open(rid, runs)
    doc = verify_checkpoints(store, every=every, games=games, workers=workers)
    points: list[dict] = []
    for p in doc["points"]:  # a generation past two checkpoints is one point
        if not points or p["games"] != points[-1]["games"]:
            points.append({"checkpoint": p["checkpoint"], "games": p["games"],
                           **_elo(p["match"])})
    for p in points:
        log(f"  {rid} at {p['games']} games: {elo_text(p)}")
    results.put(key, points)
    return points


def _elo(m: dict) -> dict:
    return {k: m[k] for k in ("elo", "elo_error", "wins", "draws", "losses", "score")} | {
        "match_games": m["games"]}


def final(results: Results, out: Path, runs: Path, rid: str, texel: Path, args) -> None:
    """SPRT [0, 5] of the run's tuned weights against the start at depth 3 and 5: the weights
    its strategy recommends (the final check's 'tuned', which the run recommends only when the
    check found them better; ``evotune export`` writes what the run recommends)."""
    is_net = EXPERIMENTS[rid.rsplit("-", 2)[0]][1] == "nnue"
    weights = out / "weights" / (f"{rid}.nnue" if is_net else f"{rid}.json")
    if not weights.exists():
        weights.parent.mkdir(parents=True, exist_ok=True)
        st = status(runs, rid) or {}
        check = st.get("final_check")
        if check and is_net:  # the strategy's output layer on the start net, whatever the
            # check decided (export writes the run's recommendation: the start, when the check
            # found the tuned layer no better, and the SPRT would play the start against itself)
            from evotune.engine.net.network import read_net, write_net
            from evotune.engine.net.outputlayer import with_output
            write_net(with_output(read_net(args.net), check["tuned"]), weights)
        elif check:  # the strategy's weights, whatever the check decided
            weights.write_text(json.dumps(dict(zip(st["names"], check["tuned"])), indent=1)
                               + "\n")
        else:
            evotune("export", rid, "--format", "evotune" if is_net else "json", "--runs-dir",
                    str(runs), "--out", str(weights))
    a, b = f"extended:{weights}", f"extended:{texel}"
    if is_net:
        a, b = f"nnue:{weights}", f"nnue:{args.net}"
    sprt = ("--sprt", "0", "5")
    d3 = match(results, f"sprt3:{rid}", a, b, games=args.sprt_games, workers=args.workers,
               limit=("--depth", "3"), out=out, extra=sprt)
    if (d3.get("sprt") or {}).get("verdict") == "H0" or not args.d5_games:
        log(f"  {rid}: no depth-5 SPRT (H0 at depth 3, or --d5-games 0)")
        return
    if args.d5_runs and rid not in args.d5_runs:
        log(f"  {rid}: no depth-5 SPRT (not in --d5-runs)")
        return
    match(results, f"sprt5:{rid}", a, b, games=args.d5_games, workers=args.workers,
          limit=("--depth", "5"), out=out, extra=sprt)


def direct(results: Results, out: Path, pair: str, args) -> dict | None:
    """The tuned weights of run A against run B's, --direct-games games at depth 3."""
    a, _, b = pair.partition(",")
    wa, wb = (out / "weights" / f"{r}.json" for r in (a, b))
    if not (wa.exists() and wb.exists()):
        log(f"# --direct {pair}: both runs need their finals first ({wa.name}, {wb.name})")
        return None
    return match(results, f"direct:{a}:{b}", f"extended:{wa}", f"extended:{wb}",
                 games=args.direct_games, workers=args.workers, limit=("--depth", "3"), out=out)


def artefacts(results: Results, out: Path, texel: Path, order: list[str], folder: Path) -> None:
    """The start, each run's tuned weights and index.json (name, strategy, engine spec, games,
    Elo against the start, SPRT verdicts, the final check, file, SHA-256, the replay command)."""
    import hashlib

    from evotune.paths import HELD_OUT_OPENINGS

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(texel, folder / "start.json")
    rel = "docs/results/artefacts/finetune"
    held = "evotune/data/" + Path(HELD_OUT_OPENINGS).name
    index = {"start": {"file": f"{rel}/start.json",
                       "sha256": hashlib.sha256((folder / "start.json").read_bytes()).hexdigest()},
             "runs": []}
    for rid in order:
        info, w = results.get(f"run:{rid}"), out / "weights" / f"{rid}.json"
        if not info or not w.exists():
            continue
        shutil.copyfile(w, folder / f"{rid}.json")
        entry = {"name": rid, "strategy": info["strategy"], "engine": info["engine"],
                 "games": info["games"], "file": f"{rel}/{rid}.json",
                 "sha256": hashlib.sha256(w.read_bytes()).hexdigest(),
                 "recommends": ("start" if final_check_of(info)
                                and not final_check_of(info)["better"] else "tuned"),
                 "final_check": {k: v for k, v in (final_check_of(info) or {}).items()
                                 if k not in ("tuned", "start")} or None}
        for key, depth in (("sprt3", 3), ("sprt5", 5)):
            m = results.get(f"{key}:{rid}")
            if m:
                entry[f"depth{depth}"] = {
                    "elo": m["elo"], "elo_error": m["elo_error"], "games": m["games"],
                    "verdict": (m.get("sprt") or {}).get("verdict"),
                    "replay": (f"evotune match extended:{rel}/{rid}.json extended:{rel}/start.json"
                               f" --games {m['games']} --openings {held} --seed 5 --depth "
                               f"{depth} --sprt 0 5")}
        index["runs"].append(entry)
    for key, m in results.items():
        if key.startswith("direct:"):
            _, a, b = key.split(":")
            index.setdefault("direct", []).append(
                {"a": a, "b": b, "elo": m["elo"], "elo_error": m["elo_error"],
                 "games": m["games"],
                 "replay": (f"evotune match extended:{rel}/{a}.json extended:{rel}/{b}.json "
                            f"--games {m['games']} --openings {held} --seed 5 --depth 3")})
    (folder / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    log(f"# artefacts in {folder}: start.json, {len(index['runs'])} runs, index.json")


def slope(points: list[dict]) -> tuple[float, float]:
    """Elo per 1,000 games through the start (0 Elo at 0 games, by definition) and the curve's
    later points, weighted least squares (weights 1 / variance), and its standard error."""
    xs, ys, ws = [], [], []
    for p in points:
        if p["games"] == 0 or p["elo"] is None or not p["elo_error"]:
            continue
        xs.append(p["games"] / 1000)
        ys.append(p["elo"])
        ws.append(1 / (p["elo_error"] / 1.96) ** 2)
    if not xs:
        return math.nan, math.nan
    sxx = sum(w * x * x for w, x in zip(ws, xs))
    return sum(w * x * y for w, x, y in zip(ws, xs, ys)) / sxx, math.sqrt(1 / sxx)


def verdict(m: dict | None) -> str:
    if not m:
        return "not played"
    s = m.get("sprt") or {}
    v = s.get("verdict") or "no verdict"
    return f"{v}: {elo_text(m)} after {m['games']} games"


def check(info: dict) -> str:
    """The run's final check, in a few words (its recommendation: tuned or start)."""
    g = final_check_of(info)
    if not g:
        return "none"
    if g["verdict"] == "same":
        return "tuned = start"
    what = "recommends the tuned weights" if g["better"] else "recommends the start"
    if g["games"] and g["games"] in (g["wins"], g["losses"]):  # the stored Elo is capped
        side = "won" if g["wins"] == g["games"] else "lost"
        return f"{g['verdict']}: {side} all {g['games']} games, {what}"
    return (f"{g['verdict']}: {g['elo']:+.0f} ± {g['elo_error']:.0f} after {g['games']} games, "
            f"{what}")


def tables(results: Results, order: list[str], *, workers: int) -> str:
    rows = ["| run | strategy | weights | games | hours | Elo vs start at each checkpoint "
            "(games: Elo ± 95%) | slope (Elo / 1k games) | SPRT [0, 5] depth 3 | depth 5 | "
            "final check (the run's own) |",
            "|---|---|---|---:|---:|---|---|---|---|---|"]
    best = None
    for rid in order:
        info = results.get(f"run:{rid}")
        pts = results.get(f"curve:{rid}")
        if not info or not pts:
            continue
        b, se = slope(pts)
        name = rid.rsplit("-", 2)[0]
        d3 = results.get(f"sprt3:{rid}")
        d5 = verdict(results.get(f"sprt5:{rid}"))
        if d3 and (d3.get("sprt") or {}).get("verdict") == "H0" and d5 == "not played":
            d5 = "not played (H0 at depth 3)"
        cells = ", ".join(f"{p['games']:,}: {elo_text(p)}" for p in pts)
        rows.append(f"| {rid} | {info['strategy']} | {EXPERIMENTS[name][2]} | "
                    f"{info['games']:,} | {info['seconds'] / 3600:.2f} | {cells} | "
                    f"{b:+.2f} ± {1.96 * se:.2f} | {verdict(d3)} | {d5} | {check(info)} |")
        final_elo = d3["elo"] if d3 and d3["elo"] is not None else pts[-1]["elo"]
        if final_elo is not None and (best is None or final_elo > best[1]):
            best = (rid, final_elo, b, info["games"] / info["seconds"], d3)
    text = "\n".join(rows)
    if best is not None:
        rid, elo, b, rate, d3 = best
        accepted = d3 is not None and (d3.get("sprt") or {}).get("verdict") == "H1"
        text += (f"\n\nBest: {rid}, {elo:+.1f} Elo "
                 f"({'its depth-3 SPRT' if d3 else 'its last checkpoint'}).")
        if accepted and elo >= TARGET:
            text += f" The SPRT accepted it, above the +{TARGET:.0f} target."
        elif b > 0:
            need = (TARGET - elo) / b * 1000 if elo < TARGET else 0
            text += (f" At its slope ({b:+.2f} Elo per 1,000 games) the +{TARGET:.0f} target "
                     f"needs ~{need:,.0f} more games: {need / rate / 3600:.1f} h at this "
                     f"machine's {rate:.1f} games/s on {workers} cores, "
                     f"{need / (rate / workers * 64) / 3600:.1f} h on 64 cores.")
        else:
            text += f" Its slope ({b:+.2f} Elo per 1,000 games) does not point to +{TARGET:.0f}."
    return text


def plot(out: Path, results: Results, order: list[str]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for rid in order:
        pts = results.get(f"curve:{rid}")
        if not pts:
            continue
        xs = [p["games"] for p in pts if p["elo"] is not None]
        ys = [p["elo"] for p in pts if p["elo"] is not None]
        es = [p["elo_error"] or 0 for p in pts if p["elo"] is not None]
        style = "--" if "-all-" in rid else "-"
        line, = ax.plot(xs, ys, style, marker="o", label=rid)
        ax.fill_between(xs, [y - e for y, e in zip(ys, es)], [y + e for y, e in zip(ys, es)],
                        color=line.get_color(), alpha=0.15)
    ax.axhline(0, color="grey", lw=0.8)
    ax.axhline(TARGET, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("tuning games")
    ax.set_ylabel("Elo against the start (95% band)")
    ax.set_title("Tuning by games from a Texel fit, depth 3")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "finetune-study.png", dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the runs and results.")
    ap.add_argument("--recipe", default=None,
                    help="Folder of the Texel recipe (default OUT/recipe; made when missing).")
    ap.add_argument("--scale", type=float, default=1.0, help="texel_recipe.py's --scale.")
    ap.add_argument("--plan", default="spsa-scalars,spsa-all,de-scalars,cmaes-scalars",
                    help=f"Comma-separated experiments: {', '.join(EXPERIMENTS)}; NAME@B "
                    "plays that one at budget B only.")
    ap.add_argument("--budgets", default="20000", help="Comma-separated games per run.")
    ap.add_argument("--seeds", type=int, default=1, help="Seeds per experiment and budget.")
    ap.add_argument("--every", type=int, default=10_000, help="Games between curve points.")
    ap.add_argument("--games", type=int, default=400, help="Games of each curve point.")
    ap.add_argument("--sprt-games", type=int, default=8000,
                    help="Most games of the final SPRT at depth 3.")
    ap.add_argument("--d5-games", type=int, default=2000,
                    help="Most games of the final SPRT at depth 5.")
    ap.add_argument("--d5-runs", default="",
                    help="RUN,RUN,...: play the depth-5 SPRT of these runs only (default: all; "
                    "a run already on record keeps its match).")
    ap.add_argument("--no-final", action="store_true", help="Skip the final SPRTs.")
    ap.add_argument("--no-curve", action="store_true",
                    help="Skip the checkpoint curve (its matches cost --games games a point).")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="Also stop each run after this much wall time (0: none).")
    ap.add_argument("--direct", default="",
                    help="RUN_A,RUN_B: the tuned weights of A against B's at depth 3.")
    ap.add_argument("--direct-games", type=int, default=4000, help="Games of --direct.")
    ap.add_argument("--artefacts", type=Path, default=None,
                    help="Write start.json, each run's tuned weights and index.json here "
                    "(docs/results/artefacts/finetune).")
    ap.add_argument("--net", type=Path, default=None,
                    help="The net whose output layer spsa-net tunes (e.g. the network study's "
                    "best, runs/net5/net.nnue).")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish")
    args = ap.parse_args(argv)
    args.d5_runs = {r for r in args.d5_runs.split(",") if r}
    budgets = sorted(int(b) for b in args.budgets.split(","))
    plan: list[tuple[str, list[int]]] = []  # NAME or NAME@BUDGET
    for item in (p for p in args.plan.split(",") if p):
        name, _, only = item.partition("@")
        if name not in EXPERIMENTS or (only and not only.isdigit()):
            sys.exit(f"--plan: unknown experiment {item!r}; choose from "
                     f"{', '.join(EXPERIMENTS)} (NAME@BUDGET for one budget)")
        plan.append((name, [int(only)] if only else budgets))
        if EXPERIMENTS[name][1] == "nnue" and (args.net is None or not args.net.is_file()):
            sys.exit(f"--plan {name}: give the net to tune with --net FILE")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    recipe = Path(args.recipe).resolve() if args.recipe else out / "recipe"
    runs = out / "runs"
    results = Results(out / "results.json")
    texel = texel_start(out, results, recipe=recipe, scale=args.scale, workers=args.workers,
                        games=args.games, stockfish=args.stockfish)
    start = recipe / "runs" / "recipe"
    order = []
    for seed in range(1, args.seeds + 1):
        for name, sizes in plan:
            for budget in sizes:
                rid = run_id(name, budget, seed)
                order.append(rid)
                results.put(f"run:{rid}", tune(runs, start, name, budget, seed, args.workers,
                                               args.net, args.max_seconds))
                if args.no_curve:
                    if not results.get(f"curve:{rid}"):
                        results.put(f"curve:{rid}", [{"checkpoint": 0, "games": 0, "elo": 0.0,
                                                      "elo_error": None, "wins": 0, "draws": 0,
                                                      "losses": 0, "score": 0.5,
                                                      "match_games": 0}])
                else:
                    curve(results, runs, rid, every=args.every, games=args.games,
                          workers=args.workers)
                if not args.no_final and budget == sizes[-1]:
                    final(results, out, runs, rid, texel, args)
                (out / "tables.md").write_text(tables(results, order, workers=args.workers)
                                               + "\n")
                plot(out, results, order)
    if args.direct:
        direct(results, out, args.direct, args)
    # tables and artefacts list every run on record, this plan's first: a later plan of a few
    # runs must not drop the earlier ones from index.json
    order += sorted(k.split(":", 1)[1] for k, _ in results.items()
                    if k.startswith("run:") and k.split(":", 1)[1] not in order)
    if args.artefacts is not None:
        artefacts(results, out, texel, order, args.artefacts)
    (out / "tables.md").write_text(tables(results, order, workers=args.workers) + "\n")
    log((out / "tables.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
