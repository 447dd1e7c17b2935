"""Keep the positions every labelled file has, in the first file's order, so that models trained
on different labels of them hold out the same positions (docs/results/move-model.md, "UCT's
visits as the target").

    python docs/results/artefacts/move-model/common_positions.py moves.txt visits.txt ...

writes ``moves.common.txt``, ``visits.common.txt``, ...: each file's lines of the positions (the
FEN before the first ``|``) found in every file, a position's first line only.
"""
from __future__ import annotations

import sys
from pathlib import Path


def main(paths: list[str]) -> None:
    tables = []
    for p in paths:
        lines: dict[str, str] = {}
        for line in Path(p).read_text().splitlines(keepends=True):
            lines.setdefault(line.split("|", 1)[0].strip(), line)
        tables.append(lines)
    keep = [fen for fen in tables[0] if all(fen in t for t in tables[1:])]
    for p, lines in zip(paths, tables):
        out = Path(p).with_suffix(".common.txt")
        out.write_text("".join(lines[fen] for fen in keep))
        print(f"{out}: {len(keep)} of {len(lines)} positions")


if __name__ == "__main__":
    main(sys.argv[1:])
