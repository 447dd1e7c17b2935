"""What the kinds show of a run, in one wording: when it started, "generation 7/50" ("7/-"
without a limit), the verified Elo, and the weights of a status (name, value, std, change)."""
from __future__ import annotations

import datetime
import math

from ..errors import ConfigError
from ..runs.store import Store

SUMMARY_WEIGHTS = 12
"""Runs with more weights than twice this show only this many (the largest changes) in status,
unless --all."""


def started(store: Store) -> str:
    """When the run was made (its manifest's time), to the minute, local time."""
    stamp = store.manifest_path.stat().st_mtime
    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def of_total(done: int, total: int) -> str:
    """'7/50', or '7/-' without a limit."""
    return f"{done}/{total or '-'}"


def elo_text(matches: list[dict]) -> str:
    """The first verification match's Elo as 'Elo +12 +- 30 vs reference' ('' without one)."""
    if not matches:
        return ""
    m = matches[0]
    elo, err = m.get("elo"), m.get("elo_error")
    if elo is None or not math.isfinite(elo):
        return f"score {m.get('score', 0):.3f} vs {m.get('opponent', '?')}"
    tail = f" +- {err:.0f}" if err is not None and math.isfinite(err) else ""
    return f"Elo {elo:+.0f}{tail} vs {m.get('opponent', '?')}"


def weight_lines(names: list[str], values: list[float], changes: list[float],
                 std: list[float] | None, *, every: bool, value_name: str = "") -> list[str]:
    """The weights of a status: name, value (mean), std (populations only) and the change since
    the start, aligned (``value_name``: the values' column, e.g. 'theta'); with more than
    2 x :data:`SUMMARY_WEIGHTS` weights and not ``every``,
    only the largest changes and a line that says how many were left out."""
    if not names:
        return []
    order = list(range(len(names)))
    left = 0
    if not every and len(names) > 2 * SUMMARY_WEIGHTS:
        order = sorted(order, key=lambda i: -abs(changes[i]))[:SUMMARY_WEIGHTS]
        left = len(names) - len(order)
    w = max(6, *(len(names[i]) for i in order))
    value_name = value_name or ("mean" if std is not None else "value")
    head = f"  {'weight'.ljust(w)}  {value_name:>10}"
    head += f"  {'std':>8}" if std is not None else ""
    lines = [head + f"  {'change':>9}"]
    if left:
        lines[0] += "   (the largest changes since the start)"
    for i in order:
        line = f"  {names[i].ljust(w)}  {values[i]:10.2f}"
        line += f"  {std[i]:8.2f}" if std is not None else ""
        lines.append(line + f"  {changes[i]:+9.2f}")
    if left:
        lines.append(f"  ... and {left} more weights (--all shows every one)")
    return lines


def no_games_budget(run_id: str, what: str, *, max_games, max_seconds) -> None:
    """ConfigError when a resume of a run that counts no games budget (a fit, a training) is
    given --max-games or --max-seconds (its budget is its epochs: --generations)."""
    flag = "--max-games" if max_games is not None else "--max-seconds" \
        if max_seconds is not None else None
    if flag is not None:
        raise ConfigError(f"{flag}: run '{run_id}' is {what}, whose budget is its epochs; raise "
                          "them with --generations N")
