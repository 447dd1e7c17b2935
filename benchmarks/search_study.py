"""Search study: alpha-beta against probability-limited search and UCT variants, same evaluation.

Every player evaluates with the Shannon reference weights; only the search differs. Parts:

* ``nodes``: each contender against depth-limited alpha-beta (iterative deepening to depth 64,
  stopped by the node limit) at equal nodes per move (``--levels``; UCT contenders count nodes,
  ``[search] budget = "nodes"``: positions made or searched, checked between simulations);
* ``time``: the same pairings at equal time per move (``--movetime``), both sides as external
  UCI engines (``evotune uci``) so that alpha-beta is stopped by the clock as UCT is;
* ``wac``: Win At Chess solve rates of every player at the node levels;
* ``spsa``: SPSA tunes UCT's c and the prior's temperature of ``--tune`` by games at
  ``--tune-nodes`` (openings 2moves), then the tuned values play the defaults (c = 1.41,
  T = 100) on the held-out 8moves openings; the tuned player then joins the other parts.

Matches are colour-balanced game pairs from the 8moves_v3 openings (seed fixed), scored as
pentanomial Elo with 95% bars, from the contender's view. Results go to ``OUT/results.json`` as
they come (a second call skips what is there), tables (markdown) to stdout and
``OUT/tables.md``, the plot to ``OUT/elo-vs-nodes.png``.

    PYTHONPATH=. python benchmarks/search_study.py --out reports/search-study \\
        --levels 1000,10000,100000 --games 400,400,100 --movetime 0.05 --time-games 60
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

from studyio import Results

SHANNON_WEIGHTS = (("pawn", 100, "PawnValue"), ("knight", 300, "KnightValue"),
                   ("bishop", 330, "BishopValue"), ("rook", 500, "RookValue"),
                   ("queen", 900, "QueenValue"), ("mobility", 10, "MobilityWeight"))
INF = float("inf")
VARIANTS = {
    "alphabeta": None,
    "probability": {"algorithm": "probability"},
    "probability-prior": {"algorithm": "probability", "prior": True},
    "uct-random": {"algorithm": "uct", "policy": "random"},
    "uct-qsearch": {"algorithm": "uct", "policy": "qsearch"},
    "uct-eval-inf": {"algorithm": "uct", "policy": "eval", "unvisited": INF},
    "uct-qsearch-inf": {"algorithm": "uct", "policy": "qsearch", "unvisited": INF},
    "puct-qsearch": {"algorithm": "uct", "policy": "qsearch", "prior": True},
    "puct-ab2": {"algorithm": "uct", "policy": "alphabeta:2", "prior": True},
}
"""The players: the seed's UCT (unvisited = 1) with random playouts and with quiescence, UCT
visiting every move once first (unvisited = inf), PUCT with the move prior, and hybrids."""
BASELINE = "alphabeta"
ADJUDICATION = {"resign_score": 1000, "resign_moves": 4, "draw_score": 10, "draw_moves": 10,
                "draw_start_ply": 120}


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return json.dumps(v)


def write_spec(folder: Path, name: str, search: dict | None, *, nodes_budget: bool = True,
               free: tuple[str, ...] = (), values: dict | None = None) -> Path:
    """A builtin spec with the Shannon reference weights (fixed) and ``search``; ``free``: search
    weights left free (SPSA), the others fixed at ``values`` or their defaults."""
    lines = [f'name = "{name}"', 'kind = "builtin"', 'features = "shannon"']
    if search:
        table = dict(search)
        if table["algorithm"] == "uct" and nodes_budget:
            table["budget"] = "nodes"
        lines.append("[search]")
        lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    for w, ref, opt in SHANNON_WEIGHTS:
        lines += ["[[weight]]", f'name = "{w}"', f"reference = {ref}", "fixed = true",
                  f'option = "{opt}"']
    from evotune.spec.searchsettings import SEARCH_WEIGHTS, search_settings
    for w in search_settings(search or {}).weight_names():
        if w not in free:
            ref = (values or {}).get(w, SEARCH_WEIGHTS[w].reference)
            lines += ["[[weight]]", f'name = "{w}"', f"reference = {ref}", "fixed = true"]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def uci_spec(folder: Path, name: str, builtin: Path) -> Path:
    """A 'uci' spec that runs ``evotune uci --engine builtin`` (this checkout's code)."""
    command = [sys.executable, "-m", "evotune.cli", "uci", "--engine", str(builtin)]
    path = folder / f"{name}-uci.toml"
    path.write_text(f'name = "{name}"\nkind = "uci"\ncommand = {json.dumps(command)}\n'
                    '[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n'
                    'option = "PawnValue"\n')
    return path


def match(a_spec: Path, b_spec: Path, *, games: int, limits, workers: int, seed: int) -> dict:
    from evotune.match import MatchSettings, play_match
    from evotune.match.resolve import close_external_players
    from evotune.paths import HELD_OUT_OPENINGS
    from evotune.players.spec import check_engine_spec, player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    specs = [load_engine_spec(str(a_spec)), load_engine_spec(str(b_spec))]
    for s in specs:
        check_engine_spec(s)
    a, b = (player_from_engine_spec(s) for s in specs)
    settings = MatchSettings(limits=limits, openings=str(HELD_OUT_OPENINGS))
    t0 = time.perf_counter()
    try:
        r = play_match(a, b, games=games, settings=settings, seed=seed, workers=workers)
    finally:
        close_external_players()
    plies = sum(len(g.moves) for g in r.records)
    out = r.to_dict()
    out.update(seconds=time.perf_counter() - t0, plies=plies,
               nodes_per_ply=sum(g.nodes for g in r.records) / max(plies, 1),
               terminations={t: sum(g.termination == t for g in r.records)
                             for t in sorted({g.termination for g in r.records})})
    return out


def limits_for(nodes: int = 0, movetime: float = 0.0):
    from evotune.limits import Limits
    from evotune.rules import Adjudication

    return Limits(depth=64, nodes=nodes, movetime=movetime, max_plies=300,
                  adjudication=Adjudication(**ADJUDICATION))


def part_nodes(args, specs, results) -> None:
    for level, games in zip(args.levels, args.games):
        for name in args.variants:
            if name == BASELINE:
                continue
            key = f"nodes/{level}/{name}"
            if results.get(key) is None:
                r = match(specs[name], specs[BASELINE], games=games, limits=limits_for(level),
                          workers=args.workers, seed=args.seed)
                results.put(key, r)
            say_match(key, results.get(key))


def part_time(args, specs, results) -> None:
    folder = Path(args.out) / "specs"
    base = uci_spec(folder, BASELINE, specs[BASELINE])
    for name in args.time_variants:
        key = f"time/{args.movetime:g}/{name}"
        if results.get(key) is None:
            r = match(uci_spec(folder, name, specs[name]), base, games=args.time_games,
                      limits=limits_for(movetime=args.movetime), workers=args.time_workers,
                      seed=args.seed)
            results.put(key, r)
        say_match(key, results.get(key))


def part_wac(args, specs, results) -> None:
    import chess

    from evotune.engine import search
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    wac = Path(__file__).resolve().parent.parent / "tests" / "data" / "win_at_chess_test.epd"
    positions = []
    for line in wac.read_text().splitlines():
        if line.strip():
            board, ops = chess.Board.from_epd(line)
            positions.append((board, {m.uci() for m in ops["bm"]}))
    for level in args.levels:
        for name in args.variants:
            key = f"wac/{level}/{name}"
            if results.get(key) is None:
                p = player_from_engine_spec(load_engine_spec(str(specs[name])))
                solved, nodes, t0 = 0, 0, time.perf_counter()
                for board, best in positions:
                    r = search(board, p.weights, depth=64, nodes=level, settings=p.search)
                    solved += r.move in best
                    nodes += r.nodes
                results.put(key, {"solved": solved, "positions": len(positions),
                                  "nodes_per_position": nodes / len(positions),
                                  "seconds_per_position": (time.perf_counter() - t0)
                                  / len(positions)})
            r = results.get(key)
            print(f"{key}: {r['solved']}/{r['positions']} solved, "
                  f"{r['nodes_per_position']:.0f} nodes and {r['seconds_per_position'] * 1000:.1f} "
                  "ms per position", flush=True)


def part_spsa(args, specs, results) -> Path:
    from evotune.runs.rundata import load_run
    from evotune.runs.runkind import recommend

    folder = Path(args.out) / "specs"
    tune = write_spec(folder, f"{args.tune}-tune", VARIANTS[args.tune],
                      free=("uct_c", "prior_temperature"))
    runs = Path(args.out) / "runs"
    lines = folder / "spsa-params.txt"
    # a few hundred game pairs: learning rates far above fishtest's 0.002 (thousands of pairs)
    lines.write_text("uct_c,141,10,500,20,0.05\nprior_temperature,100,10,2000,100,0.05\n")
    run_id = "spsa"
    cmd = [sys.executable, "-m", "evotune.cli"]
    if not (runs / run_id).exists():
        cmd += ["run", "--strategy", "spsa", "--engine", str(tune), "--spsa-params", str(lines),
                "--nodes", str(args.tune_nodes), "--depth", "64", "--games", "2",
                "--max-games", str(args.tune_games), "--generations", "100000",
                "--workers", str(args.workers), "--seed", str(args.seed), "--runs-dir",
                str(runs), "--run-id", run_id, "--max-plies", "300",
                "--resign", "1000", "4", "--draw", "10", "10", "120"]
    else:
        cmd += ["resume", run_id, "--runs-dir", str(runs)]
    key = f"spsa/{args.tune}/{args.tune_nodes}/{args.tune_games}"
    if results.get(key + "/tuned") is None:
        subprocess.run(cmd, check=False)
        data = load_run(run_id, out_dir=runs)
        rec = recommend(data, "mean")
        tuned = dict(zip(data.names, (float(v) for v in rec.weights)))
        results.put(key + "/tuned", {"uct_c": tuned["uct_c"],
                                     "prior_temperature": tuned["prior_temperature"],
                                     "description": rec.description})
    tuned = results.get(key + "/tuned")
    print(f"{key}: tuned uct_c {tuned['uct_c']:.0f}, prior_temperature "
          f"{tuned['prior_temperature']:.0f}", flush=True)
    fixed_tuned = write_spec(folder, f"{args.tune}-tuned", VARIANTS[args.tune],
                             values={w: round(tuned[w]) for w in ("uct_c", "prior_temperature")})
    vkey = key + f"/verify/{args.verify_games}"
    if results.get(vkey) is None:
        results.put(vkey, match(fixed_tuned, specs[args.tune], games=args.verify_games,
                                limits=limits_for(args.tune_nodes), workers=args.workers,
                                seed=args.seed + 1))
    say_match(vkey, results.get(vkey))
    return fixed_tuned


def say_match(key: str, r: dict) -> None:
    elo = "n/a" if r["elo"] is None else f"{r['elo']:+.0f}"
    err = "" if r["elo_error"] is None else f" +- {r['elo_error']:.0f}"
    print(f"{key}: {r['games']} games, +{r['wins']} ={r['draws']} -{r['losses']}, Elo {elo}{err}, "
          f"pentanomial {r['pentanomial']}, {r['nodes_per_ply']:.0f} nodes/ply, "
          f"{r['seconds']:.0f} s", flush=True)


def tables(args, results) -> str:
    def cell(r):
        if r is None:
            return "-"
        elo = f"score {r['score']:.2f}" if r["elo"] is None else f"{r['elo']:+.0f}"
        err = "" if r["elo_error"] is None else f" ± {r['elo_error']:.0f}"
        return f"{elo}{err} ({r['games']})"

    out = ["### Elo against alpha-beta at equal nodes per move (95%, games)", "",
           "| player | " + " | ".join(f"{lv:,} nodes" for lv in args.levels) + " |",
           "|---|" + "---|" * len(args.levels)]
    for name in args.variants:
        if name != BASELINE:
            out.append(f"| {name} | " + " | ".join(cell(results.get(f"nodes/{lv}/{name}"))
                                                   for lv in args.levels) + " |")
    out += ["", f"### Elo against alpha-beta at {args.movetime:g} s per move", "",
            "| player | Elo (games) | W/D/L |", "|---|---|---|"]
    for name in args.time_variants:
        r = results.get(f"time/{args.movetime:g}/{name}")
        wdl = "-" if r is None else f"{r['wins']}/{r['draws']}/{r['losses']}"
        out.append(f"| {name} | {cell(r)} | {wdl} |")
    out += ["", "### Win At Chess (300 positions) solved at equal nodes", "",
            "| player | " + " | ".join(f"{lv:,} nodes" for lv in args.levels) + " |",
            "|---|" + "---|" * len(args.levels)]
    for name in args.variants:
        row = [results.get(f"wac/{lv}/{name}") for lv in args.levels]
        out.append(f"| {name} | " + " | ".join("-" if r is None else str(r["solved"])
                                               for r in row) + " |")
    return "\n".join(out) + "\n"


def plot(args, results, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for i, name in enumerate(n for n in args.variants if n != BASELINE):
        xs, ys, es = [], [], []
        for lv in args.levels:
            r = results.get(f"nodes/{lv}/{name}")
            if r is None or r["elo"] is None:
                continue
            elo = max(-800.0, min(800.0, r["elo"]))
            xs.append(lv * (1 + 0.03 * (i - 4)))
            ys.append(elo)
            es.append(min(r["elo_error"] or 0.0, 800.0))
        if xs:
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=name)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("nodes per move (both sides)")
    ax.set_ylabel("Elo against alpha-beta (95%; clipped at ±800)")
    ax.set_title("Searches against depth-limited alpha-beta, Shannon evaluation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="reports/search-study")
    p.add_argument("--parts", default="spsa,nodes,wac,time")
    p.add_argument("--levels", default="1000,10000,100000")
    p.add_argument("--games", default="400,400,100", help="games per level")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--movetime", type=float, default=0.05)
    p.add_argument("--time-games", type=int, default=40)
    p.add_argument("--time-variants", default="probability,uct-qsearch,uct-qsearch-inf,"
                                              "puct-qsearch,puct-ab2")
    p.add_argument("--tune", default="puct-qsearch")
    p.add_argument("--tune-nodes", type=int, default=10000)
    p.add_argument("--tune-games", type=int, default=800)
    p.add_argument("--verify-games", type=int, default=200)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--time-workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    args.levels = [int(x) for x in args.levels.split(",")]
    args.games = [int(x) for x in args.games.split(",")]
    args.variants = [v for v in args.variants.split(",") if v]
    args.time_variants = [v for v in args.time_variants.split(",") if v]
    if len(args.games) != len(args.levels):
        p.error("--games needs one count per level")
    out = Path(args.out)
    (out / "specs").mkdir(parents=True, exist_ok=True)
    specs = {name: write_spec(out / "specs", name, VARIANTS[name]) for name in VARIANTS}
    results = Results(out / "results.json")
    parts = {"nodes": part_nodes, "time": part_time, "wac": part_wac, "spsa": part_spsa}
    for part in args.parts.split(","):
        tuned = parts[part](args, specs, results)
        if part == "spsa" and tuned is not None:  # the tuned player joins the other parts
            name = f"{args.tune}-tuned"
            specs[name] = tuned
            args.variants.append(name)
            args.time_variants.append(name)
    text = tables(args, results)
    (out / "tables.md").write_text(text)
    print(text)
    plot(args, results, out / "elo-vs-nodes.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
