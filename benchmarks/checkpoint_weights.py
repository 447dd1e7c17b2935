"""The weights a run recommended when it had spent a given number of games, as a weights file
(the JSON ``evotune export --format json`` writes), so a checkpoint can be matched directly:

    python benchmarks/checkpoint_weights.py quad-scalars-20k-s1 --games 10000 \\
        --out docs/results/artefacts/finetune/quad-scalars-20k-s1-at-10k.json
    evotune match extended:docs/results/artefacts/finetune/quad-scalars-20k-s1-at-10k.json \\
        extended:docs/results/artefacts/finetune/spsa-scalars-20k-s1.json --games 4000 ...

The checkpoint is the first generation whose games (the run's count, tuning games) reach
``--games``: the recommendation the Elo-against-games figure plays at that checkpoint
(``evotune.verify.curve.checkpoint_weights``)."""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="Run id.")
    ap.add_argument("--games", type=int, required=True, help="The checkpoint, in tuning games.")
    ap.add_argument("--out", type=Path, required=True, help="The weights file to write.")
    ap.add_argument("--runs", type=Path, default=Path("populations"), help="Runs folder.")
    args = ap.parse_args(argv)
    from evotune.errors import EvotuneError
    from evotune.runs.rundata import load_run, run_spec
    from evotune.runs.store import Store
    from evotune.verify.curve import checkpoint_weights
    from evotune.weightsio import export_params, render

    try:
        store = Store.open(args.run, args.runs)
        points = checkpoint_weights(store, args.games, first=args.games)
        data = load_run(args.run, out_dir=args.runs)
    except (EvotuneError, OSError) as exc:
        print(f"checkpoint_weights: {exc}", file=sys.stderr)
        return 2
    point = points[0]
    if point["games"] < args.games:
        print(f"checkpoint_weights: run {args.run} never reached {args.games} games",
              file=sys.stderr)
        return 2
    params, _, _ = export_params(data.names, point["weights"], run_spec(data, None),
                                 option_keys=False)
    text = render("json", params, comment=f"evotune run {args.run}: its recommendation at "
                  f"generation {point['generation']} ({point['games']} games).")
    args.out.write_text(text)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"{args.run}: generation {point['generation']}, {point['games']} games -> {args.out} "
          f"(sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
