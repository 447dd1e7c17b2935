"""A games run that starts from earlier weights: ``evotune run --init-from RUN`` (a Texel fit or
a tuning run) and ``--engine SPEC:WEIGHTS`` (a weights file). The weights become the spec's
reference values and every strategy's start; the manifest records the source and the weights'
checksum; the run resumes from its own copy; a source whose weights do not fit is one line."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.reporting.export import export_run
from evotune.reporting.report import config_items
from evotune.runs.rundata import load_run, run_spec
from evotune.runs.runkind import recommend
from evotune.runs.store import Store
from evotune.strategies import make_strategy

ROOT = Path(__file__).resolve().parents[1]
FIT = ROOT / "tests" / "data" / "store-v1" / "fit"
FIT_WEIGHTS = [100.0, 199.0, 427.0, 478.0, 927.0, 0.0]  # its texel.json weights_rounded
NAMES = ["pawn", "knight", "bishop", "rook", "queen", "mobility"]
QUICK = ["--games", "2", "--depth", "1", "--workers", "1", "--seed", "5"]


@pytest.fixture
def runs(tmp_path) -> Path:
    """A runs folder holding the format-1 shannon fit 'fit' (its weights: FIT_WEIGHTS)."""
    folder = tmp_path / "pops"
    folder.mkdir()
    shutil.copytree(FIT, folder / "fit")
    return folder


def _run(runs: Path, *args: str):
    res = CliRunner().invoke(cli, ["run", *args, *QUICK, "--runs-dir", str(runs)])
    assert res.exit_code == 0, res.output
    return res


def _refused(capsys, runs: Path, *args: str) -> str:
    before = sorted(p.name for p in runs.iterdir())
    with pytest.raises(SystemExit) as exc:
        main(["run", *args, *QUICK, "--runs-dir", str(runs)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("evotune: error: ") and err.count("\n") == 1, err
    assert sorted(p.name for p in runs.iterdir()) == before  # nothing written
    return err


def test_a_run_from_a_fit_starts_at_its_weights_and_records_them(runs):
    res = _run(runs, "--init-from", "fit", "--strategy", "spsa", "--param", "batch=2",
               "--generations", "1", "--run-id", "s")  # N = 2 pairs
    assert "starting from run fit: Texel fit after epoch 2, rounded" in res.output
    store = Store(runs / "s")
    gens = store.generations()
    assert list(gens[0].population[0]) == FIT_WEIGHTS  # SPSA's theta starts at the fit
    manifest = store.manifest()
    assert manifest.config.engine == "shannon"  # the fit's engine, --engine not given
    assert manifest.config.params_dict() == {"init": "reference", "finetune": True,
                                             "batch": 2, "budget": 4}
    start = manifest.init_from
    assert (start.kind, start.source, start.strategy, start.generation, start.engine) == \
        ("fit", "fit", "texel", 2, "shannon")
    assert start.path == str((runs / "fit").resolve())
    values = json.dumps(dict(zip(NAMES, FIT_WEIGHTS)), separators=(",", ":"))
    assert start.weights_sha256 == hashlib.sha256(values.encode()).hexdigest()
    copy = json.loads((runs / "s" / "engine-spec.json").read_text())
    assert copy["start_values"] == values and copy["start_source"] == "run fit"
    run = load_run(store)
    assert list(run.reference) == FIT_WEIGHTS  # verify's "reference" is the start
    assert ("start", f"Texel fit fit: Texel fit after epoch 2, rounded (weights sha256 "
            f"{start.weights_sha256[:12]})") in config_items(run)  # the report says it
    assert json.loads((runs / "s" / "manifest.json").read_text())["init_from"]["kind"] == "fit"


def test_the_start_is_part_of_the_identity_and_a_resume_equals_the_whole_run(
        runs, stored_generations, stored_games):
    _run(runs, "--init-from", "fit", "--strategy", "de", "--np", "4", "--generations", "2",
         "--run-id", "whole")
    _run(runs, "--init-from", "fit", "--strategy", "de", "--np", "4", "--generations", "1",
         "--run-id", "part")
    res = CliRunner().invoke(cli, ["resume", "part", "--generations", "2", "--runs-dir",
                                   str(runs)])
    assert res.exit_code == 0, res.output
    assert stored_generations(runs / "part") == stored_generations(runs / "whole")
    assert stored_games(runs / "part") == stored_games(runs / "whole")
    first = stored_generations(runs / "whole")[0]
    assert first["population"][0] == FIT_WEIGHTS  # DE: the start plus draws around it
    # a fine-tuning: within each weight's own scale max(|v| / 10, width / 200), not 0.1 x width
    assert Store(runs / "whole").manifest().config.params_dict()["finetune"] is True
    assert all(abs(v - s) <= max(abs(s) / 10, 5) for row in first["population"]
               for v, s in zip(row, FIT_WEIGHTS))
    assert max(abs(v - s) for row in first["population"] for v, s in zip(row, FIT_WEIGHTS)) > 3
    _run(runs, "--strategy", "de", "--np", "4", "--generations", "1", "--run-id", "plain",
         "--param", "init=reference")
    ident = Store(runs / "whole").manifest().identity
    assert ident["engine_spec"] != Store(runs / "plain").manifest().identity["engine_spec"]
    # the start lives in the run's copy of its spec: changing it there is a changed identity
    copy = runs / "part" / "engine-spec.json"
    doc = json.loads(copy.read_text())
    doc["start_values"] = doc["start_values"].replace('"knight":199.0', '"knight":198.0')
    copy.write_text(json.dumps(doc))
    res = CliRunner().invoke(cli, ["resume", "part", "--generations", "3", "--runs-dir",
                                   str(runs)])
    assert res.exit_code != 0 and "the engine spec" in str(res.exception)


def test_a_games_run_as_the_source_gives_its_recommended_weights(runs, make_fake_run):
    source = make_fake_run(runs, "evolved", generations=2)
    expected = list(recommend(load_run(source)).weights)
    assert expected != [100.0, 300.0, 330.0, 500.0, 900.0, 10.0]
    _run(runs, "--init-from", str(source.root), "--strategy", "spsa", "--param", "batch=2",
         "--generations", "1", "--run-id", "next")
    store = Store(runs / "next")
    assert list(store.generations()[0].population[0]) == expected
    start = store.manifest().init_from
    assert (start.kind, start.source, start.strategy) == ("games", "evolved", "de")
    assert "population mean of generation 2" in start.description


def test_engine_spec_with_a_weights_file_starts_there(runs, tmp_path):
    w = tmp_path / "w.json"
    w.write_text('{"knight": 310, "bishop": 320, "rook": 510, "queen": 950, "mobility": 8}')
    _run(runs, "--engine", f"shannon:{w}", "--strategy", "de", "--np", "4", "--generations",
         "1", "--run-id", "fromfile")
    store = Store(runs / "fromfile")
    assert list(store.generations()[0].population[0]) == [100, 310, 320, 510, 950, 8]
    manifest = store.manifest()
    assert manifest.config.engine == "shannon"
    assert (manifest.init_from.kind, manifest.init_from.source) == ("weights", str(w))


def test_a_source_that_does_not_fit_is_one_line_and_nothing_is_written(runs, tmp_path,
                                                                         capsys):
    err = _refused(capsys, runs, "--init-from", "fit", "--engine", "pst", "--generations", "1")
    assert "run fit has the 6 weights of engine 'shannon', --engine pst has 778" in err
    err = _refused(capsys, runs, "--init-from", "nope", "--generations", "1")
    assert "no run 'nope'" in err
    narrow = tmp_path / "narrow.toml"
    narrow.write_text((ROOT / "evotune" / "engines" / "shannon.toml").read_text()
                      .replace('name = "knight"\nreference = 300\nlower = 0\nupper = 1000',
                               'name = "knight"\nreference = 300\nlower = 0\nupper = 150'))
    assert "upper = 150" in narrow.read_text()
    err = _refused(capsys, runs, "--init-from", "fit", "--engine", str(narrow),
                   "--generations", "1")
    assert "run fit: 1 weight(s) outside the bounds of engine spec" in err and "knight" in err
    w = tmp_path / "w.json"
    w.write_text(json.dumps(dict(zip(NAMES[1:], FIT_WEIGHTS[1:]))))
    err = _refused(capsys, runs, "--init-from", "fit", "--engine", f"shannon:{w}",
                   "--generations", "1")
    assert "give the start once" in err


def test_spsa_from_a_fit_takes_its_ends_from_the_fitted_weights(runs):
    """SPSA started from a fit is a fine-tuning: c_end = |v| / 10 of each fitted weight within
    1/200 and 1/20 of its width [0, 1000], r_end 0.002; the export writes those ends."""
    _run(runs, "--init-from", "fit", "--strategy", "spsa", "--param", "batch=2",
         "--generations", "1", "--run-id", "s")
    data = load_run(runs / "s")
    spsa = make_strategy("spsa", run_spec(data).space(), params=data.config.strategy_params(),
                         seed=data.config.seed)
    # knight 199 -> 19.9, bishop 427 -> 42.7, rook 478 -> 47.8, queen 927 -> 50 (the width
    # rule), mobility 0 -> 5 (the floor)
    np.testing.assert_allclose(spsa.schedule.c_k(spsa.schedule.N), [19.9, 42.7, 47.8, 50, 5])
    np.testing.assert_allclose(spsa.schedule.R_k(spsa.schedule.N), [0.002] * 5)
    text = export_run(runs / "s", fmt="spsa").text.splitlines()
    assert [ln.split(", ")[0] for ln in text] == ["KnightValue", "BishopValue", "RookValue",
                                                  "QueenValue", "MobilityWeight"]
    assert [ln.split(", ")[-2:] for ln in text] == [["19.9", "0.002"], ["42.7", "0.002"],
                                                    ["47.8", "0.002"], ["50", "0.002"],
                                                    ["5", "0.002"]]
    # a --param given wins: finetune=false keeps the width rule of a run from scratch
    _run(runs, "--init-from", "fit", "--strategy", "spsa", "--param", "batch=2",
         "--param", "finetune=false", "--generations", "1", "--run-id", "wide")
    assert Store(runs / "wide").manifest().config.params_dict()["finetune"] is False
    assert [ln.split(", ")[-2:] for ln in export_run(runs / "wide", fmt="spsa").text
            .splitlines()] == [["50", "0.02"]] * 5
