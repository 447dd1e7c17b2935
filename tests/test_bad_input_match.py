"""Bad inputs of the commands that play matches: match (built-in and UCI players), verify,
compare and gauntlets (run --opponents, also from a config file). Each: exit 2, exactly one
line on stderr, no traceback, nothing created or changed; the same machinery as
tests/test_bad_input.py (which covers run), with UCI engine specs for scripted fake engines."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from badinput import RUN_FILES, assert_refused, play, prepare_run_case

FAKE = Path(__file__).resolve().parent / "fake_engines"


def _uci(command: list[str], *, upper: int = 1000, options: str = "Seed = 7") -> str:
    return (f'name = "fake"\nkind = "uci"\ncommand = {json.dumps(command)}\n[options]\n'
            f'{options}\n[[weight]]\nname = "knight"\nreference = 300\nlower = 0\n'
            f'upper = {upper}\noption = "KnightValue"\n')


PY = sys.executable
EXTRA: dict[str, str] = {
    "uci_ok.toml": _uci([PY, str(FAKE / "random_mover.py")]),
    "uci_silent.toml": _uci([PY, "-c", "import time; time.sleep(60)"]),
    "uci_exits.toml": _uci([PY, "-c", "pass"]),
    "uci_garbage.toml": _uci([PY, "-c", "print('hello'); print('world')"]),
    "uci_cmd_nl.toml": _uci([PY, str(FAKE / "random_mover.py"), "--pids", "a\nb"]),
    "uci_unknown_option.toml": _uci([PY, str(FAKE / "random_mover.py")],
                                    options="NoSuchOption = 3"),
    "uci_bad_option_value.toml": _uci([PY, str(FAKE / "random_mover.py")], options="Seed = -5"),
    "gauntlet_int.toml": "np = 4\ngenerations = 1\ngames = 2\ndepth = 1\nopponents = 5\n",
    "gauntlet_missing.toml": ('np = 4\ngenerations = 1\ngames = 2\ndepth = 1\n'
                              'opponents = "nosuch"\n'),
}
OPENINGS_NL = "o\npen.epd"


CASES: list[tuple[str, list[str]]] = []


def case(name: str, *args: str) -> None:
    CASES.append((name, list(args)))


# ---- match -----------------------------------------------------------------------------------
M = ["match", "shannon", "shannon", "--games", "2", "--depth", "1"]
U = ["match", "uci_ok.toml", "shannon", "--games", "2", "--depth", "1"]
for tc in ("10+", "+1", "1e3", "abc", "0", "10+-1", "inf", "nan+1", "10 + 1", "-5"):
    case(f"match --tc {tc!r}", *U, "--tc", tc)
case("match --tc and --movetime", *U, "--tc", "10+0.1", "--movetime", "0.1")
for v in ("-1", "nan", "inf"):
    case(f"match --time-margin {v}", *U, "--tc", "10+0.1", "--time-margin", v)
case("match --movetime huge", *U, "--movetime", "1e300")
for f in ("uci_silent.toml", "uci_exits.toml", "uci_garbage.toml", "uci_cmd_nl.toml",
          "uci_unknown_option.toml", "uci_bad_option_value.toml"):
    case(f"match uci player {f}", "match", f, "shannon", "--games", "2", "--depth", "1")
    case(f"match uci player {f} as B", "match", "uci_ok.toml", f, "--games", "2")
case("match openings name with a line break", *M, "--openings", OPENINGS_NL)
case("match uci openings name with a line break", *U, "--openings", OPENINGS_NL,
     "--pgn", "games.pgn")
case("match uci games odd", *U, "--games", "5")
case("match uci workers -1", *U, "--workers", "-1")
case("match uci sprt and games 0", *U, "--sprt", "0", "5", "--games", "0")
case("match spec with empty weights", "match", "uci_ok.toml:", "shannon")
case("match spec weights missing", "match", "uci_ok.toml:missing.json", "shannon")
case("match spec weights nan", "match", "shannon:w_nan.json", "shannon")
case("match spec weights binary", "match", "shannon:w_binary.json", "shannon")
case("match empty player", "match", "", "shannon")
case("match blank player", "match", "  ", "shannon")
case("match player a folder", "match", "adir", "shannon")
case("match pgn a folder", *U, "--pgn", "adir")
case("match pgn read-only", *U, "--pgn", "@RO/g.pgn")
case("match book plies huge", *M, "--openings", "book", "--book-plies", "100000")
case("match seed too big", *M, "--seed", str(2**64))

# ---- verify -----------------------------------------------------------------------------------
V = ["verify", "@RUN", "--runs-dir", ".", "--games", "2", "--workers", "1"]
for tc in ("10+", "1e3", "abc", "0", "+1"):
    case(f"verify --tc {tc!r}", *V, "--tc", tc)
case("verify --tc and --movetime", *V, "--tc", "10+0.1", "--movetime", "0.1")
for v in ("-1", "nan", "inf"):
    case(f"verify --movetime {v}", *V, "--movetime", v)
for flag, v in (("--games", "0"), ("--games", "-2"), ("--games", "100000"),
                ("--seed", str(2**64)), ("--depth", "-1"), ("--scheduler", "tcp://x:1")):
    case(f"verify {flag} {v}", *V, flag, v)
case("verify sprt inverted", *V, "--sprt", "10", "0")
for opp in ("nosuch", "", "shannon:missing.json", "shannon:w_nan.json", "shannon:",
            "uci_exits.toml", "uci_cmd_nl.toml", "spec_binary.toml", "adir"):
    case(f"verify --opponents {opp!r}", *V, "--opponents", opp)
case("verify missing runs dir", "verify", "good", "--runs-dir", "nosuchdir")
case("verify run id with a line break", "verify", "a\nb", "--runs-dir", ".")

# ---- compare ----------------------------------------------------------------------------------
C = ["compare", "--max-games", "10", "--np", "4", "--depth", "1", "--verify-games", "2",
     "--runs-dir", "pop", "--reports", "rep"]
for s in ("de,de", "de,jde,de", "ng:NGOpt,ng:NGOpt", "", ",", "de,x", "ng:"):
    case(f"compare --strategies {s!r}", *C, "--strategies", s)
for flag, v in (("--max-games", "-5"), ("--max-games", "1e3"), ("--np", "100000"),
                ("--depth", "65"), ("--seeds", "0"), ("--verify-every", "-1"),
                ("--verify-games", "-2"), ("--init", "middle"), ("--engine", "nosuch"),
                ("--engine", "spec_binary.toml"), ("--engine", "spec_name_nl.toml"),
                ("--engine", "uci_exits.toml"), ("--workers", "100000"),
                ("--backend", "dask")):
    case(f"compare {flag} {v}", *C, flag, v)
case("compare runs dir is a file", "compare", "--max-games", "10", "--runs-dir", "afile",
     "--strategies", "de")

# ---- gauntlets (run --opponents, or opponents in a config file) -------------------------------
G = ["run", "--np", "4", "--generations", "1", "--games", "2", "--depth", "1", "--workers", "1",
     "--runs-dir", "pop"]
for opp in ("nosuch", ",", "shannon,,pst", "shannon:missing.json", "shannon:w_nan.json",
            "shannon:", "uci_exits.toml", "uci_silent.toml", "uci_cmd_nl.toml",
            "spec_binary.toml", "adir", "w_binary.json"):
    case(f"gauntlet --opponents {opp!r}", *G, "--opponents", opp)
case("gauntlet with td", *G, "--strategy", "td", "--opponents", "shannon")
case("gauntlet uci engine with a bad option value", *G, "--engine", "uci_bad_option_value.toml",
     "--opponents", "shannon")
case("gauntlet uci engine, games odd", *G, "--engine", "uci_ok.toml", "--opponents", "shannon",
     "--games", "3")
case("gauntlet uci engine, tc malformed", *G, "--engine", "uci_ok.toml", "--opponents",
     "shannon", "--tc", "10+")
for f in ("gauntlet_int.toml", "gauntlet_missing.toml"):
    case(f"gauntlet config {f}", "run", "--config", f, "--runs-dir", "pop")


# ---- the machinery (tests/badinput.py) ------------------------------------------------------------

@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, stored_run, read_only) -> dict:
    """Every case run once, a few at a time, in a folder with the run table's files, the UCI
    specs above and an openings file whose name holds a line break."""
    openings = (Path(__file__).resolve().parents[1] / "evotune" / "data" / "2moves_v1.epd")

    def prepare(case_dir, args):
        argv = prepare_run_case(case_dir, args, stored_run, read_only)
        if argv is not None:
            for fname, content in EXTRA.items():
                (case_dir / fname).write_text(content)
            (case_dir / OPENINGS_NL).write_bytes(openings.read_bytes())
        return argv

    return play(CASES, prepare, tmp_path_factory.mktemp("cases"), workers=4, timeout=60)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(name, outcomes):
    if outcomes[name] is None:
        pytest.skip("no read-only folder can be made here (mount failed and running as root)")
    assert_refused(outcomes[name])


def test_the_table_covers_every_match_command():
    assert len(CASES) >= 100
    assert {args[0] for _, args in CASES} == {"match", "verify", "compare", "run"}
    assert sum("--opponents" in args or "gauntlet" in name for name, args in CASES) >= 15
    assert len(RUN_FILES) > 50  # the shared input files are there
