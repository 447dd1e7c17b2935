"""A run's generations as the tune page reads them: each committed generation file parsed once
(by the store's one validator) and kept as compact arrays, so a page polled while a run plays
reads only the generation that is new. The history is checked as the store checks it (no gap,
the same weights throughout, game counts adding up to the state's): a file that fails is a
StoreError naming it."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..reporting.strength import Played, played
from ..runs.recordio import damaged
from ..runs.store import Store, check_follows, check_state_counts


@dataclass(frozen=True)
class GenSummary:
    """What the page keeps of one generation file."""

    generation: int
    """Its number."""
    strategy: str
    """The strategy's name."""
    names: tuple[str, ...]
    """The weight names."""
    mean: np.ndarray
    """float32 (weights,): the population mean (SPSA: theta)."""
    std: np.ndarray
    """float32 (weights,): the population's deviation."""
    games: int
    """Games of the generation."""
    games_total: int
    """Games up to it."""
    seconds_total: float
    """Wall time up to it."""
    stats: dict
    """The strategy's scalar statistics."""
    wdl: tuple[int, int, int]
    """Wins, draws and losses of its requests (A's side)."""
    played: Played | None
    """Its head-to-head matches (the strength model's data)."""


def _summary(store: Store, g: int, names: tuple[str, ...] | None) -> GenSummary:
    gen = store.read_generation(g)
    stats = {k: float(v) for k, v in gen.stats.items()
             if k != "generation" and isinstance(v, (int, float)) and not isinstance(v, bool)}
    return GenSummary(
        generation=gen.generation, strategy=gen.strategy,
        names=names if names == gen.names else gen.names,  # one tuple shared by the run
        mean=np.asarray(gen.mean, dtype=np.float32), std=np.asarray(gen.std, dtype=np.float32),
        games=gen.games, games_total=gen.games_total, seconds_total=gen.seconds_total,
        stats=stats, wdl=(sum(m.wins or 0 for m in gen.matches),
                          sum(m.draws or 0 for m in gen.matches),
                          sum(m.losses or 0 for m in gen.matches)),
        played=_compact(played([gen])))


def _compact(p: Played | None) -> Played | None:
    return None if p is None else Played(diff=p.diff.astype(np.float32), low=p.low, high=p.high,
                                         score=p.score, games=p.games, generation=p.generation)


class GenerationCache:
    """Every run's parsed generations, keyed by file, size and time."""

    def __init__(self) -> None:
        self._files: dict[Path, tuple[tuple[int, int], GenSummary]] = {}
        self._lock = threading.Lock()

    def generations(self, store: Store) -> list[GenSummary]:
        """The run's committed generations (gen-0000 first), checked to form one history."""
        state = store.current_state()
        if state is None:
            return []
        out: list[GenSummary] = []
        names: tuple[str, ...] | None = None
        for g in range(state.generation + 1):
            path = store.generation_path(g)
            try:
                st = os.stat(path)
            except OSError:
                raise damaged(path, f"missing (the run's state is at generation "
                                    f"{state.generation})") from None
            sig = (st.st_mtime_ns, st.st_size)
            with self._lock:
                hit = self._files.get(path)
            if hit is not None and hit[0] == sig:
                gen = hit[1]
            else:
                gen = _summary(store, g, names)
                with self._lock:
                    self._files[path] = (sig, gen)
            if out:
                check_follows(out[-1], gen, path)
            names = gen.names
            out.append(gen)
        check_state_counts(store, state, out[-1].games_total)
        return out

    def forget(self, root: Path) -> None:
        """Drop a run's files (a run folder that went away)."""
        with self._lock:
            for p in [p for p in self._files if p.parent.parent == root]:
                del self._files[p]


def all_played(gens: list[GenSummary]) -> Played | None:
    """Every generation's matches in one :class:`Played`."""
    parts = [g.played for g in gens if g.played is not None]
    if not parts:
        return None
    return Played(diff=np.concatenate([p.diff for p in parts]),
                  low=np.min([p.low for p in parts], axis=0),
                  high=np.max([p.high for p in parts], axis=0),
                  score=np.concatenate([p.score for p in parts]),
                  games=np.concatenate([p.games for p in parts]),
                  generation=np.concatenate([p.generation for p in parts]))
