"""A match's journal: the games it finished, kept as each one ends, so that a stopped match
(Ctrl-C, SIGTERM, kill -9) continues where it stopped and ends exactly as an uninterrupted one.

The runner (:func:`evotune.match.runner.run_fixtures`) asks the journal for each game it needs
(:meth:`Journal.stored`) and plays only those it does not hold, handing each new one to
:meth:`Journal.keep` as it finishes. A game's record depends only on its address (generation,
fixture, pair, game: the seeds are addressed by position) and the match's identity
(:func:`match_identity`), so a stored game is exactly the game an uninterrupted match would play
there; the stop rules then settle the same games in the same order. The store that writes a
journal to disk is :class:`evotune.runs.gamelog.GameLog` (only ``runs/`` writes run folders).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Protocol

from ..fileio import file_digest
from ..players import PlayerSpec
from .fixtures import MatchSettings
from .gamerecord import GameRecord
from .scoring import SprtParams


class Journal(Protocol):
    """Where a match keeps its finished games."""

    def stored(self, key: tuple) -> GameRecord | None:
        """The finished game at ``key`` (generation, fixture, pair, game), or None."""

    def keep(self, record: GameRecord) -> None:
        """Keep a game that just finished (before the next one is reported)."""


def _plain(value):
    """A value as JSON-ready plain data (dataclasses by field, tuples as lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def match_identity(a: PlayerSpec, b: PlayerSpec, *, games: int, settings: MatchSettings,
                   seed: int, stop: str = "none", sprt: SprtParams | None = None) -> dict:
    """What decides a match's games: both players (weights, command, options, search, net
    checksum), the games, the stop rule and its SPRT, the limits, the openings (the file's
    content) and the seed. ``hash``: 16 hex digits over all of it; the other keys are its parts
    (a continue with another value is refused naming the part)."""
    parts = {"a": _plain(a), "b": _plain(b), "games": int(games), "stop": stop,
             "sprt": _plain(sprt), "limits": _plain(settings.limits),
             "openings": {"kind": settings.openings_kind, "book_plies": settings.book_plies,
                          "file": None if settings.openings is None else file_digest(
                              Path(settings.openings))},
             "seed": int(seed)}
    digests = {k: hashlib.sha256(json.dumps(v, sort_keys=True, default=str).encode())
               .hexdigest()[:16] for k, v in parts.items()}
    digests["hash"] = hashlib.sha256(json.dumps(digests, sort_keys=True).encode()
                                     ).hexdigest()[:16]
    return digests


IDENTITY_WORDS = {"a": "player A", "b": "player B", "games": "--games", "stop": "the stop rule",
                  "sprt": "--sprt", "limits": "the limits (depth, nodes, time, --max-plies, "
                  "adjudication)", "openings": "the openings", "seed": "--seed"}
"""What each part of :func:`match_identity` is called in a refusal."""


def identity_differences(stored: dict, now: dict) -> list[str]:
    """The parts of two match identities that differ, in words (empty: the same match)."""
    return [IDENTITY_WORDS.get(k, k) for k in IDENTITY_WORDS if stored.get(k) != now.get(k)]
