"""Texel on small data with the defaults (issue 37, item 8): shannon's depth-2 self-play, the
`extended` weights fitted with every default, then played against shannon at depth 3 on the
held-out 8moves_v3 openings. The issue's target: on 3,000 games the fit is not significantly
worse than shannon (its Elo's 95% interval reaches 0 or above).

    python benchmarks/texel_small_data.py --out small                  # 3,000 games, 200 games
    python benchmarks/texel_small_data.py --out tiny --games 300 --match-games 20   # a minute

Steps (each printed before it runs):

    evotune datagen --games N --depth D --seed S --workers W --out selfplay-dD-N-sS.txt
    evotune texel selfplay-d2-N-sS.txt --engine extended [--l2 L | --l2-rule R] --run-id ID
    evotune verify ID --games M --depth 3 --opponents shannon --workers W

The last lines give the data, the ridge the fit chose, its warning (if any) and the Elo against
shannon with its 95% error. Datagen and the fit are resumable and a finished step is skipped,
so a killed call continues when rerun.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path


def evotune(*args: str) -> None:
    """Run one evotune command (printed first); stop the chain when it fails."""
    print("$ evotune " + " ".join(args), flush=True)
    res = subprocess.run([sys.executable, "-m", "evotune.cli", *args])
    if res.returncode != 0:
        sys.exit(res.returncode)


def study_parser(doc: str, *, games: int, workers: int) -> argparse.ArgumentParser:
    """The options every small-data check shares (its own are added by the caller)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the data file and the runs.")
    ap.add_argument("--games", type=int, default=games, help="Self-play games of the data.")
    ap.add_argument("--match-games", type=int, default=200,
                    help="Games of the match against shannon at depth 3 (even).")
    ap.add_argument("--seed", type=int, default=1, help="Seed of the self-play games.")
    ap.add_argument("--workers", type=int, default=workers,
                    help="Worker processes of datagen and the match (results do not depend on "
                         "it).")
    return ap


def parse_study_args(ap: argparse.ArgumentParser, argv: list[str] | None
                     ) -> tuple[argparse.Namespace, Path]:
    """The parsed options, checked, and the output folder (made)."""
    args = ap.parse_args(argv)
    if args.games < 1 or args.match_games < 2 or args.match_games % 2:
        ap.error("--games must be >= 1 and --match-games an even number >= 2")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args, out


def verdict(match: dict) -> str:
    """A stored match against shannon in one phrase: W/D/L, Elo and whether it is significant."""
    elo, err = match["elo"], match["elo_error"]
    wdl = f"+{match['wins']} ={match['draws']} -{match['losses']}"
    if elo is None or err is None or not math.isfinite(elo + err):
        return f"{wdl}, Elo {elo}, too few games for an error bar"
    return (f"{wdl}, Elo {elo:+.1f} +- {err:.1f} (95%): "
            + ("significantly worse than shannon" if elo + err < 0 else
               "significantly better than shannon" if elo - err > 0 else
               "not significantly different from shannon"))


def main(argv: list[str] | None = None) -> int:
    ap = study_parser(__doc__, games=3000, workers=1)
    ap.add_argument("--depth", type=int, default=2,
                    help="Search depth of the self-play games (the README's datagen: 3).")
    ap.add_argument("--l2", default=None, help="Give the fit this --l2 (default: the fit's own).")
    ap.add_argument("--l2-rule", default=None,
                    help="Give the fit this --l2-rule (default: the fit's own).")
    args, out = parse_study_args(ap, argv)
    workers = str(args.workers)
    data = out / f"selfplay-d{args.depth}-{args.games}-s{args.seed}.txt"
    evotune("datagen", "--games", str(args.games), "--depth", str(args.depth), "--seed", str(args.seed),
            "--workers", workers, "--out", str(data))
    extra: list[str] = []
    run_id = f"extended-{args.games}-s{args.seed}" + (f"-d{args.depth}" if args.depth != 2 else "")
    if args.l2 is not None:
        extra += ["--l2", args.l2]
        run_id += f"-l2-{args.l2}"
    if args.l2_rule is not None:
        extra += ["--l2-rule", args.l2_rule]
        run_id += f"-{args.l2_rule}"
    runs = out / "runs"
    if not (runs / run_id / "texel.json").exists():
        evotune("texel", str(data), "--engine", "extended", *extra, "--run-id", run_id,
                "--runs-dir", str(runs))
    evotune("verify", run_id, "--games", str(args.match_games), "--depth", "3", "--opponents",
            "shannon", "--workers", workers, "--runs-dir", str(runs))
    fit = json.loads((runs / run_id / "texel.json").read_text())
    match = json.loads((runs / run_id / "verify.json").read_text())["matches"][0]
    print(f"data: {fit['positions_read']} positions of {args.games} depth-{args.depth} self-play games "
          f"(seed {args.seed}); fit: {fit['train']} + {fit['validation']} positions, --l2 "
          f"{fit['l2']:g}" + (" (chosen)" if fit["l2_chosen_by_validation"] else "")
          + f", validation error {fit['error_initial']['validation']:.6f} -> "
            f"{fit['error_after_rounding']['validation']:.6f}")
    if fit["warning"]:
        print(f"fit warning: {fit['warning']}")
    print(f"extended (fitted) vs shannon, depth 3, {args.match_games} games: "
          f"{verdict(match)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
