"""Every bad input, on every command and every input file type: exit 2, exactly one line on
stderr, no traceback, and nothing created or changed.

The table is self-contained (it drives the command line only), so the same file measures any
version of evotune: ``PYTHONPATH=<checkout> python -m pytest tests/test_bad_input.py``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
RUN = ["--np", "4", "--generations", "1", "--games", "2", "--depth", "1", "--workers", "1"]

SPEC = """name = "t"
kind = "builtin"
[[weight]]
name = "pawn"
reference = 100
lower = 100
upper = 100
fixed = true
[[weight]]
name = "knight"
reference = 300
[[weight]]
name = "bishop"
reference = 330
[[weight]]
name = "rook"
reference = 500
[[weight]]
name = "queen"
reference = 900
[[weight]]
name = "mobility"
reference = 10
"""


def _spec(**changes) -> str:
    """SPEC with a line replaced: changes map 'old line' -> 'new line'."""
    text = SPEC
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


def _book(entries: list[tuple[int, int, int]]) -> bytes:
    return b"".join(k.to_bytes(8, "big") + m.to_bytes(2, "big") + w.to_bytes(2, "big")
                    + b"\0\0\0\0" for k, m, w in sorted(entries))


START_KEY = 0x463b96181691fc9c  # Polyglot key of the start position
RANDOM = bytes((i * 7919 + 13) % 256 for i in range(4096))

# Input files every case may use (written into the case's folder before it runs).
FILES: dict[str, bytes | str] = {
    "nonutf8.toml": b"np = 6\n# \xff\xfe\xfa\n",
    "binary.toml": RANDOM,
    "badtoml.toml": "np = = 6\n",
    "unknownkey.toml": "population = 3\n",
    "np_str.toml": 'np = "many"\n',
    "np_bool.toml": "np = true\n",
    "np_inf.toml": "np = inf\n",
    "np_huge.toml": "np = 100000000000\n",
    "depth_float.toml": "depth = 1.5\n",
    "strategy_int.toml": "strategy = 5\n",
    "init_nan.toml": "init_low = nan\n",
    "init_inf.toml": "init_high = inf\n",
    "init_neg.toml": "init_low = -1000\ninit_high = -500\n",
    "init_inverted.toml": "init_low = 600\ninit_high = 500\n",
    "maxplies.toml": "max_plies = 99999999999\n",
    "gen0.toml": "generations = 0\n",
    "maxsec_nan.toml": "generations = 0\nmax_seconds = nan\n",
    "maxsec_inf.toml": "generations = 0\nmax_seconds = inf\n",
    "params_list.toml": "params = [1, 2]\n",
    "params_np.toml": "[params]\nnp = 3\n",
    "cluster_bad.toml": "[cluster]\nhost = 'x'\n",
    "nodes_huge.toml": "nodes = 100000000000000000000\n",
    "seed_neg.toml": "seed = -3\n",
    "workers_neg.toml": "workers = -1\n",
    "engine_list.toml": "engine = ['shannon']\n",
    "spec_nonutf8.toml": SPEC.encode() + b"# \xff\n",
    "spec_binary.toml": RANDOM,
    "spec_badtoml.toml": SPEC + "[[[\n",
    "spec_ref_str.toml": _spec(**{"reference = 300": 'reference = "abc"'}),
    "spec_lower_str.toml": _spec(**{"reference = 300": 'reference = 300\nlower = "x"'}),
    "spec_upper_list.toml": _spec(**{"reference = 300": "reference = 300\nupper = [1]"}),
    "spec_fixed_str.toml": _spec(**{"fixed = true": 'fixed = "yes"'}),
    "spec_scale_str.toml": _spec(**{"reference = 300": 'reference = 300\nscale = "x"'}),
    "spec_scale_zero.toml": _spec(**{"reference = 300": "reference = 300\nscale = 0"}),
    "spec_kind_int.toml": _spec(**{'kind = "builtin"': "kind = 5"}),
    "spec_kind_bad.toml": _spec(**{'kind = "builtin"': 'kind = "remote"'}),
    "spec_name_nl.toml": _spec(**{'name = "knight"': 'name = "knight\\n[Result \\"1-0\\"]"'}),
    "spec_specname_nl.toml": _spec(**{'name = "t"': 'name = "evil\\"]\\n[Result \\"1-0\\"]"'}),
    "spec_name_int.toml": _spec(**{'name = "knight"': "name = 7"}),
    "spec_option_nl.toml": _spec(**{"reference = 300": 'reference = 300\noption = "Pawn\\nquit"'}),
    "spec_weight_str.toml": 'name = "t"\nweight = "none"\n',
    "spec_noweights.toml": 'name = "t"\n',
    "spec_dupnames.toml": _spec(**{'name = "bishop"': 'name = "knight"'}),
    "spec_ref_nan.toml": _spec(**{"reference = 300": "reference = nan"}),
    "spec_ref_huge.toml": _spec(**{"reference = 300": "reference = 1e300\nupper = 1e301"}),
    "spec_seven.toml": SPEC + '[[weight]]\nname = "dragon"\nreference = 5\n',
    "spec_uci_nocmd.toml": _spec(**{'kind = "builtin"': 'kind = "uci"'}),
    "spec_uci_cmd_int.toml": _spec(**{'kind = "builtin"': 'kind = "uci"\ncommand = 5'}),
    "spec_uci_missing.toml": _spec(**{'kind = "builtin"':
                                      'kind = "uci"\ncommand = ["/nonexistent/engine"]'}),
    "spec_options_int.toml": _spec(**{'kind = "builtin"': 'kind = "builtin"\noptions = 3'}),
    "spec_option_name_nl.toml": _spec(**{'kind = "builtin"':
                                         'kind = "builtin"\n[options]\n"Hash\\nquit" = 1\n'
                                         '[dummy]'}).replace("[dummy]\n", ""),
    "w_list.json": "[100, 300, 330, 500, 900]",
    "w_nested.json": "[[100, 300, 330], [500, 900, 10]]",
    "w_nan.json": "[100, 300, NaN, 500, 900, 10]",
    "w_inf.json": "[100, 300, 1e400, 500, 900, 10]",
    "w_huge.json": "[100, 300, 330, 500, 900, -2000000]",
    "w_str.json": '[100, "300", 330, 500, 900, 10]',
    "w_bool.json": "[100, true, 330, 500, 900, 10]",
    "w_badjson.json": "[100, 300,",
    "w_nonutf8.json": b"[100, 300, 330, 500, 900, 10] \xff",
    "w_binary.json": RANDOM,
    "w_dict_unknown.json": '{"dragon": 5}',
    "w_dict_str.json": '{"knight": "x"}',
    "w_dict_nested.json": '{"knight": [300]}',
    "w_number.json": "42",
    "w_deep.json": "[" * 100000 + "]" * 100000,
    "w_name_nl.json": '{"knight\\nquit": 300}',
    "op_random.pgn": RANDOM,
    "op_random.epd": RANDOM,
    "op_text.pgn": "hello world\nthis is not a game\n",
    "op_empty.epd": "",
    "op_comments.epd": "# nothing here\n; still nothing\n",
    "op_badfen.epd": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1\n",
    "op_nonutf8.pgn": b'[Event "\xff"]\n\n1. e4 e5 *\n',
    "op_random.bin": RANDOM,
    "op_odd.bin": RANDOM[:100],
    "op_empty.bin": b"",
    "op_sorted_garbage.bin": _book([(k * 2654435761 % 2**64, 0x0C1C, 1) for k in range(64)]),
    "op_illegal.bin": _book([(START_KEY, 0x0000, 5), (START_KEY, 0x0FFF, 5)]),
    "op_random.zip": RANDOM,
    "perft_empty.epd": "",
    "perft_comments.epd": "# no entries\n",
    "perft_nonutf8.epd": FEN.encode() + b" ;D1 20 \xff\n",
    "perft_binary.epd": RANDOM,
    "perft_badentry.epd": FEN + " ;D1 x\n",
    "perft_deep.epd": FEN + " ;D10000 20\n",
    "perft_badfen.epd": "not a fen ;D1 20\n",
    "perft_nocount.epd": FEN + "\n",
}

# (id, command args, expected substring or None). '@RUN' = the damaged-run folder name.
CASES: list[tuple[str, list[str]]] = []


def case(name: str, *args: str) -> None:
    CASES.append((name, list(args)))


# ---- perft -----------------------------------------------------------------------------------
case("perft depth 10000", "perft", FEN, "10000")
case("perft depth 65", "perft", FEN, "65")
case("perft depth -1", "perft", FEN, "-1")
case("perft depth 0", "perft", FEN, "0")
case("perft depth float", "perft", FEN, "1e3")
case("perft divide depth 0", "perft", "--divide", FEN, "0")
case("perft bad fen", "perft", "not a fen", "2")
case("perft illegal position", "perft", "8/8/8/8/8/8/8/8 w - - 0 1", "1")
case("perft no depth", "perft", FEN)
for f in ("perft_empty.epd", "perft_comments.epd", "perft_nonutf8.epd", "perft_binary.epd",
          "perft_badentry.epd", "perft_deep.epd", "perft_badfen.epd", "perft_nocount.epd",
          "missing.epd", "adir"):
    case(f"perft suite {f}", "perft", "--suite", f)
case("perft suite max-nodes -1", "perft", "--suite", "perft_empty.epd", "--max-nodes", "-1")

# ---- search ----------------------------------------------------------------------------------
for w in ("100,300,330,500,-2e6,10", "100,300,330,500,nan,10", "100,300,330,500,inf,10",
          "100,300", "a,b,c,d,e,f", "100,300,330,500,900,10,5", "1e400,300,330,500,900,10", ""):
    case(f"search weights {w!r}", "search", FEN, "--weights", w)
for flag, v in (("--depth", "65"), ("--depth", "0"), ("--depth", "-3"), ("--nodes", "-1"),
                ("--nodes", "1e23"), ("--nodes", "100000000000000000000000")):
    case(f"search {flag} {v}", "search", FEN, flag, v)
case("search bad fen", "search", "xyz")
case("search no kings", "search", "8/8/8/8/8/8/8/8 w - - 0 1")

# ---- match -----------------------------------------------------------------------------------
M = ["match", "reference", "reference", "--games", "2", "--depth", "1"]
for flag, v in (("--games", "3"), ("--games", "0"), ("--games", "-2"), ("--seed", "-1"),
                ("--depth", "0"), ("--depth", "65"), ("--nodes", "-1"),
                ("--nodes", "100000000000000000000000"), ("--max-plies", "99999999999"),
                ("--max-plies", "0"), ("--workers", "-1"), ("--workers", "100000"),
                ("--book-plies", "-1"), ("--movetime", "nan"), ("--movetime", "-1")):
    case(f"match {flag} {v}", *M, flag, v)
case("match resign 0", *M, "--resign", "0", "3")
case("match draw negative", *M, "--draw", "-1", "3", "0")
case("match sprt nan", *M, "--sprt", "nan", "5")
case("match sprt inverted", *M, "--sprt", "10", "0")
for f in ("op_random.pgn", "op_random.epd", "op_text.pgn", "op_empty.epd", "op_comments.epd",
          "op_badfen.epd", "op_nonutf8.pgn", "op_random.bin", "op_odd.bin", "op_empty.bin",
          "op_sorted_garbage.bin", "op_illegal.bin", "op_random.zip", "missing.epd", "adir",
          "noext"):
    case(f"match openings {f}", *M, "--openings", f)
case("match pgn on read-only path", *M, "--pgn", "@RO/games.pgn")
case("match pgn is a folder", *M, "--pgn", "adir")
case("match pgn below a file", *M, "--pgn", "afile/games.pgn")
for f in ("w_list.json", "w_nested.json", "w_nan.json", "w_inf.json", "w_huge.json",
          "w_str.json", "w_bool.json", "w_badjson.json", "w_nonutf8.json", "w_binary.json",
          "w_dict_unknown.json", "w_dict_str.json", "w_dict_nested.json", "w_number.json",
          "w_deep.json", "w_name_nl.json", "missing.json"):
    case(f"match player {f}", "match", f, "reference", "--games", "2", "--depth", "1")
for f in ("spec_nonutf8.toml", "spec_binary.toml", "spec_badtoml.toml", "spec_ref_str.toml",
          "spec_lower_str.toml", "spec_upper_list.toml", "spec_fixed_str.toml",
          "spec_scale_str.toml", "spec_scale_zero.toml", "spec_kind_int.toml",
          "spec_kind_bad.toml", "spec_name_nl.toml", "spec_specname_nl.toml",
          "spec_name_int.toml", "spec_option_nl.toml", "spec_weight_str.toml",
          "spec_noweights.toml", "spec_dupnames.toml", "spec_ref_nan.toml", "spec_ref_huge.toml",
          "spec_seven.toml", "spec_uci_nocmd.toml", "spec_uci_cmd_int.toml",
          "spec_uci_missing.toml", "spec_options_int.toml", "spec_option_name_nl.toml"):
    case(f"match player {f}", "match", f, "reference", "--games", "2", "--depth", "1")
case("match unknown player", "match", "nobody", "reference")

# ---- uci -------------------------------------------------------------------------------------
for f in ("w_list.json", "w_nested.json", "w_nan.json", "w_huge.json", "w_nonutf8.json",
          "w_binary.json", "w_deep.json", "missing.json", "adir"):
    case(f"uci weights {f}", "uci", "--weights", f)

# ---- run ---------------------------------------------------------------------------------------
R = ["run", *RUN, "--out", "pop"]
for flag, v in (("--depth", "65"), ("--depth", "0"), ("--nodes", "-1"),
                ("--nodes", "100000000000000000000000"), ("--np", "1e11"),
                ("--np", "100000000000"), ("--np", "3"), ("--games", "3"), ("--games", "0"),
                ("--seed", "-1"), ("--seed", str(2**64)), ("--workers", "-1"),
                ("--workers", "100000"), ("--generations", "-1"), ("--max-seconds", "nan"),
                ("--max-seconds", "inf"), ("--max-seconds", "-1"), ("--max-games", "-1"),
                ("--strategy", "cmaes-x"), ("--engine", "nosuchengine"),
                ("--openings", "missing.epd"), ("--param", "np=6"), ("--param", "games=4"),
                ("--param", "F"), ("--param", "Fx=0.3"), ("--param", "F=abc"),
                ("--run-id", "a/b"), ("--run-id", "a\nb"), ("--run-id", "../x"),
                ("--run-id", ".hidden"), ("--run-id", "x" * 101), ("--run-id", "t\x1b[31m"),
                ("--backend", "dask"), ("--out", "@RO/pop"), ("--out", "afile")):
    case(f"run {flag} {v!r}", *R, flag, v)
case("run dask unreachable", *R, "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9")
for f in ("nonutf8.toml", "binary.toml", "badtoml.toml", "unknownkey.toml", "np_str.toml",
          "np_bool.toml", "np_inf.toml", "np_huge.toml", "depth_float.toml", "strategy_int.toml",
          "init_nan.toml", "init_inf.toml", "init_neg.toml", "init_inverted.toml",
          "maxplies.toml", "gen0.toml", "maxsec_nan.toml", "maxsec_inf.toml", "params_list.toml",
          "params_np.toml", "cluster_bad.toml", "nodes_huge.toml", "seed_neg.toml",
          "workers_neg.toml", "engine_list.toml", "missing.toml", "adir"):
    case(f"run config {f}", "run", "--config", f, "--out", "pop")
for f in ("spec_nonutf8.toml", "spec_ref_str.toml", "spec_fixed_str.toml", "spec_kind_int.toml",
          "spec_name_nl.toml", "spec_specname_nl.toml", "spec_option_nl.toml",
          "spec_seven.toml", "spec_ref_huge.toml", "spec_dupnames.toml", "spec_uci_missing.toml",
          "spec_option_name_nl.toml"):
    case(f"run engine {f}", *R, "--engine", f)
for f in ("op_random.pgn", "op_random.epd", "op_random.bin", "op_sorted_garbage.bin",
          "op_illegal.bin", "op_empty.epd", "op_nonutf8.pgn"):
    case(f"run openings {f}", *R, "--openings", f)
case("run existing id", *R, "--out", ".", "--run-id", "@RUN")

# ---- resume, status, runs, plot, report, export, verify on damaged or unknown runs ----------------
DAMAGES = ("state_gen_x", "state_games_neg", "state_gen_99", "state_list", "state_missing_old",
           "log_dup", "log_empty", "log_truncated", "log_nonutf8", "log_nokey", "gen_deleted",
           "gen_truncated", "gen_stray", "gens_file", "manifest_list", "manifest_noconfig",
           "manifest_nonutf8")
for d in DAMAGES:
    case(f"resume damaged {d}", "resume", f"@RUN:{d}", "--out", ".", "--generations", "2")
for d in ("state_gen_x", "state_list", "gen_stray", "gens_file", "manifest_list",
          "manifest_noconfig"):
    case(f"status damaged {d}", "status", f"@RUN:{d}", "--out", ".")
    case(f"report damaged {d}", "report", f"@RUN:{d}", "--runs-dir", ".", "--out", "rep")
for d in ("state_gen_x", "gen_truncated", "manifest_list"):
    case(f"plot damaged {d}", "plot", f"@RUN:{d}", "--runs-dir", ".", "--out", "rep")
    case(f"export damaged {d}", "export", f"@RUN:{d}", "--format", "json", "--runs-dir", ".")
case("report verify.json a list", "report", "@RUN:verify_list", "--runs-dir", ".", "--out", "rep")
case("resume unknown", "resume", "nosuch", "--out", ".")
case("resume id with newline", "resume", "a\nb", "--out", ".")
case("resume workers -1", "resume", "@RUN", "--out", ".", "--workers", "-1")
case("resume generations -1", "resume", "@RUN", "--out", ".", "--generations", "-1")
case("status unknown", "status", "nosuch", "--out", ".")
case("plot unknown", "plot", "nosuch", "--runs-dir", ".", "--out", "rep")
case("plot bad axis", "plot", "@RUN", "--runs-dir", ".", "--x", "elo", "--out", "rep")
case("report bad rule", "report", "@RUN", "--runs-dir", ".", "--recommend", "best", "--out",
     "rep")
case("report out read-only", "report", "@RUN", "--runs-dir", ".", "--out", "@RO/rep")
case("export bad format", "export", "@RUN", "--format", "yaml", "--runs-dir", ".")
case("export engine missing", "export", "@RUN", "--format", "uci", "--engine", "nosuch",
     "--runs-dir", ".")
case("export engine nonutf8", "export", "@RUN", "--format", "uci", "--engine",
     "spec_nonutf8.toml", "--runs-dir", ".")
case("export engine option newline", "export", "@RUN", "--format", "uci", "--engine",
     "spec_option_nl.toml", "--runs-dir", ".")
case("export out read-only", "export", "@RUN", "--format", "json", "--out", "@RO/w.json",
     "--runs-dir", ".")
case("export out a folder", "export", "@RUN", "--format", "json", "--out", "adir",
     "--runs-dir", ".")
case("export bad rule", "export", "@RUN", "--format", "json", "--recommend", "x",
     "--runs-dir", ".")
V = ["verify", "@RUN", "--runs-dir", ".", "--games", "2"]
for flag, v in (("--games", "3"), ("--workers", "-1"), ("--workers", "100000"), ("--seed", "-1"),
                ("--depth", "0"), ("--depth", "65"), ("--recommend", "x"),
                ("--backend", "dask"), ("--sprt", "nan", )):
    case(f"verify {flag} {v}", *V, flag, v, *(["1"] if flag == "--sprt" else []))
case("verify unknown", "verify", "nosuch", "--runs-dir", ".")

# ---- experiments -------------------------------------------------------------------------------
for flag, v in (("--first-seed", "-1"), ("--seeds", "0"), ("--seeds", "-1"),
                ("--workers", "-1")):
    case(f"reproduce {flag} {v}", "reproduce", "de-paper", flag, v, "--out", "pop",
         "--reports", "rep")
C = ["compare", "--games-budget", "10", "--out", "pop"]
for flag, v in (("--verify-games", "3"), ("--verify-games", "0"), ("--games-budget", "0"),
                ("--strategies", "x"), ("--np", "3"), ("--depth", "0"), ("--seeds", "-1"),
                ("--workers", "-1")):
    case(f"compare {flag} {v}", *C, flag, v)


# ---- the machinery -------------------------------------------------------------------------------

def _evotune(args, cwd, timeout=120):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("stored")
    res = _evotune(["run", *RUN, "--generations", "2", "--out", str(base), "--run-id", "good"],
                   cwd=base, timeout=600)
    assert res.returncode == 0, res.stderr
    return base / "good"


@pytest.fixture(scope="module")
def read_only(tmp_path_factory):
    """A read-only folder (a read-only tmpfs: root ignores file permissions)."""
    mnt = tmp_path_factory.mktemp("ro")
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mnt)],
                        capture_output=True).returncode == 0
    if not ok and os.geteuid() != 0:
        os.chmod(mnt, 0o555)
        ok = True
    yield mnt if ok else None
    subprocess.run(["umount", str(mnt)], capture_output=True)


def _damage(root: Path, kind: str) -> None:
    state, gens, log = root / "state.json", root / "generations", root / "games.jsonl"

    def edit(path, **kw):
        d = json.loads(path.read_text())
        d.update(kw)
        path.write_text(json.dumps(d))

    lines = log.read_bytes().split(b"\n")[:-1]
    if kind == "state_gen_x":
        edit(state, generation="x")
    elif kind == "state_games_neg":
        edit(state, games=-5)
    elif kind == "state_gen_99":
        edit(state, generation=99)
    elif kind == "state_list":
        state.write_text("[]")
    elif kind == "state_missing_old":
        state.unlink()
        for p in gens.glob("gen-*.json"):
            d = json.loads(p.read_text())
            d.pop("state", None)
            p.write_text(json.dumps(d))
    elif kind == "log_dup":
        log.write_bytes(b"".join(x + b"\n" for x in lines + lines[-1:]))
    elif kind == "log_empty":
        log.write_text("")
    elif kind == "log_truncated":
        log.write_bytes(b"".join(x + b"\n" for x in lines[:2]))
    elif kind == "log_nonutf8":
        log.write_bytes(b"\xff\xfe\n" + b"".join(x + b"\n" for x in lines))
    elif kind == "log_nokey":
        log.write_bytes(b'{"white": "x"}\n' + b"".join(x + b"\n" for x in lines))
    elif kind == "gen_deleted":
        (gens / "gen-0001.json").unlink()
    elif kind == "gen_truncated":
        with open(gens / "gen-0001.json", "r+b") as fh:
            fh.truncate(100)
    elif kind == "gen_stray":
        (gens / "gen-abc.json").write_text("{}")
    elif kind == "gens_file":
        shutil.rmtree(gens)
        gens.write_text("x")
    elif kind == "manifest_list":
        (root / "manifest.json").write_text("[]")
    elif kind == "manifest_noconfig":
        edit(root / "manifest.json", config=None)
    elif kind == "manifest_nonutf8":
        (root / "manifest.json").write_bytes(b"\xff" * 8)
    elif kind == "verify_list":
        (root / "verify.json").write_text("[]")
    else:
        raise AssertionError(kind)


def _snapshot(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name == ".lock":
            continue
        rel = p.relative_to(root).as_posix()
        out[rel] = p.read_bytes() if p.is_file() else "dir"
    return out


def _prepare(case_dir: Path, args: list[str], stored_run: Path, read_only) -> list[str] | None:
    case_dir.mkdir()
    for fname, content in FILES.items():
        (case_dir / fname).write_bytes(content if isinstance(content, bytes) else content.encode())
    (case_dir / "adir").mkdir()
    (case_dir / "afile").write_text("x")
    (case_dir / "noext").write_text(FEN + "\n")
    argv = []
    for a in args:
        if a.startswith("@RUN"):
            _, _, damage = a.partition(":")
            shutil.copytree(stored_run, case_dir / "good")
            if damage:
                _damage(case_dir / "good", damage)
            a = "good"
        elif "@RO" in a:
            if read_only is None:
                return None
            a = a.replace("@RO", str(read_only))
        argv.append(a)
    return argv


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, stored_run, read_only) -> dict:
    """Every case run once, several at a time (they are independent subprocesses):
    name -> (returncode, stderr, changed) or None when the case cannot be set up here."""
    from concurrent.futures import ThreadPoolExecutor

    base = tmp_path_factory.mktemp("cases")

    def one(i_case):
        i, (name, args) = i_case
        case_dir = base / f"c{i:03d}"
        argv = _prepare(case_dir, args, stored_run, read_only)
        if argv is None:
            return name, None
        before = _snapshot(case_dir)
        try:
            res = _evotune(argv, cwd=case_dir)
        except subprocess.TimeoutExpired:  # a hang: the process was killed after 120 s
            return name, ("hang", "no answer within 120 s", _snapshot(case_dir) != before)
        return name, (res.returncode, res.stderr, _snapshot(case_dir) != before)

    with ThreadPoolExecutor(max_workers=6) as pool:
        return dict(pool.map(one, enumerate(CASES)))


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(name, outcomes):
    if outcomes[name] is None:
        pytest.skip("no read-only folder can be made here (mount failed and running as root)")
    code, stderr, changed = outcomes[name]
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 2, (code, stderr[-1000:])
    assert len(lines) == 1, stderr
    assert lines[0].startswith("evotune: error:"), lines[0]
    assert not changed, "files were created or changed"


def test_the_table_is_large_enough():
    assert len(CASES) >= 150
    commands = {args[0] for _, args in CASES}
    assert commands >= {"perft", "search", "match", "uci", "run", "resume", "status", "plot",
                        "report", "export", "verify", "reproduce", "compare"}
