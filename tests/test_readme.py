"""The README's command lines run as written, in order (issue 37, item 2): each `evotune ...` line
of its shell blocks, with its budgets scaled down to seconds (fewer games, generations, epochs, a
shallower search), runs in one folder and exits 0; the later lines use what the earlier made."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

SMALL = {"--games": "2", "--max-games": "8", "--np": "4", "--epochs": "1", "--nodes": "50",
         "--also-depth": "2", "--batch": "64"}
"""Flag -> the tiny value the test gives it (the README's budgets are minutes to hours)."""
QUIET = ("run", "datagen", "match", "verify", "texel", "resume", "plot", "report")
"""Commands that take --quiet (the test needs no progress)."""
DATAGEN_GAMES = "40"
"""datagen's games: enough positions for a fit and a training to have a validation split."""


def readme_commands() -> list[str]:
    """The `evotune` command lines of the README's shell blocks, in order (comments dropped,
    'a; b' split)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = []
    for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang:  # toml: a spec to copy, not a command
            continue
        for line in block.splitlines():
            line = re.split(r"\s+#", line)[0].strip()
            for part in line.split("; "):
                if part.startswith("evotune "):
                    lines.append(part)
    return lines


def scaled(line: str) -> tuple[list[str], str | None]:
    """The command's arguments with tiny budgets, and the file its stdout goes to ('>')."""
    out = None
    if " > " in line:
        line, out = (s.strip() for s in line.split(" > "))
    args = shlex.split(line)[1:]
    command = args[0]
    for i, a in enumerate(args[:-1]):
        if a in SMALL:
            args[i + 1] = DATAGEN_GAMES if (command, a) == ("datagen", "--games") else SMALL[a]
        elif a == "--depth" and args[i + 1] != "64":
            args[i + 1] = "1"
        elif a == "--tc":
            args[i + 1] = "1+0.05"
    if command in ("run", "match", "datagen", "verify") and "--depth" not in args:
        args += ["--depth", "1"]
    if command == "run" and "--print-config" not in args:
        if "--np" not in args:
            args += ["--np", "4"]
        if "--games" not in args:
            args += ["--games", "2"]
        if "--generations" not in args:
            args += ["--generations", "1"]
    if command == "verify" and "--games" not in args:
        args += ["--games", "2"]
    if any(a.startswith("nnue:") for a in args) and "--nodes" not in args:
        # the test's net learned from 40 games: its evaluation is nearly flat, so quiescence
        # finds no cut-off and one game can take minutes; a node limit bounds every move
        args += ["--nodes", "2000"]
    return args, out


def test_the_readme_has_the_lines_the_issue_asks_for():
    lines = readme_commands()
    assert len(lines) >= 20
    assert lines[0].split()[1] == "run"  # the quick start leads with tuning, the main job
    i = next(i for i, ln in enumerate(lines) if ln.startswith("evotune datagen "))
    assert [ln.split()[1] for ln in lines[i:i + 3]] == ["datagen", "nn", "verify"]  # the first net
    assert any(ln.startswith("evotune match net11 ") for ln in lines)
    made = lines.index("evotune export my-fit --format json --out tuned.json")
    assert made < next(i for i, ln in enumerate(lines) if "extended:tuned.json" in ln)


@pytest.mark.slow
def test_the_readme_lines_run_in_order_on_tiny_budgets(tmp_path):
    for line in readme_commands():
        args, out = scaled(line)
        quiet = ["--quiet"] if args[0] in QUIET or args[:2] == ["nn", "train"] else []
        r = subprocess.run([sys.executable, "-m", "evotune.cli", *args, *quiet],
                           capture_output=True, text=True, cwd=tmp_path, env=ENV, timeout=600)
        assert r.returncode == 0, (line, args, r.stderr[-2000:])
        if out is not None:
            (tmp_path / out).write_text(r.stdout)
    assert (tmp_path / "tuned.json").is_file() and (tmp_path / "net1.bin").is_file()
    assert (tmp_path / "reports" / "fine" / "report.html").is_file()
