"""Helpers for tests that compare stored runs: everything but wall-clock timings."""
from __future__ import annotations

from pathlib import Path

from evotune.store import Store


def stored_generations(root: Path) -> list[dict]:
    """The run's generation files without their timings."""
    out = []
    for g in Store(root).generations():
        g = g.to_json()
        g.pop("seconds"), g.pop("seconds_total")
        out.append(g)
    return out


def stored_games(root: Path) -> list[dict]:
    """The run's game log without the games' wall times."""
    games = Store(root).read_games()
    for r in games:
        r.pop("seconds", None)
    return games
