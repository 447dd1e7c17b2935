"""The report's tables for runs with many weights: the largest changes, one row per
piece-square table, one row per scalar term. Each function returns ``(header, rows)`` with
numbers (rendering is :mod:`evotune.reporting.report`'s job).
"""
from __future__ import annotations

import numpy as np

from ..runs.rundata import RunData
from .tables import pst_layout, scalar_indices, table_name

LARGEST_CHANGES = 20
"""Rows of the largest-changes table."""


def largest_changes(run: RunData, n: int = LARGEST_CHANGES) -> tuple[tuple[str, ...], list]:
    """The ``n`` free weights whose population mean moved most from the initial population
    (|final - initial|, ties in name order)."""
    change = run.mean[-1] - run.mean[0]
    order = sorted(run.free, key=lambda i: (-abs(change[i]), run.names[i]))[:n]
    header = ("weight", "reference", "initial mean", "final mean", "change", "final std")
    rows = [(run.names[i], float(run.reference[i]), float(run.mean[0, i]),
             float(run.mean[-1, i]), float(change[i]), float(run.std[-1, i])) for i in order]
    return header, rows


def table_rows(run: RunData) -> tuple[tuple[str, ...], list]:
    """One row per piece-square table: squares tuned, mean initial and final value, mean and
    largest |change|, mean final std, mean |final - reference|."""
    header = ("table", "squares tuned", "initial mean", "final mean", "mean abs change",
              "max abs change", "final std", "mean abs (final - reference)")
    free = set(run.free)
    rows = []
    for (phase, piece), index in pst_layout(run.names).items():
        idx = [int(i) for i in index if i >= 0 and int(i) in free]
        if not idx:
            continue
        change = np.abs(run.mean[-1, idx] - run.mean[0, idx])
        rows.append((table_name(phase, piece), len(idx), float(run.mean[0, idx].mean()),
                     float(run.mean[-1, idx].mean()), float(change.mean()), float(change.max()),
                     float(run.std[-1, idx].mean()),
                     float(np.abs(run.mean[-1, idx] - run.reference[idx]).mean())))
    return header, rows


def scalar_rows(run: RunData, recommended) -> tuple[tuple[str, ...], list]:
    """One row per free scalar term (every free weight that is not a table square)."""
    header = ("weight", "reference", "initial mean", "initial std", "final mean", "final std",
              "recommended")
    rows = [(run.names[i], float(run.reference[i]), float(run.mean[0, i]),
             float(run.std[0, i]), float(run.mean[-1, i]), float(run.std[-1, i]),
             float(recommended[i])) for i in scalar_indices(run.names, run.free)]
    return header, rows
