"""``evotune runs`` and ``evotune status`` (issue 37, item 4): a header and dates in the runs table,
"generation 7/-" in both for runs with no generation limit, each kind showing what it has, and
big runs summarised (largest changes) unless --all."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evotune.cli import main
from evotune.kinds.view import SUMMARY_WEIGHTS

V1 = Path(__file__).resolve().parent / "data" / "store-v1"
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs_dir(tmp_path, make_fake_run) -> Path:
    make_fake_run(tmp_path, "small", generations=3)
    make_fake_run(tmp_path, "big", generations=2, engine="extended")
    make_fake_run(tmp_path, "budget", generations=2, max_games=100)
    manifest = tmp_path / "budget" / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["config"]["generations"] = 0  # no generation limit: the budget ends it
    manifest.write_text(json.dumps(doc))
    shutil.copytree(V1 / "fit", tmp_path / "fit")
    shutil.copy(V1 / "d.txt", tmp_path / "d.txt")
    return tmp_path


def test_runs_has_a_header_dates_and_each_kind_s_amounts(runs_dir, capsys):
    code, out, _ = cli(capsys, "runs", "--runs-dir", str(runs_dir))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "KIND", "STRATEGY", "PROGRESS", "AMOUNT", "RESULT",
                                "STATE", "STARTED"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == {"small", "big", "budget", "fit"}
    assert all(re.search(DATE + "$", r) for r in rows.values())
    assert re.search(r"budget +games +de +generation 2/- +48/100 games +- +finished", rows["budget"])
    assert re.search(r"small +games +de +generation 3/3 +72 games", rows["small"])
    assert re.search(r"fit +fit +texel +epoch 2/2 +319 positions +error 0\.12008 +finished",
                     rows["fit"])
    starts = {line.index("STARTED") if i == 0 else re.search(DATE, line).start()
              for i, line in enumerate(lines)}
    assert len(starts) == 1  # the columns line up


def test_status_says_generation_of_dash_and_the_budget(runs_dir, capsys):
    code, out, _ = cli(capsys, "status", "budget", "--runs-dir", str(runs_dir))
    assert code == 0
    assert out.splitlines()[0].startswith(
        "run budget: de, NP 6, generation 2/-, 48 games (budget 100), 3.0 s, finished")


def test_status_of_a_fit_shows_epochs_positions_and_errors(runs_dir, capsys):
    code, out, _ = cli(capsys, "status", "fit", "--runs-dir", str(runs_dir))
    assert code == 0
    first, head, *weights = out.splitlines()
    assert first.startswith("fit fit: texel on shannon, epoch 2/2, 287 training + 32 validation "
                            "positions, error train 0.132346 validation 0.120081")
    assert "NP" not in first and "games" not in first and "std" not in head
    assert head.split() == ["weight", "value", "change"] and len(weights) == 6


def test_status_summarises_a_big_run_and_all_shows_every_weight(runs_dir, capsys):
    code, out, _ = cli(capsys, "status", "big", "--runs-dir", str(runs_dir))
    assert code == 0
    lines = out.splitlines()
    weights = lines[2:-1]
    assert len(weights) == SUMMARY_WEIGHTS
    assert lines[-1] == f"  ... and {824 - SUMMARY_WEIGHTS} more weights (--all shows every one)"
    changes = [abs(float(w.split()[-1])) for w in weights]
    assert changes == sorted(changes, reverse=True)
    assert len({len(w) for w in weights}) == 1  # aligned
    code, out, _ = cli(capsys, "status", "big", "--runs-dir", str(runs_dir), "--all")
    every = out.splitlines()[2:]
    assert code == 0 and len(every) == 824 and len({len(w) for w in every}) == 1
    largest = max(abs(float(w.split()[-1])) for w in every)
    assert largest == changes[0]


def test_status_json_keeps_its_fields_and_adds_kind_and_budget(runs_dir, capsys):
    code, out, _ = cli(capsys, "status", "budget", "--runs-dir", str(runs_dir), "--json")
    info = json.loads(out)
    assert code == 0
    assert {"run_id", "strategy", "np", "generation", "generations", "games", "seconds",
            "finished", "names", "mean", "std"} <= set(info)
    assert info["kind"] == "games" and info["max_games"] == 100 and info["generations"] == 0
    assert len(info["initial_mean"]) == len(info["mean"]) == 6


def test_status_of_spsa_names_no_population(tmp_path, capsys):
    """SPSA has no population: its status leaves NP out (a new run, nothing played yet)."""
    from evotune.kinds.games.config import build_run_config
    from evotune.kinds.games.plan import plan_run
    from evotune.runs.store import Store

    cfg = build_run_config(strategy="spsa", generations=0, max_games=300, depth=1)
    Store.create(tmp_path, "s", config=cfg, identity=plan_run(cfg).identity).unlock()
    code, out, _ = cli(capsys, "status", "s", "--runs-dir", str(tmp_path))
    assert code == 0
    assert out.splitlines()[0] == ("run s: spsa, generation 0/-, 0 games (budget 300), 0.0 s, "
                                   "not finished")
    code, out, _ = cli(capsys, "runs", "--runs-dir", str(tmp_path))
    assert re.search(r"^s +games +spsa +generation 0/- +0/300 games +- +stopped +" + DATE + "$",
                     out.splitlines()[1])
