"""``evotune --help`` lists the commands without importing them (the group is lazy), and says what
click would say with every command loaded; the commands themselves load when they run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from evotune.cli import COMMAND_GROUPS, SHORT_HELP, STARTS_PROCESSES, cli

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
NAMES = sorted(n for names in COMMAND_GROUPS.values() for n in names)


def test_the_short_help_table_is_every_command_s_first_sentence():
    assert sorted(SHORT_HELP) == NAMES
    ctx = click.Context(cli)
    for name in NAMES:
        command = cli.get_command(ctx, name)
        assert command.name == name and not command.short_help and not command.hidden
        assert SHORT_HELP[name] == command.get_short_help_str(10**6), name
    assert STARTS_PROCESSES <= set(NAMES)


@pytest.mark.parametrize("width", [50, 80, 120])
def test_help_lists_the_commands_as_click_does_with_them_loaded(width):
    def commands_section(method) -> str:
        ctx = click.Context(cli, terminal_width=width, max_content_width=width)
        formatter = ctx.make_formatter()
        method(cli, ctx, formatter)
        return formatter.getvalue()

    lazy = commands_section(type(cli).format_commands)
    loaded = commands_section(click.Group.format_commands)  # imports every command
    assert lazy == loaded and lazy.startswith("Commands:\n")
    assert all(f"  {name} " in lazy for name in NAMES)


def test_help_imports_no_command_numba_or_matplotlib():
    probe = ("import json, sys\n"
             "from evotune.cli import main\n"
             "code = 0\n"
             "try:\n    main(['--help'])\nexcept SystemExit as e:\n    code = e.code\n"
             "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=ENV,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    text, _, last = r.stdout.rstrip("\n").rpartition("\n")
    out = json.loads(last)
    assert out["code"] == 0 and "Commands:" in text and "  texel " in text
    loaded = set(out["modules"])
    for module in ("numba", "matplotlib", "chess", "evotune.engine", "evotune.runs",
                   *(f"evotune.cli.{group}" for group in COMMAND_GROUPS)):
        assert module not in loaded, module


def test_a_command_loads_and_runs_when_invoked(tmp_path):
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "runs", "--runs-dir",
                        str(tmp_path / "none")], capture_output=True, text=True, env=ENV,
                       timeout=120)
    assert r.returncode == 0 and r.stdout == f"no runs in {tmp_path / 'none'}/\n", r.stderr
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "status", "--help"],
                       capture_output=True, text=True, env=ENV, timeout=120)
    assert r.returncode == 0 and SHORT_HELP["status"] in " ".join(r.stdout.split())


@pytest.mark.parametrize("argv", [["verify", "r", "--depth", "-1"], ["status", "nosuch"],
                                  ["run", "--games", "3"], ["nn", "info", "nosuch.nnue"],
                                  ["report", "nosuch"], ["plot", "nosuch"]])
def test_a_command_that_draws_nothing_never_imports_matplotlib(tmp_path, argv):
    """matplotlib's import costs about 0.9 s: only a command that makes a figure pays it (the
    reporting modules import it when a figure is made), so a refused command answers at once."""
    probe = ("import json, sys\n"
             "from evotune.cli import main\n"
             "code = 0\n"
             f"try:\n    main({argv!r} + ['--runs-dir', {str(tmp_path)!r}] "
             f"if {argv[0]!r} != 'nn' else {argv!r})\n"
             "except SystemExit as e:\n    code = e.code\n"
             "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=ENV,
                       timeout=120, cwd=tmp_path)
    out = json.loads(r.stdout.rstrip("\n").rpartition("\n")[2])
    assert out["code"] == 2, r.stderr
    assert "evotune.cli." + next(g for g, names in COMMAND_GROUPS.items()
                                 if argv[0] in names) in out["modules"]
    assert "matplotlib" not in out["modules"]
