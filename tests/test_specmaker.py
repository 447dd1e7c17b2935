"""`evotune spec`: an engine spec made from what a UCI engine declares (issue 56, item 1): spin
options become weights, other options settings in comments, options that are not tunables left
out with a reason, the engine's book off; or the weights of OpenBench/fishtest SPSA lines and of
Stockfish's TUNE() output, their C_end and R_end kept for --spsa-params. The written spec passes
the check a run makes; a bad input is one line, exit 2, nothing written."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evotune.cli import main
from evotune.players.spec import check_engine_spec
from evotune.players.specmaker import choose, make_spec, spec_name, tune_lines
from evotune.players.uciproto import parse_option
from evotune.spec.file import engine_spec_from_text, load_engine_spec
from evotune.strategies.spsa import parse_spsa_lines
from evotune.weightsio import read_spsa_params

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_engines"
EVERY = f"{sys.executable} {FAKE / 'every_option.py'}"
TUNABLE = ("Seed", "Knight Value (Middle Game)", "PSQT[0] Mg.a1+", "Aspiration Window")


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def cli(monkeypatch, capsys):
    """``evotune ARGS`` in this process (the engines it starts are processes): exit code,
    stdout and stderr as a CompletedProcess."""
    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return run


def _one_line_refusal(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evotune: error: "), r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_every_option_type_finds_its_place(tmp_path):
    r = _subprocess("spec", "--uci", EVERY, "--out", "every.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote every.toml: 4 weights, 3 settings as comments, 12 options left out" in r.stderr
    text = (tmp_path / "every.toml").read_text()
    data = tomllib.loads(text)
    assert data["kind"] == "uci" and data["command"] == [sys.executable,
                                                         str(FAKE / "every_option.py")]
    weights = {w["name"]: w for w in data["weight"]}
    assert tuple(weights) == TUNABLE  # in the engine's order, names kept exactly
    assert weights["PSQT[0] Mg.a1+"] == {"name": "PSQT[0] Mg.a1+", "reference": -5, "lower": -50,
                                         "upper": 50, "option": "PSQT[0] Mg.a1+", "scale": 1}
    assert weights["Knight Value (Middle Game)"]["reference"] == 300
    # 0..1000000 passes evotune's +-2000: 500 engine units an evotune unit
    assert (weights["Seed"]["upper"], weights["Seed"]["scale"]) == (2000, 500)
    assert data["options"] == {"OwnBook": False}  # the book off; every other setting a comment
    for comment in ('# "Use Null Move" = true  # check', '# Style = "Normal"  # combo',
                    '# "Engine Tag" = "hello world"  # string'):
        assert comment in text
    for name, why in (("Hash", "a resource"), ("Threads", "a resource"), ("MultiPV", "analysis"),
                      ("Move Overhead", "time management"), ("Contempt", "a handicap"),
                      ("Search Depth", "a search limit"), ("Flat", "nothing to tune"),
                      ("Ponder", "do not ponder"), ("SyzygyPath", "table base"),
                      ("Clear Hash", "a button"), ("UCI_Chess960", "UCI's own"),
                      ("UCI_Elo", "UCI's own")):
        assert any(ln.startswith(f"#   {name} (") and why in ln for ln in text.splitlines()), name
    spec = load_engine_spec(tmp_path / "every.toml")
    assert check_engine_spec(spec) == "fake-random"  # the check a run makes before it starts
    assert spec.space().reference == (0.0, 300.0, -5.0, 16.0)


def test_include_and_exclude_choose_by_name(tmp_path, cli):
    r = cli("spec", "--uci", EVERY, "--out", "some.toml", "--include", "*value*",
                 "--include", "psqt*", "--exclude", "psqt*", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = tomllib.loads((tmp_path / "some.toml").read_text())
    assert [w["name"] for w in data["weight"]] == ["Knight Value (Middle Game)"]
    text = (tmp_path / "some.toml").read_text()
    assert "#   PSQT[0] Mg.a1+ (spin): left out by --exclude" in text
    assert "#   Aspiration Window (spin): not matched by --include" in text
    r = cli("spec", "--uci", EVERY, "--out", "none.toml", "--include", "nothing*",
                 cwd=tmp_path)
    _one_line_refusal(r, "no option left to tune")
    assert not (tmp_path / "none.toml").exists()


@pytest.mark.parametrize("line, role", [
    ("option name Hash type spin default 16 min 1 max 1024", "out"),
    ("option name Number of Threads type spin default 1 min 1 max 16", "out"),
    ("option name OwnBook type check default true", "off"),
    ("option name Own Book type check default true", "off"),
    ("option name BookFile type string default performance.bin", "out"),
    ("option name Bitbases Cache Size type spin default 16 min 16 max 1024", "out"),
    ("option name Search Time type spin default 0 min 0 max 3600", "out"),
    ("option name NMP Depth Reduction type spin default 3 min 1 max 6", "weight"),
    ("option name Development type spin default 10 min 0 max 50", "weight"),
    ("option name Passed Pawns type spin default 100 min 0 max 400", "weight"),
    ("option name Slow Mover type spin default 100 min 10 max 1000", "out"),
    ("option name Skill Level type spin default 20 min 0 max 20", "out"),
    ("option name Odd type spin default 900 min 0 max 400", "out"),
])
def test_options_that_are_not_tunables_are_left_out(line, role):
    assert choose(parse_option(line)).role == role


SPSA = """# my tune
Knight Value (Middle Game), int, 310, 100, 600, 25, 0.002
PSQT[0] Mg.a1+, int, -5, -50, 50, 5, 0.002

Aspiration Window,16,1,200,10,0.0020
"""

TUNE_OUTPUT = """Stockfish dev-20261201 by the Stockfish developers (see AUTHORS file)
PSQT[0] Mg.a1+,-5,-10,0,0.5,0.0020
Knight Value (Middle Game),300,0,600,30,0.0020
id name Stockfish dev-20261201
option name Hash type spin default 16 min 1 max 33554432
uciok
"""


def test_spsa_lines_give_the_weights_and_their_schedule(tmp_path, cli):
    (tmp_path / "tune.txt").write_text(SPSA)
    r = cli("spec", "--uci", EVERY, "--spsa", "tune.txt", "--out", "made.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    spec = load_engine_spec(tmp_path / "made.toml")
    assert spec.names == ("Knight Value (Middle Game)", "PSQT[0] Mg.a1+", "Aspiration Window")
    assert [(w.reference, w.lower, w.upper) for w in spec.weights] == [
        (310, 100, 600), (-5, -50, 50), (16, 1, 200)]
    text = (tmp_path / "made.toml").read_text()
    assert '# Seed = 0  # spin 0..1000000; not in --spsa tune.txt' in text
    table = tmp_path / "made.spsa"
    assert "--spsa-params made.spsa" in r.stderr
    lines = parse_spsa_lines(table.read_text())
    assert [(ln.name, ln.start, ln.c_end, ln.r_end) for ln in lines] == [
        ("Knight Value (Middle Game)", 310, 25, 0.002), ("PSQT[0] Mg.a1+", -5, 5, 0.002),
        ("Aspiration Window", 16, 10, 0.002)]
    assert read_spsa_params(table, spec) == table.read_text()  # what --spsa-params reads


def test_tune_output_among_the_engines_chatter(tmp_path, cli):
    (tmp_path / "tune.log").write_text(TUNE_OUTPUT)
    assert tune_lines(TUNE_OUTPUT).splitlines()[0] == ""  # the banner; numbering kept
    r = cli("spec", "--uci", EVERY, "--tune", "tune.log", "--out", "sf.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    spec = load_engine_spec(tmp_path / "sf.toml")
    assert spec.names == ("PSQT[0] Mg.a1+", "Knight Value (Middle Game)")
    assert [(w.reference, w.lower, w.upper) for w in spec.weights] == [(-5, -10, 0), (300, 0, 600)]
    lines = parse_spsa_lines((tmp_path / "sf.spsa").read_text())
    assert [(ln.c_end, ln.r_end, ln.kind) for ln in lines] == [(0.5, 0.002, "int"),
                                                               (30, 0.002, "int")]


@pytest.mark.parametrize("flag, text, words", [
    ("--spsa", SPSA.replace("PSQT[0] Mg.a1+, int, -5,", "PSQT[0] Mg.a1+, int, x,"),
     ("--spsa bad.txt, line 3", "expected fishtest")),
    ("--spsa", "Knight Value (Middle Game), int, 700, 100, 600, 25, 0.002\n",
     ("line 1", "outside [100, 600]")),
    ("--tune", TUNE_OUTPUT.replace("300,0,600,30", "300,0,600"), ("--tune bad.txt, line 3",)),
    ("--spsa", "No Such Option, int, 1, 0, 9, 1, 0.002\n", ("'No Such Option' is not an option",)),
    ("--spsa", "Style, int, 1, 0, 9, 1, 0.002\n", ("'Style' is a combo option",)),
    ("--spsa", "Knight Value (Middle Game), int, 300, 0, 5000, 25, 0.002\n",
     ("5000", "at most 2000")),
    ("--spsa", "# nothing\n", ("no parameter lines",)),
])
def test_a_bad_table_is_one_line_and_nothing_is_written(tmp_path, cli, flag, text, words):
    (tmp_path / "bad.txt").write_text(text)
    r = cli("spec", "--uci", EVERY, flag, "bad.txt", "--out", "made.toml", cwd=tmp_path)
    _one_line_refusal(r, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_an_existing_out_is_never_replaced_silently(tmp_path, cli):
    out = tmp_path / "mine.toml"
    out.write_text("# my own spec\n")
    r = cli("spec", "--uci", EVERY, "--out", "mine.toml", cwd=tmp_path)
    _one_line_refusal(r, "mine.toml exists", "--force")
    assert out.read_text() == "# my own spec\n"
    r = cli("spec", "--uci", EVERY, "--out", "mine.toml", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert load_engine_spec(out).names == TUNABLE


@pytest.mark.parametrize("args, words", [
    (("--uci", "/no/such/engine", "--out", "x.toml"), ("did not start",)),
    (("--uci", "'unclosed", "--out", "x.toml"), ("--uci", "quote it")),
    (("--uci", EVERY, "--out", "no/folder/x.toml"), ("does not exist",)),
    (("--uci", EVERY, "--spsa", "a", "--tune", "b", "--out", "x.toml"), ("give one",)),
])
def test_bad_commands_are_one_line(tmp_path, cli, args, words):
    _one_line_refusal(cli("spec", *args, cwd=tmp_path), *words)
    assert not list(tmp_path.iterdir())


def test_odd_names_round_trip_through_the_written_toml():
    """Quotes, backslashes, brackets and non-ASCII letters in option names are written as TOML
    strings that read back to exactly the engine's spelling."""
    names = ('Pawn "Storm" [MG]', "Back\\slash", "Élan Vital", "a=b, c")
    options = tuple(parse_option(f"option name {n} type spin default 5 min 0 max 9")
                    for n in names)
    made = make_spec(command=("eng",), engine_name="odd", options=options, name="odd",
                     source="its UCI options")
    spec = engine_spec_from_text(made.text, where="odd.toml", digest="0")
    assert spec.names == names and [w.option for w in spec.weights] == list(names)
    assert spec_name("Toga II 3.0", "x") == "Toga II 3.0"
    assert spec_name("Stockfish (dev) <x>", "x") == "Stockfish -dev- -x"
    assert spec_name("***", "my-engine") == "my-engine"
