"""A match's folder (:class:`MatchFolder`): what ``evotune match --out FOLDER`` keeps, and where a
verification keeps each of its matches (``<run>/verify-games/<hash>/``).

    match.json    what the match is: its identity (:func:`evotune.match.journal.match_identity`),
                  its settings in words, the date its PGN carries; written once, atomically
    games.jsonl   the journal: every finished game, a line each, appended as it ends
                  (:class:`~evotune.runs.gamelog.GameLog`)
    games.pgn     the match's games in game order, written (atomically) when it ends
    result.json   its statistics, written when it ends
    .lock         one writer (an OS lock; a killed writer's is released by the OS)

A match stopped anyhow (Ctrl-C, SIGTERM, kill -9) is continued by the same command with the
same folder: the journal's games are taken as they are, the rest are played, and the end is
that of an uninterrupted match (same games, PGN and statistics). A folder of another match
(any part of the identity differs) is refused in one line naming what differs; the only repair
is a torn last line of the journal.
"""
from __future__ import annotations

import time
from pathlib import Path

from ..errors import StoreError
from ..fileio import atomic_write_json, atomic_write_text
from ..match.journal import identity_differences
from .gamelog import GameLog
from .lock import RunLock
from .recordio import json_object, read_json

MATCH_FILE = "match.json"
RESULT_FILE = "result.json"
PGN_FILE = "games.pgn"
JOURNAL_FILE = "games.jsonl"
MATCH_FORMAT = 1
MATCHES_DIR = "matches"
AFRESH = "give --out another folder"
"""How a damaged match folder is started over (its records' errors say it)."""
"""The folder under the runs folder that holds the matches run without --out."""


class MatchFolder:
    """One match's folder, held for writing (the caller closes it: a ``with`` block)."""

    def __init__(self, root: Path, about: dict, journal: GameLog, lock: RunLock) -> None:
        self.root = root
        """The folder."""
        self.about = about
        """match.json as stored (identity, settings in words, date, created)."""
        self.journal = journal
        """The games kept so far (the runner's journal)."""
        self._lock = lock

    @classmethod
    def open(cls, root: str | Path, *, identity: dict, settings: dict, date: str,
             what: str = "--out") -> MatchFolder:
        """The match folder ``root``, made (with match.json) when new, its journal opened (a
        torn last line dropped); StoreError when it is another match's (``what`` names the
        option that chose it), another process writes it, or it holds anything else."""
        root = Path(root)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot make the match folder {root} ({exc.strerror})") from None
        lock = RunLock(root / ".lock", busy=f"the match in {root} is being played by process "
                                            "{pid}; wait for it to end (or stop it) first")
        lock.acquire()
        try:
            about = cls._about(root, identity=identity, settings=settings, date=date, what=what)
            journal = GameLog(root / JOURNAL_FILE)
        except BaseException:
            lock.release()
            raise
        return cls(root, about, journal, lock)

    @staticmethod
    def _about(root: Path, *, identity: dict, settings: dict, date: str, what: str) -> dict:
        path = root / MATCH_FILE
        if path.exists():
            about = json_object(read_json(path, "match file", afresh=AFRESH), path,
                                afresh=AFRESH)
            stored = about.get("identity")
            if about.get("kind") != "match" or not isinstance(stored, dict):
                raise StoreError(f"{path} is not an evotune match file; give {what} another "
                                 "folder")
            differ = identity_differences(stored, identity)
            if differ or stored.get("hash") != identity.get("hash"):
                parts = (", ".join(differ) or "identity") + (" differs" if len(differ) < 2
                                                              else " differ")
                raise StoreError(f"{root} holds another match (its {parts}); continue it "
                                 f"with its own command, or give {what} another folder")
            return about
        others = sorted(p.name for p in root.iterdir() if p.name != ".lock"
                        and not p.name.startswith(".tmp"))
        if others:
            raise StoreError(f"{root} is not a match folder (it holds {', '.join(others[:3])}"
                             f"{', ...' if len(others) > 3 else ''}); give {what} a new or "
                             "empty folder")
        about = {"format": MATCH_FORMAT, "kind": "match", "identity": dict(identity),
                 "settings": settings, "date": date,
                 "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        atomic_write_json(path, about)
        return about

    @property
    def date(self) -> str:
        """The date of the match's start (its PGN's Date tag, the same in every continue)."""
        return str(self.about.get("date") or "????.??.??")

    @property
    def kept(self) -> int:
        """Games in the journal."""
        return len(self.journal.records)

    def result(self) -> dict | None:
        """result.json of a finished match, else None."""
        path = self.root / RESULT_FILE
        return json_object(read_json(path, "match result", afresh=AFRESH), path,
                           afresh=AFRESH) if path.exists() else None

    def finish(self, result: dict, pgn_text: str) -> None:
        """Store the end of the match: its PGN (in game order) and its statistics."""
        self.journal.close()
        atomic_write_text(self.root / PGN_FILE, pgn_text)
        atomic_write_json(self.root / RESULT_FILE, result)

    def close(self) -> None:
        """fsync the journal and give up the folder."""
        try:
            self.journal.close()
        finally:
            self._lock.release()

    def __enter__(self) -> MatchFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def default_match_folder(runs_dir: str | Path, identity: dict) -> Path:
    """A new folder for a match run without --out: ``<runs_dir>/matches/match-<date>-<time>-
    <hash6>`` (a number added when that exists)."""
    base = Path(runs_dir) / MATCHES_DIR
    name = f"match-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"
    path, n = base / name, 1
    while path.exists():
        n += 1
        path = base / f"{name}-{n}"
    return path
