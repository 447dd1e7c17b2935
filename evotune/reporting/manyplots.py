"""Figures for runs with many weights (hundreds): never one panel per weight, never hundreds of
lines on one axis.

- ``pst-mg`` / ``pst-eg``: each piece-square table as an 8x8 heatmap (rank 1 at the bottom, White's
  view), one row per piece; one run: initial mean | final mean | reference | change (final -
  initial); several runs: each run's final mean | reference. A row shares one colour scale
  (centred on 0) except the change column, which has its own;
- ``convergence``: the scalar terms grouped by :func:`~evotune.reporting.tables.scalar_groups`
  (at most ``MAX_LINES`` lines per axis): mean per generation, +-1 std band, reference dotted;
- ``squares``: a chosen few weights (:func:`choose_squares`; default the table squares that moved
  most), one panel each, drawn like the 6-weight convergence figure;
- ``deviation``: the mean population standard deviation of each table and of each scalar group.

Names are read by :mod:`evotune.reporting.tables` only (never positions or counts).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError
from ..runs.rundata import RunData
from ..spec.features import PIECES, pst_cell
from .figure import color_cycle, new_figure
from .tables import MAX_LINES, board, pst_layout, scalar_groups, short_label, table_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DEFAULT_SQUARES = 6
"""How many squares the default ``squares`` figure follows."""
RUN_STYLES = ("-", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))


def _grid(n: int, cols: int = 3) -> tuple[int, int]:
    cols = min(cols, max(1, n))
    return (n + cols - 1) // cols, cols


def _axes(n: int, title: str, *, w: float = 4.2, h: float = 3.2) -> tuple[Figure, list]:
    rows, cols = _grid(n)
    fig = new_figure(figsize=(w * cols, h * rows), layout="constrained")
    fig.suptitle(title)
    return fig, [fig.add_subplot(rows, cols, k + 1) for k in range(n)]


def _colors(n: int) -> list[str]:
    cycle = color_cycle()
    return [cycle[k % len(cycle)] for k in range(n)]


def _xlabel(x: str) -> str:
    return "generation" if x == "generations" else "games played"


# ---- heatmaps -----------------------------------------------------------------------------------

def heatmap_columns(runs: Sequence[RunData]) -> list[tuple[str, str]]:
    """(column title, kind) of the heatmap figures: one run: initial, final, reference, change;
    several: each run's final, then the first run's reference."""
    if len(runs) == 1:
        r = runs[0]
        return [("initial mean", "initial"), (f"final mean (gen {r.last})", "final"),
                ("reference", "reference"), ("change (final - initial)", "change")]
    return [(f"{r.run_id} final", f"final:{k}") for k, r in enumerate(runs)] + \
        [("reference", "reference")]


def _table_values(run: RunData, kind: str, index: np.ndarray) -> np.ndarray:
    if kind == "initial":
        return board(run.mean[0], index)
    if kind == "final":
        return board(run.mean[-1], index)
    if kind == "reference":
        return board(run.reference, index)
    return board(run.mean[-1] - run.mean[0], index)


def pst_phases(runs: Sequence[RunData]) -> tuple[str, ...]:
    """The phases ('mg', 'eg') that have at least one table in some run."""
    found = {ph for r in runs for ph, _piece in pst_layout(r.names)}
    return tuple(ph for ph in ("mg", "eg") if ph in found)


def heatmap_figure(runs: Sequence[RunData], phase: str) -> Figure:
    """The piece-square tables of ``phase`` as heatmaps (see the module docstring). Each axis is
    titled '<piece>: <column>' and holds one image whose array is ``[rank, file]``."""
    layouts = [pst_layout(r.names) for r in runs]
    pieces = [p for p in PIECES if any((phase, p) in lay for lay in layouts)]
    columns = heatmap_columns(runs)
    # grid columns: the boards, a colour bar after the shared-scale boards and after 'change'
    slots: list[int] = []
    widths: list[float] = []
    for k, (_, kind) in enumerate(columns):
        slots.append(len(widths))
        widths.append(1.0)
        if kind == "change" or k + 1 == len(columns) or columns[k + 1][1] == "change":
            widths += [0.06, 0.22]
    rows = max(1, len(pieces))
    height = 2.3 * rows + 0.9
    fig = new_figure(figsize=(2.3 * sum(widths) + 0.6, height))  # no constrained layout: it costs
    # more than the drawing for 24+ heatmaps
    fig.suptitle(f"piece-square tables, {'middlegame' if phase == 'mg' else 'endgame'} "
                 f"({phase}); engine units, White's view, rank 1 at the bottom",
                 y=1 - 0.2 / height)
    grid = fig.add_gridspec(rows, len(widths), width_ratios=widths, left=0.03, right=0.97,
                            bottom=0.25 / height, top=1 - 0.8 / height, wspace=0.12, hspace=0.3)
    for row, piece in enumerate(pieces):
        boards = []
        for _title, kind in columns:
            if kind.startswith("final:"):
                run, kind = runs[int(kind.split(":")[1])], "final"
            else:
                run = runs[0]
            index = pst_layout(run.names).get((phase, piece))
            boards.append(np.full((8, 8), np.nan) if index is None
                          else _table_values(run, kind, index))
        shared = [b for (_, kind), b in zip(columns, boards) if kind != "change"]
        scale = max(1.0, float(np.nanmax(np.abs(shared))) if np.isfinite(shared).any() else 1.0)
        images, change_image = [], None
        for col, ((title, kind), values) in enumerate(zip(columns, boards)):
            ax = fig.add_subplot(grid[row, slots[col]])
            lim = scale
            if kind == "change":
                lim = max(1.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any()
                          else 1.0)
            im = ax.imshow(values, origin="lower", cmap="RdBu_r", vmin=-lim, vmax=lim)
            _annotate(ax, values, lim)
            ax.set_title(f"{piece}: {title}", fontsize=8)
            ax.set_xticks(range(8), list("abcdefgh"), fontsize=6)
            ax.set_yticks(range(8), [str(r) for r in range(1, 9)], fontsize=6)
            ax.tick_params(length=0)
            if kind == "change":
                change_image = (im, slots[col])
            else:
                images.append((im, slots[col]))
        for im, slot in images[-1:] + ([change_image] if change_image else []):
            bar = fig.colorbar(im, cax=fig.add_subplot(grid[row, slot + 1]))
            bar.ax.tick_params(labelsize=6)
    return fig


def _annotate(ax, values: np.ndarray, lim: float) -> None:
    for r in range(8):
        for f in range(8):
            v = values[r, f]
            if np.isfinite(v):
                ax.text(f, r, str(int(round(v))), ha="center", va="center", fontsize=5.5,
                        color="white" if abs(v) > 0.6 * lim else "black")


# ---- convergence of scalar terms and chosen squares ------------------------------------------

def _what(runs: Sequence[RunData]) -> str:
    """What the lines are: a population's mean and deviation, or the one vector of SPSA, CMA-ES
    or a fit."""
    if any(r.config.keeps_population for r in runs):
        return "population mean \u00b1 1 standard deviation"
    return " / ".join(dict.fromkeys(r.config.vector_name for r in runs))


def _union_groups(runs: Sequence[RunData]) -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = {}
    for r in runs:
        for title, idx in scalar_groups(r.names, r.free):
            names = groups.setdefault(title, [])
            names += [r.names[i] for i in idx if r.names[i] not in names]
    return list(groups.items())


def _mean_lines(ax, runs, names, x, *, labels) -> None:
    colors = _colors(len(names))
    for k, run in enumerate(runs):
        style = RUN_STYLES[k % len(RUN_STYLES)]
        xs = run.x(x)
        for name, color in zip(names, colors):
            if name not in run.names:
                continue
            i = run.names.index(name)
            label = labels(name) if len(runs) == 1 else f"{run.run_id}: {labels(name)}"
            ax.plot(xs, run.mean[:, i], color=color, linestyle=style, label=label)
            if run.config.keeps_population:
                ax.fill_between(xs, run.mean[:, i] - run.std[:, i],
                                run.mean[:, i] + run.std[:, i], color=color, alpha=0.12,
                                linewidth=0)
    ref_run = runs[0]
    for name, color in zip(names, colors):
        if name in ref_run.names and np.isfinite(ref_run.reference[ref_run.names.index(name)]):
            ax.axhline(ref_run.reference[ref_run.names.index(name)], color=color,
                       linestyle=":", linewidth=1.2)


def scalar_convergence_figure(runs: Sequence[RunData], *, x: str = "generations"
                              ) -> Figure | None:
    """One panel per scalar group (at most MAX_LINES weights); None when there are none."""
    groups = _union_groups(runs)
    if not groups:
        return None
    fig, axes = _axes(len(groups), f"scalar terms: {_what(runs)} (dotted: reference)")
    for ax, (title, names) in zip(axes, groups):
        _mean_lines(ax, runs, names, x, labels=lambda n, t=title: short_label(n, t))
        ax.set_title(title)
        ax.set_xlabel(_xlabel(x))
        ax.set_ylabel("value (pawn = 100)")
        ax.legend(fontsize="x-small", ncol=2 if len(names) > 4 else 1)
    return fig


def choose_squares(runs: Sequence[RunData], chosen: Sequence[str] | None = None
                   ) -> tuple[str, ...]:
    """The weights of the ``squares`` figure. ``chosen``: weight names, or '<piece>.<square>'
    for both phases ('knight.e4') or '<phase>.<piece>.<square>'; default: the
    :data:`DEFAULT_SQUARES` free table squares of the first run whose mean moved most from the
    initial population (ties: name order), leaving out those that did not move (none moved:
    none chosen, and no figure)."""
    run = runs[0]
    known = {n for r in runs for n in r.names}
    if chosen:
        out: list[str] = []
        for item in chosen:
            item = item.strip()
            cands = [item] if item in known else \
                [n for n in (f"pst.{item}", f"pst.mg.{item}", f"pst.eg.{item}") if n in known]
            if not cands:
                raise ConfigError(f"--squares: '{item}' is not a weight of the run; give a name "
                                  "like pst.mg.knight.e4, mg.knight.e4 or knight.e4")
            out += [c for c in cands if c not in out]
        return tuple(out)
    moved = np.abs(run.mean[-1] - run.mean[0])
    free = [i for i in run.free if pst_cell(run.names[i]) is not None and moved[i] > 0]
    free.sort(key=lambda i: (-moved[i], run.names[i]))
    return tuple(run.names[i] for i in free[:DEFAULT_SQUARES])


def squares_figure(runs: Sequence[RunData], names: Sequence[str], *, x: str = "generations",
                   title: str = "") -> Figure | None:
    """One panel per chosen weight: mean, +-1 std band (a population's), reference dotted;
    None without names. ``title``: what the weights are ('chosen weights')."""
    if not names:
        return None
    fig, axes = _axes(len(names), f"{title or 'chosen weights'}: {_what(runs)} (dotted: "
                                  "reference)")
    for ax, name in zip(axes, names):
        _mean_lines(ax, runs, [name], x, labels=lambda n: n)
        ax.set_title(name)
        ax.set_xlabel(_xlabel(x))
        ax.set_ylabel("value (pawn = 100)")
        ax.legend(fontsize="x-small")
    return fig


# ---- deviation summary --------------------------------------------------------------------------

def deviation_groups(run: RunData) -> list[tuple[str, list[int]]]:
    """(label, free indices) whose mean std is one line: each table, then each scalar group."""
    free = set(run.free)
    out = [(table_name(ph, piece), [i for i in idx if i >= 0 and i in free])
           for (ph, piece), idx in pst_layout(run.names).items()]
    out = [(label, idx) for label, idx in out if idx]
    return out + scalar_groups(run.names, run.free)


def _deviation_panels(labels: list[str]) -> list[tuple[str, list[str]]]:
    """(title, labels): the mg tables, the eg tables, then the scalar groups in parts of at most
    MAX_LINES."""
    out = [(f"piece-square tables, {ph}", [lb for lb in labels if lb.startswith(f"pst.{ph}.")])
           for ph in ("mg", "eg")]
    out = [(t, lbs) for t, lbs in out if lbs]
    rest = [lb for lb in labels if not lb.startswith("pst.")]
    parts = [rest[j:j + MAX_LINES] for j in range(0, len(rest), MAX_LINES)]
    return out + [("scalar terms" + (f" ({n + 1}/{len(parts)})" if len(parts) > 1 else ""), p)
                  for n, p in enumerate(parts)]


def deviation_summary_figure(runs: Sequence[RunData], *, x: str = "generations") -> Figure:
    """The mean population std of each group of weights (at most MAX_LINES lines per axis)."""
    lines: dict[str, list] = {}
    for k, run in enumerate(runs):
        for label, idx in deviation_groups(run):
            lines.setdefault(label, []).append((k, run, idx))
    panels = _deviation_panels(list(lines)) or [("", [])]
    fig, axes = _axes(len(panels), "population standard deviation, mean over each group of "
                                   "weights")
    for ax, (title, chunk) in zip(axes, panels):
        colors = _colors(len(chunk))
        for label, color in zip(chunk, colors):
            for k, run, idx in lines[label]:
                name = label if len(runs) == 1 else f"{run.run_id}: {label}"
                ax.plot(run.x(x), run.std[:, idx].mean(axis=1), color=color,
                        linestyle=RUN_STYLES[k % len(RUN_STYLES)], label=name)
        ax.set_xlabel(_xlabel(x))
        ax.set_ylabel("mean standard deviation")
        ax.set_title(title)
        ax.legend(fontsize="x-small", ncol=2 if len(runs) == 1 and len(chunk) > 4 else 1)
    return fig


def many_weight_figures(runs: Sequence[RunData], *, x: str = "generations",
                        squares: Sequence[str] | None = None) -> dict:
    """Figure name -> Figure for runs with many weights (strategy statistics excepted)."""
    figs: dict = {}
    conv = scalar_convergence_figure(runs, x=x)
    if conv is not None:
        figs["convergence"] = conv
    chosen = choose_squares(runs, squares)
    sq = squares_figure(runs, chosen, x=x, title="chosen weights" if squares else
                        f"the {len(chosen)} table squares that moved most since the start")
    if sq is not None:
        figs["squares"] = sq
    figs["deviation"] = deviation_summary_figure(runs, x=x)
    for phase in pst_phases(runs):
        figs[f"pst-{phase}"] = heatmap_figure(runs, phase)
    return figs
