"""The README's first net, checked (issue 37, item 8): shannon's self-play scored by its search,
a net trained with the README's settings, then played against shannon at depth 3 on the
held-out openings. The issue's target: the first net is significantly better than shannon (its
Elo's 95% interval above 0).

    python benchmarks/first_net.py --out first                          # 4,000 games, 200 games
    python benchmarks/first_net.py --out tiny --games 200 --match-games 20   # a few minutes

Steps (each printed before it runs; the README's three lines, with the seed written out):

    evotune datagen --games N --format text --seed S --workers W --out scored-N-sS.txt
    evotune nn train scored-N-sS.txt --wdl 0 --batch 1024 --epochs 12 --run-id ID
    evotune verify ID --games M --depth 3 --opponents shannon --workers W

The last lines give the data, the training's losses and the Elo against shannon with its 95%
error. Datagen is resumable and a finished step is skipped, so a killed call continues when
rerun; the training is deterministic (the same net for the same data and seed).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from texel_small_data import evotune  # noqa: E402  (one way to run a step, shared)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the data file and the runs.")
    ap.add_argument("--games", type=int, default=4000, help="Self-play games of the data.")
    ap.add_argument("--match-games", type=int, default=200,
                    help="Games against shannon at depth 3 (even).")
    ap.add_argument("--seed", type=int, default=1, help="Seed of the self-play games.")
    ap.add_argument("--workers", type=int, default=2, help="Workers of datagen and verify.")
    args = ap.parse_args(argv)
    if args.games < 1 or args.match_games < 2 or args.match_games % 2:
        ap.error("--games must be >= 1 and --match-games an even number >= 2")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workers = str(args.workers)
    data = out / f"scored-{args.games}-s{args.seed}.txt"
    evotune("datagen", "--games", str(args.games), "--format", "text", "--seed", str(args.seed),
            "--workers", workers, "--out", str(data))
    runs, run_id = out / "runs", f"first-net-{args.games}-s{args.seed}"
    state = runs / run_id / "state.json"
    if state.exists() and not json.loads(state.read_text()).get("finished"):
        evotune("resume", run_id, "--runs-dir", str(runs))  # a killed training continues
    elif not state.exists():
        evotune("nn", "train", str(data), "--wdl", "0", "--batch", "1024", "--epochs", "12",
                "--run-id", run_id, "--runs-dir", str(runs))
    evotune("verify", run_id, "--games", str(args.match_games), "--depth", "3", "--opponents",
            "shannon", "--workers", workers, "--runs-dir", str(runs))
    match = json.loads((runs / run_id / "verify.json").read_text())["matches"][0]
    elo, err = match["elo"], match["elo_error"]
    if elo is None or err is None or not math.isfinite(elo + err):
        verdict = f"Elo {elo}, too few games for an error bar"
    else:
        verdict = (f"Elo {elo:+.1f} +- {err:.1f} (95%): "
                   + ("significantly better than shannon" if elo - err > 0 else
                      "significantly worse than shannon" if elo + err < 0 else
                      "not significantly different from shannon"))
    print(f"first net ({args.games} self-play games, seed {args.seed}) vs shannon, depth 3, "
          f"{args.match_games} games: +{match['wins']} ={match['draws']} -{match['losses']}, "
          f"{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
