"""What ``evotune runs`` and ``evotune status`` print: one table row per run and a run's status,
each kind showing what it has (games runs: generations, games, budget, verified Elo; fits:
epochs, positions, errors; trainings: epochs, positions, losses), in one wording ("generation
7/50", "generation 7/-" without a generation limit, "epoch 13/30")."""
from __future__ import annotations

import datetime
import math

from ..errors import EvotuneError
from ..reporting.training import load_training
from ..runs.fitconfig import TexelConfig
from ..runs.store import Store
from ..runs.trainconfig import TrainConfig

SUMMARY_WEIGHTS = 12
"""Runs with more weights than twice this show only this many (the largest changes) in status,
unless --all."""

HEADER = ("RUN", "KIND", "PROGRESS", "AMOUNT", "RESULT", "STATE", "STARTED")


def started(store: Store) -> str:
    """When the run was made (its manifest's time), to the minute, local time."""
    stamp = store.manifest_path.stat().st_mtime
    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def of_total(done: int, total: int) -> str:
    """'7/50', or '7/-' without a limit."""
    return f"{done}/{total or '-'}"


def _elo(matches: list[dict]) -> str:
    """The first verification match's Elo as 'Elo +12 +- 30 vs reference' ('' without one)."""
    if not matches:
        return ""
    m = matches[0]
    elo, err = m.get("elo"), m.get("elo_error")
    if elo is None or not math.isfinite(elo):
        return f"score {m.get('score', 0):.3f} vs {m.get('opponent', '?')}"
    tail = f" +- {err:.0f}" if err is not None and math.isfinite(err) else ""
    return f"Elo {elo:+.0f}{tail} vs {m.get('opponent', '?')}"


def row(store: Store) -> tuple[str, ...]:
    """The runs table's row of ``store`` (EvotuneError when it cannot be read)."""
    manifest = store.manifest()
    cfg = manifest.config
    if isinstance(cfg, TrainConfig):
        view = load_training(store)
        last = view.epochs[-1] if view.epochs else None
        positions = f"{last.positions:,} positions" if last else "-"
        loss = "-"
        if last is not None:
            loss = (f"loss {last.val_loss:.5f} (validation)" if last.val_loss is not None
                    else f"loss {last.train_loss:.5f} (training)")
        return (store.run_id, cfg.strategy, f"epoch {of_total(len(view.epochs), view.total)}",
                positions, loss, "finished" if view.finished else "stopped", started(store))
    state = store.current_state()
    done = state.generation if state else 0
    fin = "finished" if state and state.finished else "stopped"
    if isinstance(cfg, TexelConfig):
        summary = store.read_document("texel") or {}
        positions = (f"{summary['train'] + summary['validation']:,} positions"
                     if "train" in summary else "-")
        error = "-"
        if state is not None and state.generation > 0:
            stats = store.read_generation(state.generation).stats
            error = f"error {stats.get('loss_val', stats.get('loss_train', 0.0)):.5f}"
        return (store.run_id, "texel", f"epoch {of_total(done, cfg.epochs)}", positions, error,
                fin, started(store))
    games = state.games if state else 0
    amount = f"{games:,}/{cfg.max_games:,} games" if cfg.max_games else f"{games:,} games"
    verify = store.read_verify() or {}
    return (store.run_id, cfg.strategy, f"generation {of_total(done, cfg.generations)}", amount,
            _elo(verify.get("matches", [])) or "-", fin, started(store))


def table(stores: list[Store]) -> list[str]:
    """The runs table: a header, then one aligned row per run (an unreadable run: its error)."""
    rows: list[tuple[str, ...]] = []
    bad: dict[int, str] = {}
    for s in stores:
        try:
            rows.append(row(s))
        except EvotuneError as exc:
            bad[len(rows)] = f"unreadable: {exc}"
            rows.append((s.run_id,))
    widths = [max(len(r[i]) for r in [HEADER, *rows] if len(r) > i) for i in range(len(HEADER))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADER, widths)).rstrip()]
    for i, r in enumerate(rows):
        if i in bad:
            lines.append(f"{r[0].ljust(widths[0])}  {bad[i]}")
        else:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return lines


def weight_lines(names: list[str], values: list[float], changes: list[float],
                 std: list[float] | None, *, every: bool) -> list[str]:
    """The weights of a status: name, value (mean), std (populations only) and the change since
    the start, aligned; with more than 2 x :data:`SUMMARY_WEIGHTS` weights and not ``every``,
    only the largest changes and a line that says how many were left out."""
    if not names:
        return []
    order = list(range(len(names)))
    left = 0
    if not every and len(names) > 2 * SUMMARY_WEIGHTS:
        order = sorted(order, key=lambda i: -abs(changes[i]))[:SUMMARY_WEIGHTS]
        left = len(names) - len(order)
    w = max(6, *(len(names[i]) for i in order))
    head = f"  {'weight'.ljust(w)}  {'mean' if std is not None else 'value':>10}"
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
