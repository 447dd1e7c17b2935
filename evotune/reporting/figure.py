"""matplotlib, imported when a figure is made: the commands that draw nothing (most of them, every
refusal of a bad input among them) do not pay its import (about 0.9 s of every command's start
when the reporting modules imported it at the top). Agg backend: no display needed."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(**kwargs: Any) -> Figure:
    """A matplotlib Figure (Agg backend) made with ``kwargs``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def color_cycle() -> list[str]:
    """matplotlib's default colour cycle."""
    import matplotlib

    return list(matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"]))


FEW_POINTS = 3
"""A line of at most this many points is drawn with markers (one point alone is no line)."""


def finish(fig: Figure) -> Figure:
    """What every line figure of reporting/ gets before it is written: integer ticks on an axis
    of generations or games (a generation 0.5 does not exist), and markers on a line of at most
    :data:`FEW_POINTS` points (a one-generation run's single point is then visible)."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        label = ax.get_xlabel()
        if label.startswith(("generation", "games", "epoch")):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        for line in ax.get_lines():
            try:
                finite = int(np.isfinite(np.asarray(line.get_ydata(), dtype=float)).sum())
            except (TypeError, ValueError):
                continue
            if 0 < finite <= FEW_POINTS and line.get_marker() in ("None", None, "", " "):
                line.set_marker("o")
                line.set_markersize(5)
    return fig
