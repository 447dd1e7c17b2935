"""The static pictures fixed (issue 58, item 6): integer generation ticks; SPSA and CMA-ES draw
what they have (theta, its step, sigma), not population deviations; 'moved most' means moved
most; a one-generation run draws visible points; the report gains the strength-over-games
curve; ``plot`` and ``report`` do not redraw what is drawn and unchanged."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from evotune.reporting.manyplots import choose_squares
from evotune.reporting.plots import build_figures, write_plots
from evotune.reporting.report import write_report
from evotune.runs.rundata import load_run


def _ticks(fig) -> list[float]:
    out = []
    for ax in fig.axes:
        if ax.get_xlabel() in ("generation", "games played"):
            lo, hi = ax.get_xlim()
            out += [t for t in ax.get_xticks() if lo <= t <= hi]
    return out


def test_generation_ticks_are_integers(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path, "two", generations=2)
    figs = build_figures([load_run(store)])
    for name, fig in figs.items():
        ticks = _ticks(fig)
        assert ticks, name
        assert all(float(t).is_integer() for t in ticks), (name, ticks)


def test_spsa_and_cmaes_draw_their_vector_and_schedule_not_deviations(tmp_path, make_fake_run):
    spsa = load_run(make_fake_run(tmp_path, "spsa", strategy="spsa", generations=3))
    figs = build_figures([spsa])
    assert "deviation" not in figs
    assert figs["convergence"]._suptitle.get_text() == "SPSA's theta"
    assert not any(ax.collections for ax in figs["convergence"].axes)  # no +-std band
    titles = {ax.get_title() for ax in figs["strategy"].axes}
    assert {"SPSA's perturbation c_k (mean)", "step: how far theta moved in the generation"} \
        <= titles
    ck = next(ax for ax in figs["strategy"].axes if ax.get_title().startswith("SPSA's pert"))
    assert np.allclose(ck.get_lines()[0].get_ydata()[1:], spsa.stats["c_k"][1:])
    de = build_figures([load_run(make_fake_run(tmp_path, "de", generations=3))])
    assert "deviation" in de and de["convergence"]._suptitle.get_text().startswith("population")
    many = build_figures([load_run(make_fake_run(tmp_path, "big-spsa", strategy="spsa",
                                                 generations=2, engine="extended"))])
    assert "deviation" not in many
    assert "SPSA's theta" in many["convergence"]._suptitle.get_text()


def test_cmaes_draws_sigma(tmp_path, make_fake_run):
    pytest.importorskip("cma", reason="pycma (the cma extra) is not installed")
    run = load_run(make_fake_run(tmp_path, "cma", strategy="cmaes", generations=3))
    figs = build_figures([run])
    assert "deviation" not in figs
    assert "CMA-ES's step size sigma" in {ax.get_title() for ax in figs["strategy"].axes}


def test_moved_most_means_moved_most(tmp_path, make_fake_run):
    run = load_run(make_fake_run(tmp_path, "pst", strategy="spsa", generations=2,
                                 engine="extended"))
    chosen = choose_squares([run])
    moved = np.abs(run.mean[-1] - run.mean[0])
    got = [moved[run.names.index(n)] for n in chosen]
    assert got and all(v > 0 for v in got)
    assert got == sorted(got, reverse=True)
    squares = [i for i in run.free if run.names[i].startswith("pst.")]
    others = sorted((moved[i] for i in squares if run.names[i] not in chosen), reverse=True)
    assert not others or others[0] <= got[-1]
    # a run in which no square moved draws no 'moved most' figure at all
    still = run.__class__(**{**run.__dict__, "mean": np.repeat(run.mean[:1], len(run.mean), 0)})
    assert choose_squares([still]) == ()
    assert "squares" not in build_figures([still])


def test_a_one_generation_run_draws_visible_points(tmp_path, make_fake_run):
    run = load_run(make_fake_run(tmp_path, "one", generations=1))
    figs = build_figures([run])
    for name in ("convergence", "deviation", "strategy"):
        for ax in figs[name].axes:
            for line in ax.get_lines():
                ys = np.asarray(line.get_ydata(), dtype=float)
                if 0 < np.isfinite(ys).sum() <= 3 and line.get_linestyle() != "--":
                    assert line.get_marker() not in ("None", None, ""), (name, ax.get_title())


def test_report_has_the_strength_curve(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path / "runs", "r", generations=3)
    files = write_report(store, out_dir=tmp_path / "reports", runs_dir=tmp_path / "runs")
    assert "strength" in files.plots.paths
    assert "![strength](strength.png)" in files.markdown.read_text()
    fig = files.plots.figures["strength"]
    line = fig.axes[0].get_lines()[0]
    assert len(line.get_xdata()) == 4  # generations 0..3, by games
    assert list(line.get_xdata()) == [0, 24, 48, 72]


def test_plot_and_report_do_not_redraw_what_is_unchanged(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path / "runs", "r", generations=2)
    store.unlock()
    out = tmp_path / "reports"
    first = write_plots([load_run(store)], out_dir=out)
    assert first.figures
    stamps = {p: os.stat(p).st_mtime_ns for pair in first.paths.values() for p in pair}
    again = write_plots([load_run(store)], out_dir=out)
    assert again.figures == {} and again.paths == first.paths
    assert {n: os.stat(n).st_mtime_ns for n in stamps} == stamps
    report = write_report(store, out_dir=out, runs_dir=tmp_path / "runs")
    html = report.html.stat().st_mtime_ns
    assert write_report(store, out_dir=out, runs_dir=tmp_path / "runs").html.stat(
    ).st_mtime_ns == html
    # a changed input is drawn again: another x axis, or a new verify.json
    assert write_plots([load_run(store)], out_dir=out, x="games").figures
    (store.root / "verify.json").write_text(json.dumps({"matches": []}))
    assert write_plots([load_run(store)], out_dir=out, x="games").figures
    assert write_report(store, out_dir=out, runs_dir=tmp_path / "runs").html.stat(
    ).st_mtime_ns != html
