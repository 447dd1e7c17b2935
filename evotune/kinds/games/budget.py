"""A run's budget raised on resume (``evotune resume RUN --max-games N``, ``--generations N``,
``--max-seconds S``): the rules and the record.

- Each limit given replaces the run's limit of that name and is kept in the run: the manifest's
  config holds the new limit and its ``extensions`` list a record of each raise (when, at which
  generation and games, from what to what, and the final check it set aside). The limits are
  not part of the run's identity, so the identity is unchanged and a later plain ``resume`` (and
  ``status``, ``runs``) reads the new budget.
- A value below the run's limit, a limit the run does not have (a generations-only run given
  ``--max-games`` would stop earlier than planned), or a raise after which another limit still
  stops the run where it stands is refused in one line, before anything is written.
- The strategies see only the stop moving: DE, jDE, the EA and CMA-ES play on exactly as a run
  planned at the larger budget would (tests/test_run_extend.py). SPSA (and nevergrad) fixed
  their planned budget at the start (the ``budget`` parameter, part of the identity): an extended
  SPSA run keeps its schedule, N = the first budget / 2, and its iterations past N continue the
  same sequences (c_k = c / k^gamma and a_k = a / (A + k)^alpha keep decaying below their end
  values), so it is the first run continued, deterministically, not the run a larger budget
  would have planned (whose gains are larger at every k).
- A run whose final check already ran at the old end plays it again at the new end (the check
  is of the weights the run recommends at its end); the old check's record is kept in the
  extension record and its games in ``final-check-gNNNN.pgn``.
"""
from __future__ import annotations

import math
import time

from ...errors import ConfigError
from ...runs.records import State
from .config import RunConfig

LIMITS = {"generations": "--generations", "max_games": "--max-games",
          "max_seconds": "--max-seconds"}
"""The limits a resume can raise, by field of the config's
:class:`~evotune.kinds.games.settings.Budget` (their flat names too), and their flags."""


def _text(field: str, value) -> str:
    if field == "max_seconds":
        return f"{float(value):g} s"
    if field == "max_games":
        return f"{int(value):,} games"
    return f"{int(value)} generations"


def stopping_limit(cfg: RunConfig, state: State | None, tuning_games: int) -> str | None:
    """The limit (a config field) at which a run with ``cfg`` stops where ``state`` stands
    (``tuning_games``: its games limit less the final check's), or None when it plays on."""
    if state is None:
        return None
    if cfg.budget.generations and state.generation >= cfg.budget.generations:
        return "generations"
    if cfg.budget.max_games and state.games >= tuning_games:
        return "max_games"
    if cfg.budget.max_seconds and state.seconds >= cfg.budget.max_seconds:
        return "max_seconds"
    return None


def extended_config(cfg: RunConfig, *, run_id: str, state: State | None, tuning_games,
                    **limits) -> tuple[RunConfig, dict]:
    """``cfg`` with the ``limits`` given (None: unchanged) raised, and the changes as
    ``{field: [old, new]}`` (empty: nothing raised); ConfigError for a limit that would shrink
    the run or not move its stop (``tuning_games(cfg)``: the games the tuning may play)."""
    changes: dict = {}
    for field, value in limits.items():
        if value is None:
            continue
        flag, old = LIMITS[field], getattr(cfg.budget, field)
        if not (isinstance(value, (int, float)) and math.isfinite(value)) or value <= 0:
            raise ConfigError(f"{flag} must be a positive number to raise the run's budget, got "
                              f"{value!r}")
        if not old:
            have = ", ".join(f"{LIMITS[f]} {_text(f, getattr(cfg.budget, f))}" for f in LIMITS
                             if getattr(cfg.budget, f)) or "none"
            raise ConfigError(f"run '{run_id}' has no {flag} limit (its limits: {have}); a new "
                              f"one could only stop it earlier: raise one of its own")
        if value < old:
            raise ConfigError(f"{flag} {value:g} would shrink run '{run_id}' (its limit is "
                              f"{_text(field, old)}); give more than {old:g} to extend it")
        if value > old:
            changes[field] = [old, int(value) if field != "max_seconds" else float(value)]
    new = cfg.with_budget(**{f: v[1] for f, v in changes.items()})
    if changes:
        stop = stopping_limit(new, state, tuning_games(new))
        if stop is not None:
            limit = _text(stop, getattr(new.budget, stop))
            raise ConfigError(f"run '{run_id}' would still stop where it stands: its "
                              f"{LIMITS[stop]} {limit} is reached; raise it too "
                              f"({LIMITS[stop]} N)")
    return new, changes


def extension_record(changes: dict, state: State | None, final_check: dict | None) -> dict:
    """The record of one raise: when, where the run stood, what changed, the final check set
    aside (None: the run had none)."""
    rec = {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "changes": changes,
           "generation": state.generation if state else 0, "games": state.games if state else 0}
    if final_check is not None:
        rec["final_check"] = final_check
    return rec


def extension_lines(extensions) -> list[str]:
    """Each raise in words (status): 'extended at generation 12 (600 games): --max-games 600
    -> 1,200 games'."""
    out = []
    for ext in extensions:
        what = "; ".join(f"{LIMITS.get(f, f)} {_text(f, old)} -> {_text(f, new)}"
                         for f, (old, new) in ext.get("changes", {}).items())
        out.append(f"  extended at generation {ext.get('generation', 0)} "
                   f"({ext.get('games', 0):,} games): {what}"
                   + (" (its final check set aside: played again at the new end)"
                      if ext.get("final_check") else ""))
    return out
