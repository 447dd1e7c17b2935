"""Game logs as the tune page reads them (a run's ``games.jsonl``, a match's journal): each log
read once and then only its new lines (the logs are append-only; a log replaced, as the one
repair of a torn last line replaces it, is read again from the start), every line through the
store's one validator, a game key written twice refused as the store refuses it. What is kept
of a game is its key and A's points, which is all the page's statistics need:

- :func:`by_generation`: W/D/L and the pentanomial of each generation's games;
- :func:`running`: a match's score after each complete pair (Elo with its 95% error and,
  with an SPRT, the LLR), from :mod:`evotune.match.scoring`'s functions.
"""
from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import StoreError
from ..match.gamerecord import GameRecord
from ..match.scoring import (
    SprtParams,
    elo_error,
    elo_from_score,
    pentanomial_from_records,
    pentanomial_stats,
    sprt_llr,
)
from ..runs.records import parse_game_line

Key = tuple[int, int, int, int]


@dataclass(frozen=True)
class Played:
    """What the page keeps of one game: its key and A's points (a stand-in for the
    :class:`~evotune.match.gamerecord.GameRecord` the scoring functions read)."""

    key: Key
    """(generation, fixture, pair, game)."""
    points: int
    """A's points (win 2, draw 1, loss 0)."""

    def points_a(self) -> int:
        return self.points


def points_of(d: dict) -> int:
    """A's points of a validated game line (A has White in even games)."""
    if d["result"] == "1/2-1/2":
        return 1
    return 2 if (d["result"] == "1-0") == (d["key"][3] % 2 == 0) else 0


@dataclass
class _Log:
    ino: int = -1
    offset: int = 0
    lines: int = 0
    games: dict[Key, Played] = field(default_factory=dict)
    line_of: dict[Key, int] = field(default_factory=dict)
    names: tuple[str, str] | None = None
    latest: list[dict] = field(default_factory=list)


LATEST = 20
"""Games a log keeps for the page's list of latest games."""


class LogCache:
    """Every log the page has read: its games so far and where its reading stopped."""

    def __init__(self) -> None:
        self._logs: dict[Path, _Log] = {}
        self._lock = threading.Lock()

    def read(self, path: Path) -> _Log:
        """The log at ``path`` read up to its last complete line (a missing log: no games);
        StoreError naming the line that fails the validator."""
        with self._lock:
            log = self._logs.setdefault(path, _Log())
            try:
                st = os.stat(path)
            except OSError:
                self._logs[path] = _Log()
                return self._logs[path]
            if st.st_ino != log.ino or st.st_size < log.offset:
                log = self._logs[path] = _Log(ino=st.st_ino)
            if st.st_size == log.offset:
                return log
            with open(path, "rb") as f:
                f.seek(log.offset)
                data = f.read(st.st_size - log.offset)
            end = data.rfind(b"\n")
            if end < 0:
                return log  # a line still being written (or torn): read it when it ends
            for raw in data[:end].split(b"\n"):
                number = log.lines + 1
                line = parse_game_line(raw, number, path)
                key = cast(Key, line.key)
                if key in log.games:
                    raise StoreError(f"{path} line {number} repeats the game {list(key)} of "
                                     f"line {log.line_of[key]}; remove the duplicate line")
                log.games[key] = Played(key=key, points=points_of(line.data))
                log.line_of[key] = number
                if log.names is None:
                    d = line.data
                    log.names = (d["white"], d["black"]) if key[3] % 2 == 0 \
                        else (d["black"], d["white"])
                log.latest.append(_brief(line.data))
                log.lines = number
            del log.latest[:-LATEST]
            log.offset += end + 1
            return log


def _brief(d: dict) -> dict:
    return {"generation": d["key"][0], "key": d["key"], "white": d["white"],
            "black": d["black"], "result": d["result"], "termination": d["termination"],
            "plies": len(d["moves"])}


def pentanomial(games: Iterable[Played]) -> tuple[int, int, int, int, int]:
    """The complete pairs of ``games`` by A's pair points (the match code's rule)."""
    return pentanomial_from_records(cast(Sequence[GameRecord], list(games)))


def wdl(games: Iterable[Played]) -> tuple[int, int, int]:
    """A's wins, draws and losses."""
    pts = [g.points for g in games]
    return pts.count(2), pts.count(1), pts.count(0)


def by_generation(games: dict[Key, Played]) -> dict[int, dict[str, Any]]:
    """Per generation of a run's log: its games, W/D/L (A's side) and pentanomial."""
    groups: dict[int, list[Played]] = {}
    for g in games.values():
        groups.setdefault(g.key[0], []).append(g)
    return {gen: {"games": len(gs), "wdl": list(wdl(gs)), "pentanomial": list(pentanomial(gs))}
            for gen, gs in sorted(groups.items())}


def running(games: dict[Key, Played], sprt: SprtParams | None, *, points: int = 400) -> dict:
    """A match's score after each complete pair, in game order, thinned evenly to at most
    ``points`` (the last always): games played by then, Elo and its 95% error on the pairs
    (fastchess's pentanomial model), and with ``sprt`` the LLR with its bounds."""
    pairs: dict[tuple, list[Played]] = {}
    for g in games.values():
        pairs.setdefault(g.key[:3], []).append(g)
    counts = [0, 0, 0, 0, 0]
    out: dict[str, list] = {"games": [], "elo": [], "error": [], "llr": []}
    done = 0
    steps = []
    for key in sorted(pairs):
        two = pairs[key]
        done += len(two)
        if len(two) == 2 and {g.key[3] % 2 for g in two} == {0, 1}:
            counts[sum(g.points for g in two)] += 1
            steps.append((done, tuple(counts)))
    keep = range(len(steps)) if len(steps) <= points else \
        sorted({round(i * (len(steps) - 1) / (points - 1)) for i in range(points)})
    for i in keep:
        n_games, penta = steps[i]
        n, mu, sigma = pentanomial_stats(penta)
        elo, err = elo_from_score(mu), elo_error(mu, sigma, n)
        out["games"].append(n_games)
        out["elo"].append(_finite(elo))
        out["error"].append(_finite(err))
        out["llr"].append(None if sprt is None else round(sprt_llr(penta, sprt.elo0, sprt.elo1),
                                                          4))
    result: dict[str, Any] = {**out, "lower": None, "upper": None}
    if sprt is not None:
        result.update(lower=sprt.lower, upper=sprt.upper, elo0=sprt.elo0, elo1=sprt.elo1)
    return result


def _finite(x: float) -> float | None:
    return round(x, 2) if math.isfinite(x) else None
