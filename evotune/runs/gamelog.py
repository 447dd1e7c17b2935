"""An append-only game log (``games.jsonl``): one game record a line, read with its one
validator, repaired only at a torn last line, and written by one :class:`GameLog` per folder.

A run's log (:class:`~evotune.runs.store.Store`) and a match's journal
(:mod:`evotune.runs.matchstore`: ``match --out``, a verification's games) are the same file
format. A line is appended whole, in one write, as each game finishes and is fsynced at most every
:data:`SYNC_SECONDS` (and when the log is closed): a process killed at any point leaves every
finished game on disk and at most a torn last line (a line without its newline), which the next
writer drops, and only that. Damage anywhere else, or a game key written twice, is refused with
one line naming the line.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..errors import StoreError
from ..fileio import atomic_write_text
from ..match.gamerecord import GameRecord
from .records import GameLine, parse_game_line

SYNC_SECONDS = 1.0
"""At most this long between two fsyncs of a journal (a kill -9 loses nothing written; a power
cut at most the games of the last second)."""


def log_tail(path: Path, max_bytes: int) -> tuple[list[bytes], bool]:
    """The whole lines among the last ``max_bytes`` of the log at ``path`` (the first left out
    when the window cut it) and whether its last line is torn (no newline, so left out too);
    ([], False) for a missing or empty log. Readers that show the latest games take it, never
    the whole file."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - max_bytes))
            tail = f.read()
    except OSError:
        return [], False
    lines = tail.split(b"\n")
    torn = lines.pop() != b""  # what follows the last newline: b"" unless the line is torn
    if size > max_bytes and lines:
        lines = lines[1:]  # the window may have cut the first
    return [ln for ln in lines if ln], torn


def read_game_log(path: Path) -> tuple[list[GameLine], int]:
    """Every complete line of the log at ``path``, validated, and the byte length of a torn last
    line (written without its newline by a process killed mid-write; 0 when there is none).
    Damage anywhere else and a duplicated game key are refused, naming the line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StoreError(f"{path} cannot be read ({exc.strerror})") from None
    parts = data.split(b"\n")
    torn = len(parts[-1])  # the bytes after the last newline
    out: list[GameLine] = []
    seen: dict[tuple, int] = {}
    for i, raw in enumerate(parts[:-1], start=1):
        rec = parse_game_line(raw, i, path)
        if rec.key in seen:
            raise StoreError(f"{path} line {i} repeats the game {list(rec.key)} of line "
                             f"{seen[rec.key]}; remove the duplicate line")
        seen[rec.key] = i
        out.append(rec)
    return out, torn


def game_line(record: GameRecord) -> str:
    """A record as one log line (with its newline)."""
    return json.dumps(record.to_dict(), sort_keys=True) + "\n"


class GameLog:
    """The writer of one journal: the games it holds by key (:meth:`stored`) and a new game
    appended as it finishes (:meth:`keep`); the runner's journal
    (:class:`evotune.match.journal.Journal`). Opening it drops a torn last line (the one repair);
    the caller holds the folder's writer lock."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        lines, torn = read_game_log(self.path)
        self.repaired = bool(torn)
        """True when opening it dropped a torn last line."""
        if torn:
            atomic_write_text(self.path, "".join(json.dumps(g.data, sort_keys=True) + "\n"
                                                 for g in lines))
        self.records: dict[tuple, GameRecord] = {g.key: GameRecord.from_dict(g.data)
                                                 for g in lines}
        """The games kept so far, by key."""
        self._fd: int | None = None
        self._synced = time.monotonic()

    def stored(self, key: tuple) -> GameRecord | None:
        """The game of ``key`` kept earlier, or None."""
        return self.records.get(tuple(key))

    def keep(self, record: GameRecord) -> None:
        """Append a finished game (one write; fsynced at most every :data:`SYNC_SECONDS`)."""
        if record.key in self.records:
            return
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, game_line(record).encode("utf-8"))
            if time.monotonic() - self._synced >= SYNC_SECONDS:
                os.fsync(self._fd)
                self._synced = time.monotonic()
        except OSError as exc:
            raise StoreError(f"cannot append to {self.path} ({exc.strerror}); check the disk "
                             "and that the folder is writable") from None
        self.records[record.key] = record

    def close(self) -> None:
        """fsync and close the file (a later :meth:`keep` opens it again)."""
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
