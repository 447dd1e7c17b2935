"""The machinery of the bad-input tables (tests/test_bad_input*.py) and the run table's input
files: each case's command runs in a fresh folder of its own, several cases at a time, and must
be refused in one line on stderr ('evotune: error: ...'), exit 2, no traceback, with nothing
created or changed in its folder.

The tables drive the command line only, so they measure any version of evotune:
``PYTHONPATH=<checkout> python -m pytest tests/test_bad_input.py``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def spec_text(**changes) -> str:
    """SPEC with a line replaced: changes map 'old line' -> 'new line'."""
    text = SPEC
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


def book(entries: list[tuple[int, int, int]]) -> bytes:
    return b"".join(k.to_bytes(8, "big") + m.to_bytes(2, "big") + w.to_bytes(2, "big")
                    + b"\0\0\0\0" for k, m, w in sorted(entries))


START_KEY = 0x463b96181691fc9c  # Polyglot key of the start position
RANDOM = bytes((i * 7919 + 13) % 256 for i in range(4096))

# Input files every case may use (written into the case's folder before it runs).
RUN_FILES: dict[str, bytes | str] = {
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
    "spec_ref_str.toml": spec_text(**{"reference = 300": 'reference = "abc"'}),
    "spec_lower_str.toml": spec_text(**{"reference = 300": 'reference = 300\nlower = "x"'}),
    "spec_upper_list.toml": spec_text(**{"reference = 300": "reference = 300\nupper = [1]"}),
    "spec_fixed_str.toml": spec_text(**{"fixed = true": 'fixed = "yes"'}),
    "spec_scale_str.toml": spec_text(**{"reference = 300": 'reference = 300\nscale = "x"'}),
    "spec_scale_zero.toml": spec_text(**{"reference = 300": "reference = 300\nscale = 0"}),
    "spec_kind_int.toml": spec_text(**{'kind = "builtin"': "kind = 5"}),
    "spec_kind_bad.toml": spec_text(**{'kind = "builtin"': 'kind = "remote"'}),
    "spec_name_nl.toml": spec_text(**{'name = "knight"': 'name = "knight\\n[Result \\"1-0\\"]"'}),
    "spec_specname_nl.toml": spec_text(**{'name = "t"': 'name = "evil\\"]\\n[Result \\"1-0\\"]"'}),
    "spec_name_int.toml": spec_text(**{'name = "knight"': "name = 7"}),
    "spec_option_nl.toml": spec_text(**{"reference = 300": 'reference = 300\noption = "Pawn\\nquit"'}),
    "spec_weight_str.toml": 'name = "t"\nweight = "none"\n',
    "spec_noweights.toml": 'name = "t"\n',
    "spec_dupnames.toml": spec_text(**{'name = "bishop"': 'name = "knight"'}),
    "spec_ref_nan.toml": spec_text(**{"reference = 300": "reference = nan"}),
    "spec_ref_huge.toml": spec_text(**{"reference = 300": "reference = 1e300\nupper = 1e301"}),
    "spec_seven.toml": SPEC + '[[weight]]\nname = "dragon"\nreference = 5\n',
    "spec_uci_nocmd.toml": spec_text(**{'kind = "builtin"': 'kind = "uci"'}),
    "spec_uci_cmd_int.toml": spec_text(**{'kind = "builtin"': 'kind = "uci"\ncommand = 5'}),
    "spec_uci_missing.toml": spec_text(**{'kind = "builtin"':
                                      'kind = "uci"\ncommand = ["/nonexistent/engine"]'}),
    "spec_options_int.toml": spec_text(**{'kind = "builtin"': 'kind = "builtin"\noptions = 3'}),
    "spec_option_name_nl.toml": spec_text(**{'kind = "builtin"':
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
    "op_sorted_garbage.bin": book([(k * 2654435761 % 2**64, 0x0C1C, 1) for k in range(64)]),
    "op_illegal.bin": book([(START_KEY, 0x0000, 5), (START_KEY, 0x0FFF, 5)]),
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


def run_cli(args: Sequence[str], cwd: Path, *, timeout: float = 120, env: dict | None = None
            ) -> subprocess.CompletedProcess:
    """``python -m evotune.cli ARGS`` in ``cwd`` (no standard input)."""
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=cwd,
                          env=dict(os.environ) if env is None else env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def snapshot(root: Path) -> dict:
    """Every path under ``root`` with its bytes ('dir', 'fifo'); a run folder's .lock is left
    out (reading a run takes it and writes its PID)."""
    out: dict = {}
    for p in sorted(root.rglob("*")):
        if p.name == ".lock":
            continue
        rel = p.relative_to(root).as_posix()
        out[rel] = "fifo" if p.is_fifo() else p.read_bytes() if p.is_file() else "dir"
    return out


class Zygote:
    """tests/badinput_zygote.py: runs cases as forked children of one process that imported
    evotune once (a case then costs its command, not an interpreter's and numba's start-up)."""

    def __init__(self, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("badinput_zygote.py"))],
            env=dict(os.environ) if env is None else env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1)
        assert json.loads(self.proc.stdout.readline()) == {"ready": True}

    def run(self, args: Sequence[str], cwd: Path, timeout: float) -> tuple[int | str, str]:
        out, err = cwd.parent / f".{cwd.name}.out", cwd.parent / f".{cwd.name}.err"
        self.proc.stdin.write(json.dumps({"args": list(args), "cwd": str(cwd), "out": str(out),
                                          "err": str(err), "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        code = json.loads(self.proc.stdout.readline())["code"]
        stderr = err.read_text(errors="replace")
        if code == "hang":
            stderr = f"no answer within {timeout:g} s"
        return code, stderr

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def play(cases: Sequence[tuple[str, list[str]]], prepare: Callable[[Path, list[str]],
         list[str] | None], base: Path, *, workers: int, timeout: float = 120,
         env: dict | None = None) -> dict:
    """Run every case once, ``workers`` at a time (one forking Zygote per worker): name -> None
    when ``prepare(case_dir, args)`` says the case cannot be set up here, else (returncode or
    'hang', stderr, the paths created or changed)."""
    local = threading.local()
    seconds: dict[str, float] = {}
    zygotes: list[Zygote] = []
    lock = threading.Lock()

    def one(i_case):
        i, (name, args) = i_case
        case_dir = base / f"c{i:03d}"
        argv = prepare(case_dir, args)
        if argv is None:
            return name, None
        if not hasattr(local, "zygote"):
            local.zygote = Zygote(env)
            with lock:
                zygotes.append(local.zygote)
        before = snapshot(case_dir)
        t0 = time.monotonic()
        code, stderr = local.zygote.run(argv, case_dir, timeout)
        seconds[name] = time.monotonic() - t0
        after = snapshot(case_dir)
        return name, (code, stderr, sorted(k for k in set(before) | set(after)
                                           if before.get(k) != after.get(k)))

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(pool.map(one, enumerate(cases)))
    finally:
        for z in zygotes:
            z.close()
        if os.environ.get("EVOTUNE_CASE_SECONDS"):  # where the table's time goes, slowest first
            with open(os.environ["EVOTUNE_CASE_SECONDS"], "a") as f:
                for name, t in sorted(seconds.items(), key=lambda kv: -kv[1]):
                    f.write(f"{t:8.2f}  {name}\n")


def assert_refused(outcome) -> None:
    """The case's command was refused: exit 2, one 'evotune: error:' line, nothing changed."""
    code, stderr, changed = outcome
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 2, (code, stderr[-1000:])
    assert len(lines) == 1, stderr
    assert lines[0].startswith("evotune: error:"), lines[0]
    assert not changed, f"files were created or changed: {changed}"


def damage_run(root: Path, kind: str) -> None:
    """Damage the stored run copied to ``root`` as case ``kind`` says."""
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


def prepare_run_case(case_dir: Path, args: list[str], stored_run: Path, read_only
                     ) -> list[str] | None:
    """Write the run table's input files into ``case_dir`` and resolve ``args``: '@RUN[:damage]'
    is a copy of the stored run (damaged), '@RO' the read-only folder. None: no read-only
    folder can be made here."""
    case_dir.mkdir()
    for fname, content in RUN_FILES.items():
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
                damage_run(case_dir / "good", damage)
            a = "good"
        elif "@RO" in a:
            if read_only is None:
                return None
            a = a.replace("@RO", str(read_only))
        argv.append(a)
    return argv
