"""The strategy comparison's curves: Elo against the reference as the games are spent, read
from the runs' ``verify-curve.json`` (played by :func:`evotune.verify.curve.verify_checkpoints`).

:func:`curve_summary` aggregates the runs of one strategy over seeds: the mean Elo per checkpoint
with a 95% band (Student's t over seeds); :func:`write_compare_plot` draws one line per strategy;
:func:`games_within` finds the games needed to first come within 20 Elo of the reference.
"""
from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .figure import new_figure
from .plots import save_figure

log = logging.getLogger(__name__)

WITHIN_ELO = 20.0
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228}
"""Student's t quantile (0.975) by degrees of freedom; 1.96 beyond."""


def match_elo(m: dict) -> float:
    """The match's Elo; a score of 0 or 1 is taken as half a game from it (finite)."""
    if m.get("elo") is not None:
        return float(m["elo"])
    n = max(int(m.get("games", 1)), 1)
    s = min(max(float(m.get("score", 0.5)), 0.5 / n), 1.0 - 0.5 / n)
    return -400.0 * math.log10(1.0 / s - 1.0)


def games_within(curve: dict, elo: float = WITHIN_ELO) -> int | None:
    """Tuning games at the first checkpoint whose Elo against the reference is >= -elo."""
    for p in curve.get("points", []):
        if match_elo(p["match"]) >= -elo:
            return int(p["checkpoint"])
    return None


def mean_band(values: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of its 95% interval over seeds; 0 for one seed)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()) if v.size else math.nan, 0.0
    t = T95.get(v.size - 1, 1.96)
    return float(v.mean()), float(t * v.std(ddof=1) / math.sqrt(v.size))


@dataclass(frozen=True)
class Curve:
    """One strategy's Elo against the reference per checkpoint, over seeds."""

    strategy: str
    """Strategy name."""
    games: np.ndarray
    """Checkpoints (tuning games spent)."""
    mean: np.ndarray
    """Mean Elo over seeds at each checkpoint."""
    band: np.ndarray
    """Half-width of the 95% interval over seeds."""
    seeds: int
    """Number of runs (seeds)."""


def curve_summary(strategy: str, curves: Sequence[dict]) -> Curve:
    """Aggregate the verify-curve documents of one strategy's runs (checkpoints all share)."""
    common = sorted(set.intersection(*(set(p["checkpoint"] for p in c["points"])
                                       for c in curves)))
    mean, band = [], []
    for x in common:
        m, b = mean_band([match_elo(p["match"]) for c in curves for p in c["points"]
                          if p["checkpoint"] == x])
        mean.append(m)
        band.append(b)
    return Curve(strategy, np.array(common), np.array(mean), np.array(band), len(curves))


def write_compare_plot(curves: Sequence[Curve], out_dir: str | Path, *,
                       title: str = "") -> tuple[Path, Path]:
    """elo-vs-games.png and .svg: one line per strategy with its 95% band over seeds."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig = new_figure(figsize=(8, 5))
    ax = fig.add_subplot(1, 1, 1)
    for c in curves:
        line, = ax.plot(c.games, c.mean, marker="o", ms=3, label=f"{c.strategy} ({c.seeds} "
                        f"seed{'s' if c.seeds != 1 else ''})")
        ax.fill_between(c.games, c.mean - c.band, c.mean + c.band, color=line.get_color(),
                        alpha=0.2)
    if curves:  # the lines stay readable: wide bands of few seeds are cut at the frame
        lo = min(float(np.min(c.mean)) for c in curves)
        hi = max(float(np.max(c.mean)) for c in curves)
        ax.set_ylim(lo - 300.0, max(hi, 0.0) + 300.0)
    ax.axhline(0.0, color="black", lw=0.8, ls="--")
    ax.axhline(-WITHIN_ELO, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("tuning games spent")
    ax.set_ylabel("Elo vs reference (held-out openings)")
    # a long title (engine name, init) wraps instead of running off the figure's edge
    ax.set_title("\n".join(textwrap.wrap(title or "Elo vs games: mean over seeds, 95% band",
                                          72)))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    png, svg = out / "elo-vs-games.png", out / "elo-vs-games.svg"
    save_figure(fig, png, dpi=110)
    save_figure(fig, svg)
    return png, svg
