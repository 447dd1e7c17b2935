"""The gauntlet figure of runs with ``--opponents``: per opponent, the score of the generation's
candidates against it (mean over candidates, and the best candidate), per generation.

Read from the generation files' ``gauntlet`` records (:mod:`evotune.tuning.fitness`), so it works on any
checkpoint; runs without a gauntlet have no such figure.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..runs.rundata import RunData
from ..runs.store import Store
from .figure import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def gauntlet_series(run: RunData) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """(opponents, generations, mean score (G, k), best score (G, k)) of a run's gauntlets;
    scores are fractions of the points available (0..1). Empty when the run has none."""
    rows, gens, best = [], [], []
    opponents: tuple[str, ...] = ()
    for g in Store(run.root).generations():
        gauntlet = g.gauntlet
        if gauntlet is None or not gauntlet.candidates:
            continue
        opponents = gauntlet.opponents
        points = np.array([c.points for c in gauntlet.candidates], dtype=np.float64)
        games = np.array([c.games for c in gauntlet.candidates], dtype=np.float64)
        score = points / np.maximum(2.0 * games, 1.0)
        rows.append(score.mean(axis=0))
        best.append(score.max(axis=0))
        gens.append(int(g.generation))
    k = len(opponents)
    if not rows:
        empty = np.zeros((0, 0))
        return (), np.zeros(0, dtype=np.int64), empty, empty
    return (opponents, np.array(gens, dtype=np.int64), np.array(rows).reshape(-1, k),
            np.array(best).reshape(-1, k))


def gauntlet_figure(runs: Sequence[RunData], *, x: str = "generations") -> Figure | None:
    """One panel per opponent: the candidates' mean score (solid) and the best candidate's
    (dashed) per generation; None when no run has a gauntlet."""
    series = [(run, *gauntlet_series(run)) for run in runs]
    series = [s for s in series if len(s[2])]
    if not series:
        return None
    opponents: list[str] = []
    for s in series:
        opponents += [o for o in s[1] if o not in opponents]
    cols = min(3, len(opponents))
    rows = -(-len(opponents) // cols)
    fig = new_figure(figsize=(4.2 * cols, 3.2 * rows), layout="constrained")
    fig.suptitle("gauntlet: score against each opponent")
    for k, opp in enumerate(opponents):
        ax = fig.add_subplot(rows, cols, k + 1)
        for c, (run, opps, gens, mean, best) in enumerate(series):
            if opp not in opps:
                continue
            j = opps.index(opp)
            xs = gens if x == "generations" else run.games[np.searchsorted(run.generations, gens)]
            label = run.run_id if len(series) > 1 else "candidates' mean"
            ax.plot(xs, mean[:, j], color=f"C{c}", label=label)
            ax.plot(xs, best[:, j], color=f"C{c}", linestyle="--",
                    label=None if len(series) > 1 else "best candidate")
        ax.axhline(0.5, color="black", linewidth=0.8, linestyle=":")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"vs {opp}")
        ax.set_xlabel("generation" if x == "generations" else "games played")
        ax.set_ylabel("score (win 1, draw 1/2)")
        ax.legend(fontsize="small")
    return fig
