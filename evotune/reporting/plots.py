"""Convergence plots of stored runs (matplotlib, Agg backend: no display needed).

Three figures, as in the differential-evolution paper's figures:

- ``convergence``: per free weight, the population mean per generation with a band of +-1
  standard deviation and the reference value as a dashed line;
- ``deviation``: per free weight, the population standard deviation;
- ``strategy``: the strategy's own statistics (DE/jDE replacement rate, jDE F and CR, EA step
  sizes, TD learning rate), when the runs have any.

Several runs overlay on the same axes with a legend by run id. Figures are built from
:class:`~evotune.runs.rundata.RunData` only, so every stored checkpoint can be plotted.

Runs with many weights (more than ``MANY_WEIGHTS`` free, or any piece-square table) get the
figures of :mod:`evotune.reporting.manyplots` instead of one panel per weight: heatmaps of the
tables (``pst-mg``, ``pst-eg``), grouped scalar terms (``convergence``), a chosen few weights
(``squares``) and a deviation summary; a strategy statistic kept per weight (EA step sizes) is
drawn as its median with a min-max band.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import __version__
from ..errors import ConfigError
from ..fileio import atomic_write_bytes, atomic_write_text
from ..runs.rundata import RunData
from ..runs.store import Store
from .figure import color_cycle, finish, new_figure
from .gauntletplot import gauntlet_figure
from .manyplots import choose_squares, many_weight_figures, squares_figure
from .strength import strength_curve, strength_figure
from .tables import MAX_LINES, is_many

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

X_AXES = ("generations", "games")
FIGURES = ("convergence", "deviation", "strategy", "squares", "pst-mg", "pst-eg")

# Strategy statistics drawn in strategy.png: (stats key, panel title). Lists (EA step sizes per
# free weight) become one line per weight.
STRATEGY_PANELS = (
    ("replacement_rate", "replacement rate"),
    ("F_mean", "F (mean)"),
    ("CR_mean", "CR (mean)"),
    ("sigma_mean", "step size sigma (mean)"),
    ("learning_rate", "learning rate"),
    ("diversity", "diversity (mean std of free weights)"),
    ("loss_train", "Texel error, training positions"),
    ("loss_val", "Texel error, validation positions"),
    ("c_k", "SPSA's perturbation c_k (mean)"),
    ("R_k", "SPSA's R_k = a_k / c_k^2 (mean)"),
    ("step", "step: how far theta moved in the generation"),
    ("sigma", "CMA-ES's step size sigma"),
)


@dataclass(frozen=True)
class PlotSet:
    """The figures written for one run or one comparison of runs."""

    out_dir: Path
    """The folder they were written to (reports/<run-id>/ or reports/compare-.../)."""
    figures: dict
    """Figure name ('convergence', 'deviation', 'strategy') -> matplotlib Figure."""
    paths: dict
    """Figure name -> (png path, svg path)."""


def _check_x(x: str) -> None:
    if x not in X_AXES:
        raise ConfigError(f"unknown x axis '{x}'; use one of {', '.join(X_AXES)}")


def _panel_names(runs: Sequence[RunData]) -> tuple[str, ...]:
    """Free weights of the first run, then any other run's free weights not yet listed."""
    names: list[str] = []
    for r in runs:
        for n in r.free_names:
            if n not in names:
                names.append(n)
    return tuple(names)


def _grid(n: int) -> tuple[int, int]:
    cols = min(3, max(1, n))
    return (n + cols - 1) // cols, cols


def _figure(n_panels: int, title: str) -> tuple[Figure, list]:
    rows, cols = _grid(n_panels)
    fig = new_figure(figsize=(4.2 * cols, 3.2 * rows), layout="constrained")
    axes = [fig.add_subplot(rows, cols, k + 1) for k in range(n_panels)]
    fig.suptitle(title)
    return fig, axes


def _xlabel(x: str) -> str:
    return "generation" if x == "generations" else "games played"


def _label(run: RunData, runs: Sequence[RunData]) -> str:
    return run.run_id if len(runs) > 1 else f"{run.run_id} ({run.strategy})"


def _colors(runs: Sequence[RunData]) -> list:
    cycle = color_cycle()
    return [cycle[k % len(cycle)] for k in range(len(runs))]


def convergence_title(runs: Sequence[RunData]) -> str:
    """The convergence figure's title: a population's mean and deviation, or what a run of
    one vector draws (SPSA's theta, CMA-ES's mean, a fit's weights)."""
    if any(r.config.keeps_population for r in runs):
        return "population mean \u00b1 1 standard deviation" + (
            "" if all(r.config.keeps_population for r in runs) else " (runs of one vector: the vector)")
    return " / ".join(dict.fromkeys(r.config.vector_name for r in runs))


def convergence_figure(runs: Sequence[RunData], *, x: str = "generations") -> Figure:
    """Per free weight: mean per generation, +-1 std band, reference value dashed.

    In each panel, for run k (in order) the k-th line is its mean; the reference line comes after
    the runs' lines (one per distinct value).
    """
    _check_x(x)
    names = _panel_names(runs)
    fig, axes = _figure(len(names), convergence_title(runs))
    colors = _colors(runs)
    for ax, name in zip(axes, names):
        refs = []
        for run, color in zip(runs, colors):
            if name not in run.names:
                continue
            i = run.names.index(name)
            xs = run.x(x)
            ax.plot(xs, run.mean[:, i], color=color, label=_label(run, runs))
            if run.config.keeps_population:
                ax.fill_between(xs, run.mean[:, i] - run.std[:, i],
                                run.mean[:, i] + run.std[:, i], color=color, alpha=0.2,
                                linewidth=0)
            if np.isfinite(run.reference[i]) and run.reference[i] not in refs:
                refs.append(float(run.reference[i]))
        for ref in refs:
            ax.axhline(ref, color="black", linestyle="--", linewidth=1,
                       label=f"reference {ref:g}")
        ax.set_title(name)
        ax.set_xlabel(_xlabel(x))
        ax.set_ylabel("value (pawn = 100)")
        ax.legend(fontsize="small")
    return fig


def deviation_figure(runs: Sequence[RunData], *, x: str = "generations") -> Figure:
    """Per free weight: the population standard deviation per generation (one line per run)."""
    _check_x(x)
    names = _panel_names(runs)
    fig, axes = _figure(len(names), "population standard deviation")
    colors = _colors(runs)
    for ax, name in zip(axes, names):
        for run, color in zip(runs, colors):
            if name in run.names:
                i = run.names.index(name)
                ax.plot(run.x(x), run.std[:, i], color=color, label=_label(run, runs))
        ax.set_title(name)
        ax.set_xlabel(_xlabel(x))
        ax.set_ylabel("standard deviation")
        ax.legend(fontsize="small")
    return fig


def _varies(data: np.ndarray) -> bool:
    """True when a statistic has finite values that change (a constant, e.g. plain DE's F, says
    nothing a panel should show), or only one generation's value (a one-generation run: its one
    point)."""
    finite = data[np.isfinite(data).all(axis=-1)] if data.ndim > 1 else data[np.isfinite(data)]
    return finite.size > 0 and (len(finite) == 1 or bool(np.ptp(finite, axis=0).max() > 0))


def strategy_panels(runs: Sequence[RunData]) -> tuple[tuple[str, str], ...]:
    """The (stats key, title) panels for statistics that change in at least one run."""
    out = []
    for key, title in STRATEGY_PANELS:
        if any(key in r.stats and _varies(np.asarray(r.stats[key], dtype=float)) for r in runs):
            out.append((key, title))
    return tuple(out)


def strategy_figure(runs: Sequence[RunData], *, x: str = "generations") -> Figure | None:
    """The strategies' statistics, one panel per statistic; None when no run has any."""
    _check_x(x)
    panels = strategy_panels(runs)
    if not panels:
        return None
    fig, axes = _figure(len(panels), "strategy statistics")
    colors = _colors(runs)
    for ax, (key, title) in zip(axes, panels):
        for run, color in zip(runs, colors):
            if key not in run.stats:
                continue
            data, xs = run.stats[key], run.x(x)
            if data.ndim == 1:
                ax.plot(xs, data, color=color, marker=".", label=_label(run, runs))
            elif data.shape[1] > MAX_LINES:  # one value per weight: median and min-max band
                with np.errstate(all="ignore"):
                    ok = np.isfinite(data).all(axis=1)
                    med = np.where(ok, np.median(np.where(ok[:, None], data, 0), axis=1), np.nan)
                ax.plot(xs, med, color=color, marker=".",
                        label=f"{_label(run, runs)}: median of {data.shape[1]}")
                ax.fill_between(xs[ok], data[ok].min(axis=1), data[ok].max(axis=1), color=color,
                                alpha=0.2, linewidth=0, label="min - max")
            else:
                styles = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
                labels = run.free_names if data.shape[1] == len(run.free) else \
                    tuple(str(j) for j in range(data.shape[1]))
                for j in range(data.shape[1]):
                    ax.plot(xs, data[:, j], color=color, linestyle=styles[j % len(styles)],
                            label=f"{_label(run, runs)}: {labels[j]}")
        ax.set_title(title)
        ax.set_xlabel(_xlabel(x))
        ax.legend(fontsize="small")
    return fig


def report_dir(runs: Sequence[RunData], out_dir: str | Path = "reports") -> Path:
    """reports/<run-id>/ for one run, reports/compare-<id1>-<id2>.../ for several."""
    if len(runs) == 1:
        return Path(out_dir) / runs[0].run_id
    return Path(out_dir) / ("compare-" + "-".join(r.run_id for r in runs))


def build_figures(runs: Sequence[RunData], *, x: str = "generations",
                  squares: Sequence[str] | None = None) -> dict:
    """Figure name -> Figure (the strategy figure only when there are statistics). ``squares``
    names the weights of the 'squares' figure (see :func:`~.manyplots.choose_squares`)."""
    if not runs:
        raise ConfigError("no run to plot; give at least one run id")
    _check_x(x)
    population = any(r.config.keeps_population for r in runs)
    if any(is_many(r.names, r.free) for r in runs):
        figs = many_weight_figures(runs, x=x, squares=squares)
        if not population:  # SPSA, CMA-ES, fits: one vector, no deviation to draw
            figs.pop("deviation", None)
    else:
        figs = {"convergence": convergence_figure(runs, x=x)}
        if population:
            figs["deviation"] = deviation_figure(runs, x=x)
        if squares:
            sq = squares_figure(runs, choose_squares(runs, squares), x=x)
            if sq is not None:
                figs["squares"] = sq
    strat = strategy_figure(runs, x=x)
    if strat is not None:
        figs["strategy"] = strat

    gauntlet = gauntlet_figure(runs, x=x)  # runs with --opponents: score per opponent
    if gauntlet is not None:
        figs["gauntlet"] = gauntlet
    return {name: finish(fig) for name, fig in figs.items()}


def save_figure(fig: Figure, path: Path, *, dpi: float | str = "figure") -> None:
    """A figure written atomically, in the format of ``path``'s suffix (a reader never sees
    half a PNG or SVG); every figure of reporting/ is written here."""
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix[1:], dpi=dpi)
    atomic_write_bytes(path, buf.getvalue())


PLOTS_KEY = "plots-key.json"
"""The file beside the figures that names what they were drawn from (:func:`inputs_key`)."""
RUN_INPUTS = ("manifest.json", "state.json", "engine-spec.json", "verify.json", "final-check.json",
              "guard.json",  # the final check's record under its old name (runs made before)
              "verify-curve.json", "texel.json")
"""A run's files that its figures depend on (its generations are fixed by its state: a
generation file, once its state commits it, never changes)."""
DRAWING_CODE = ("plots.py", "manyplots.py", "gauntletplot.py", "figure.py", "tables.py",
                "strength.py")


def inputs_key(runs: Sequence[RunData], *, x: str, squares: Sequence[str] | None,
               strength: bool) -> str:
    """A digest of everything the figures are drawn from: each run's files
    (:data:`RUN_INPUTS`), the options and the drawing code; equal digests draw equal figures."""
    h = hashlib.sha256()
    h.update(json.dumps({"version": __version__, "x": x, "squares": list(squares or ()),
                         "strength": strength}).encode())
    here = Path(__file__).resolve().parent
    for name in DRAWING_CODE:
        h.update((here / name).read_bytes())
    for run in runs:
        h.update(str(Path(run.root).resolve()).encode())
        for name in RUN_INPUTS:
            try:
                h.update(name.encode() + b"\0" + (Path(run.root) / name).read_bytes())
            except OSError:
                h.update(name.encode() + b"\0-")
    return h.hexdigest()


def _drawn(folder: Path, key: str) -> dict | None:
    """The paths of figures drawn from ``key`` already (None: draw them)."""
    try:
        doc = json.loads((folder / PLOTS_KEY).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("figures"),
                                                                           list):
        return None
    paths = {n: (folder / f"{n}.png", folder / f"{n}.svg") for n in doc["figures"]}
    if not all(p.is_file() for pair in paths.values() for p in pair):
        return None
    return paths


def write_plots(runs: Sequence[RunData], *, x: str = "generations",
                out_dir: str | Path = "reports", squares: Sequence[str] | None = None,
                progress: Callable[[int, int], None] | None = None,
                strength: bool = False) -> PlotSet:
    """Build the figures and write each as .png and .svg under :func:`report_dir`;
    ``progress(done, total)`` after the figures are built and after each file; ``strength``:
    add one run's strength-over-games figure (the report's, :mod:`.strength`). Figures drawn
    from the same inputs (:func:`inputs_key`) are not drawn again: the PlotSet then names the
    files and holds no figure."""
    if not runs:
        raise ConfigError("no run to plot; give at least one run id")
    _check_x(x)
    folder = report_dir(runs, out_dir)
    key = inputs_key(runs, x=x, squares=squares, strength=strength)
    drawn = _drawn(folder, key)
    if drawn is not None:
        log.info("the figures in %s are drawn from these runs already", folder)
        if progress is not None:
            progress(1, 1)
        return PlotSet(out_dir=folder, figures={}, paths=drawn)
    figs = build_figures(runs, x=x, squares=squares)
    if strength and len(runs) == 1:
        fig = strength_figure(strength_curve(Store(runs[0].root), runs[0]))
        if fig is not None:
            figs["strength"] = fig
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    total = 1 + 2 * len(figs)
    if progress is not None:
        progress(1, total)
    for i, (name, fig) in enumerate(figs.items()):
        png, svg = folder / f"{name}.png", folder / f"{name}.svg"
        save_figure(fig, png, dpi=100)
        if progress is not None:
            progress(2 + 2 * i, total)
        save_figure(fig, svg)
        if progress is not None:
            progress(3 + 2 * i, total)
        paths[name] = (png, svg)
        log.info("wrote %s and %s", png, svg)
    atomic_write_text(folder / PLOTS_KEY, json.dumps({"key": key, "figures": list(figs)}) + "\n")
    return PlotSet(out_dir=folder, figures=figs, paths=paths)
