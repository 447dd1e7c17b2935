"""Positions like the ones alpha-beta orders moves in: each input position after a random legal
move of its side to move.

A cut node of alpha-beta is a position where the side to move answers the opponent's move,
which at the node above (an all node) is any legal move, most of them poor. Game positions
labelled with a search's best move teach a move model what to play; these teach it what refutes.
Recipe and figures: docs/results/move-model-order.md ("Captures that lose after the killers").

    python benchmarks/cutnode_positions.py pos.txt --per-position 2 --seed 1 --out tree.txt

Reads 'FEN [result]' lines (datagen's text output), writes one 'FEN [result]' line per chosen
move with the game's result kept (White's view; `label --move` reads it, `nn train-moves` does
not use it): the same output for the same input and seed. Positions whose side to move has no
legal move, or that end the game after the move, are left out. A missing file or a line that is
not a FEN is one line and exit 2, before anything is written.
"""

from __future__ import annotations

import argparse
import random
import sys

import chess

from evotune.errors import ConfigError
from evotune.fileio import check_writable, read_text


def perturb(fen: str, per_position: int, rng: random.Random) -> list[str]:
    """FENs after up to ``per_position`` distinct random legal moves from ``fen``."""
    board = chess.Board(fen)
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    out = []
    for m in rng.sample(moves, min(per_position, len(moves))):
        board.push(m)
        if not board.is_game_over(claim_draw=False):
            out.append(board.fen())
        board.pop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="positions file ('FEN ...' lines)")
    ap.add_argument("--out", required=True, help="FEN file to write")
    ap.add_argument("--per-position", type=int, default=2, help="random moves per position")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.per_position < 1:
        print("cutnode_positions: --per-position must be at least 1", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    lines = []
    try:
        text = read_text(a.data, "positions file")
        check_writable(a.out, "output file")
    except ConfigError as e:
        print(f"cutnode_positions: {e}", file=sys.stderr)
        return 2
    for k, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if len(fields) < 6:
            continue
        fen, rest = " ".join(fields[:6]), " ".join(fields[6:])
        try:
            lines.extend(f"{f} {rest}".rstrip() for f in perturb(fen, a.per_position, rng))
        except ValueError:
            print(f"cutnode_positions: {a.data}:{k}: not a FEN", file=sys.stderr)
            return 2
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.writelines(f + "\n" for f in lines)
    print(f"{a.out}: {len(lines):,} positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
