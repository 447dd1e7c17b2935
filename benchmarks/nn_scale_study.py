"""Nets at scale (issue 39's study, docs/results/nn-scale.md): the network loop run on from net11
with datagen's fast setting, plain nets against king- and output-bucketed ones on the same data,
and the best at equal time against net11 and PeSTO.

Steps (each evotune command is printed before it runs; a step whose output exists is skipped, so
a second call continues where the first stopped: datagen and the trainings resume exactly;
results go to OUT/results.json as they come and the table to OUT/tables.md):

1. ``data``: net11's self-play at ``--nodes`` (5,000) nodes a move (no depth limit), every
   position bullet-style (``--per-game 0 --filter bestmove``) as bullet records, the 2moves
   openings and 8 random plies, seed 101, until ``--positions`` (10M): OUT/sp-net11.bin.
2. ``nets``: each net of ``--nets`` (names of :data:`NETS`) trained by ``evotune nn train`` on
   the first ``--train-positions`` positions of it (0: all) in OUT/runs/NAME.
3. ``screen``: each net against net11 at ``--nodes`` nodes a move (the same count for both: the
   bucketed nets' cost is not charged here), ``--games`` games.
4. ``final``: the best net by its screening score against net11 and PeSTO's tables at ``--tc``
   (both sides as ``evotune uci`` engines, so a slower net pays for its time), ``--final-games``
   each, and ``evotune bench --engine nnue:BEST --json`` (its nodes/s with bucket refreshes).

Every match: colour-balanced pairs on the held-out 8moves openings, seed 5; pentanomial Elo with
its 95% error bar from the first player's view.

    python benchmarks/nn_scale_study.py --out study/n39 --workers 2
    python benchmarks/nn_scale_study.py --out study/n39 --positions 20000 --nets plain128 \\
        --epochs 1 --games 8 --final-games 8 --nodes 500     # a smoke run
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from studyio import PESTO, ROOT, Results, elo_text, evotune, log, match, uci_spec

NET11 = ROOT / "evotune" / "engines" / "net11.nnue"
RECORD = 32
"""Bytes of one bullet record."""
NETS = {
    "plain128": {"hidden": 128},
    "kb4-ob8-128": {"hidden": 128, "king": "4", "output": 8},
    "kb4-ob8-128f": {"hidden": 128, "king": "4", "output": 8, "factoriser": True},
    "kb4-128f": {"hidden": 128, "king": "4", "factoriser": True},
    "ob8-128": {"hidden": 128, "output": 8},
    "plain256": {"hidden": 256},
    "kb4-ob8-256": {"hidden": 256, "king": "4", "output": 8},
    "net11-ft": {"hidden": 128, "init": str(NET11), "lr": 0.0003},
}
"""The nets the study can train: net11's shape from scratch, the same with 4 king buckets and 8
output buckets (bullet's ChessBucketsMirrored and MaterialCount<8>), the same with a factoriser
(``nn train --factoriser``: rows shared by the king buckets), the king buckets (factorised) or the
output buckets alone, both shapes at H 256, and net11
itself trained on (its --init) at a lower rate. Every one: SCReLU, wdl 0 (net11's), seed 1."""


def data(out: Path, args) -> Path:
    path = out / "sp-net11.bin"
    prog = path.with_name(path.name + ".progress.json")
    if path.exists() and prog.exists() and json.loads(prog.read_text()).get("done"):
        return path
    evotune("datagen", "--engine", "net11", "--depth", "64", "--nodes", str(args.nodes),
            "--per-game", "0", "--filter", "bestmove", "--format", "bullet", "--random-plies",
            "8", "--games", str(args.positions // 20 + 10), "--positions", str(args.positions),
            "--seed", "101", "--workers", str(args.workers), "--out", str(path))
    return path


def first(path: Path, n: int) -> Path:
    """The first ``n`` records of ``path`` as a file of their own (all of it when n is 0)."""
    have = path.stat().st_size // RECORD
    if not n or n >= have:
        return path
    cut = path.with_name(f"{path.stem}-first{n}{path.suffix}")
    if not cut.exists():
        with open(path, "rb") as f:
            blob = f.read(n * RECORD)
        tmp = cut.with_suffix(".tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, cut)
    return cut


def train(out: Path, name: str, source: Path, args) -> Path:
    cfg = NETS[name]
    runs = out / "runs"
    run = runs / name
    done = run.exists() and len(list((run / "epochs").glob("epoch-*.json"))) >= args.epochs
    if not done:
        if run.exists():
            evotune("resume", name, "--runs-dir", str(runs), "--workers", str(args.workers))
        else:
            extra: list[str] = []
            if "king" in cfg:
                extra += ["--king-buckets", cfg["king"]]
            if "output" in cfg:
                extra += ["--output-buckets", str(cfg["output"])]
            if cfg.get("factoriser"):
                extra += ["--factoriser"]
            if "init" in cfg:
                extra += ["--init", cfg["init"]]
            evotune("nn", "train", str(source), "--hidden", str(cfg["hidden"]), *extra,
                    "--wdl", "0", "--epochs", str(args.epochs), "--batch", str(args.batch),
                    "--lr", str(cfg.get("lr", args.lr)), "--lr-drop", str(args.lr_drop),
                    "--seed", "1", "--workers", str(args.workers), "--run-id", name,
                    "--runs-dir", str(runs))
    return run / "net.nnue"


def val_loss(out: Path, name: str) -> float | None:
    epochs = sorted((out / "runs" / name / "epochs").glob("epoch-*.json"))
    return json.loads(epochs[-1].read_text()).get("val_loss") if epochs else None


def tables(results: Results, names: list[str]) -> str:
    rows = ["| net | shape | positions | val loss | vs net11, equal nodes | file SHA-256 |",
            "|---|---|---:|---:|---|---|"]
    for name in names:
        info, m = results.get(f"net:{name}"), results.get(f"screen:{name}")
        if info:
            loss = "-" if info["val_loss"] is None else f"{info['val_loss']:.5f}"
            rows.append(f"| {name} | {info['shape']} | {info['positions']:,} | {loss} | "
                        f"{elo_text(m) if m else '-'} | "
                        f"{info['sha256'][:16]}... |")
    best = results.get("best")
    for key, label in (("tc-net11", "net11"), ("tc-pesto", "PeSTO")):
        m = results.get(f"{key}:{best}") if best else None
        if m:
            rows.append(f"\n{best} against {label} at {m['limit']}: {elo_text(m)} "
                        f"({m['wins']}-{m['draws']}-{m['losses']}, {m['games']} games)")
    b = results.get(f"bench:{best}") if best else None
    if b:
        rows.append(f"\nevotune bench --engine nnue:{best}: {b['search_nps']:,.0f} nodes/s "
                    f"(signature {b['signature']})")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the data, runs and results.")
    ap.add_argument("--only", default="data,nets,screen,final",
                    help="Comma-separated steps: data, nets, screen, final.")
    ap.add_argument("--positions", type=int, default=10_000_000, help="Positions of the data.")
    ap.add_argument("--train-positions", type=int, default=0,
                    help="The nets read the first this many positions (0: all the data has).")
    ap.add_argument("--nets", default="plain128,kb4-ob8-128",
                    help=f"Comma-separated nets of: {', '.join(NETS)}.")
    ap.add_argument("--nodes", type=int, default=5000,
                    help="Nodes a move of the self-play and of the screening matches.")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--lr-drop", type=int, default=9)
    ap.add_argument("--games", type=int, default=400, help="Games of each screening match.")
    ap.add_argument("--final-games", type=int, default=1000,
                    help="Games of each equal-time match.")
    ap.add_argument("--tc", default="1+0.01", help="The equal-time matches' time control.")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    names = [n for n in args.nets.split(",") if n]
    steps = set(args.only.split(","))
    bad = [n for n in names if n not in NETS] + sorted(steps - {"data", "nets", "screen", "final"})
    if bad:
        sys.exit(f"unknown net or step {bad[0]!r}; nets: {', '.join(NETS)}; "
                 "steps: data, nets, screen, final")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    results = Results(out / "results.json")
    path = out / "sp-net11.bin"
    if "data" in steps:
        path = data(out, args)
    if not path.exists():
        sys.exit(f"{path}: no data yet (run the data step)")
    source = first(path, args.train_positions)
    n = source.stat().st_size // RECORD
    if "nets" in steps:
        for name in names:
            net = train(out, name, source, args)
            info = evotune("nn", "info", str(net), capture=True)
            shape = next((ln.split(None, 1)[1] for ln in info.splitlines()
                          if ln.startswith("shape")), "")
            results.put(f"net:{name}", {"positions": n, "val_loss": val_loss(out, name),
                                        "shape": shape,
                                        "sha256": hashlib.sha256(net.read_bytes()).hexdigest(),
                                        **NETS[name]})
    trained = [nm for nm in names if (out / "runs" / nm / "net.nnue").exists()]
    if "screen" in steps:
        for name in trained:
            match(results, f"screen:{name}", f"nnue:{out / 'runs' / name / 'net.nnue'}",
                  "net11", games=args.games, workers=args.workers,
                  limit=("--depth", "64", "--nodes", str(args.nodes)), out=out)
    if "final" in steps:
        scored = [(results.get(f"screen:{nm}")["score"], nm) for nm in trained
                  if results.get(f"screen:{nm}")]
        if not scored:
            sys.exit("final: no net has been screened yet (run the screen step)")
        best = max(scored)[1]
        results.put("best", best)
        net = out / "runs" / best / "net.nnue"
        a = uci_spec(out, best, f"nnue:{net}")
        tc = ("--tc", args.tc)
        match(results, f"tc-net11:{best}", str(a), str(uci_spec(out, "net11", "net11")),
              games=args.final_games, workers=args.workers, limit=tc, out=out)
        match(results, f"tc-pesto:{best}", str(a), str(uci_spec(out, "pesto", PESTO)),
              games=args.final_games, workers=args.workers, limit=tc, out=out)
        if not results.get(f"bench:{best}"):
            results.put(f"bench:{best}", json.loads(
                evotune("bench", "--engine", f"nnue:{net}", "--json", capture=True)))
    table = tables(results, names)
    (out / "tables.md").write_text(table + "\n")
    log(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
