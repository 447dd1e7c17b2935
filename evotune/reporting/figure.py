"""matplotlib, imported when a figure is made: the commands that draw nothing (most of them, every
refusal of a bad input among them) do not pay its import (about 0.9 s of every command's start
when the reporting modules imported it at the top). Agg backend: no display needed."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
