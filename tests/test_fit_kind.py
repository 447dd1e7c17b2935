"""A Texel fit is a run of its own kind: its manifest says ``kind = "fit"`` and holds its
TexelConfig and data files (store format 2); fits and games runs written by the format-1 code
(tests/data/store-v1) are read exactly, resume as that code resumed them, and every reader
(status, export, verify, report, plot) gives what it gave before."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evotune.datafiles import DataFile
from evotune.errors import ConfigError, StoreError
from evotune.kinds import FIT, GAMES, MOVES, TRAINING
from evotune.kinds.fit.config import TexelConfig, texel_config_from_dict
from evotune.kinds.fit.plan import plan_fit
from evotune.kinds.fit.solver import execute_fit, new_fit, open_fit, read_data
from evotune.kinds.games.config import RunConfig
from evotune.limits import Limits
from evotune.rules import Adjudication
from evotune.runs.manifest import FORMAT_VERSION
from evotune.runs.store import Store

ROOT = Path(__file__).resolve().parents[1]
V1 = ROOT / "tests" / "data" / "store-v1"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=600)


@pytest.fixture
def v1(tmp_path, monkeypatch) -> Path:
    """A copy of the format-1 run folders; the working folder (fits name d.txt relatively)."""
    folder = tmp_path / "v1"
    shutil.copytree(V1, folder)
    monkeypatch.chdir(folder)
    return folder


def _generations(root: Path) -> list[dict]:
    out = []
    for p in sorted((root / "generations").iterdir()):
        g = json.loads(p.read_text())
        g.pop("seconds"), g.pop("seconds_total")
        out.append(g)
    return out


def _same_numbers(a, b, rel: float = 1e-12) -> bool:
    """``a == b`` with floats equal to within ``rel`` (the stored fit-full was computed on
    another machine: the validation loss's last bit may differ with the CPU's summation, while
    every weight and training figure is bit-identical)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_numbers(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_numbers(x, y, rel) for x, y in zip(a, b))
    return a == b


def _snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _without_timings(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("seconds", "created")}


# ---- format 2 -----------------------------------------------------------------------------------

def test_a_new_fit_stores_its_kind_settings_and_data_files(v1):
    cfg = TexelConfig.of(data=("d.txt",), epochs=2, iters=3, tol=0.0, l2=0.0, seed=4)
    data = read_data(plan_fit(cfg))
    store = new_fit(plan_fit(cfg), data, out_dir=v1 / "new", run_id="f")
    doc = json.loads(store.manifest_path.read_text())
    assert doc["format"] == FORMAT_VERSION == 2 and doc["kind"] == "fit"
    assert doc["config"] == cfg.to_dict() and doc["config"]["data"] == ["d.txt"]
    assert "strategy" not in doc["config"] and "params" not in doc["config"]
    assert doc["data_files"] == [{"name": "d.txt", "size": (v1 / "d.txt").stat().st_size,
                                  "sha256": json.loads((V1 / "fit" / "manifest.json").read_text())
                                  ["config"]["params"]["data_files"][0]["sha256"]}]
    manifest = store.manifest()
    assert manifest.kind == "fit" and manifest.config == cfg and manifest.format == 2
    assert manifest.data_files == (DataFile(**doc["data_files"][0]),)
    execute_fit(store, plan_fit(cfg), data)
    assert open_fit(store) == cfg  # its identity holds


def test_a_games_run_stores_its_kind(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path, generations=1)
    doc = json.loads(store.manifest_path.read_text())
    assert doc["format"] == 2 and doc["kind"] == "games" and "data_files" not in doc
    assert store.manifest().kind == "games" and isinstance(store.manifest().config, RunConfig)


@pytest.mark.parametrize("cfg", [
    TexelConfig.of(data=("a.txt", "b.epd")),
    TexelConfig.of(data=("a.txt",), engine="pst", init="w.json", max_positions=9, k="1.25",
                epochs=7, optimizer="adam", iters=3, lr=0.5, tol=0.0, qsearch=True,
                val_share=0.0, val_block=1, max_bad=2, seed=0, l2=2e-4, openings="book",
                limits=Limits(depth=2, nodes=500, max_plies=90, tc="10+0.1", time_margin=0.3,
                              adjudication=Adjudication(700, 3, 10, 8, 40))),
])
def test_the_stored_settings_read_back_equal(cfg):
    stored = json.loads(json.dumps(cfg.to_dict()))
    assert texel_config_from_dict(stored) == cfg


@pytest.mark.parametrize("change, field", [
    ({"epochs": "3"}, "'epochs' must be int"), ({"qsearch": 1}, "'qsearch' must be bool"),
    ({"data": "d.txt"}, "'data' must be a list"), ({"lr": True}, "'lr' must be int or float"),
    ({"strategy": "texel"}, "unknown key(s) ['strategy']"), ({"l2": "x"}, "--l2 x"),
    ({"epochs": 0}, "--epochs and --iters must be >= 1"), ({"depth": 0}, "depth must be"),
])
def test_a_damaged_fit_manifest_is_one_line_naming_it(v1, change, field):
    cfg = TexelConfig.of(data=("d.txt",), epochs=1, l2=0.0)
    data_ = read_data(plan_fit(cfg))
    store = new_fit(plan_fit(cfg), data_, out_dir=v1 / "new", run_id="f")
    store.unlock()
    doc = json.loads(store.manifest_path.read_text())
    doc["config"].update(change)
    store.manifest_path.write_text(json.dumps(doc))
    with pytest.raises(StoreError) as err:
        store.manifest()
    assert str(store.manifest_path) in str(err.value) and field in str(err.value)
    r = cli(["status", "f", "--runs-dir", "new"], v1)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and field in r.stderr


def test_a_manifest_of_another_kind_or_format_is_refused(v1):
    cfg = TexelConfig.of(data=("d.txt",), epochs=1, l2=0.0)
    data_ = read_data(plan_fit(cfg))
    store = new_fit(plan_fit(cfg), data_, out_dir=v1 / "new", run_id="f")
    store.unlock()
    doc = json.loads(store.manifest_path.read_text())
    for change, said in (({"kind": "nnue"}, "'kind' must be one of games, fit, train, moves, "
                                          "not 'nnue'"),
                         ({"format": 3}, "format 3 is not supported by this evotune (it reads "
                                         "formats 1 to 2)"),
                         ({"data_files": []}, "'data_files' must be a non-empty list")):
        store.manifest_path.write_text(json.dumps({**doc, **change}))
        with pytest.raises(StoreError, match=said.replace("(", r"\(").replace(")", r"\)")):
            store.manifest()
    # a games manifest naming the strategy 'texel' is no fit: an unknown strategy
    games = {**doc, "kind": "games", "config": RunConfig().to_dict() | {"strategy": "texel"}}
    store.manifest_path.write_text(json.dumps(games))
    with pytest.raises(StoreError, match="unknown strategy 'texel'"):
        store.manifest()


def test_a_fit_and_a_games_run_are_opened_by_their_own_kind(v1):
    from evotune.kinds.games.lifecycle import open_run

    with pytest.raises(StoreError, match="run 'fit' is a fit run, not a tuning run by games"):
        open_run("fit", out_dir=".")
    with pytest.raises(StoreError, match="run 'games' is a games run, not a fit"):
        open_fit(Store(v1 / "games"))
    with pytest.raises(StoreError, match="a fit's manifest names its data files"):
        Store.create(v1 / "new", "x", config=TexelConfig.of(data=("d.txt",)), identity={})
    assert not (v1 / "new").exists()


# ---- format 1 -----------------------------------------------------------------------------------

def test_a_format_1_fit_reads_as_its_settings(v1):
    manifest = Store(v1 / "fit").manifest()
    assert manifest.format == 1 and manifest.kind == "fit"
    # stored before --l2-rule: their ridge was (and on resume is) chosen by the lowest error
    assert manifest.config == TexelConfig.of(data=("d.txt",), epochs=2, iters=3, tol=0.0,
                                          l2_rule="lowest")
    old = json.loads((v1 / "fit" / "manifest.json").read_text())
    assert [f.to_json() for f in manifest.data_files] == old["config"]["params"]["data_files"]
    fit2 = Store(v1 / "fit2").manifest().config
    assert fit2 == TexelConfig.of(data=("d.txt",), epochs=2, iters=50, lr=3.0, tol=0.0, l2=0.0,
                               optimizer="adam", val_block=1, init="w.json",
                               l2_rule="lowest")
    # the identity the format-1 code hashed is the one this code hashes
    assert open_fit(Store(v1 / "fit")) == manifest.config
    assert open_fit(Store(v1 / "fit2")) == fit2


def test_a_format_1_fit_from_before_l2_and_val_block_reads_exactly(v1):
    path = v1 / "fit2" / "manifest.json"
    doc = json.loads(path.read_text())
    for key in ("l2", "val_block"):  # what fits stored before these settings held
        del doc["config"]["params"][key]
    path.write_text(json.dumps(doc))
    cfg = open_fit(Store(v1 / "fit2"))  # same identity: no ridge, position by position
    assert cfg.ridge.l2 == 0.0 and cfg.validation.block == 1


@pytest.mark.parametrize("key, value", [("games", 6), ("np", 2), ("book_plies", 4),
                                        ("init_high", 500.0), ("opponents", "shannon"),
                                        ("generations", 0)])
def test_a_format_1_fit_that_cannot_be_read_exactly_is_refused(v1, key, value):
    path = v1 / "fit" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["config"][key] = value
    path.write_text(json.dumps(doc))
    before = _snapshot(v1 / "fit")
    r = cli(["resume", "fit", "--runs-dir", "."], v1)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert str(Path("fit") / "manifest.json") in r.stderr
    if key == "generations":  # read, then refused by TexelConfig's own rule
        assert "--epochs and --iters must be >= 1" in r.stderr
    else:
        assert f"a format-1 fit config whose {key} cannot be read exactly" in r.stderr
    assert _snapshot(v1 / "fit") == before  # nothing written, not even the lock file


def test_a_format_1_fit_resumes_as_an_uninterrupted_one(v1):
    r = cli(["resume", "fit", "--generations", "4", "--runs-dir", "."], v1)
    assert r.returncode == 0, r.stderr
    got, full = _generations(v1 / "fit"), _generations(v1 / "fit-full")
    assert _same_numbers(got, full)
    assert [g["population"] for g in got] == [g["population"] for g in full]  # weights: exact
    a, b = (json.loads((v1 / f / "texel.json").read_text()) for f in ("fit", "fit-full"))
    assert a["weights"] == b["weights"]
    assert _same_numbers(a["error_after_rounding"], b["error_after_rounding"])
    assert a["data"] == b["data"] and a["l2"] == b["l2"] == 0.001
    # the manifest is not rewritten: the run stays in the format it was made in
    assert json.loads((v1 / "fit" / "manifest.json").read_text())["format"] == 1


def test_a_format_1_games_run_resumes_as_an_uninterrupted_one(v1):
    """Generation 1 is read exactly and generation 2 plays the uninterrupted run's schedule
    (trial vectors, opponents, openings, colours). Its results are today's search's: alpha-beta's
    order changed after the folder was made (384b993, losing captures after the killers), which
    changes which of equally scored moves a depth-1 game plays, so they are not compared with
    the stored ones; a second copy resumed on two workers gives the same results to the bit."""
    shutil.copytree(v1 / "games", v1 / "games-copy")
    r = cli(["resume", "games", "--generations", "2", "--runs-dir", ".", "--workers", "1"], v1)
    assert r.returncode == 0, r.stderr
    r = cli(["resume", "games-copy", "--generations", "2", "--runs-dir", ".", "--workers", "2"], v1)
    assert r.returncode == 0, r.stderr
    assert _generations(v1 / "games-copy") == _generations(v1 / "games")
    got, full = _generations(v1 / "games"), _generations(v1 / "games-full")
    assert len(got) == len(full) == 3 and got[:2] == full[:2]
    assert [(m["a"], m["b"], m["tag"]) for m in got[2]["matches"]] \
        == [(m["a"], m["b"], m["tag"]) for m in full[2]["matches"]]
    games = [Store(v1 / run).read_games() for run in ("games", "games-full", "games-copy")]
    for log in games:
        for g in log:
            g.pop("seconds", None)
    assert [g for g in games[0] if g["key"][0] == 1] == [g for g in games[1] if g["key"][0] == 1]
    assert len([g for g in games[1] if g["key"][0] == 1]) == 7

    def first(log):  # each generation-2 match's first game, as scheduled
        return [{k: g[k] for k in ("key", "white", "black", "white_weights", "black_weights",
                                   "opening")} for g in log if g["key"][0] == 2 and g["key"][3] == 0]
    assert first(games[0]) == first(games[1]) and len(first(games[0])) == 4
    assert sorted(games[2], key=lambda g: g["key"]) == sorted(games[0], key=lambda g: g["key"])
    assert len(games[0]) == 13


def test_the_readers_give_for_a_format_1_games_run_what_they_gave(v1):
    """status --json and export of the format-1 games run, against what the code that made it
    printed (old-outputs/games-*: made at 5a17877, tests/data/store-v1/README.md)."""
    old = V1 / "old-outputs"
    r = cli(["status", "games", "--runs-dir", ".", "--json"], v1)
    was = json.loads((old / "games-status.json").read_text())
    got = json.loads(r.stdout)  # status --json may add fields, never drop or change one
    assert r.returncode == 0 and {k: got[k] for k in was} == was
    assert got["kind"] == "games" and got["generation"] == 1 and got["games"] == 7
    for fmt, name in (("json", "games-export.json"), ("uci", "games-export.uci")):
        r = cli(["export", "games", "--format", fmt, "--runs-dir", "."], v1)
        assert r.returncode == 0 and r.stdout == (old / name).read_text(), r.stderr
    r = cli(["runs", "--runs-dir", "."], v1)  # the list names it with its kind and progress
    assert r.returncode == 0
    row = [line.split() for line in r.stdout.splitlines() if line.split()[:1] == ["games"]]
    assert row and row[0][1:6] == ["games", "de", "generation", "1/1", "7"], r.stdout


def test_the_readers_give_for_a_format_1_fit_what_they_gave(v1):
    old = V1 / "old-outputs"
    r = cli(["status", "fit", "--runs-dir", ".", "--json"], v1)
    was = json.loads((old / "status.json").read_text())
    got = json.loads(r.stdout)  # status --json may add fields, never drop or change one
    assert r.returncode == 0 and {k: got[k] for k in was} == was
    for fmt, name in (("json", "export.json"), ("uci", "export.uci")):
        r = cli(["export", "fit", "--format", fmt, "--runs-dir", "."], v1)
        assert r.returncode == 0 and r.stdout == (old / name).read_text(), r.stderr
    r = cli(["verify", "fit", "--games", "2", "--depth", "1", "--workers", "1", "--runs-dir",
             "."], v1)
    assert r.returncode == 0, r.stderr
    doc = _without_timings(json.loads((v1 / "fit" / "verify.json").read_text()))
    assert doc.pop("held_out") is True  # added since: the 8moves openings are held out for a fit
    before = _without_timings(json.loads((old / "verify.json").read_text()))
    # changed since: an initial mean equal to the reference (a fit's) is the same match, played
    # once; the old file played it twice, with the same games
    same = [m for m in before["matches"] if m["opponent"] == "initial mean"]
    assert [m["b"] for m in same] == [m["b"] for m in before["matches"][:1]]
    before["matches"] = [m for m in before["matches"] if m["opponent"] != "initial mean"]
    assert doc == before
    r = cli(["report", "fit", "--runs-dir", ".", "--reports", "rep"], v1)
    assert r.returncode == 0, r.stderr
    new, was = (v1 / "rep" / "fit" / "report.md").read_text(), (old / "report.md").read_text()
    # the configuration now describes the fit; everything from the progress line on is the same
    # but the initial-mean match, played once now (above), and the deviation plot: a fit keeps
    # one vector, whose deviation is zero (round 5 draws none)
    was = "".join(line for line in was.splitlines(keepends=True)
                  if not line.startswith(("- recommended vs initial mean:",
                                          "![deviation](deviation.png)")))
    assert new[new.index("## Progress"):] == was[was.index("## Progress"):]
    config = new[:new.index("## Progress")]
    assert "- kind: Texel fit\n- data: d.txt\n" in config and "games per match" not in config
    assert "- optimizer: lbfgs, 3 iterations per epoch\n" in config
    assert {p.name for p in (v1 / "rep" / "fit").glob("*.png")} == {
        "convergence.png", "strategy.png"}


def test_a_resumed_fit_may_raise_its_epochs_but_not_change_its_settings(v1):
    cfg = open_fit(Store(v1 / "fit"))
    assert cfg.with_epochs(9).identity_dict() == cfg.identity_dict()
    assert (cfg.with_epochs(9).epochs, cfg.with_epochs(9).optimiser.iters) == (9, 3)
    with pytest.raises(ConfigError):
        cfg.with_epochs(0)
    more = dataclasses.replace(cfg, optimiser=dataclasses.replace(cfg.optimiser, iters=4))
    assert more.identity_dict() != cfg.identity_dict()


@pytest.mark.parametrize("args, line", [
    (["resume", "fit", "--backend", "dask", "--scheduler", "tcp://nowhere:8786"],
     "--backend/--scheduler: a fit run plays no games to send to a cluster; leave them out"),
    (["plot", "fit", "--x", "games"], "--x games: a fit run plays no games to plot against; "
                                      "leave it out"),
    (["report", "train", "--squares", "queen.z1"],
     "--squares: a train run has no piece-square weights to plot; leave it out"),
    (["plot", "moves", "--x", "games"], "--x games: a moves run plays no games to plot against; "
                                        "leave it out"),
    (["plot", "games", "fit", "--x", "games"], "--x games: a fit run plays no games to plot "
                                               "against; leave it out"),
    (["export", "train", "--format", "evotune", "--out", "net.nnue", "--engine", "pst"],
     "--engine: a train run has no weights to map onto another engine spec; leave it out"),
    (["report", "train", "--recommend", "rated"],
     "--recommend: a train run recommends its net or model, not weights chosen by a rule; "
     "leave it out"),
    (["export", "moves", "--format", "evotune", "--out", "m.bin", "--recommend", "better-half"],
     "--recommend: a moves run recommends its net or model, not weights chosen by a rule; "
     "leave it out"),
])
def test_an_option_a_kind_does_not_read_is_one_line_before_anything_is_written(v1, args, line):
    """The requests carry options only some kinds read (RunKind.reads); a kind that would
    ignore one refuses it, so a flag never looks applied when it was not."""
    before = sorted((p.relative_to(v1), p.stat().st_mtime_ns) for p in v1.rglob("*"))
    r = cli([*args, "--runs-dir", ".", *(["--reports", "rep"] if args[0] in ("plot", "report")
                                          else [])], v1)
    assert (r.returncode, r.stderr) == (2, f"evotune: error: {line}\n")
    assert sorted((p.relative_to(v1), p.stat().st_mtime_ns) for p in v1.rglob("*")) == before


def test_the_options_a_kind_reads_are_its_own(v1):
    """A games run reads them all; the same flags on it are taken (its plot is drawn)."""
    r = cli(["plot", "games", "--x", "games", "--runs-dir", ".", "--reports", "rep"], v1)
    assert r.returncode == 0 and (v1 / "rep" / "games").is_dir(), r.stderr
    assert (GAMES.reads, FIT.reads, TRAINING.reads, MOVES.reads) == (
        {"play", "x", "squares", "rule", "engine"}, {"squares", "rule", "engine"}, set(), set())


@pytest.mark.parametrize("run_id", ["games-full", "fit-full"])
def test_resuming_a_finished_run_says_nothing_is_played(v1, run_id):
    """A finished run resumed without a raised limit plays nothing; the note says so rather
    than leaving its summary to read as a new result."""
    before = json.loads(cli(["status", run_id, "--runs-dir", ".", "--json"], v1).stdout)
    r = cli(["resume", run_id, "--runs-dir", ".", "--quiet"], v1)
    assert r.returncode == 0 and before["finished"], r.stderr
    assert (f"evotune: note: run {run_id} has finished: nothing is played; raise one of its "
            "limits to continue it (evotune resume --help)") in r.stderr
    after = json.loads(cli(["status", run_id, "--runs-dir", ".", "--json"], v1).stdout)
    assert (after["generation"], after["games"]) == (before["generation"], before["games"])


def test_a_fit_s_settings_are_grouped_and_stored_flat_as_before(v1):
    """TexelConfig groups its settings in records (positions, optimiser, validation, ridge);
    its stored form keeps the flat keys in the order fits have always stored them."""
    from evotune.kinds.fit.config import STORED_ORDER
    from evotune.learn.fitsettings import FitOptimiser, FitPositions, FitRidge, FitValidation

    cfg = TexelConfig.of(data=("d.txt",), max_bad=2, qsearch=True, optimizer="adam", epochs=7,
                         iters=5, lr=1.5, tol=0.0, val_share=0.2, val_block=8, l2=0.5,
                         l2_rule="lowest", seed=3)
    assert (cfg.positions, cfg.optimiser, cfg.validation, cfg.ridge) == (
        FitPositions(max_positions=0, max_bad=2, qsearch=True),
        FitOptimiser(name="adam", epochs=7, iters=5, lr=1.5, tol=0.0),
        FitValidation(share=0.2, block=8), FitRidge(l2=0.5, rule="lowest"))
    stored = cfg.to_dict()
    assert list(stored)[:len(STORED_ORDER)] == list(STORED_ORDER)
    assert texel_config_from_dict(stored) == cfg and cfg.flat()["optimizer"] == "adam"
    old = json.loads((v1 / "fit" / "manifest.json").read_text())  # format 1, as made then
    assert open_fit(Store(v1 / "fit")).to_dict()["iters"] == old["config"]["params"]["iters"]
