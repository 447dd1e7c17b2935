"""Convergence, deviation and strategy plots of stored runs: panels and data equal to the store."""
from __future__ import annotations

import numpy as np
import pytest

from evotune.errors import ConfigError
from evotune.reporting.plots import (
    build_figures,
    convergence_figure,
    deviation_figure,
    strategy_figure,
    write_plots,
)
from evotune.runs.rundata import load_run


def test_convergence_panels_hold_the_stored_means_and_reference(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path, generations=3)
    run = load_run(store)
    fig = convergence_figure([run])
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["knight", "bishop", "rook", "queen", "mobility"]
    means = np.array([store.read_generation(g).mean for g in range(4)])
    stds = np.array([store.read_generation(g).std for g in range(4)])
    for k, ax in enumerate(axes):
        i = k + 1  # pawn (index 0) is fixed: no panel
        mean_line, ref_line = ax.lines
        assert mean_line.get_xdata().tolist() == [0, 1, 2, 3]
        np.testing.assert_array_equal(mean_line.get_ydata(), means[:, i])
        assert ref_line.get_linestyle() == "--"
        assert ref_line.get_ydata()[0] == [300, 330, 500, 900, 10][k]
        band = ax.collections[0].get_paths()[0].vertices[:, 1]  # the +-1 std band
        assert band.max() == pytest.approx((means[:, i] + stds[:, i]).max())
        assert band.min() == pytest.approx((means[:, i] - stds[:, i]).min())


def test_deviation_and_games_axis(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path, generations=2)
    run = load_run(store)
    fig = deviation_figure([run], x="games")
    line = fig.axes[2].lines[0]  # rook
    assert line.get_xdata().tolist() == [0, 24, 48]
    np.testing.assert_array_equal(line.get_ydata(),
                                  [store.read_generation(g).std[3] for g in range(3)])
    with pytest.raises(ConfigError, match="unknown x axis 'time'"):
        deviation_figure([run], x="time")


def test_strategy_panels_per_strategy(tmp_path, make_fake_run):
    de = load_run(make_fake_run(tmp_path, "de1", generations=2))
    ea = load_run(make_fake_run(tmp_path, "ea1", strategy="ea", generations=2))
    titles = [ax.get_title() for ax in strategy_figure([de]).axes]
    # plain DE's F and CR never change, so they get no panel; jDE's adapt and get theirs
    assert titles == ["replacement rate", "diversity (mean std of free weights)"]
    jde = load_run(make_fake_run(tmp_path, "jde1", strategy="jde", generations=6))
    jde_titles = [ax.get_title() for ax in strategy_figure([jde]).axes]
    assert "F (mean)" in jde_titles and "CR (mean)" in jde_titles
    assert "F (mean)" in [ax.get_title() for ax in strategy_figure([de, jde]).axes]
    rate = strategy_figure([de]).axes[0].lines[0].get_ydata()
    assert np.isnan(rate[0]) and rate[1:].tolist() == de.stats["replacement_rate"][1:].tolist()
    ea_fig = strategy_figure([ea])
    sigma_ax = [ax for ax in ea_fig.axes if ax.get_title().startswith("step size")][0]
    assert len(sigma_ax.lines) == 5  # one per free weight
    np.testing.assert_array_equal(sigma_ax.lines[3].get_ydata()[1:],
                                  [ea.stats["sigma_mean"][g][3] for g in (1, 2)])
    only_initial = load_run(make_fake_run(tmp_path, "g0", generations=0))
    assert strategy_figure([only_initial]) is None
    assert set(build_figures([only_initial])) == {"convergence", "deviation"}


def test_overlay_of_two_runs_writes_a_compare_folder(tmp_path, make_fake_run):
    de = load_run(make_fake_run(tmp_path, "de1", generations=2))
    ea = load_run(make_fake_run(tmp_path, "ea1", strategy="ea", generations=1))
    out = write_plots([de, ea], out_dir=tmp_path / "reports")
    assert out.out_dir == tmp_path / "reports" / "compare-de1-ea1"
    for name in ("convergence", "deviation", "strategy"):
        png, svg = out.paths[name]
        assert png.read_bytes()[:4] == b"\x89PNG" and b"<svg" in svg.read_bytes()[:500]
    ax = out.figures["convergence"].axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["de1", "ea1", "reference 300"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), ea.mean[:, 1])
