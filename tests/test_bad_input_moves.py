"""Every bad input of the move-model commands and of the final check's options (issue 60): ``nn
train-moves`` (its data, --out, --runs-dir and the values that overflow), a damaged move-model
training under status, resume, export and plot, ``nn info`` of a move model, a spec whose move
model is damaged (``uci``, ``search`` and ``run`` at start), and ``run``'s --final-check-openings and
--final-check-games: exit 2, exactly one line on stderr, no traceback, and nothing created or changed
in the case's folder.

Like tests/test_bad_input.py, the table drives the command line only; each case runs in a folder
of its own holding the input files below and a copy of one stored move-model training.
"""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from badinput import RUN, SPEC, assert_refused, play, run_cli
from test_movetrain import _hidden_model_data

from evotune.engine.movemodel import modelfile as MM

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
RANDOM = bytes((i * 7919 + 13) % 256 for i in range(4096))
MATE = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"  # White is mated

GOOD_MODEL = MM.move_model_bytes(MM.random_model(seed=3, spread=50))
EXTREME_MODEL = MM.move_model_bytes(MM.MoveModel(
    weights=np.full(MM.SET_FEATURES[1], MM.WEIGHT_MAX // 4, dtype=np.int32), scale=1))
DAMAGED_MODEL = GOOD_MODEL[:-8] + bytes(8)  # its checksum no longer holds


def _spec_with(search: str) -> str:
    return SPEC.replace('kind = "builtin"\n', f'kind = "builtin"\n[search]\n{search}\n', 1)


FILES: dict[str, bytes | str] = {
    "good.evomove": GOOD_MODEL,
    "extreme.evomove": EXTREME_MODEL,
    "damaged.evomove": DAMAGED_MODEL,
    "short.evomove": GOOD_MODEL[:40],
    "s_damaged.toml": _spec_with('prior = "model:damaged.evomove"'),
    "s_short.toml": _spec_with('prior = "model:short.evomove"'),
    "s_dir.toml": _spec_with('prior = "model:adir"'),
    "op_empty.epd": "",
    "op_badfen.epd": "not a fen\nxx yy\n",
    "op_binary.epd": RANDOM,
    "op_mate.epd": MATE + "\n",
}

CASES: list[tuple[str, list[str]]] = []


def case(name: str, *args: str) -> None:
    CASES.append((name, list(args)))


# ---- nn train-moves ------------------------------------------------------------------------------
TM = ["nn", "train-moves", "d.txt", "--out", "m.evomove", "--epochs", "1", "--batch", "32",
      "--runs-dir", "runs"]
for data in ("fifo", "/dev/zero", "adir", "missing.txt", "op_binary.epd"):
    case(f"train-moves data {data}", "nn", "train-moves", data, "--out", "m.evomove",
         "--runs-dir", "runs")
for flag, v in (("--out", "d.txt"), ("--out", "./d.txt"), ("--out", "runs/r/model.evomove"),
                ("--out", "runs/r/moves-checkpoint.npz"), ("--out", "runs/new.evomove"),
                ("--out", "nodir/m.evomove"), ("--out", "adir"), ("--out", "fifo"),
                ("--out", "m\nx.evomove"), ("--runs-dir", "nodir/runs"),
                ("--runs-dir", "ru\nns"), ("--runs-dir", "afile"), ("--lr", "1e308"),
                ("--lr", "0"), ("--lr", "nan"), ("--lr", "inf"), ("--lr", "2"),
                ("--l2", "1e308"), ("--l2", "-1"), ("--l2", "nan"), ("--val-share", "1"),
                ("--val-share", "0"), ("--val-share", "nan"), ("--epochs", "0"),
                ("--epochs", "1000000"), ("--batch", "0"), ("--hidden", "33"),
                ("--hidden", "-1"), ("--val-block", "0"), ("--max-bad", "-1"),
                ("--seed", "-1"), ("--run-id", "a/b"), ("--run-id", "a\nb"),
                ("--run-id", "r")):
    case(f"train-moves {flag} {v!r}", *TM, flag, v)
# a runs folder inside a run's folder, and an --out that is the runs folder (not made yet)
case("train-moves --runs-dir inside a run", *TM, "--runs-dir", "runs/r")
case("train-moves --out the runs folder", *TM, "--out", "newruns", "--runs-dir", "newruns")

# ---- a damaged move-model training under every command that reads it ------------------------------
DAMAGES = ("other_size", "nan_w", "inf_w", "huge_w", "neg_v", "neg_epoch", "neg_steps",
           "huge_steps", "bool_epoch", "str_loss", "str_baseline", "str_seconds", "nan_loss",
           "garbage", "missing", "set_hidden", "set_lr", "set_seed", "set_val_share",
           "set_lr_str", "set_features_list")
for d in DAMAGES:
    case(f"status moves {d}", "status", f"@MOVES:{d}", "--runs-dir", "runs")
    case(f"resume moves {d}", "resume", f"@MOVES:{d}", "--runs-dir", "runs")
    case(f"export moves {d}", "export", f"@MOVES:{d}", "--format", "evotune", "--out",
         "e.evomove", "--runs-dir", "runs")
for d in ("other_size", "inf_w", "str_loss", "set_lr", "garbage"):
    case(f"plot moves {d}", "plot", f"@MOVES:{d}", "--runs-dir", "runs", "--reports", "rep")
    case(f"resume moves {d} --generations 3", "resume", f"@MOVES:{d}", "--runs-dir", "runs",
         "--generations", "3")
case("resume moves steps of other data", "resume", "@MOVES:steps_off", "--runs-dir", "runs")

# ---- move-model files --------------------------------------------------------------------------
for flag, v in (("--hidden", "8"), ("--input-format", "bullet"), ("--activation", "relu"),
                ("--king-buckets", "4"), ("--output-buckets", "2")):
    case(f"nn info model {flag} {v}", "nn", "info", "good.evomove", flag, v)
for f in ("damaged.evomove", "short.evomove"):
    case(f"nn info {f}", "nn", "info", f)
for spec in ("s_damaged.toml", "s_short.toml", "s_dir.toml"):
    case(f"uci engine {spec}", "uci", "--engine", spec)
    case(f"search engine {spec}", "search", "startpos", "--depth", "1", "--engine", spec)
    case(f"run engine {spec}", "run", *RUN, "--runs-dir", "pop", "--engine", spec)

# ---- the final check's options, checked before the first game ----------------------------------
R = ["run", *RUN, "--runs-dir", "pop"]
for f in ("op_empty.epd", "op_badfen.epd", "op_binary.epd", "op_mate.epd", "missing.epd", "adir"):
    case(f"run final-check-openings {f}", *R, "--final-check-openings", f)
    case(f"run final-check-openings {f} and no final check", *R, "--final-check-openings", f,
         "--final-check-games", "0")
for v in ("-1", "-2", "3"):
    case(f"run final-check-games {v}", *R, "--final-check-games", v)


# ---- the machinery -------------------------------------------------------------------------------

def _checkpoint(run: Path) -> tuple[dict, dict]:
    with np.load(run / "moves-checkpoint.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(arrays.pop("meta").tobytes()), arrays


def _save(run: Path, meta: dict, arrays: dict) -> None:
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
    (run / "moves-checkpoint.npz").write_bytes(buf.getvalue())


def damage_moves(run: Path, kind: str) -> None:
    """Damage the copy of the stored training ``run`` (2 epochs, linear, feature set 2)."""
    manifest = run / "manifest.json"
    if kind.startswith("set_"):  # a setting changed in the manifest by hand
        doc = json.loads(manifest.read_text())
        key = kind[4:].removesuffix("_str").removesuffix("_list")
        value = {"hidden": 4, "lr": 0.5, "seed": 9, "val_share": 0.3}.get(key)
        value = "x" if kind.endswith("_str") else [1] if kind.endswith("_list") else value
        doc["config"]["settings"][key] = value
        manifest.write_text(json.dumps(doc))
        return
    if kind == "garbage":
        (run / "moves-checkpoint.npz").write_bytes(b"garbage")
        return
    if kind == "missing":
        (run / "moves-checkpoint.npz").unlink()
        return
    meta, a = _checkpoint(run)
    n = a["w"].size
    if kind == "other_size":
        a = {k: np.zeros(n + 3 * (n + 2)) for k in a}  # a model of 3 hidden units
    elif kind in ("nan_w", "inf_w", "huge_w"):
        a["w"][5] = {"nan_w": np.nan, "inf_w": np.inf, "huge_w": 1e300}[kind]
    elif kind == "neg_v":
        a["v"][:] = -1.0
    elif kind == "neg_epoch":
        meta.update(epoch=-3, epochs=[])
    elif kind == "neg_steps":
        meta["steps"] = -5
    elif kind == "huge_steps":
        meta["steps"] = 10 ** 30
    elif kind == "steps_off":
        meta["steps"] += 1
    elif kind == "bool_epoch":
        meta.update(epoch=True, epochs=meta["epochs"][:1])
    elif kind == "str_loss":
        meta["epochs"][0]["loss"] = "x"
    elif kind == "str_baseline":
        meta["baseline"]["top1"] = "x"
    elif kind == "str_seconds":
        meta["seconds"] = "x"
    elif kind == "nan_loss":
        meta["epochs"][1]["loss"] = float("nan")
    else:
        raise AssertionError(kind)
    _save(run, meta, a)


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A finished two-epoch move-model training (runs/r) of d.txt."""
    base = tmp_path_factory.mktemp("stored")
    _hidden_model_data(base / "d.txt", 120, seed=5)
    res = run_cli(["nn", "train-moves", "d.txt", "--out", "m.evomove", "--epochs", "2",
                   "--batch", "32", "--runs-dir", "runs", "--run-id", "r"], base, timeout=600,
                  env=ENV)
    assert res.returncode == 0, res.stderr
    return base


def _prepare(case_dir: Path, args: list[str], stored: Path) -> list[str]:
    case_dir.mkdir()
    for fname, content in FILES.items():
        (case_dir / fname).write_bytes(content if isinstance(content, bytes) else content.encode())
    (case_dir / "adir").mkdir()
    (case_dir / "afile").write_text("x")
    os.mkfifo(case_dir / "fifo")
    shutil.copy(stored / "d.txt", case_dir / "d.txt")
    shutil.copytree(stored / "runs", case_dir / "runs")
    argv = []
    for a in args:
        if a.startswith("@MOVES"):
            damage_moves(case_dir / "runs" / "r", a.partition(":")[2])
            a = "r"
        argv.append(a)
    return argv


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, stored) -> dict:
    """Every case run once, a few at a time (tests/badinput.py)."""
    return play(CASES, lambda d, args: _prepare(d, args, stored),
                tmp_path_factory.mktemp("cases"), workers=4, env=ENV)


@pytest.mark.slow
@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(name, outcomes):
    assert_refused(outcomes[name])


def test_the_table_covers_the_move_model_commands():
    commands = {" ".join(args[:2]) if args[0] == "nn" else args[0] for _, args in CASES}
    assert commands >= {"nn train-moves", "nn info", "status", "resume", "export", "plot", "uci",
                        "search", "run"}
    assert len(CASES) >= 120
