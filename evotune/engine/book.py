"""A Polyglot opening book (read with ``chess.polyglot``), drawn from with the run's generator.

The default book is the packaged public-domain gnuchess book (``evotune.paths.DEFAULT_BOOK``,
see evotune/data/README.md). Moves are drawn with probability proportional to their Polyglot
weight, using a numpy Generator, so the same generator state always gives the same line.

The book is optional: callers that want no book (e.g. games from a fixed EPD suite only) simply
never build an :class:`OpeningBook`; nothing else in the engine depends on it.
"""
from __future__ import annotations

import logging
from pathlib import Path

import chess
import chess.polyglot
import numpy as np

from ..errors import ConfigError, OpeningsError
from ..paths import DEFAULT_BOOK

logger = logging.getLogger(__name__)

ENTRY_SIZE = 16
"""Bytes per Polyglot entry: key u64, move u16, weight u16, learn u32 (big-endian)."""
DEFAULT_MAX_PLIES = 16
"""Default number of book plies played from a position (8 moves per side)."""


class OpeningBook:
    """A Polyglot book file; :meth:`choose` draws one move, :meth:`play` a whole book line."""

    def __init__(self, path: str | Path = DEFAULT_BOOK, *, max_plies: int = DEFAULT_MAX_PLIES) -> None:
        if isinstance(max_plies, bool) or not isinstance(max_plies, (int, np.integer)) or max_plies < 0:
            raise ConfigError(f"book max_plies must be an integer >= 0, got {max_plies!r}")
        self.path = Path(path)
        self.max_plies = int(max_plies)
        self._reader = _open_checked(self.path)

    def __repr__(self) -> str:
        return f"OpeningBook({str(self.path)!r}, max_plies={self.max_plies})"

    def __len__(self) -> int:
        """Number of entries in the book."""
        return len(self._reader)

    def close(self) -> None:
        """Release the memory map (the book cannot be used afterwards)."""
        self._reader.close()

    def __enter__(self) -> OpeningBook:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def entries(self, board: chess.Board) -> list[chess.polyglot.Entry]:
        """The legal book entries of ``board`` with weight >= 1, in file order."""
        return list(self._reader.find_all(board))

    def choose(self, board: chess.Board, rng: np.random.Generator) -> chess.Move | None:
        """A book move drawn with probability weight / total weight, or None when out of book.

        Exactly one integer is drawn from ``rng`` when the position is in the book, none otherwise.
        """
        entries = self.entries(board)
        if not entries:
            return None
        cumulative = np.cumsum([e.weight for e in entries])
        pick = int(rng.integers(int(cumulative[-1])))
        return entries[int(np.searchsorted(cumulative, pick, side="right"))].move

    def play(self, board: chess.Board, rng: np.random.Generator, *,
             max_plies: int | None = None) -> list[chess.Move]:
        """Push book moves onto ``board`` until out of book or ``max_plies`` (default: the book's).

        Returns the moves played (the board is modified in place).
        """
        limit = self.max_plies if max_plies is None else int(max_plies)
        if limit < 0:
            raise ConfigError(f"book max_plies must be >= 0, got {max_plies!r}")
        played: list[chess.Move] = []
        while len(played) < limit:  # a finished game has no legal book entry
            move = self.choose(board, rng)
            if move is None:
                break
            board.push(move)
            played.append(move)
        logger.debug("book line: %s", " ".join(m.uci() for m in played))
        return played


def _open_checked(path: Path) -> chess.polyglot.MemoryMappedReader:
    """Open a Polyglot file, refusing a missing, empty, truncated or unsorted one."""
    if not path.is_file():
        raise OpeningsError(f"opening book {path} does not exist; give the path of a Polyglot .bin "
                            f"file (the packaged one is {DEFAULT_BOOK}) or play without a book")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise OpeningsError(f"opening book {path}: cannot read it ({exc})") from None
    if not raw or len(raw) % ENTRY_SIZE:
        raise OpeningsError(f"opening book {path} is not a Polyglot book ({len(raw)} bytes, not a "
                            f"positive multiple of {ENTRY_SIZE}); give a valid .bin file")
    keys = np.frombuffer(raw, dtype=">u8")[::2]
    if np.any(keys[1:] < keys[:-1]):
        raise OpeningsError(f"opening book {path} is corrupt: its entries are not sorted by key "
                            "as Polyglot requires; re-create it with a Polyglot tool")
    try:
        return chess.polyglot.open_reader(path)
    except (OSError, ValueError) as exc:
        raise OpeningsError(f"opening book {path}: cannot open it ({exc})") from None
