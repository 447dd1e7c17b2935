"""Helpers for tests that compare stored runs: everything but wall-clock timings."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from evotune.runs.store import Store


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


def kill_at_generation(proc: subprocess.Popen, state: Path, generation: int = 2,
                       timeout: float = 120.0) -> int | None:
    """SIGKILL ``proc`` as soon as its run's ``state.json`` reports ``generation`` or later; wait
    for it and return the generation it was killed at (None: it ended first or timed out)."""
    deadline, killed_at = time.time() + timeout, None
    while time.time() < deadline and proc.poll() is None:
        try:
            g = json.loads(state.read_text())["generation"]
        except (OSError, ValueError, KeyError):
            g = -1
        if g >= generation:
            os.kill(proc.pid, signal.SIGKILL)
            killed_at = g
            break
        time.sleep(0.005)
    proc.wait()
    return killed_at
