"""Every bad input of ``evotune datagen`` and ``evotune texel`` (and of resuming a fit): exit 2,
exactly one line on stderr, no traceback, and nothing created or changed in the case's folder
(output files, progress files, lock files, run folders).

Like tests/test_bad_input.py (which covers ``run`` and the other commands), the table drives
the command line only; each case runs in a folder of its own holding the input files below.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from badinput import assert_refused, play, run_cli

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PY = json.dumps(sys.executable)
RANDOM = bytes((i * 7919 + 13) % 256 for i in range(4096))
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
IN_CHECK = "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1"  # never quiet: rejected by the fit's filter


def _uci_spec(command: str) -> str:
    return f'name = "bad"\nkind = "uci"\ncommand = {command}\n'


FILES: dict[str, bytes | str] = {
    "op_empty.epd": "",
    "op_comments.epd": "# nothing here\n",
    "op_binary.epd": RANDOM,
    "op_random.bin": RANDOM,
    "op_badfen.epd": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1\n",
    "op_nonutf8.pgn": b'[Event "\xff"]\n\n1. e4 e5 *\n',
    "w_nan.json": "[100, 300, NaN, 500, 900, 10]",
    "w_short.json": "[100, 300]",
    "w_binary.json": RANDOM,
    "eng_exits.toml": _uci_spec(f'[{PY}, "-c", "import sys; sys.exit(3)"]'),
    "eng_silent.toml": _uci_spec(f'[{PY}, "-c", "import time; time.sleep(600)"]'),
    "eng_garbage.toml": _uci_spec(f'[{PY}, "-c", "while True: print(\\"garbage\\", flush=True)"]'),
    "eng_missing.toml": _uci_spec('["/nonexistent/engine"]'),
    "eng_nocmd.toml": 'name = "bad"\nkind = "uci"\n',
    "eng_fixed.toml": 'name = "f"\n[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n',
    "foreign.txt": "hello\n",
    "d_empty.txt": "",
    "d_comments.txt": "# only a comment\n\n",
    "d_one.txt": f"{START} [0.5]\n",
    "d_check.txt": "".join(f"{IN_CHECK} [0.0]\n" for _ in range(20)),
    "d_three.txt": f"{START} [0.5]\n" * 3,
    "d_binary.txt": RANDOM,
    "d_nonutf8.txt": f"{START} [0.5]\n".encode() + b"\xff\xfe\n",
    "d_badline.txt": f"{START} [0.5]\nnot a position [1.0]\n",
}

CASES: list[tuple[str, list[str]]] = []


def case(name: str, *args: str) -> None:
    CASES.append((name, list(args)))


# ---- datagen -----------------------------------------------------------------------------------
D = ["datagen", "--games", "2", "--depth", "1", "--out", "out/pos.txt"]
for flag, v in (("--games", "0"), ("--games", "-1"), ("--games", "1e23"),
                ("--games", "100000000000000000000000"), ("--depth", "0"), ("--depth", "100"),
                ("--nodes", "-1"), ("--nodes", "100000000000000000000000"), ("--seed", "-1"),
                ("--seed", str(2**64)), ("--workers", "-1"), ("--workers", "100000"),
                ("--per-game", "10001"), ("--per-game", "-3"), ("--random-plies", "-1"),
                ("--filter", "nope"), ("--format", "bullet"),
                ("--chunk", "0"), ("--chunk", "100000000000000"), ("--positions", "-1"),
                ("--format", "xml"), ("--max-plies", "0"), ("--engine", "nosuchengine"),
                ("--engine", "shannon:missing.json"), ("--engine", "shannon:w_nan.json"),
                ("--engine", "shannon:w_short.json"), ("--engine", "shannon:w_binary.json"),
                ("--engine", "eng_exits.toml"), ("--engine", "eng_silent.toml"),
                ("--engine", "eng_garbage.toml"), ("--engine", "eng_missing.toml"),
                ("--engine", "eng_nocmd.toml"), ("--openings", "missing.epd"),
                ("--openings", "adir"), ("--out", "@RO/pos.txt"), ("--out", "/dev/full"),
                ("--out", "fifo"), ("--out", "adir"), ("--out", "afile/pos.txt"),
                ("--out", "foreign.txt")):
    case(f"datagen {flag} {v}", *D, flag, v)
for f in ("op_empty.epd", "op_comments.epd", "op_binary.epd", "op_random.bin", "op_badfen.epd",
          "op_nonutf8.pgn"):
    case(f"datagen openings {f}", *D, "--openings", f)
for damage in ("progress_json", "progress_list", "progress_counts", "other_settings",
               "file_missing", "file_shorter", "file_changed", "foreign_tail", "tail_done"):
    case(f"datagen rerun {damage}", *D, "--out", f"@OUT:{damage}")

# ---- texel ---------------------------------------------------------------------------------------
T = ["texel", "good.txt", "--epochs", "1", "--runs-dir", "pop"]
for f in ("d_empty.txt", "d_comments.txt", "d_one.txt", "d_check.txt", "d_binary.txt",
          "d_nonutf8.txt", "d_badline.txt", "missing.txt", "adir"):
    case(f"texel data {f}", "texel", f, "--epochs", "1", "--runs-dir", "pop")
case("texel val-share 0.1 of 3 holds out none", "texel", "d_three.txt", "--runs-dir", "pop")
case("texel val-share 0.9 of 3 trains on none", "texel", "d_three.txt", "--runs-dir", "pop",
     "--val-share", "0.9")
for flag, v in (("--tol", "nan"), ("--tol", "inf"), ("--tol", "-1"), ("--lr", "0"),
                ("--lr", "nan"), ("--lr", "inf"), ("--l2", "-1"), ("--l2", "nan"),
                ("--l2", "inf"), ("--l2", "x"), ("--k", "0"), ("--k", "x"), ("--k", "inf"),
                ("--val-share", "1"), ("--val-share", "-0.1"), ("--val-share", "nan"),
                ("--val-share", "0"), ("--val-block", "0"), ("--epochs", "0"), ("--iters", "0"),
                ("--max-positions", "-1"), ("--max-bad", "-1"), ("--seed", "-1"),
                ("--seed", str(2**64)), ("--workers", "-1"), ("--workers", "100000"),
                ("--engine", "nosuchengine"), ("--engine", "eng_fixed.toml"),
                ("--engine", "eng_exits.toml"), ("--init", "missing.json"),
                ("--init", "w_nan.json"), ("--init", "w_short.json"), ("--optimizer", "sgd"),
                ("--run-id", "a/b"), ("--run-id", "../x"), ("--run-id", "a\nb"),
                ("--runs-dir", "@RO/pop"), ("--runs-dir", "/dev/full"),
                ("--runs-dir", "afile"), ("--runs-dir", "afile/pop"),
                ("--runs-dir", "@FIT")):
    case(f"texel {flag} {v!r}", *T, flag, v)
case("texel existing run id", *T, "--runs-dir", ".", "--run-id", "@FIT")
case("resume fit with its data file gone", "resume", "@FIT:data_gone", "--runs-dir", ".")
case("resume fit with its data file changed", "resume", "@FIT:data_changed", "--runs-dir", ".")


# ---- the machinery -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A finished datagen output with the settings of the cases (out/pos.txt), a larger one
    (good.txt) and a finished fit of it (fit)."""
    base = tmp_path_factory.mktemp("stored")
    (base / "out").mkdir()  # an output's folder is not made for it (issue 38 item 16)
    res = run_cli(D, base, timeout=600, env=ENV)
    assert res.returncode == 0, res.stderr
    res = run_cli(["datagen", "--games", "4", "--chunk", "2", "--depth", "1", "--out",
                   "good.txt"], base, timeout=600, env=ENV)
    assert res.returncode == 0, res.stderr
    res = run_cli(["texel", "good.txt", "--epochs", "1", "--l2", "0", "--runs-dir", ".",
                   "--run-id", "fit"], base, timeout=600, env=ENV)
    assert res.returncode == 0, res.stderr
    return base


def _damage_output(folder: Path, kind: str) -> None:
    """Damage the copy of the datagen output ``folder/out/pos.txt`` (and its progress file)
    whose settings equal those of the case (D: 2 games at depth 1)."""
    out = folder / "out" / "pos.txt"
    prog = Path(str(out) + ".progress.json")
    state = json.loads(prog.read_text())
    data = out.read_bytes()
    if kind == "progress_json":
        prog.write_text("{")
    elif kind == "progress_list":
        prog.write_text("[]")
    elif kind == "progress_counts":
        prog.write_text(json.dumps({**state, "bytes": -5}))
    elif kind == "other_settings":
        prog.write_text(json.dumps({**state, "identity": {**state["identity"], "seed": 99}}))
    elif kind == "file_missing":
        out.unlink()
    elif kind == "file_shorter":
        out.write_bytes(data[:10])
    elif kind == "file_changed":  # same length, one byte changed in the recorded part
        out.write_bytes(data[:5] + (b"x" if data[5:6] != b"x" else b"y") + data[6:])
    elif kind == "foreign_tail":  # more bytes after the record than one chunk can hold
        out.write_bytes(data + b"x" * 100_000)
    elif kind == "tail_done":  # every game recorded: bytes after them cannot be checked
        out.write_bytes(data + data[:50])
    else:
        raise AssertionError(kind)


def _prepare(case_dir: Path, args: list[str], stored: Path, read_only) -> list[str] | None:
    case_dir.mkdir()
    for fname, content in FILES.items():
        (case_dir / fname).write_bytes(content if isinstance(content, bytes) else content.encode())
    (case_dir / "adir").mkdir()
    (case_dir / "afile").write_text("x")
    os.mkfifo(case_dir / "fifo")
    shutil.copy(stored / "good.txt", case_dir / "good.txt")
    if not any(a.startswith("@OUT") for a in args):
        (case_dir / "out").mkdir()  # each case is refused for its own reason, not a missing out/
    argv = []
    for a in args:
        if a.startswith("@OUT"):
            shutil.copytree(stored / "out", case_dir / "out")
            _damage_output(case_dir, a.partition(":")[2])
            a = "out/pos.txt"
        elif a.startswith("@FIT"):
            shutil.copytree(stored / "fit", case_dir / "fit")
            damage = a.partition(":")[2]
            if damage == "data_gone":
                (case_dir / "good.txt").unlink()
            elif damage == "data_changed":
                with open(case_dir / "good.txt", "a") as fh:
                    fh.write(f"{START} [1.0]\n")
            a = "fit"
        elif "@RO" in a:
            if read_only is None:
                return None
            a = a.replace("@RO", str(read_only))
        argv.append(a)
    return argv


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, stored, read_only) -> dict:
    """Every case run once, a few at a time (tests/badinput.py)."""
    return play(CASES, lambda d, args: _prepare(d, args, stored, read_only),
                tmp_path_factory.mktemp("cases"), workers=4, env=ENV)


@pytest.mark.slow
@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(name, outcomes):
    if outcomes[name] is None:
        pytest.skip("no read-only folder can be made here (mount failed and running as root)")
    assert_refused(outcomes[name])


def test_the_table_covers_both_commands():
    commands = [args[0] for _, args in CASES]
    assert commands.count("datagen") >= 50 and commands.count("texel") >= 50
    assert "resume" in commands
