"""A third-party engine tuned as its developer would: option names as real engines spell them
(spaces, parentheses) in specs and every export format, where a run starts, a run folder that
keeps its engine spec (commands work from any folder), SPSA exports with the run's own schedule,
and the checks a run makes, shared with `match`."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evotune.errors import ConfigError, EngineError
from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import with_budget, with_start
from evotune.players.spec import check_engine_spec
from evotune.runs.runspec import SPEC_FILE, run_engine_spec
from evotune.space import WeightSpace
from evotune.spec.file import check_option_name, load_engine_spec
from evotune.spec.model import EngineSpec, WeightParam
from evotune.strategies import STRATEGIES
from evotune.strategies.spsa import parse_spsa_lines
from evotune.weightsio import (
    FORMATS,
    c_identifier,
    export_params,
    parse,
    read_spsa_params,
    render,
    weights_for,
)

FAKE = Path(__file__).resolve().parent / "fake_engines"
SPACED = ("Knight Value (Middle Game)", "Mobility (Middle Game)")


def _evotune(*args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, **kw)


def _spaced_spec_text(*, knight_upper: int = 1000, extra: str = "") -> str:
    """A spec for tests/fake_engines/spaced_names.py: weight names as the engine spells its
    options (no 'option' key), one fixed option with parentheses in [options]."""
    cmd = json.dumps([sys.executable, str(FAKE / "spaced_names.py")])
    return (f'name = "spaced"\nkind = "uci"\ncommand = {cmd}\n'
            '[options]\n"Futility Pruning (Main Search)" = 1\nSeed = 7\n'
            f'[[weight]]\nname = "{SPACED[0]}"\nreference = 300\nlower = 100\n'
            f'upper = {knight_upper}\n'
            f'[[weight]]\nname = "{SPACED[1]}"\nreference = 10\nlower = 0\nupper = 200\n'
            + extra)


def _write_spaced_spec(folder: Path, **kw) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spaced.toml"
    path.write_text(_spaced_spec_text(**kw), encoding="utf-8")
    return path


# ---- option names --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Mobility (Middle Game)", "Futility Pruning (Main Search)",
                                  "Skill Level", "Pawn [MG] / 2", "Piece Value", "x=y, z"])
def test_every_name_uci_allows_is_a_valid_option_name(name):
    assert check_option_name(name, "option") == name


@pytest.mark.parametrize("name", ["a\nb", "Set name x", "my value", "x type y", " lead", "trail ",
                                  "two  spaces", "tab\there", ""])
def test_names_uci_cannot_carry_are_refused_in_one_line(name):
    with pytest.raises(ConfigError) as exc:
        check_option_name(name, "option")
    assert "\n" not in str(exc.value) and "not a valid UCI option name" in str(exc.value)


def test_a_spec_keeps_names_with_spaces_and_parentheses_exactly(tmp_path):
    spec = load_engine_spec(_write_spaced_spec(tmp_path))
    assert spec.names == SPACED
    assert [w.option_name for w in spec.weights] == list(SPACED)
    assert dict(spec.options) == {"Futility Pruning (Main Search)": 1, "Seed": 7}
    assert spec.engine_values([320, 12]) == {SPACED[0]: 320, SPACED[1]: 12}


def test_a_spec_refuses_an_option_name_with_a_reserved_word(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(_spaced_spec_text().replace('Seed = 7', '"Hash value" = 7'))
    with pytest.raises(ConfigError, match="'Hash value' is not a valid UCI option name"):
        load_engine_spec(path)


def test_the_spaced_engine_takes_its_options_from_the_spec(tmp_path):
    """The engine check a run makes passes: every name found and in range."""
    spec = load_engine_spec(_write_spaced_spec(tmp_path))
    assert check_engine_spec(spec) == "fake-random"


# ---- every export format: written and read back --------------------------------------------------

def _spaced_params(spec: EngineSpec, values=(320, 12)):
    params, omitted, notes = export_params(spec.names, values, spec, option_keys=True)
    assert not omitted and not notes
    return params


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_writes_spaced_names_and_reads_them_back(tmp_path, fmt):
    spec = load_engine_spec(_write_spaced_spec(tmp_path))
    params = _spaced_params(spec)
    text = render(fmt, params, comment="a comment")
    assert parse(fmt, text, spec) == {SPACED[0]: 320.0, SPACED[1]: 12.0}
    if fmt == "uci":
        assert text.splitlines() == [f"setoption name {SPACED[0]} value 320",
                                     f"setoption name {SPACED[1]} value 12"]
    if fmt == "header":  # a C++ identifier derived from the name, read back by it
        assert "constexpr int Knight_Value_Middle_Game = 320;" in text
        assert "constexpr int Mobility_Middle_Game = 12;" in text
    if fmt == "spsa":
        assert text.splitlines()[1] == f"{SPACED[1]}, int, 12, 0, 200, 10, 0.002"
    if fmt == "cutechess":
        assert text == f"'option.{SPACED[0]}=320' 'option.{SPACED[1]}=12'\n"


@pytest.mark.parametrize("suffix", [".json", ".csv", ".h", ".py"])
def test_weights_files_with_spaced_names_give_the_spec_vector(tmp_path, suffix):
    spec = load_engine_spec(_write_spaced_spec(tmp_path))
    fmt = {".json": "json", ".csv": "csv", ".h": "header", ".py": "python"}[suffix]
    path = tmp_path / f"w{suffix}"
    path.write_text(render(fmt, _spaced_params(spec, (455, 37))))
    assert weights_for(spec, path).tolist() == [455.0, 37.0]


@pytest.mark.parametrize("key,ident", [("Mobility (Middle Game)", "Mobility_Middle_Game"),
                                       ("knight", "knight"), ("3rd Rank", "_3rd_Rank"),
                                       ("int", "int_"), ("pst.mg.pawn.a2", "pst_mg_pawn_a2"),
                                       ("((", "_")])
def test_c_identifiers_are_derived_deterministically(key, ident):
    assert c_identifier(key) == ident


def _spec_of(*names: str) -> EngineSpec:
    return EngineSpec(name="t", kind="uci", command=("x",), weights=tuple(
        WeightParam(name=f"w{i}", option=n, reference=10, lower=0, upper=100)
        for i, n in enumerate(names)))


@pytest.mark.parametrize("fmt,names,why", [
    ("header", ("Mobility (MG)", "Mobility MG"), r"both become the C\+\+ identifier Mobility_MG"),
    ("spsa", ("a,b", "c"), "holds a comma"),
    ("spsa-fishtest", ("a,b", "c"), "holds a comma"),
    ("cutechess", ("x=y", "c"), "holds '='")])
def test_a_name_a_format_cannot_carry_is_refused_in_one_line(fmt, names, why):
    spec = _spec_of(*names)
    params = _spaced_params(spec, (10, 20))
    with pytest.raises(ConfigError, match=why):
        render(fmt, params)
    assert parse("uci", render("uci", params), spec) == {"w0": 10.0, "w1": 20.0}


# ---- where a run starts ----------------------------------------------------------------------------

def _bounded_space(**kw) -> WeightSpace:
    return WeightSpace(names=("space", "cowardice", "knight"), lower=(0.0, -50.0, 250.0),
                       upper=(200.0, 200.0, 400.0), reference=(50.0, 20.0, 320.0),
                       fixed=(False, False, False), **kw)


def test_uniform_start_draws_within_each_weights_bounds_not_on_them():
    pop = _bounded_space().sample(np.random.default_rng(3), 400)
    for j, (lo, hi) in enumerate([(0, 200), (0, 200), (250, 400)]):  # cut to [0, 1000]
        col = pop[:, j]
        assert col.min() >= lo and col.max() <= hi
        assert np.mean(col == hi) < 0.02 and np.mean(col == lo) < 0.02  # no pile on a bound
        assert abs(col.mean() - (lo + hi) / 2) < 0.1 * (hi - lo)  # uniform over the whole range


def test_uniform_start_keeps_a_user_range_inside_the_bounds():
    pop = _bounded_space(init_low=100, init_high=150).sample(np.random.default_rng(3), 200)
    assert pop[:, :2].min() >= 100 and pop[:, :2].max() <= 150
    assert (pop[:, 2] == 250).all()  # the range misses this weight: its nearest bound


def test_the_paper_start_is_the_plain_uniform_draw_of_before():
    """shannon in [0, 1000]: the draws of rng.uniform(0, 1000) as before, bit for bit."""
    space = load_engine_spec("shannon").space()
    got = space.sample(np.random.default_rng(11), 20)
    rng = np.random.default_rng(11)
    before = np.tile(space.reference_array, (20, 1))
    before[:, 1:] = rng.uniform(0.0, 1000.0, size=(20, 5))
    assert np.array_equal(got, space.round(np.clip(before, space.lower_array,
                                                   space.upper_array)))


def test_a_start_around_the_reference_does_not_pile_on_a_near_bound():
    space = WeightSpace(names=("a",), lower=(0.0,), upper=(1000.0,), reference=(10.0,),
                        fixed=(False,))
    pop = space.sample_around(np.random.default_rng(1), 300, 0.1)
    assert pop[0, 0] == 10 and pop.min() >= 0 and pop.max() <= 110
    assert np.mean(pop == 0) < 0.02  # clipping put ~45% of them on 0 before


def test_uci_specs_start_from_the_reference_unless_told(tmp_path):
    spec = load_engine_spec(_write_spaced_spec(tmp_path))
    for strategy in ("de", "jde", "ea", "spsa", "cmaes", "ng:NGOpt"):
        cfg = build_run_config(strategy=strategy, engine=str(tmp_path / "spaced.toml"))
        params = with_start(cfg, spec).params_dict()
        # its defaults are values its developer tuned: a fine-tuning, as from earlier weights
        assert params["init"] == "reference" and params["finetune"] is True
        assert params.get("selection", "race") == "race" and params.get("mirrored", True)
    gauntlet = build_run_config(strategy="de", opponents="stockfish-uci")
    assert "selection" not in with_start(gauntlet, spec).params_dict()  # its own scores
    chosen = build_run_config(strategy="spsa", params={"finetune": False})
    assert with_start(chosen, spec).params_dict()["finetune"] is False
    told = build_run_config(strategy="de", params={"init": "sample"})
    assert with_start(told, spec).params_dict()["init"] == "sample"
    shannon = build_run_config(strategy="de")
    # a random start: nothing set but the final check, resolved to none
    assert with_budget(shannon, load_engine_spec("shannon")) == build_run_config(
        strategy="de", final_check_games=0)


# ---- SPSA parameter files --------------------------------------------------------------------------

@pytest.mark.parametrize("line,why", [
    ("KnightValue,300,300,300,5,0.002", "min = max = 300"),
    ("KnightValue,300,0,1000,1e300,0.002", "steps wider than its range"),
    ("KnightValue,300,0,1000,5,1e300", "steps wider than its range"),
    ("KnightValue,300,-1e300,1e300,5,0.002", "pass"),
    ("KnightValue,300,0,1000,inf,0.002", "expected fishtest")])
def test_spsa_params_that_cannot_be_tuned_are_refused_naming_file_and_line(tmp_path, line, why):
    path = tmp_path / "p.txt"
    path.write_text(f"# header\n{line}\n")
    with pytest.raises(ConfigError, match=why) as exc:
        read_spsa_params(path, load_engine_spec("shannon"))
    assert f"--spsa-params {path}, line 2" in str(exc.value) and "\n" not in str(exc.value)


# ---- engine checks ----------------------------------------------------------------------------------

def test_a_weight_on_a_string_option_is_refused(tmp_path):
    text = _spaced_spec_text(extra='[[weight]]\nname = "Book File"\nreference = 1\nlower = 0\n'
                                   'upper = 5\n')
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(EngineError, match="'Book File' is a string option; a weight maps onto a "
                                          "spin"):
        check_engine_spec(load_engine_spec(path))
    r = _evotune("run", "--engine", str(path), "--np", "4", "--generations", "1",
                 "--runs-dir", "pops", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "pops").exists()


def test_match_checks_bounds_against_the_options_range_as_run_does(tmp_path, fake_engine_spec):
    spec = fake_engine_spec(tmp_path, knight_upper=5000)
    for args in (["match", str(spec), "shannon", "--games", "2", "--depth", "1"],
                 ["run", "--engine", str(spec), "--np", "4", "--generations", "1"]):
        r = _evotune(*args, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "must be at most 2000" in r.stderr
        assert r.stdout == "" and not (tmp_path / "populations").exists()


def test_run_help_names_every_strategy_a_uci_engine_can_use():
    r = _evotune("run", "--help", cwd=Path.cwd())
    learners = " and ".join(n for n, cls in STRATEGIES.items() if cls.NEEDS_FEATURES)
    assert learners == "td"  # the one strategy that needs the built-in engine's features
    assert ("every strategy but those that learn from the built-in engine's features: "
            f"{learners})") in " ".join(r.stdout.split())


# ---- a run keeps its engine spec ------------------------------------------------------------------

def test_the_kept_copy_has_the_digest_of_the_file(tmp_path):
    """Identity stays: the copy's digest is the file's (with its reference file's)."""
    from evotune.runs.runspec import store_engine_spec
    for name in ("shannon", "extended-pesto-tables", str(_write_spaced_spec(tmp_path))):
        spec = load_engine_spec(name)
        root = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        store_engine_spec(root, spec)
        kept = run_engine_spec(root, build_run_config(engine="nowhere.toml"))
        assert kept.digest == spec.digest and kept.weights == spec.weights
        assert kept.command == spec.command  # already absolute here


def test_a_damaged_copy_is_refused_in_one_line(tmp_path):
    from evotune.errors import StoreError
    from evotune.runs.runspec import store_engine_spec
    store_engine_spec(tmp_path, load_engine_spec("shannon"))
    doc = json.loads((tmp_path / SPEC_FILE).read_text())
    doc["text"] = doc["text"].replace("reference = 300", "reference = 301")
    (tmp_path / SPEC_FILE).write_text(json.dumps(doc))
    with pytest.raises(StoreError, match="is damaged"):
        run_engine_spec(tmp_path, build_run_config())


def test_a_relative_command_is_kept_absolute(tmp_path, monkeypatch):
    from evotune.runs.runspec import store_engine_spec
    (tmp_path / "eng").mkdir()
    (tmp_path / "eng" / "e.py").write_text("")
    monkeypatch.chdir(tmp_path)
    spec = dataclasses.replace(load_engine_spec(_write_spaced_spec(tmp_path)),
                               command=("python3", "eng/e.py", "--x", "2"))
    store_engine_spec(tmp_path, spec)
    command = json.loads((tmp_path / SPEC_FILE).read_text())["command"]
    assert command[1:] == [str(tmp_path / "eng" / "e.py"), "--x", "2"]
    assert os.path.isabs(command[0])


@pytest.mark.slow
def test_a_run_made_before_runs_kept_their_spec_still_reads_it_by_path(tmp_path, make_fake_run,
                                                                       monkeypatch):
    """A run without the copy (made before runs kept one) reads its spec by the path it names:
    from the folder it started in, or from anywhere with --engine."""
    _write_spaced_spec(tmp_path / "specs")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    store = make_fake_run(tmp_path / "pops", "old", engine="specs/spaced.toml", generations=1)
    assert not (store.root / SPEC_FILE).exists()
    runs = ["--runs-dir", str(tmp_path / "pops")]
    r = _evotune("export", "old", "--format", "uci", *runs, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(f"setoption name {SPACED[0]} value "), r.stderr
    r = _evotune("export", "old", "--format", "uci", *runs, cwd=tmp_path / "elsewhere")
    assert r.returncode == 2 and "engine spec 'specs/spaced.toml' not found" in r.stderr
    r = _evotune("export", "old", "--format", "uci", *runs, "--engine",
                 str(tmp_path / "specs" / "spaced.toml"), cwd=tmp_path / "elsewhere")
    assert r.returncode == 0 and r.stdout.startswith(f"setoption name {SPACED[0]} value "), r.stderr


@pytest.mark.slow
def test_a_spaced_engine_runs_verifies_and_exports_from_another_folder(tmp_path):
    """The issue's end-to-end path: a spec in a project folder, a de run started there, then
    status, verify and every export from another folder (and resume)."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    _write_spaced_spec(project / "specs")
    elsewhere.mkdir()
    r = _evotune("run", "--engine", "specs/spaced.toml", "--strategy", "de", "--np", "4",
                 "--generations", "1", "--games", "2", "--depth", "1", "--max-plies", "20",
                 "--workers", "1", "--run-id", "sp", "--seed", "4", cwd=project, timeout=600)
    assert r.returncode == 0, r.stderr
    run = project / "populations" / "sp"
    assert json.loads((run / "manifest.json").read_text())["config"]["engine"] == \
        "specs/spaced.toml"
    kept = json.loads((run / SPEC_FILE).read_text())
    assert kept["command"][1] == str(FAKE / "spaced_names.py")
    gen0 = json.loads((run / "generations" / "gen-0000.json").read_text())
    assert gen0["population"][0] == [300, 10]  # a uci run starts from the reference
    assert all(100 <= k <= 1000 and 0 <= m <= 200 for k, m in gen0["population"])

    runs = ["--runs-dir", str(project / "populations")]
    r = _evotune("status", "sp", *runs, cwd=elsewhere)
    assert r.returncode == 0 and "generation 1/1" in r.stdout, r.stderr
    r = _evotune("verify", "sp", *runs, "--games", "2", "--workers", "1", cwd=elsewhere,
                 timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads((run / "verify.json").read_text())["engine"] == "spaced"
    spec = run_engine_spec(run, build_run_config(engine="specs/spaced.toml"))
    for fmt in FORMATS:
        r = _evotune("export", "sp", "--format", fmt, *runs, "--out", f"w.{fmt}", cwd=elsewhere)
        assert r.returncode == 0, (fmt, r.stderr)
        values = parse(fmt, (elsewhere / f"w.{fmt}").read_text(), spec)
        assert set(values) == set(SPACED), fmt
    # the override: another copy of the spec, by path
    other = _write_spaced_spec(elsewhere / "mine")
    r = _evotune("export", "sp", "--format", "uci", "--engine", str(other), *runs, cwd=elsewhere)
    assert r.returncode == 0 and r.stdout.startswith(f"setoption name {SPACED[0]} value ")
    r = _evotune("resume", "sp", *runs, "--generations", "2", "--workers", "1", cwd=elsewhere,
                 timeout=600)
    assert r.returncode == 0, r.stderr
    assert (run / "generations" / "gen-0002.json").is_file()


@pytest.mark.slow
def test_spsa_export_writes_the_runs_own_schedule(tmp_path):
    """A run started with c_end 5 (an --spsa-params line) exports c_end 5, not 5% of the width;
    a run without a table exports its c_end fraction of each weight's width and its r_end."""
    params = tmp_path / "p.txt"
    params.write_text("KnightValue,300,250,340,5,0.004\n")
    common = ["--strategy", "spsa", "--generations", "1", "--depth", "1", "--max-plies", "20",
              "--workers", "1", "--param", "batch=1"]
    r = _evotune("run", *common, "--spsa-params", str(params), "--run-id", "t", cwd=tmp_path,
                 timeout=600)
    assert r.returncode == 0, r.stderr
    for fmt, line in (("spsa", "KnightValue, int, "), ("spsa-fishtest", "KnightValue,")):
        r = _evotune("export", "t", "--format", fmt, cwd=tmp_path)
        knight = next(ln for ln in r.stdout.splitlines() if ln.startswith(line))
        assert knight.split(",")[-2:] == ([" 5", " 0.004"] if fmt == "spsa" else ["5", "0.004"])
    r = _evotune("run", *common, "--param", "c_end=0.02", "--param", "r_end=0.01",
                 "--run-id", "u", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = parse_spsa_lines(_evotune("export", "u", "--format", "spsa", cwd=tmp_path).stdout)
    assert {(ln.c_end, ln.r_end) for ln in lines} == {(20.0, 0.01)}  # 0.02 x 1000
