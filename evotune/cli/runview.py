"""What ``evotune runs`` prints: one table row per run, each kind showing what it has (games runs:
generations, games, budget, verified Elo; fits: epochs, positions, errors; trainings: epochs,
positions, losses; :meth:`evotune.runs.runkind.RunKind.row`), aligned under one header. KIND is
the run's kind as its manifest names it (games, fit, train, moves), STRATEGY what tunes it (de,
spsa, texel; '-' for a training)."""
from __future__ import annotations

from ..errors import EvotuneError
from ..kinds import kind_of
from ..runs.store import Store

HEADER = ("RUN", "KIND", "STRATEGY", "PROGRESS", "AMOUNT", "RESULT", "STATE", "STARTED")


def table(stores: list[Store]) -> list[str]:
    """The runs table: a header, then one aligned row per run (an unreadable run: its error)."""
    rows: list[tuple[str, ...]] = []
    bad: dict[int, str] = {}
    for s in stores:
        try:
            kind = kind_of(s)
            row = kind.row(s)
            rows.append((row[0], kind.name, *row[1:]))
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
