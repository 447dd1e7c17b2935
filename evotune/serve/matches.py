"""Matches and verifications as the tune page shows them: every match folder
(:mod:`evotune.runs.matchstore`) inside the runs folder, read, never written or locked:

- ``<runs>/matches/<name>/``: ``evotune match`` without ``--out`` (id ``matches/<name>``);
- ``<runs>/<name>/``: ``evotune match --out <runs>/<name>`` (id ``<name>``; a folder given
  elsewhere is outside what the page serves);
- ``<runs>/<run>/verify-games/<hash>/``: one match of ``evotune verify RUN`` (id
  ``<run>/verify-games/<hash>``), its games kept as they end; the run's ``verify.json`` is
  written when the whole verification ends.

A match's state is read from its lock and files: **running** (a live process holds its lock),
**finished** (its ``result.json`` is written; a verification's match, which writes none: its
games all played or its SPRT decided), **stopped** (neither: the same command continues it).
Its running score is the journal's games so far, in the block ``evotune match`` prints
(:func:`evotune.match.resultsblock.summary_lines`; a finished match's from its
``result.json``, as the command printed it), and per complete pair its Elo and, with an SPRT,
its LLR (:func:`evotune.serve.journals.running`). A file that fails its check shows as
``damaged: FILE``.
"""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import EvotuneError, StoreError
from ..match.resultsblock import block_figures, stored_figures, summary_lines
from ..match.scoring import SprtParams, sprt
from ..runs.lock import lock_holder
from ..runs.matchstore import JOURNAL_FILE, MATCH_FILE, MATCHES_DIR, RESULT_FILE
from ..runs.recordio import damaged, json_object, read_json
from ..runs.store import VERIFY_GAMES
from .journals import LogCache, pentanomial, running, wdl

SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
"""One part of a match id (no '..', no separator)."""
MATCH_STATES = ("running", "stopped", "finished")


class NotAMatch(EvotuneError):
    """A request for something that is not a match folder of the served folder."""


def _is_match(folder: Path) -> bool:
    return (folder / MATCH_FILE).is_file()


class MatchReader:
    """The match folders of one runs folder (``root``, resolved)."""

    def __init__(self, root: Path, logs: LogCache) -> None:
        self.root = root
        self.logs = logs
        self._cache: dict[tuple[str, bool], tuple[tuple, Any]] = {}
        self._lock = threading.Lock()

    # -- locating -----------------------------------------------------------------------------
    def folder(self, mid: str) -> Path:
        """The folder of the match ``mid``; NotAMatch for anything else (a '..', an absolute
        path, a link out of the runs folder, a folder without match.json)."""
        parts = mid.split("/")
        if not all(SEGMENT.fullmatch(p) for p in parts) or not (
                len(parts) == 1 or (len(parts) == 2 and parts[0] == MATCHES_DIR)
                or (len(parts) == 3 and parts[1] == VERIFY_GAMES)):
            raise NotAMatch(f"no match {mid!r} here")
        try:
            real = self.root.joinpath(*parts).resolve(strict=True)
            parent = self.root.joinpath(*parts[:-1]).resolve(strict=True)
            inner = (real / MATCH_FILE).resolve(strict=True)
        except (OSError, RuntimeError):
            raise NotAMatch(f"no match {mid!r} here") from None
        expected = self.root.joinpath(*parts[:-1])
        if real.parent != parent or parent != expected or inner.parent != real \
                or not inner.is_file():
            raise NotAMatch(f"no match {mid!r} here")
        return real

    def ids(self, run_ids: list[str]) -> list[str]:
        """Every match of the folder: its own ones, then each run's verification matches."""
        out = []
        for name in _names(self.root):
            if name != MATCHES_DIR and _is_match(self.root / name):
                out.append(name)
        out += [f"{MATCHES_DIR}/{n}" for n in _names(self.root / MATCHES_DIR)]
        for run in run_ids:
            out += [f"{run}/{VERIFY_GAMES}/{n}" for n in _names(self.root / run / VERIFY_GAMES)]
        good = []
        for mid in out:
            try:
                self.folder(mid)
                good.append(mid)
            except NotAMatch:
                continue
        return good

    def signature(self, mid: str) -> tuple:
        folder = self.folder(mid)
        sig: list[Any] = []
        for name in (MATCH_FILE, JOURNAL_FILE, RESULT_FILE):
            try:
                st = os.stat(folder / name)
                sig.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append(None)
        return tuple(sig)

    def _read(self, mid: str, folder: Path, *, detail: bool):
        """:func:`_figures` of a match, kept until its files change."""
        key, sig = (mid, detail), self.signature(mid)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == sig:
            return hit[1]
        value = _figures(folder, self.logs, mid.split("/"), detail=detail)
        with self._lock:
            if len(self._cache) > 2000:
                self._cache.clear()
            self._cache[key] = (sig, value)
        return value

    # -- views ----------------------------------------------------------------------------------
    def row(self, mid: str, locks: dict[str, int] | None) -> dict:
        """A match's row: who plays, its state, games so far and planned, its score."""
        folder = self.folder(mid)
        parts = mid.split("/")
        base: dict[str, Any] = {"id": mid, "kind": "verification" if len(parts) == 3
                                else "match", "run": parts[0] if len(parts) == 3 else None,
                                "state": _state(folder, locks), "damaged": None}
        try:
            fields = self._read(mid, folder, detail=False)[0]
        except EvotuneError as exc:
            return {**base, "damaged": _named(exc, folder)}
        if base["state"] == "stopped" and fields["complete"]:
            base["state"] = "finished"  # a verification's match writes no result.json
        return {**base, **fields}

    def detail(self, mid: str, locks: dict[str, int] | None) -> dict:
        """A match's page: its row, the results block so far, its score (and LLR) after each
        complete pair, its latest games."""
        folder = self.folder(mid)
        row = self.row(mid, locks)
        out: dict[str, Any] = {"row": row, "damaged": row["damaged"]}
        if row["damaged"]:
            return out
        try:
            fields, block, series, latest = self._read(mid, folder, detail=True)
        except EvotuneError as exc:
            return {**out, "damaged": _named(exc, folder)}
        return {**out, "block": block, "running": series, "latest_games": latest,
                "settings": fields["settings"]}


def _names(folder: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(folder) if SEGMENT.fullmatch(e.name))
    except OSError:
        return []


def _named(exc: EvotuneError, folder: Path) -> str:
    """The file of the match folder an error names ('games.jsonl'), else its text."""
    text = str(exc)
    for name in (MATCH_FILE, JOURNAL_FILE, RESULT_FILE):
        if str(folder / name) in text:
            return name
    return text


def _state(folder: Path, locks: dict[str, int] | None) -> str:
    if lock_holder(folder / ".lock", locks) is not None:
        return "running"
    return "finished" if (folder / RESULT_FILE).is_file() else "stopped"


def _about(folder: Path) -> dict:
    """match.json, checked: a match file with its settings."""
    path = folder / MATCH_FILE
    about = json_object(read_json(path, "match file"), path)
    settings = about.get("settings")
    if about.get("kind") != "match" or not isinstance(about.get("identity"), dict) \
            or not isinstance(settings, dict):
        raise damaged(path, "not an evotune match file")
    for k in ("a", "b", "where"):
        if k in settings and not isinstance(settings[k], str):
            raise damaged(path, f"'settings.{k}' must be a string")
    games = settings.get("games")
    if games is not None and (not isinstance(games, int) or isinstance(games, bool)):
        raise damaged(path, "'settings.games' must be an integer")
    return about


def _sprt_of(settings: dict, path: Path) -> SprtParams | None:
    """The match's SPRT from its settings ([elo0, elo1, alpha, beta]; None: none, or a match
    kept before the settings named it)."""
    raw = settings.get("sprt")
    if raw is None:
        return None
    try:
        elo0, elo1, alpha, beta = (float(x) for x in raw)
        return SprtParams(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
    except (TypeError, ValueError, EvotuneError):
        raise damaged(path, "'settings.sprt' must be [elo0, elo1, alpha, beta]") from None


def _figures(folder: Path, logs: LogCache, parts: list[str], *, detail: bool = False):
    """(row fields[, block lines, running score, latest games]) of one match folder."""
    about = _about(folder)
    settings = about["settings"]
    params = _sprt_of(settings, folder / MATCH_FILE)
    log = logs.read(folder / JOURNAL_FILE)
    result = None
    if (folder / RESULT_FILE).is_file():
        path = folder / RESULT_FILE
        result = json_object(read_json(path, "match result"), path)
    first, second = log.names or (settings.get("a", "A"), settings.get("b", "B"))
    planned = settings.get("games")
    if planned is None and len(parts) == 3:
        planned = _verify_games(folder.parent.parent)
    try:
        fig = stored_figures(result) if result is not None else None
    except (KeyError, TypeError, ValueError):
        raise damaged(folder / RESULT_FILE, "not a match result") from None
    if fig is None:
        games = list(log.games.values())
        w, d, lo = wdl(games)
        penta = pentanomial(games)
        fig = block_figures(wins=w, draws=d, losses=lo, pentanomial=penta,
                            sprt=sprt(penta, params) if params is not None else None)
    s = fig.sprt
    if params is None and s is not None:  # a finished match kept before settings named it
        params = SprtParams(elo0=s.elo0, elo1=s.elo1)
    fields = {"a": first, "b": second, "games": fig.games, "kept": len(log.games),
              "planned": planned, "elo": fig.to_dict()["elo"],
              "elo_error": fig.to_dict()["elo_error"], "llr": None if s is None else s.llr,
              "lower": None if s is None else s.lower, "upper": None if s is None else s.upper,
              "verdict": None if s is None else s.verdict, "where": settings.get("where", ""),
              "started": str(about.get("created", "")).replace("T", " ")[:16], "settings": settings,
              "result": _result_text(fig),
              "complete": result is not None or bool(planned and fig.games >= planned)
              or bool(s is not None and s.verdict)}
    if not detail:
        fields.pop("settings")
        return fields, None, None, None
    block = summary_lines(fig, first, second, where=settings.get("where", ""))
    return fields, block, running(log.games, params), list(reversed(log.latest))


def _verify_games(run: Path) -> int | None:
    """The games of each match of the run's last verification (verify.json), if readable."""
    try:
        doc = json_object(read_json(run / "verify.json", "verification"), run / "verify.json")
    except StoreError:
        return None
    games = doc.get("games")
    return games if isinstance(games, int) and not isinstance(games, bool) else None


def _result_text(fig) -> str:
    if not fig.games:
        return "no game yet"
    d = fig.to_dict()
    elo = "n/a" if d["elo"] is None else f"{d['elo']:+.1f}"
    err = (" +- inf" if fig.elo_error is not None else "") if d["elo_error"] is None \
        else f" +- {d['elo_error']:.1f}"
    text = f"{elo}{err} Elo"
    if fig.sprt is not None:
        text += f", LLR {fig.sprt.llr:.2f} ({fig.sprt.lower:.2f}, {fig.sprt.upper:.2f})"
        if fig.sprt.verdict:
            text += f" {fig.sprt.verdict}"
    return text
