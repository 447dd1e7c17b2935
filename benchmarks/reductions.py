"""Alpha-beta's reductions (docs/results/move-model-reductions.md, "The model in reductions"): the nodes and
seconds to --depth on the bench's positions for plain alpha-beta, the move model's order, and
``reduce = "late:K"`` / ``"model:GAP"`` with each order, with one evaluation (--engine, a builtin
spec: net11 by default).

Prints one JSON object: per setting ``nodes`` and ``seconds`` (summed over the positions),
``node_ratio`` against plain alpha-beta in the same process, and ``moves``, the best moves (a
reduced search may choose another). Node counts are exact and load-independent; seconds are
wall-clock on a shared machine.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import chess

from evotune.engine import api
from evotune.engine.bench import BENCH_FENS
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings

ROOT = Path(__file__).resolve().parents[1]
TREE_MODEL = ROOT / "docs" / "results" / "artefacts" / "move-model" / "tree-quiet-lin.evomove"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="net11", help="The evaluation: a builtin spec or a .toml.")
    ap.add_argument("--model", default=str(TREE_MODEL), help="The move model (.evomove).")
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--late", type=int, default=2, help="K of reduce = \"late:K\".")
    ap.add_argument("--gap", type=int, default=200, help="GAP of reduce = \"model:GAP\".")
    args = ap.parse_args()
    spec = load_engine_spec(args.engine)
    w, fs = evaluation(player_from_engine_spec(spec)), spec.features
    model = str(Path(args.model).resolve())
    settings = {
        "alphabeta": SearchSettings(),
        "model order": SearchSettings(model=model),
        f"late:{args.late}": SearchSettings(reduce_late=args.late),
        f"model order, late:{args.late}": SearchSettings(model=model, reduce_late=args.late),
        f"model:{args.gap}": SearchSettings(model=model, reduce_gap=args.gap),
    }
    out: dict = {"engine": spec.name, "model": Path(model).name, "depth": args.depth,
                 "positions": len(BENCH_FENS)}
    for name, s in settings.items():
        api.search(chess.STARTING_FEN, w, depth=3, features=fs, settings=s)  # compiled, loaded
        nodes, secs, moves = 0, 0.0, []
        for fen in BENCH_FENS:
            r = api.search(fen, w, depth=args.depth, features=fs, settings=s)
            nodes, secs = nodes + r.nodes, secs + r.seconds
            moves.append(r.move)
        out[name] = {"nodes": nodes, "seconds": round(secs, 2), "moves": moves}
    base = out["alphabeta"]["nodes"]
    for name in settings:
        out[name]["node_ratio"] = round(out[name]["nodes"] / base, 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
