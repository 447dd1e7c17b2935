"""Plots and reports of runs with many weights (810, named by the feature-name contract):
heatmaps hold the stored tables, scalar panels hold the stored means, never more than a few
lines per axis, chosen squares, and the report's tables of largest changes."""
from __future__ import annotations

import re

import numpy as np
import pytest

from evotune.cli import main
from evotune.errors import ConfigError
from evotune.reporting.manyplots import (
    choose_squares,
    heatmap_figure,
    scalar_convergence_figure,
    squares_figure,
)
from evotune.reporting.plots import build_figures, strategy_figure
from evotune.reporting.report import html_report, markdown_report
from evotune.reporting.tables import MAX_LINES, pst_layout, scalar_groups
from evotune.runs.rundata import load_run
from evotune.runs.runkind import recommend


@pytest.fixture(scope="module")
def runs(tmp_path_factory, make_fake_run, write_pst_spec):
    root = tmp_path_factory.mktemp("many")
    spec = write_pst_spec(root, extra=True)
    kw = dict(engine=str(spec), init_low=-60, init_high=60, population=6)
    make_fake_run(root, "de", generations=3, **kw)
    make_fake_run(root, "ea", strategy="ea", generations=2, **kw)
    return root, load_run("de", out_dir=root), load_run("ea", out_dir=root)


def _ax(fig, title):
    found = [ax for ax in fig.axes if ax.get_title() == title]
    assert len(found) == 1, [ax.get_title() for ax in fig.axes]
    return found[0]


def test_heatmaps_hold_the_stored_tables(runs):
    root, de, _ = runs
    fig = heatmap_figure([de], "mg")
    e4 = de.names.index("pst.mg.knight.e4")
    for title, values in (("initial mean", de.mean[0]), ("final mean (gen 3)", de.mean[-1]),
                          ("reference", de.reference),
                          ("change (final - initial)", de.mean[-1] - de.mean[0])):
        data = np.asarray(_ax(fig, f"knight: {title}").images[0].get_array())
        assert data.shape == (8, 8)
        assert data[3, 4] == values[e4]  # e4: rank 4 (row 3), file e (column 4)
        expected = [values[de.names.index(f"pst.mg.knight.{f}{r}")]
                    for r in range(1, 9) for f in "abcdefgh"]
        np.testing.assert_array_equal(data.reshape(-1), expected)
    # the stored final means of gen 3, read straight from the generation file
    stored = root / "de" / "generations" / "gen-0003.json"
    import json

    mean = json.loads(stored.read_text())["mean"]
    data = np.asarray(_ax(fig, "king: final mean (gen 3)").images[0].get_array())
    assert data[7, 7] == mean[de.names.index("pst.mg.king.h8")]
    # initial, final and reference share one colour scale; the change has its own
    clims = [_ax(fig, f"pawn: {t}").images[0].get_clim()
             for t in ("initial mean", "final mean (gen 3)", "reference")]
    assert clims[0] == clims[1] == clims[2] and clims[0][0] == -clims[0][1]
    assert len(fig.axes) == 6 * 4 + 12  # 24 heatmaps, a colour bar per row for each scale


def test_scalar_panels_hold_the_stored_means_with_few_lines(runs):
    _, de, _ = runs
    fig = scalar_convergence_figure([de])
    groups = scalar_groups(de.names, de.free)
    assert [ax.get_title() for ax in fig.axes] == [t for t, _ in groups]
    titles = [t for t, _ in groups]
    assert titles[:3] == ["material.mg", "material.eg", "bishop_pair"]
    assert titles.index("passed.mg") < titles.index("passed.eg")
    ax = _ax(fig, "material.mg")  # pawn mg is fixed: knight..queen
    assert [ln.get_label() for ln in ax.lines[:4]] == ["knight", "bishop", "rook", "queen"]
    np.testing.assert_array_equal(ax.lines[2].get_ydata(),
                                  de.mean[:, de.names.index("material.mg.rook")])
    assert ax.lines[6].get_ydata()[0] == 500  # rook's reference (dotted), after the 4 means
    for f in build_figures([de]).values():
        for a in f.axes:
            assert len(a.lines) <= 2 * MAX_LINES  # means and references, never hundreds


def test_default_and_chosen_squares(runs):
    _, de, _ = runs
    moved = np.abs(de.mean[-1] - de.mean[0])
    cells = [i for i in de.free if de.names[i].startswith("pst.")]
    best = sorted(cells, key=lambda i: (-moved[i], de.names[i]))[:6]
    assert choose_squares([de]) == tuple(de.names[i] for i in best)
    assert choose_squares([de], ["knight.e4", "eg.king.g1", "tempo.mg"]) == (
        "pst.mg.knight.e4", "pst.eg.knight.e4", "pst.eg.king.g1", "tempo.mg")
    fig = squares_figure([de], ["pst.eg.king.g1"])
    np.testing.assert_array_equal(fig.axes[0].lines[0].get_ydata(),
                                  de.mean[:, de.names.index("pst.eg.king.g1")])
    with pytest.raises(ConfigError, match="'knight.i9' is not a weight of the run"):
        choose_squares([de], ["knight.i9"])


def test_figures_of_a_many_weight_run_and_a_comparison(runs):
    _, de, ea = runs
    assert set(build_figures([de])) == {"convergence", "squares", "deviation", "pst-mg",
                                        "pst-eg", "strategy"}
    fig = strategy_figure([ea])
    sigma = _ax(fig, "step size sigma (mean)")
    assert len(sigma.lines) == 1  # the median of 809 step sizes, not 809 lines
    np.testing.assert_array_equal(sigma.lines[0].get_ydata()[1:],
                                  np.median(ea.stats["sigma_mean"][1:], axis=1))
    both = heatmap_figure([de, ea], "eg")
    data = np.asarray(_ax(both, "rook: ea final").images[0].get_array())
    assert data[0, 0] == ea.mean[-1][ea.names.index("pst.eg.rook.a1")]
    assert len(pst_layout(de.names)) == 12


def test_report_of_many_weights_lists_the_largest_changes(runs, tmp_path):
    root, de, _ = runs
    rec = recommend(de)
    md = markdown_report(de, rec)
    assert max(len(line) for line in md.splitlines()) < 300  # no 810-column table
    block = md.split("### Largest changes")[1].split("###")[0]
    rows = [r for r in block.splitlines() if r.startswith("| pst.") or r.startswith("| mat")
            or re.match(r"\| [a-z_]+\.", r)]
    assert len(rows) == 20
    change = de.mean[-1] - de.mean[0]
    top = max(de.free, key=lambda i: (abs(change[i]), -i))
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[0] == de.names[top]
    assert cells[3:5] == [f"{de.mean[-1, top]:.1f}", f"{change[top]:.1f}"]
    assert "| pst.eg.king | 64 |" in md and "| tempo.eg | 10.0 |" in md
    assert f"824 weights; write them with `evotune export {de.run_id} --format json`" in md
    html = html_report(de, rec, figures={})
    assert "<h3>Largest changes</h3>" in html and f"<td>{de.names[top]}</td>" in html
    assert "<code>evotune export de --format json</code>" in html


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_cli_report_with_squares_and_a_bad_square(runs, tmp_path, capsys):
    root, _, _ = runs
    main(["report", "de", "--runs-dir", str(root), "--reports", str(tmp_path), "--squares",
          "pst.mg.queen.d1,knight.e4"])
    folder = tmp_path / "de"
    for name in ("convergence", "squares", "deviation", "pst-mg", "pst-eg", "strategy",
                 "strength"):
        assert (folder / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    html = (folder / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 7  # the six plots and the strength curve
    assert "![squares](squares.png)" in (folder / "report.md").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["report", "de", "--runs-dir", str(root), "--reports", str(tmp_path / "r"),
              "--squares", "queen.z1"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "'queen.z1' is not a weight" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_progress_lines_list_six_weights_but_not_eight_hundred(runs):
    from evotune.reporting.tables import brief

    six = ("pawn", "knight", "bishop", "rook", "queen", "mobility")
    assert brief(six, (100, 300.4, 330, 500, 900, 9.6)) == \
        "pawn=100 knight=300 bishop=330 rook=500 queen=900 mobility=10"
    _, de, _ = runs
    line = brief(de.names, de.mean[-1], lambda n, v: f"{n} {v:g}", sep=", ")
    assert line.startswith(f"material.mg.pawn 100, material.mg.knight {de.mean[-1][1]:g}, ")
    assert line.count(", ") == 8 and line.endswith(f"... ({len(de.names)} weights; evotune "
                                                    "report / export show them all)")
