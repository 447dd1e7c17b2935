"""Everything under ``populations/<run-id>/``; atomic writes; resume.

Layout of a run directory::

    manifest.json            version, resolved config, identity (hashes of config, engine spec,
                             openings), creation time
    state.json               latest state: generation, games, seconds, strategy state
    generations/gen-NNNN.json one file per generation: population, matches, statistics
                             (gen-0000 is the initial population, before any game)
    games.jsonl              append-only game log, one GameRecord dict per line
    games.pgn                every game in PGN
    verify.json              the latest verification (written by ``evotune verify``)

Order of writes for a generation: games (log, PGN), then the generation file, then the state.
A crash between them leaves games of an unfinished generation in the log; :meth:`Store.repair`
(called on resume) drops them, so a resumed run equals an uninterrupted one. games.pgn is
written in the background while the next generation plays (PGN export costs a few per cent of a
depth-3 game); a run killed meanwhile may lack the last generation's PGN, which resume rebuilds
from the game log. Only this module writes under ``populations/``.
"""
from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Iterable

from . import __version__
from .errors import StoreError

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _read_json(path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{what} {path} is missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{what} {path} is corrupt ({exc}); the run cannot continue safely: "
                         "restore the file or start a new run with another --run-id") from None


class Store:
    """One run directory."""

    def __init__(self, root: Path):
        self.root = Path(root)

    # -- locating ------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    @property
    def games_path(self) -> Path:
        return self.root / "games.jsonl"

    @property
    def pgn_path(self) -> Path:
        return self.root / "games.pgn"

    @property
    def generations_dir(self) -> Path:
        return self.root / "generations"

    @classmethod
    def create(cls, out_dir: str | Path, run_id: str, *, config: dict, identity: dict) -> "Store":
        """Make a new run directory; refuses an existing one (resume it instead)."""
        if not RUN_ID_RE.match(run_id):
            raise StoreError(f"run id '{run_id}' is not allowed; use letters, digits, '.', '_' "
                             "and '-' (at most 100 characters)")
        root = Path(out_dir) / run_id
        if (root / "manifest.json").exists():
            raise StoreError(f"run '{run_id}' already exists in {root.parent}; continue it with "
                             f"'evotune resume {run_id}' or choose another --run-id")
        root.mkdir(parents=True, exist_ok=True)
        store = cls(root)
        atomic_write_json(store.manifest_path, {
            "format": FORMAT_VERSION, "evotune": __version__, "run_id": run_id,
            "config": config, "identity": identity,
        })
        return store

    @classmethod
    def open(cls, run: str | Path, out_dir: str | Path = "populations") -> "Store":
        """Open a run by id (under ``out_dir``) or by path."""
        for cand in (Path(out_dir) / str(run), Path(run)):
            if (cand / "manifest.json").is_file():
                return cls(cand)
        known = ", ".join(s.run_id for s in list_runs(out_dir)[:10]) or "none"
        raise StoreError(f"no run '{run}' in {out_dir}/ (runs there: {known}); give a run id or "
                         "the path of a run directory")

    # -- manifest and state ----------------------------------------------------------------------
    def manifest(self) -> dict:
        m = _read_json(self.manifest_path, "manifest")
        if m.get("format") != FORMAT_VERSION:
            raise StoreError(f"{self.manifest_path}: format {m.get('format')} is not supported "
                             f"by this evotune (format {FORMAT_VERSION})")
        return m

    def read_state(self) -> dict | None:
        """The latest state, or None when no generation has been stored yet."""
        if not self.state_path.exists():
            return None
        state = _read_json(self.state_path, "state file")
        for key in ("generation", "games", "strategy"):
            if key not in state:
                raise StoreError(f"state file {self.state_path} is corrupt (no '{key}'); the run "
                                 "cannot continue safely: restore it or start a new run")
        return state

    def write_state(self, state: dict) -> None:
        atomic_write_json(self.state_path, state)

    # -- generations -----------------------------------------------------------------------------
    def generation_path(self, generation: int) -> Path:
        return self.generations_dir / f"gen-{generation:04d}.json"

    def write_generation(self, generation: int, data: dict) -> None:
        atomic_write_json(self.generation_path(generation), data)

    def read_generation(self, generation: int) -> dict:
        return _read_json(self.generation_path(generation), "generation file")

    def generations(self) -> list[dict]:
        """Every stored generation, in order (gen-0000 = the initial population)."""
        if not self.generations_dir.is_dir():
            return []
        state = self.read_state()
        last = state["generation"] if state else 0
        out = []
        for path in sorted(self.generations_dir.glob("gen-*.json")):
            g = int(path.stem.split("-")[1])
            if g <= last:
                out.append(_read_json(path, "generation file"))
        return out

    # -- games -----------------------------------------------------------------------------------
    def append_games(self, records: Iterable[dict], pgn_text: str = "") -> None:
        """Append game records to the log (and their PGN text to games.pgn)."""
        lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
        if lines:
            with open(self.games_path, "a", encoding="utf-8") as fh:
                fh.write(lines)
                fh.flush()
                os.fsync(fh.fileno())
        if pgn_text:
            self.append_pgn(pgn_text)

    def append_pgn(self, pgn_text: str) -> None:
        """Append PGN text to games.pgn (the game log stays the source of truth)."""
        with open(self.pgn_path, "a", encoding="utf-8") as fh:
            fh.write(pgn_text)
            fh.flush()

    def pgn_game_count(self) -> int:
        """Number of games in games.pgn (counted by their Event tags)."""
        if not self.pgn_path.exists():
            return 0
        text = self.pgn_path.read_text(encoding="utf-8")
        return text.count("\n[Event ") + int(text.startswith("[Event "))

    def read_games(self) -> list[dict]:
        """All complete game records in the log (a torn last line is ignored)."""
        if not self.games_path.exists():
            return []
        out = []
        with open(self.games_path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    log.warning("ignoring a torn line in %s", self.games_path)
        return out

    def repair(self, *, generations_done: int, to_pgn=None) -> int:
        """Drop log entries of generations not completed (> generations_done); returns how many.

        Games of generation k (1-based; gen-0000 is the initial population) carry key[0] == k.

        ``to_pgn(records) -> str`` rebuilds games.pgn from the kept records when given.
        """
        games = self.read_games()
        keep = [r for r in games if int(r["key"][0]) <= generations_done]
        dropped = len(games) - len(keep)
        if dropped or (self.games_path.exists() and keep != games):
            atomic_write_text(self.games_path,
                              "".join(json.dumps(r, sort_keys=True) + "\n" for r in keep))
        if to_pgn is not None and (dropped or self.pgn_game_count() != len(keep)):
            atomic_write_text(self.pgn_path, to_pgn(keep))
        for path in self.generations_dir.glob("gen-*.json") if self.generations_dir.is_dir() else []:
            if int(path.stem.split("-")[1]) > generations_done:
                path.unlink()
        return dropped

    # -- other documents -------------------------------------------------------------------------
    def write_document(self, name: str, data: dict) -> None:
        """A named JSON document of the run (e.g. 'verify' -> verify.json)."""
        atomic_write_json(self.root / f"{name}.json", data)

    def read_document(self, name: str) -> dict | None:
        path = self.root / f"{name}.json"
        return _read_json(path, name) if path.exists() else None


def list_runs(out_dir: str | Path = "populations") -> list[Store]:
    """Run directories under ``out_dir``, newest first."""
    base = Path(out_dir)
    if not base.is_dir():
        return []
    runs = [Store(p) for p in base.iterdir() if (p / "manifest.json").is_file()]
    return sorted(runs, key=lambda s: s.manifest_path.stat().st_mtime, reverse=True)
