"""Network study (docs/results/nn-study.md): nets trained by `evotune nn train` on data evotune
makes itself, against the Texel-tuned `extended` evaluation and PeSTO's tables.

Steps (each evotune command is printed before it runs; every step is skipped when its output
exists, so a second call continues where the first stopped; results go to OUT/results.json as
they come, tables to OUT/tables.md, plots to OUT/nn-study-loss.png and OUT/nn-study-elo.png):

1. Texel start: ``benchmarks/texel_recipe.py --scale S`` in OUT/recipe (self-play and Stockfish
   labels, a ridge fit of the 824 `extended` weights), exported to OUT/texel.json; its Elo
   against shannon and PeSTO (`pst-pesto`) at depth 3.
2. Data with search scores (``--format text``): self-play of the Texel evaluation at depth 3
   (OUT/sp-texel.txt), and positions from Stockfish's games at depth 3 (``--nodes 2000`` with
   datagen's default ``--depth 3``: Stockfish stops at depth 3, ~170 nodes) labelled with its
   scores (OUT/sf-text.txt, Debian's Stockfish 15.1).
3. Nets (``evotune nn train``): net1 on the self-play data (H 128, SCReLU, wdl 0.25); net1's
   own self-play (OUT/sp-net1.txt) makes net2's data (with the first); net3 adds Stockfish's
   data (16k positions); net4 trains on 200k positions of Stockfish's (OUT/sf-big.txt) beside
   the self-play data, net5 the same with wdl 0 (scores only: the best setting of step 5);
   with NN_STUDY_TD=1, net2-td is net2 with net1's games labelled by TD(0.7) targets
   (``datagen --target td``, the same positions). Each net plays the Texel evaluation at
   depth 3.
3b. Data size (step ``scale``): Stockfish's games at depth 3 (at most 2,000 nodes) with up to
   100 quiet positions a game (OUT/sf-pg100.txt, ``--sf-scale-positions``), nets on its first
   100k ... 1.2M positions (wdl 0), H 256 and wdl 0.25 at the full size, games from 8 random
   plies (OUT/sf-rp8.txt), and net6: all of it beside the Texel self-play data; then the Texel
   evaluation's self-play (OUT/sp-texel-big.txt, 100 positions a game) with its own scores and
   scored by Stockfish at depth 3 (``evotune label``, OUT/sp-texel-big-sf.txt), and net7 on
   Stockfish's games and those; more self-play (seeds 82-84) for sp600k, sp1.2m, net8 and net9.
3c. The loop at scale (step ``loop2``, the third session): net9's self-play with its own depth-3
   scores (OUT/sp-net9-1.txt and -2.txt, seeds 91 and 92, 300k positions each, 100 a game) and
   TD(0.7) targets of the first seed's games (OUT/sp-net9-1-td.txt, the same positions); nets
   on it alone and beside net9's data (net10, net11); each plays the Texel evaluation and
   PeSTO at depth 3.
4. The best of these by its depth-3 score plays the Texel evaluation at depth 5 and, at equal
   time (``--tc``, both sides as ``evotune uci`` engines, so the net's slower evaluation is
   paid for), the Texel evaluation and PeSTO (step ``final``). Step ``final3``: the same
   equal-time matches with the third session's engine (the output layer in 16/32-bit
   integers), for net9 and the best of step 3c by its depth-3 score against PeSTO, and that
   net against the Texel evaluation and PeSTO at depth 5.
5. Variants of net1, one setting at a time: H 32 / 256, wdl 0 / 1, the first 10k / 20k
   positions, each against the Texel evaluation at depth 3.

Every match: ``--games`` games (colour-balanced pairs) on the held-out 8moves openings, seed 5;
pentanomial Elo with its 95% error bar, from the net's view.

    PYTHONPATH=. python benchmarks/nn_study.py --out reports/nn-study --scale 0.5 --workers 2
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from studyio import PESTO, Results, elo_text, evotune, log, match, say, texel_start, uci_spec

SF_SPEC = """name = "stockfish"
kind = "uci"
command = [{command}]
options = {{ Threads = 1, Hash = 16 }}
"""
BASE = {"hidden": 128, "wdl": 0.25, "epochs": 12, "batch": 1024, "lr_drop": 9,
        "data": ("sp-texel.txt",), "first": 0, "init": None}
"""The training: on ~40k positions the trainer's default batch (16,384) makes two optimiser steps
an epoch and 20 epochs leave the net far from converged (it lost 2-0-398 to the Texel
evaluation); batch 1,024 converges in ~10 epochs and the validation loss rises after 12
(overfitting: 98k parameters, 36k positions)."""
VARIANTS = {
    "net1": {},
    "h32": {"hidden": 32},
    "h256": {"hidden": 256},
    "wdl0": {"wdl": 0.0},
    "wdl1": {"wdl": 1.0},
    "n10k": {"first": 10_000},
    "n20k": {"first": 20_000},
}
"""Trainings on the self-play data of the Texel evaluation: one setting changed at a time."""
LOOP = {
    "net2": {"data": ("sp-texel.txt", "sp-net1.txt")},
    "net3": {"data": ("sf-text.txt", "sp-texel.txt")},
    "net2-td": {"data": ("sp-texel.txt", "sp-net1-td.txt")},
    "net4": {"data": ("sf-big.txt", "sp-texel.txt")},
    "net5": {"data": ("sf-big.txt", "sp-texel.txt"), "wdl": 0.0},
}
"""The self-play loop (net1's games make net2's data) and the stronger labeller."""
NET9_DATA = ("sf-pg100.txt", "sp-texel-big.txt", "sp-texel-big2.txt", "sp-texel-big3.txt",
             "sp-texel-big4.txt")
"""net9's data (Stockfish's games, nets read the first 1.2M, and the Texel evaluation's
self-play, four seeds); also that of its H 32 / 64 variants and of net11."""
SCALE = {
    "net6": {"data": ("sf-pg100.txt", "sp-texel.txt"), "wdl": 0.0, "first": 1_200_000},
    "s100k": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 100_000},
    "s300k": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 300_000},
    "rp8": {"data": ("sf-rp8.txt",), "wdl": 0.0},
    "s600k": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 600_000},
    "s1.2m": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 1_200_000},
    "s1.2m-h256": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 1_200_000, "hidden": 256},
    "s1.2m-wdl25": {"data": ("sf-pg100.txt",), "wdl": 0.25, "first": 1_200_000},
    "s1.2m-h32": {"data": ("sf-pg100.txt",), "wdl": 0.0, "first": 1_200_000, "hidden": 32},
    "s1.2m-wdl1": {"data": ("sf-pg100.txt",), "wdl": 1.0, "first": 1_200_000},
    "sp300k": {"data": ("sp-texel-big.txt",), "wdl": 0.0},
    "sp300k-sf": {"data": ("sp-texel-big-sf.txt",), "wdl": 0.0},
    "net7": {"data": ("sf-pg100.txt", "sp-texel-big-sf.txt"), "wdl": 0.0, "first": 1_200_000},
    "sp600k": {"data": ("sp-texel-big.txt", "sp-texel-big2.txt"), "wdl": 0.0},
    "net8": {"data": ("sf-pg100.txt", "sp-texel-big.txt", "sp-texel-big2.txt"), "wdl": 0.0,
             "first": 1_200_000},
    "net9": {"data": NET9_DATA, "wdl": 0.0, "first": 1_200_000},
    "net9-h32": {"data": NET9_DATA, "wdl": 0.0, "first": 1_200_000, "hidden": 32},
    "net9-h64": {"data": NET9_DATA, "wdl": 0.0, "first": 1_200_000, "hidden": 64},
    "sp1.2m": {"data": ("sp-texel-big.txt", "sp-texel-big2.txt", "sp-texel-big3.txt",
                        "sp-texel-big4.txt"), "wdl": 0.0},
}
"""The data-size study on Stockfish's larger data (OUT/sf-pg100.txt: its games at depth 3, at most
2,000 nodes, up to 100 quiet positions a game, so that a game's searches give 3-4x the positions
they gave at 20): the first 100k / 300k / 600k / 1.2M positions, then H and wdl at the full
size (H 32, wdl 1 and net9-h32/h64 added in the third session). rp8 is 300k positions of games
that start with 8 random plies instead of 2 (OUT/sf-rp8.txt: more lopsided positions, like those
weak players reach), against s300k. net6
adds the Texel self-play data (net5's recipe on ~8x the Stockfish positions). sp300k is 300k
positions of the Texel evaluation's self-play (OUT/sp-texel-big.txt, its own depth-3 scores),
sp300k-sf the same positions scored by Stockfish (``evotune label``, OUT/sp-texel-big-sf.txt):
the position source and the labeller, one at a time. net7: Stockfish's games and the relabelled
self-play. sp600k: twice sp300k's self-play (OUT/sp-texel-big2.txt, seed 82), its own scores;
net8: that beside Stockfish's 1.2M; net9 and sp1.2m: the same with four times sp300k's
self-play (seeds 81-84)."""

LOOP2_DATA = ("sp-net9-1.txt", "sp-net9-2.txt")
LOOP2 = {
    "n9sp300k": {"data": LOOP2_DATA[:1], "wdl": 0.0},
    "n9td300k": {"data": ("sp-net9-1-td.txt",), "wdl": 0.0},
    "n9sp600k": {"data": LOOP2_DATA, "wdl": 0.0},
    "net10": {"data": ("sf-pg100.txt", *LOOP2_DATA), "wdl": 0.0, "first": 1_200_000},
    "net11": {"data": (*NET9_DATA, *LOOP2_DATA), "wdl": 0.0, "first": 1_200_000},
}
"""The self-play loop at scale: net9's own games, scored by its own depth-3 search (seeds 91 and
92, 300k positions each), alone (n9sp300k, n9sp600k: against sp300k and sp600k, the Texel
evaluation's self-play), with TD(0.7) targets instead of scores (n9td300k: the same positions as
n9sp300k), instead of the Texel evaluation's self-play beside Stockfish's games (net10), and
beside all of net9's data (net11: 3.0M positions)."""
LOOP2_TEACHER = "net9"
"""Whose self-play makes LOOP2's data."""


def lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def datagen(out: Path, name: str, engine: str, *, positions: int, per_game: int, seed: int,
            workers: int, limit: tuple[str, ...], extra: tuple[str, ...] = ()) -> Path:
    path = out / name
    if path.exists() and lines(path) >= positions:
        return path
    games = max(positions * 3 // (per_game * 2), positions * 3 // 100, 10)  # ~57 a game at 100
    evotune("datagen", "--engine", engine, "--games", str(games), "--positions", str(positions),
            "--per-game", str(per_game), "--format", "text", "--seed", str(seed),
            "--workers", str(workers), "--out", str(path), *limit, *extra)
    return path


def relabel(src: Path, dst: Path, engine: str, *, workers: int, limit: tuple[str, ...]) -> Path:
    """``src``'s positions scored by ``engine`` (``evotune label``) into ``dst``."""
    prog = dst.with_name(dst.name + ".progress.json")
    if not (dst.exists() and prog.exists() and json.loads(prog.read_text())["games"]
            >= lines(src)):
        evotune("label", str(src), "--engine", engine, "--workers", str(workers), "--out",
                str(dst), *limit)
    return dst


def head(path: Path, n: int) -> Path:
    """The first ``n`` lines of ``path`` as a file of their own (for the data-size variants)."""
    cut = path.with_name(f"{path.stem}-first{n}{path.suffix}")
    if not cut.exists():
        with open(path, "rb") as f:
            data = b"".join(line for _, line in zip(range(n), f))
        tmp = cut.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, cut)
    return cut


def train(out: Path, name: str, cfg: dict, *, workers: int) -> Path:
    runs = out / "runs"
    net = runs / name / "net.nnue"
    files = [out / d for d in cfg["data"]]
    if cfg["first"]:
        files = [head(files[0], cfg["first"]), *files[1:]]
    run = runs / name
    done = run.exists() and len(list((run / "epochs").glob("epoch-*.json"))) >= cfg["epochs"]
    if not done:
        if run.exists():
            evotune("resume", name, "--runs-dir", str(runs))
        else:
            init = ("--init", str(cfg["init"])) if cfg["init"] else ()
            evotune("nn", "train", *map(str, files), "--hidden", str(cfg["hidden"]),
                    "--wdl", str(cfg["wdl"]), "--epochs", str(cfg["epochs"]), "--batch",
                    str(cfg["batch"]), "--lr-drop", str(cfg["lr_drop"]), "--seed", "1", "--workers",
                    str(workers), "--run-id", name, "--runs-dir", str(runs), *init)
    return net


def losses(out: Path, name: str) -> dict:
    epochs = sorted((out / "runs" / name / "epochs").glob("epoch-*.json"))
    recs = [json.loads(p.read_text()) for p in epochs]
    return {"train": [r.get("train_loss") for r in recs], "val": [r.get("val_loss") for r in recs],
            "seconds": recs[-1]["seconds"] if recs else 0.0}


def net_step(out: Path, results: Results, name: str, change: dict, args, tx: str) -> None:
    """Train net ``name`` (BASE with ``change``) and play it against the Texel evaluation."""
    cfg = {**BASE, **change}
    net = train(out, name, cfg, workers=args.workers)
    n = (cfg["first"] or lines(out / cfg["data"][0])) + sum(lines(out / d)
                                                              for d in cfg["data"][1:])
    results.put(f"net:{name}", {"hidden": cfg["hidden"], "wdl": cfg["wdl"],
                                "data": list(cfg["data"]), "positions": n, **losses(out, name)})
    match(results, f"d3:{name}", f"nnue:{net}", tx, games=args.games, workers=args.workers,
          limit=("--depth", "3"), out=out)


def tables(results: Results, order: list[str]) -> str:
    rows = ["| net | data | H | wdl | positions | val loss | vs Texel, depth 3 | vs PeSTO, depth 3 |",
            "|---|---|---:|---:|---:|---:|---|---|"]
    for name in order:
        info = results.get(f"net:{name}")
        m = results.get(f"d3:{name}")
        if not info or not m:
            continue
        rows.append(f"| {name} | {' + '.join(info['data'])} | {info['hidden']} | {info['wdl']} | "
                    f"{info['positions']:,} | {info['val'][-1]:.5f} | {cell(m)} | "
                    f"{cell(p) if (p := results.get(f'p3:{name}')) else ''} |")
    return "\n".join(rows)


def cell(m: dict) -> str:
    return f"{elo_text(m)} ({m['wins']}-{m['draws']}-{m['losses']})"


def plots(out: Path, results: Results, order: list[str]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name in order:  # the main line (net1 ... net9); the variants would crowd it
        if not name.startswith("net"):
            continue
        info = results.get(f"net:{name}")
        if info:
            ax.plot(range(1, len(info["val"]) + 1), info["val"], label=f"{name} (validation)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation loss")
    ax.legend(fontsize=7)
    ax.set_title("Net trainings: validation loss per epoch")
    fig.tight_layout()
    fig.savefig(out / "nn-study-loss.png", dpi=110)
    plt.close(fig)
    keys = [k for k in results.data if k.startswith(("d3:", "p3:", "d5:", "p5:", "tc:", "tc3:", "texel:"))]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(keys) + 1.2))
    for i, k in enumerate(keys):
        m = results.get(k)
        if m["elo"] is not None and m["elo_error"] is not None:
            ax.errorbar(m["elo"], i, xerr=m["elo_error"], fmt="o", capsize=3)
    ax.set_yticks(range(len(keys)), keys, fontsize=7)
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(100, color="green", lw=0.8, ls="--")
    ax.set_xlabel("Elo (95% bars)")
    ax.set_title("Matches (first player's view)")
    fig.tight_layout()
    fig.savefig(out / "nn-study-elo.png", dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the data, runs and results.")
    ap.add_argument("--scale", type=float, default=0.5, help="texel_recipe.py's --scale.")
    ap.add_argument("--positions", type=int, default=100_000,
                    help="Positions of the Texel evaluation's self-play data.")
    ap.add_argument("--sf-positions", type=int, default=40_000,
                    help="Positions of Stockfish's data.")
    ap.add_argument("--sf-big-positions", type=int, default=200_000,
                    help="Positions of Stockfish's larger data set (net4's).")
    ap.add_argument("--sf-scale-positions", type=int, default=1_200_000,
                    help="Positions of Stockfish's data of the data-size study "
                         "(OUT/sf-pg100.txt; its nets read the first 1.2M).")
    ap.add_argument("--sf-rp8-positions", type=int, default=300_000,
                    help="Positions of Stockfish's games from 8 random plies (OUT/sf-rp8.txt).")
    ap.add_argument("--sp-big-positions", type=int, default=300_000,
                    help="Positions of the Texel evaluation's larger self-play data "
                         "(OUT/sp-texel-big.txt), also scored by Stockfish.")
    ap.add_argument("--loop-positions", type=int, default=50_000,
                    help="Positions of net1's self-play data.")
    ap.add_argument("--games", type=int, default=400, help="Games of each depth-3 match.")
    ap.add_argument("--final-games", type=int, default=400,
                    help="Games of the depth-5 and equal-time matches.")
    ap.add_argument("--tc", default="1+0.01", help="The equal-time matches' time control.")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish")
    ap.add_argument("--only", default="", help="Comma-separated steps: recipe,data,nets,loop,"
                    "scale,loop2,final,final3,variants (default: all).")
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()
    (out / "pgn").mkdir(parents=True, exist_ok=True)
    steps = set(args.only.split(",")) if args.only else {"recipe", "data", "nets", "loop", "scale",
                                                           "loop2", "final", "final3",
                                                           "variants"}
    results = Results(out / "results.json")
    w = args.workers
    d3, d5 = ("--depth", "3"), ("--depth", "5")

    texel = out / "texel.json"
    if "recipe" in steps:
        texel = texel_start(out, results, recipe=out / "recipe", scale=args.scale, workers=w,
                            games=args.games, stockfish=args.stockfish)
    tx = f"extended:{texel}"
    if "data" in steps:
        datagen(out, "sp-texel.txt", tx, positions=args.positions, per_game=20, seed=21,
                workers=w, limit=d3)
        spec = out / "sf.toml"
        spec.write_text(SF_SPEC.format(command=json.dumps(str(Path(args.stockfish).resolve()))))
        datagen(out, "sf-text.txt", str(spec), positions=args.sf_positions, per_game=20,
                seed=31, workers=w, limit=("--nodes", "2000"))
        datagen(out, "sf-big.txt", str(spec), positions=args.sf_big_positions, per_game=20,
                seed=51, workers=w, limit=("--nodes", "2000"))
    order = ["net1"]
    main_line = ["net1", *LOOP]
    if "nets" in steps:
        net_step(out, results, "net1", VARIANTS["net1"], args, tx)
    if "loop" in steps:
        net1 = out / "runs" / "net1" / "net.nnue"
        datagen(out, "sp-net1.txt", f"nnue:{net1}", positions=args.loop_positions,
                per_game=20, seed=41, workers=w, limit=d3)
        td = os.environ.get("NN_STUDY_TD") == "1"
        if td:
            datagen(out, "sp-net1-td.txt", f"nnue:{net1}", positions=args.loop_positions,
                    per_game=20, seed=41, workers=w, limit=d3, extra=("--target", "td"))
        for name, change in LOOP.items():
            if name.endswith("-td") and not td:
                continue
            net_step(out, results, name, change, args, tx)
    order += [n for n in LOOP if results.get(f"d3:{n}")]
    if "scale" in steps:
        spec = out / "sf.toml"
        spec.write_text(SF_SPEC.format(command=json.dumps(str(Path(args.stockfish).resolve()))))
        datagen(out, "sf-pg100.txt", str(spec), positions=args.sf_scale_positions, per_game=100,
                seed=61, workers=w, limit=("--nodes", "2000"))
        datagen(out, "sf-rp8.txt", str(spec), positions=args.sf_rp8_positions, per_game=100,
                seed=71, workers=w, limit=("--nodes", "2000"), extra=("--random-plies", "8"))
        big = datagen(out, "sp-texel-big.txt", tx, positions=args.sp_big_positions, per_game=100,
                      seed=81, workers=w, limit=d3)
        for k in (2, 3, 4):  # more of the same self-play, another seed each
            datagen(out, f"sp-texel-big{k}.txt", tx, positions=args.sp_big_positions,
                    per_game=100, seed=80 + k, workers=w, limit=d3)
        label_spec = out / "sf-label.toml"
        label_spec.write_text(SF_SPEC.format(command=json.dumps(str(
            Path(args.stockfish).resolve()))).replace("Hash = 16", "Hash = 1"))
        for name, change in SCALE.items():
            if "sp-texel-big-sf.txt" in change["data"]:  # Stockfish's scores of the self-play
                relabel(big, out / "sp-texel-big-sf.txt", str(label_spec), workers=w,
                        limit=("--nodes", "2000"))
            net_step(out, results, name, change, args, tx)
    main_line += list(SCALE)
    order += [n for n in SCALE if results.get(f"d3:{n}")]
    if "loop2" in steps:
        teacher = f"nnue:{out / 'runs' / LOOP2_TEACHER / 'net.nnue'}"
        for k, name in enumerate(LOOP2_DATA, 1):
            datagen(out, name, teacher, positions=args.sp_big_positions,
                    per_game=100, seed=90 + k, workers=w, limit=d3)
        datagen(out, "sp-net9-1-td.txt", teacher, positions=args.sp_big_positions, per_game=100,
                seed=91, workers=w, limit=d3, extra=("--target", "td"))
        for name in [LOOP2_TEACHER, *LOOP2]:
            if name != LOOP2_TEACHER:
                net_step(out, results, name, LOOP2[name], args, tx)
            net = out / "runs" / name / "net.nnue"
            match(results, f"p3:{name}", f"nnue:{net}", PESTO, games=args.games, workers=w,
                  limit=d3, out=out)
    main_line += list(LOOP2)
    order += [n for n in LOOP2 if results.get(f"d3:{n}")]
    if "final" in steps:
        scored = [(results.get(f"d3:{n}")["score"], n) for n in main_line
                  if results.get(f"d3:{n}")]
        best = max(scored)[1]
        results.put("best", best)
        net = out / "runs" / best / "net.nnue"
        match(results, f"d5:{best}", f"nnue:{net}", tx, games=args.final_games, workers=w,
              limit=d5, out=out)
        a = uci_spec(out, best, f"nnue:{net}")
        t = uci_spec(out, "texel", "extended", texel)
        p = uci_spec(out, "pesto", PESTO)
        tc = ("--tc", args.tc)
        match(results, f"tc:{best}-texel", str(a), str(t), games=args.final_games, workers=w,
              limit=tc, out=out)
        match(results, f"tc:{best}-pesto", str(a), str(p), games=args.final_games, workers=w,
              limit=tc, out=out)
    if "final3" in steps:  # the third session's engine (the net's output layer 2.5x faster)
        scored = [(results.get(f"p3:{n}")["score"], n) for n in [LOOP2_TEACHER, *LOOP2]
                  if results.get(f"p3:{n}")]
        best3 = max(scored)[1]
        results.put("best3", best3)
        t = uci_spec(out, "texel", "extended", texel)
        p = uci_spec(out, "pesto", PESTO)
        tc = ("--tc", args.tc)
        for name in dict.fromkeys([best3, LOOP2_TEACHER]):
            a = uci_spec(out, name, f"nnue:{out / 'runs' / name / 'net.nnue'}")
            match(results, f"tc3:{name}-pesto", str(a), str(p), games=args.final_games,
                  workers=w, limit=tc, out=out)
            match(results, f"tc3:{name}-texel", str(a), str(t), games=args.final_games,
                  workers=w, limit=tc, out=out)
        best_net = f"nnue:{out / 'runs' / best3 / 'net.nnue'}"
        match(results, f"d5:{best3}", best_net, tx, games=args.final_games, workers=w,
              limit=d5, out=out)
        match(results, f"p5:{best3}", best_net, PESTO, games=args.final_games, workers=w,
              limit=d5, out=out)
    if "variants" in steps:
        for name, change in VARIANTS.items():
            if name != "net1":
                net_step(out, results, name, change, args, tx)
    order += [n for n in VARIANTS if n != "net1" and results.get(f"d3:{n}")]
    table = tables(results, order)
    (out / "tables.md").write_text(table + "\n")
    log(table)
    for k in sorted(results.data):
        if ":" in k and not k.startswith("net:"):
            say(k, results.get(k))
    plots(out, results, order)
    return 0


if __name__ == "__main__":
    sys.exit(main())
