"""A run's state for readers (``evotune serve``): running, stopped, finished or crashed, told
apart by the run's writer lock and its files, never guessed from times.

- running: a live process holds the run's writer lock (:func:`evotune.runs.lock.lock_holder`,
  which reads the lock table and never takes the lock);
- finished: nobody holds it and the state says the run finished;
- crashed: nobody holds it and the files hold work past the last commit: a torn last line of
  the game log, games or a generation file beyond the committed generation, or a training's
  epoch record beyond its checkpoint (a process killed, crashed or interrupted mid-generation;
  ``evotune resume`` drops that work and continues from the commit);
- stopped: nobody holds it, it is not finished and it ends at a commit.
"""
from __future__ import annotations

import json
import os

from .gamelog import log_tail
from .lock import lock_holder
from .records import EPOCH_FILE_RE, GEN_FILE_RE
from .store import Store

RUN_STATES = ("running", "stopped", "finished", "crashed")
TAIL_BYTES = 65536
"""How much of the end of the game log is read to find its last game."""


def run_state(store: Store, locks: dict[str, int] | None = None) -> str:
    """One of :data:`RUN_STATES` (StoreError when the state file is damaged); ``locks``: the
    system's lock table read once (:func:`evotune.runs.lock.lock_table`) for many runs."""
    if lock_holder(store.lock_path, locks) is not None:
        return "running"
    state = store.read_state()
    if state is not None and state.finished:
        return "finished"
    committed = state.generation if state is not None else -1
    if _uncommitted(store, committed):
        return "crashed"
    return "stopped"


def _uncommitted(store: Store, committed: int) -> bool:
    """Whether the run's files hold work past the committed generation ``committed``."""
    for folder, pattern in ((store.generations_dir, GEN_FILE_RE), (store.epochs_dir,
                                                                    EPOCH_FILE_RE)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any((m := pattern.match(n)) and int(m.group(1)) > max(committed, 0) for n in names):
            return True
    last = _last_game_line(store)
    if last is None:
        return False
    if last == b"torn":
        return True
    try:
        key = json.loads(last).get("key")
        return int(key[0]) > committed
    except (ValueError, TypeError, IndexError, AttributeError):
        return True  # a damaged last line: the status says which


def _last_game_line(store: Store) -> bytes | None:
    """The last line of the game log (b'torn' when it lacks its newline; None: no game)."""
    lines, torn = log_tail(store.games_path, TAIL_BYTES)
    if torn:
        return b"torn"
    return lines[-1] if lines else None
