"""Nodes to depth 8 with net11 on the bench's 8 positions for the scratch reductions of
``late-model.patch`` (docs/results/move-model.md, "The model inside late move reductions").

Run with the patched tree first on the path (see the page); each argument is a ``reduce``
spelling of the patch (``late:K``, ``veto:K:GAP``, ``deep:K:GAP``, ``ldeep:K:J``) and prints
one line: the spelling, the nodes summed over the positions, the seconds. The move model
(``tree-quiet-lin.evomove`` beside this file) is loaded for every spelling but ``late:K``, which
orders by history alone as the engine's own ``late:K`` does.
"""
from __future__ import annotations

import sys
from pathlib import Path

import chess

from evotune.engine import api
from evotune.engine.bench import BENCH_FENS
from evotune.players.nets import evaluation
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings, _reduce

MODEL = str(Path(__file__).resolve().parent / "tree-quiet-lin.evomove")


def main() -> None:
    spec = load_engine_spec("net11")
    w, fs = evaluation(player_from_engine_spec(spec)), spec.features
    for text in sys.argv[1:] or ["late:2"]:
        base = SearchSettings() if text.startswith("late:") else SearchSettings(model=MODEL)
        s = _reduce(text, base, "argument")
        api.search(chess.STARTING_FEN, w, depth=3, features=fs, settings=s)  # compiled, loaded
        nodes, secs = 0, 0.0
        for fen in BENCH_FENS:
            r = api.search(fen, w, depth=8, features=fs, settings=s)
            nodes, secs = nodes + r.nodes, secs + r.seconds
        print(text, nodes, round(secs, 2), flush=True)


if __name__ == "__main__":
    main()
