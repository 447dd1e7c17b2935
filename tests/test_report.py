"""Reading runs into arrays, recommended weights, and the report page (report.md/report.html).

The runs are made by the ``make_fake_run`` fixture (tests/conftest.py): a run directory built the
way the tuning loop stores one, with a real strategy driven by synthetic match outcomes.
"""
from __future__ import annotations

import base64
import dataclasses
import re

import numpy as np
import pytest

from evotune.errors import ConfigError, StoreError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.plan import plan_run
from evotune.runs.store import Store

# ---- data ---------------------------------------------------------------------------------------

def test_load_run_arrays_equal_the_stored_generations(tmp_path, make_fake_run):
    from evotune.runs.rundata import load_run

    store = make_fake_run(tmp_path, generations=3)
    run = load_run("fake", out_dir=tmp_path)
    gens = [store.read_generation(g) for g in range(4)]
    assert run.generations.tolist() == [0, 1, 2, 3]
    assert run.games.tolist() == [g.games_total for g in gens] == [0, 24, 48, 72]
    np.testing.assert_array_equal(run.mean, [g.mean for g in gens])
    np.testing.assert_array_equal(run.std, [g.std for g in gens])
    assert run.free_names == ("knight", "bishop", "rook", "queen", "mobility")
    assert run.reference.tolist() == [100, 300, 330, 500, 900, 10]
    rate = run.stats["replacement_rate"]
    assert np.isnan(rate[0])
    assert rate[1:].tolist() == [g.stats["replacement_rate"] for g in gens[1:]]
    assert run.finished


def test_load_run_bad_input(tmp_path):
    from evotune.runs.rundata import load_run

    with pytest.raises(StoreError, match="no run 'nope'"):
        load_run("nope", out_dir=tmp_path)
    cfg = build_run_config(depth=1)
    Store.create(tmp_path, "empty", config=cfg, identity=plan_run(cfg).identity)
    with pytest.raises(StoreError, match="run empty has no generation yet"):
        load_run("empty", out_dir=tmp_path)


def test_load_run_ignores_a_generation_written_after_the_last_state(tmp_path, make_fake_run):
    """A crash between the generation file and the state: the report shows the stored state."""
    from evotune.runs.rundata import load_run

    store = make_fake_run(tmp_path, generations=2)
    state = store.read_state()
    store.write_state(dataclasses.replace(state, generation=1,
                                          games=store.read_generation(1).games_total))
    assert load_run(store).last == 1


def test_recommend_mean_and_better_half(tmp_path, make_fake_run):
    from evotune.runs.rundata import load_run
    from evotune.runs.runkind import recommend

    store = make_fake_run(tmp_path, generations=3, population=6)
    run = load_run(store)
    pop = np.array(store.read_generation(3).population)
    mean = recommend(run, "mean")
    assert mean.weights == tuple(np.rint(pop.mean(axis=0)).tolist())
    assert mean.weights[0] == 100 and "population mean of generation 3" in mean.description
    half = recommend(run, "better-half")
    # DE ranks by points of each individual's record: recompute it from the stored state
    record = np.array(store.read_state().strategy["record"], dtype=float)
    score = (record[:, 0] + 1) / (2 * record[:, 1] + 2)
    best = np.lexsort((np.arange(6), -score))[:3]
    assert half.weights == tuple(np.rint(pop[best].mean(axis=0)).tolist())
    assert "better half (3 of 6)" in half.description
    with pytest.raises(ConfigError, match="unknown recommendation rule 'best'"):
        recommend(run, "best")


def test_recommend_mean_falls_back_to_the_stored_population(tmp_path, make_fake_run):
    from evotune.runs.rundata import load_run
    from evotune.runs.runkind import recommend

    store = make_fake_run(tmp_path, generations=1)
    state = store.read_state()
    store.write_state(dataclasses.replace(state, strategy={"strategy": "de"}))  # unrestorable
    run = load_run(store)
    pop = np.array(store.read_generation(1).population)
    assert recommend(run).weights == tuple(np.rint(pop.mean(axis=0)).tolist())
    with pytest.raises(StoreError, match="use --recommend mean"):
        recommend(run, "better-half")


# ---- report -------------------------------------------------------------------------------------

def _md_table(md: str) -> dict:
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 1 and cells[0] in ("reference", "initial mean", "initial std",
                                           "final mean", "final std", "recommended"):
            rows[cells[0]] = [float(c) for c in cells[1:]]
    return rows


def test_report_table_numbers_equal_the_stored_statistics(tmp_path, make_fake_run):
    from evotune.reporting.report import write_report

    store = make_fake_run(tmp_path, generations=3)
    store.write_document("verify", {"matches": [{
        "label": "recommended vs reference", "games": 20, "wins": 7, "draws": 6, "losses": 7,
        "score": 0.5, "elo": 0.0, "elo_error": 99.5, "los": 0.5,
        "pentanomial": [1, 2, 4, 2, 1], "sprt": None}], "openings": "8moves_v3.pgn.zip",
        "depth": 1, "seed": 1, "recommend": "mean", "weights": [100, 1, 2, 3, 4, 5]})
    out = write_report(store, out_dir=tmp_path / "reports")
    md = out.markdown.read_text()
    g0, g3 = store.read_generation(0), store.read_generation(3)
    rows = _md_table(md)
    free = slice(1, 6)
    np.testing.assert_allclose(rows["initial mean"], np.array(g0.mean)[free], atol=0.05)
    np.testing.assert_allclose(rows["initial std"], np.array(g0.std)[free], atol=0.05)
    np.testing.assert_allclose(rows["final mean"], np.array(g3.mean)[free], atol=0.05)
    np.testing.assert_allclose(rows["final std"], np.array(g3.std)[free], atol=0.05)
    assert rows["reference"] == [300, 330, 500, 900, 10]
    assert "72 games" in md and "generation 3" in md
    assert "population mean of generation 3" in md
    assert "recommended vs reference" in md and "+0.0 +- 99.5" in md
    html = out.html.read_text()
    assert html.count("data:image/png;base64,") >= 3  # convergence, deviation, strategy
    # the embedded images decode to PNG files: the page is self-contained
    for b64 in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html):
        assert base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<img src=\"reports" not in html and "recommended vs reference" in html
    assert out.markdown.parent == tmp_path / "reports" / "fake"


def test_report_of_a_run_with_only_the_initial_population(tmp_path, make_fake_run):
    from evotune.reporting.report import write_report

    store = make_fake_run(tmp_path, generations=0)
    out = write_report(store, out_dir=tmp_path / "reports")
    md = out.markdown.read_text()
    assert "generation 0" in md and "no verification yet" in md


def test_better_half_of_an_ea_run_is_the_first_half_of_its_ranked_survivors(tmp_path,
                                                                             make_fake_run):
    from evotune.runs.rundata import load_run
    from evotune.runs.runkind import recommend

    store = make_fake_run(tmp_path, "ea", strategy="ea", generations=2, population=6)
    pop = np.array(store.read_generation(2).population)  # survivors, best first
    half = recommend(load_run(store), "better-half")
    assert half.weights == tuple(np.rint(pop[:3].mean(axis=0)).tolist())


def test_report_says_when_the_verification_is_older_than_the_run(tmp_path, make_fake_run):
    from evotune.reporting.report import markdown_report
    from evotune.runs.rundata import load_run
    from evotune.runs.runkind import recommend

    store = make_fake_run(tmp_path, generations=2)
    store.write_document("verify", {"generation": 1, "recommend": "mean", "weights": [],
                                    "depth": 1, "seed": 1, "openings": "x", "matches": []})
    run = load_run(store)
    md = markdown_report(run, recommend(run))
    assert "verified at generation 1" in md and "the run is now at generation 2" in md
