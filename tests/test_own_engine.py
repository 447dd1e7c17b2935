"""Issue 56's targets for an engine developer: from an engine binary to exported tuned values in
at most three commands with no spec line written by hand (the README's own-engine lines, run
against `evotune uci`), and the README's own-engine line with a made spec never plays the
built-in engine unless asked (the stored games' engines say who played); a gauntlet that
includes it says so in one line at the run's start."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_engines"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _evotune(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=ENV, timeout=timeout)


def own_engine_lines() -> list[str]:
    """The `evotune` lines of the README's own-engine section, in order (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("**Tune your own UCI engine**")
    section = text[start:text.index("\n**", start + 10)]
    lines = []
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        for line in block.splitlines():
            line = re.split(r"\s+#", line)[0].strip()
            if line.startswith("evotune "):
                lines.append(line)
    return lines


def _tiny(args: list[str]) -> list[str]:
    """A run's budget cut to seconds: 8 games at depth 1."""
    out = list(args)
    for flag, value in (("--max-games", "8"), ("--tc", "1+0.05")):
        if flag in out:
            out[out.index(flag) + 1] = value
    return out + ["--depth", "1", "--workers", "1", "--quiet"]


def _engines(run: Path) -> set[str]:
    games = [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()]
    assert games
    return {g[side] for g in games for side in ("white_engine", "black_engine")}


def test_the_readme_gives_three_commands_and_no_spec_line():
    lines = own_engine_lines()
    assert [ln.split()[1] for ln in lines] == ["spec", "run", "export"]
    assert "--opponents" not in lines[1] and "reference" not in " ".join(lines)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("**Tune your own UCI engine**"):]
    assert "```toml" not in section[:section.index("\n**", 10)]


@pytest.mark.slow
def test_from_an_engine_binary_to_exported_values_in_three_commands(tmp_path):
    """The README's own-engine lines as written (evotune's own engine behind `evotune uci`), at
    a budget of seconds: the spec is made, the run tunes it and the export gives setoption lines
    in the engine's own names; every game was played by the made spec's engine."""
    spec_line, run_line, export_line = (shlex.split(ln)[1:] for ln in own_engine_lines())
    r = _evotune(*spec_line, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    made = (tmp_path / "my-engine.toml").read_text()
    assert 'command = ["evotune", "uci"]' in made and 'option = "KnightValue"' in made
    r = _evotune(*_tiny(run_line), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "built-in engine" not in r.stderr
    assert _engines(tmp_path / "populations" / "my-tune") == {"evotune uci"}
    r = _evotune(*export_line, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines and all(ln.startswith("setoption name ") for ln in lines)
    assert any(ln.startswith("setoption name KnightValue value ") for ln in lines)


def test_a_made_specs_gauntlet_plays_the_engine_unless_the_builtin_is_asked(tmp_path):
    """`--opponents my-engine.toml` (the engine at its defaults) plays no built-in game;
    `--opponents shannon` does, and the run says so in one line at its start, naming the
    --opponents that plays the engine against its own start."""
    cmd = f"{sys.executable} {FAKE / 'every_option.py'}"
    r = _evotune("spec", "--uci", cmd, "--out", "my-engine.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    command = f"{sys.executable} {FAKE / 'every_option.py'}"
    base = ["run", "--engine", "my-engine.toml", "--strategy", "de", "--np", "4", "--games", "2",
            "--generations", "1", "--max-games", "64", "--depth", "1", "--workers", "1",
            "--final-check-games", "0", "--quiet"]  # the gauntlet's games alone (seconds)
    r = _evotune(*base, "--opponents", "my-engine.toml", "--run-id", "own", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "built-in engine" not in r.stderr
    assert _engines(tmp_path / "populations" / "own") == {command}
    r = _evotune(*base, "--opponents", "shannon", "--run-id", "weak", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if "built-in engine" in ln]
    assert notes == ["evotune: note: the opponents include evotune's built-in engine (shannon), not "
                     "fake-random; to play fake-random against its own start give --opponents "
                     "my-engine.toml"]
    assert _engines(tmp_path / "populations" / "weak") == {command, ""}  # '': the built-in
