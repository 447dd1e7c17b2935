"""The README's first net, checked (issue 37, item 8): shannon's self-play scored by its search,
a net trained with the README's settings (its initial net first fitted to shannon's evaluation
of the same positions), then played against shannon at depth 3 on the held-out openings. The
issue's target: the first net is significantly better than shannon (its Elo's 95% interval
above 0).

    python benchmarks/first_net.py --out first                          # 4,000 games, 200 games
    python benchmarks/first_net.py --out tiny --games 200 --match-games 20   # a few minutes

Steps (each printed before it runs; the README's three lines, with the seed written out):

    evotune datagen --games N --format text --seed S --workers W --out scored-N-sS.txt
    evotune nn train scored-N-sS.txt --init eval:shannon --wdl 0 --batch 1024 --lr 0.0001 \
        --epochs 24 --run-id ID
    evotune verify ID --games M --depth 3 --opponents shannon --workers W

The last lines give the data, the training's losses and the Elo against shannon with its 95%
error. Datagen is resumable and a finished step is skipped, so a killed call continues when
rerun; the training is deterministic (the same net for the same data and seed).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from texel_small_data import (  # noqa: E402  (the small-data checks share these)
    evotune,
    parse_study_args,
    study_parser,
    verdict,
)


def main(argv: list[str] | None = None) -> int:
    args, out = parse_study_args(study_parser(__doc__, games=4000, workers=2), argv)
    workers = str(args.workers)
    data = out / f"scored-{args.games}-s{args.seed}.txt"
    evotune("datagen", "--games", str(args.games), "--format", "text", "--seed", str(args.seed),
            "--workers", workers, "--out", str(data))
    runs, run_id = out / "runs", f"first-net-eval-{args.games}-s{args.seed}"
    state = runs / run_id / "state.json"
    if state.exists() and not json.loads(state.read_text()).get("finished"):
        evotune("resume", run_id, "--runs-dir", str(runs))  # a killed training continues
    elif not state.exists():
        evotune("nn", "train", str(data), "--init", "eval:shannon", "--wdl", "0", "--batch",
                "1024", "--lr", "0.0001", "--epochs", "24", "--run-id", run_id, "--runs-dir",
                str(runs))
    evotune("verify", run_id, "--games", str(args.match_games), "--depth", "3", "--opponents",
            "shannon", "--workers", workers, "--runs-dir", str(runs))
    match = json.loads((runs / run_id / "verify.json").read_text())["matches"][0]
    print(f"first net ({args.games} self-play games, seed {args.seed}) vs shannon, depth 3, "
          f"{args.match_games} games: {verdict(match)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
