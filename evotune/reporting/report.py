"""The report of a run: ``reports/<run-id>/report.md`` and one self-contained ``report.html``.

Contents: configuration, games played, wall time, the table of initial and final means and
standard deviations per free weight beside the reference values (the layout of the
differential-evolution paper's tables; for many weights instead the largest changes, one row per
piece-square table and one per scalar term, :mod:`evotune.reporting.summary`), the recommended
weights and how they were chosen, the
latest verification (verify.json) and the convergence plots (PNG files beside report.md; embedded
as base64 PNG in report.html, so the page is one file).
"""
from __future__ import annotations

import base64
import html
import io
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from ..fileio import atomic_write_text
from ..runs.rundata import Recommendation, RunData, load_run
from ..runs.runkind import recommend
from ..runs.store import Store
from ..strategies import keeps_population, known_strategy, strategy_class
from ..verify.text import describe_match
from .plots import PLOTS_KEY, PlotSet, write_plots
from .summary import largest_changes, scalar_rows, table_rows
from .tables import is_many, pst_layout, scalar_indices

log = logging.getLogger(__name__)

REPORT_KEY = "report-key.json"
"""What report.md and report.html were written from (the plots' key and the rule)."""
TABLE_ROWS = ("reference", "initial mean", "initial std", "final mean", "final std")


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote."""

    markdown: Path
    """report.md"""
    html: Path
    """report.html (self-contained)"""
    plots: PlotSet
    """The plots (PNG and SVG) beside the report."""


def describes(run: RunData) -> tuple[bool, str]:
    """(whether the run keeps a population, the name of the vector it moves: 'mean', 'theta'),
    asked of its strategy (a fit's report keeps its population table)."""
    if not known_strategy(run.strategy):  # a fit: reported as it always was
        return True, "mean"
    return keeps_population(run.strategy), strategy_class(run.strategy).CENTRE


def weight_table(run: RunData) -> tuple[tuple[str, ...], dict]:
    """(free weight names, {row label: values}): a population's :data:`TABLE_ROWS`; for one
    vector (SPSA's theta, CMA-ES's mean) its start and its final value, and the spec's
    reference where it is not the start."""
    free = list(run.free)
    population, centre = describes(run)
    reference = [float(run.reference[i]) for i in free]
    initial = [float(run.mean[0, i]) for i in free]
    if not population:
        rows = {} if reference == initial else {"reference": reference}
        rows.update({"start": initial, f"final {centre}": [float(run.mean[-1, i]) for i in free]})
        return run.free_names, rows
    rows = {
        "reference": reference,
        "initial mean": initial,
        "initial std": [float(run.std[0, i]) for i in free],
        "final mean": [float(run.mean[-1, i]) for i in free],
        "final std": [float(run.std[-1, i]) for i in free],
    }
    return run.free_names, rows


def _table_intro(run: RunData) -> str:
    population, centre = describes(run)
    return ("Population statistics per free weight (engine units, pawn = 100)." if population
            else f"The run's {centre} per free weight at its start and now (engine units, "
                 "pawn = 100).")


def _fmt(v: float) -> str:
    return f"{v:.1f}"


def _progress_line(run: RunData) -> str:
    limit = run.config.steps or "-"
    status = "finished" if run.finished else "not finished (stopped, running or crashed)"
    seconds = max(float(run.seconds[-1]), run.state.seconds if run.state is not None else 0.0)
    check = run.final_check.games if run.final_check is not None else 0
    games = int(run.games[-1]) + check
    rate = games / seconds if seconds > 0 else 0.0
    of_check = f" ({check} of them the final check's)" if check else ""
    return (f"generation {run.last} of {limit}, {games} games{of_check}, wall time "
            f"{seconds:.1f} s ({rate:.1f} games/s), {status}")


def _verify_lines(run: RunData) -> list[str]:
    v = run.verify
    if not v:
        return [f"no verification yet (run `evotune verify {run.run_id}`)"]
    weights = v.get("weights") or []
    shown = weights if len(weights) <= 12 else f"({len(weights)} values)"
    limits = v.get("limits")
    at = " and ".join(str(x) for x in limits) if isinstance(limits, list) and limits \
        else f"depth {v.get('depth')}"
    out = [f"verified at generation {v.get('generation', '?')} with the {v.get('recommend', '?')} "
           f"weights {shown}, {at}, seed {v.get('seed')}, "
           f"{'held-out ' if v.get('held_out', True) else ''}openings {v.get('openings')}"]
    if v.get("generation") is not None and int(v["generation"]) != run.last:
        out.append(f"the run is now at generation {run.last}; run `evotune verify "
                   f"{run.run_id}` again to verify its current weights")
    if v.get("note"):
        out.append(str(v["note"]))
    for m in v.get("matches", []):
        out.append(describe_match(m))
    return out


def _cell(v) -> str:
    return v if isinstance(v, str) else str(v) if isinstance(v, int) else _fmt(round(v, 1) + 0.0)


def many_weight_blocks(run: RunData, rec: Recommendation) -> list[tuple[str, str, tuple, list]]:
    """The Weights section of a run with many weights: (heading, text, header, rows) blocks."""
    n_tables = len(pst_layout(run.names))
    squares = len(run.free) - len(scalar_indices(run.names, run.free))
    blocks = []
    header, rows = largest_changes(run)
    blocks.append(("Largest changes", f"The {len(rows)} free weights whose population mean moved "
                   "most from the initial population (engine units, pawn = 100).", header, rows))
    header, rows = table_rows(run)
    if rows:
        blocks.append(("Piece-square tables", f"{squares} tuned squares in {n_tables} tables, "
                       "one row per table (the heatmaps below show every square).", header, rows))
    header, rows = scalar_rows(run, rec.weights)
    if rows:
        blocks.append(("Scalar terms", f"{len(rows)} tuned scalar terms.", header, rows))
    return blocks


def _recommended_text(run: RunData, rec: Recommendation) -> tuple[str, str]:
    """(sentence, weights text) of the Recommended weights section."""
    sentence = f"{rec.description} (rule '{rec.rule}'; never the luckiest single winner):"
    if not is_many(run.names, run.free):
        return sentence, ("`" + ",".join(f"{v:g}" for v in rec.weights) + "` ("
                          + ", ".join(run.names) + ")")
    return sentence, (f"{len(rec.weights)} weights; write them with `evotune export {run.run_id} "
                      "--format json` (one object per table) or `--format header` (C arrays "
                      "pst_mg[6][64], pst_eg[6][64])")


def config_items(run: RunData) -> list[tuple[str, str]]:
    """(label, value) lines of the Configuration section: the run's settings and its start."""
    items = run.config.summary_items()
    start = run.init_from
    if start is not None:
        what = {"fit": "Texel fit", "games": "run", "weights": "weights file"}[start.kind]
        items.append(("start", f"{what} {start.source}: {start.description} (weights sha256 "
                               f"{start.weights_sha256[:12]})"))
    return items


def markdown_report(run: RunData, rec: Recommendation, *, images: dict | None = None) -> str:
    """The report as Markdown; ``images`` maps figure names to file names beside the report."""
    lines = [f"# evotune report: {run.run_id}", "", "## Configuration", ""]
    lines += [f"- {k}: {v}" for k, v in config_items(run)]
    lines += ["", "## Progress", "", _progress_line(run), "", "## Weights", ""]
    if is_many(run.names, run.free):
        lines.append(f"{len(run.names)} weights, {len(run.free)} tuned.")
        for heading, text, header, rows in many_weight_blocks(run, rec):
            lines += ["", f"### {heading}", "", text, "", "| " + " | ".join(header) + " |",
                      "|---|" + "---:|" * (len(header) - 1)]
            lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    else:
        names, table = weight_table(run)
        lines += [_table_intro(run), "",
                  "| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        for label in table:
            lines.append(f"| {label} | " + " | ".join(_fmt(v) for v in table[label]) + " |")
        rec_free = [rec.weights[i] for i in run.free]
        lines.append("| recommended | " + " | ".join(f"{v:g}" for v in rec_free) + " |")
    sentence, weights = _recommended_text(run, rec)
    lines += ["", "## Recommended weights", "", sentence, "", weights, "", "## Verification", ""]
    lines += [f"- {line}" for line in _verify_lines(run)]
    if images:
        lines += ["", "## Plots", ""]
        lines += [f"![{name}]({fname})" for name, fname in images.items()]
    return "\n".join(lines) + "\n"


def _png_b64(fig_or_path) -> str:
    if isinstance(fig_or_path, Path):
        data = fig_or_path.read_bytes()
    else:
        buf = io.BytesIO()
        fig_or_path.savefig(buf, format="png", dpi=100)
        data = buf.getvalue()
    return base64.b64encode(data).decode("ascii")


def html_report(run: RunData, rec: Recommendation, *, figures: dict) -> str:
    """The report as one self-contained HTML page (figures embedded as base64 PNG).

    ``figures`` maps names to matplotlib Figures or to PNG files already written.
    """
    e = html.escape
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
             f"<title>evotune report: {e(run.run_id)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #999;padding:3px 8px;"
             "text-align:right}th:first-child,td:first-child{text-align:left}"
             "img{max-width:100%}</style></head><body>",
             f"<h1>evotune report: {e(run.run_id)}</h1>", "<h2>Configuration</h2><ul>"]
    parts += [f"<li>{e(k)}: {e(v)}</li>" for k, v in config_items(run)]
    parts += ["</ul>", "<h2>Progress</h2>", f"<p>{e(_progress_line(run))}</p>",
              "<h2>Weights</h2>"]
    if is_many(run.names, run.free):
        parts.append(f"<p>{len(run.names)} weights, {len(run.free)} tuned.</p>")
        for heading, text, header, rows in many_weight_blocks(run, rec):
            parts += [f"<h3>{e(heading)}</h3><p>{e(text)}</p><table><tr>"
                      + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
            parts += ["<tr>" + "".join(f"<td>{e(_cell(v))}</td>" for v in row) + "</tr>"
                      for row in rows]
            parts.append("</table>")
    else:
        names, table = weight_table(run)
        parts += [f"<p>{e(_table_intro(run))}</p>",
                  "<table><tr><th></th>" + "".join(f"<th>{e(n)}</th>" for n in names) + "</tr>"]
        for label in table:
            parts.append(f"<tr><td>{e(label)}</td>"
                         + "".join(f"<td>{_fmt(v)}</td>" for v in table[label]) + "</tr>")
        parts.append("<tr><td>recommended</td>"
                     + "".join(f"<td>{rec.weights[i]:g}</td>" for i in run.free)
                     + "</tr></table>")
    sentence, weights = _recommended_text(run, rec)
    weights_html = re.sub(r"`([^`]*)`", lambda m: f"<code>{m.group(1)}</code>", e(weights))
    parts += ["<h2>Recommended weights</h2>", f"<p>{e(sentence)}</p>", f"<p>{weights_html}</p>",
              "<h2>Verification</h2><ul>"]
    parts += [f"<li>{e(line)}</li>" for line in _verify_lines(run)]
    parts += ["</ul>", "<h2>Plots</h2>"]
    for name, fig in figures.items():
        parts.append(f"<h3>{e(name)}</h3><img alt=\"{e(name)}\" "
                     f"src=\"data:image/png;base64,{_png_b64(fig)}\">")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(run: str | Path | Store | RunData, *, out_dir: str | Path = "reports",
                 runs_dir: str | Path = "populations", rule: str = "mean",
                 x: str = "generations", squares=None, progress=None) -> ReportFiles:
    """Write report.md, report.html and the plots under ``out_dir/<run-id>/`` (``squares``:
    the weights of the 'squares' plot, see :func:`~evotune.reporting.manyplots.choose_squares`;
    ``progress(done, total)``: the plots' files, as :func:`write_plots`)."""
    data = run if isinstance(run, RunData) else load_run(run, out_dir=runs_dir)
    rec = recommend(data, rule)
    plots = write_plots([data], x=x, out_dir=out_dir, squares=squares, progress=progress,
                        strength=True)
    md_path, html_path = plots.out_dir / "report.md", plots.out_dir / "report.html"
    key = plots.out_dir / REPORT_KEY
    stamp = json.dumps({"plots": (plots.out_dir / PLOTS_KEY).read_text(), "rule": rule})
    if not plots.figures and md_path.is_file() and html_path.is_file() and key.is_file() \
            and key.read_text() == stamp:
        log.info("%s and %s are written from this run already", md_path, html_path)
        return ReportFiles(markdown=md_path, html=html_path, plots=plots)
    images = {name: png.name for name, (png, _svg) in plots.paths.items()}
    atomic_write_text(md_path, markdown_report(data, rec, images=images))
    pngs = {name: png for name, (png, _svg) in plots.paths.items()}
    atomic_write_text(html_path, html_report(data, rec, figures=pngs))
    atomic_write_text(key, stamp)
    log.info("wrote %s and %s", md_path, html_path)
    return ReportFiles(markdown=md_path, html=html_path, plots=plots)
