"""Perft: the leaf counts of the legal move tree (:func:`perft`, :func:`perft_divide`, the
core's move generator through its entry point) and suites of them, EPD lines
``FEN ;D1 20 ;D2 400 ...`` checked against it (``evotune perft --suite``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError, PositionError
from ..fileio import read_text
from .api import MAX_DEPTH, board_arrays, to_board, uci_moves
from .core import layout as T
from .core.perft import perft_divide_core


def perft_divide(fen, depth: int) -> dict[str, int]:
    """Leaf counts of the legal move tree to ``depth`` below each root move (UCI -> nodes)."""
    board = to_board(fen)
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) \
            or not 1 <= depth <= MAX_DEPTH:  # the core's stacks hold MAX_DEPTH plies
        raise ConfigError(f"perft depth {depth!r} is invalid; give an integer from 1 to "
                          f"{MAX_DEPTH}")
    U, S = board_arrays(board, 10)
    out = np.zeros(T.MAXMOVES, dtype=np.int64)
    n = perft_divide_core(U, S, np.int64(depth), out)
    moves = uci_moves(S[T.S_MOVES:T.S_MOVES + n])
    return {mv: int(c) for mv, c in zip(moves, out[:n])}


def perft(fen, depth: int) -> int:
    """Number of leaves of the legal move tree to ``depth`` (exact)."""
    return sum(perft_divide(fen, depth).values())


@dataclass(frozen=True)
class PerftCheck:
    """One ``;D<n> <count>`` entry of a perft suite, checked."""

    fen: str
    """The position."""
    depth: int
    """Perft depth."""
    expected: int
    """Count given by the suite."""
    got: int
    """Count computed by the core."""

    @property
    def ok(self) -> bool:
        return self.expected == self.got


def perft_suite(path, *, max_nodes: int = 1_000_000) -> list[PerftCheck]:
    """Check every entry of an EPD perft suite whose expected count is <= ``max_nodes``."""
    p = Path(path)
    text = read_text(p, "perft suite")
    checks = []
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = [t.strip() for t in line.strip().split(";")]
        if not parts[0]:
            continue
        for entry in parts[1:]:
            tokens = entry.split()
            if len(tokens) != 2 or tokens[0][:1] not in ("D", "d") or not tokens[0][1:].isdigit() \
                    or not tokens[1].isdigit():
                raise ConfigError(f"{p}:{lineno}: bad perft entry ';{entry}'; expected ';D<depth> "
                                  "<count>'")
            depth, expected = int(tokens[0][1:]), int(tokens[1])
            if expected <= max_nodes:
                try:
                    got = perft(parts[0], depth)
                except PositionError as exc:
                    raise PositionError(f"{p}:{lineno}: {exc}") from None
                checks.append(PerftCheck(parts[0], depth, expected, got))
    if not checks:
        raise ConfigError(f"perft suite {p} has no entry to check (with --max-nodes "
                          f"{max_nodes}); give lines like 'FEN ;D1 20 ;D2 400'")
    return checks
