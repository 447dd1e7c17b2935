"""The limits a command line gives over another layer's: :class:`LimitChanges` (what
``limits_options(layered=True)`` passes, where the plain mode passes a :class:`Limits`), laid
over a config file's keys by ``run`` and over the run's limits by ``verify``; a time control
keeps the text given, so a stored config keeps it."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.cli.options import limits_options
from evotune.errors import ConfigError, FieldError
from evotune.limits import LimitChanges, Limits, TimeControl, parse_tc, tc_text
from evotune.rules import Adjudication


def test_a_time_control_keeps_its_text_and_compares_by_value():
    tc = parse_tc("60")
    assert (tc.base, tc.inc, str(tc), tc.given(), tc_text(tc), tc_text(None)) == \
        (60.0, 0.0, "60+0", "60", "60", "")
    assert tc == TimeControl(60.0) and TimeControl(60.0).given() == "60+0"
    assert Limits(tc="60") == Limits(tc="60+0") and Limits(tc="60").tc.given() == "60"


def test_changes_are_checked_when_made_and_laid_over_a_lower_layer():
    with pytest.raises(FieldError, match="depth must be an integer from 1"):
        LimitChanges(depth=0)
    with pytest.raises(ConfigError, match="either --tc or --movetime"):
        LimitChanges(movetime=1.0, tc="10+0.1")
    assert LimitChanges().given() == {} and LimitChanges().over(Limits(depth=2)) == Limits(depth=2)
    assert LimitChanges(depth=5).over(Limits(depth=2, nodes=7)) == Limits(depth=5, nodes=7)
    # a clock given replaces the lower layer's other clock
    assert LimitChanges(movetime=0.5).over(Limits(tc="10+0.1")) == Limits(movetime=0.5)
    assert LimitChanges(tc="60").over(Limits(movetime=0.5, depth=2)) == Limits(tc="60", depth=2)
    assert LimitChanges(tc="").over(Limits(tc="10+0.1")) == Limits()
    assert LimitChanges(movetime=0.0).over(Limits(tc="10+0.1")).tc == parse_tc("10+0.1")


def _echo_command(layered: bool):
    @click.command()
    @limits_options(layered=layered)
    def show(limits):
        click.echo(repr(limits))
    return show


def test_limits_options_pass_one_typed_value_in_both_modes():
    runner = CliRunner()
    args = ["--depth", "2", "--tc", "60", "--resign", "900", "4"]
    layered = runner.invoke(_echo_command(True), args)
    assert layered.exit_code == 0, layered.output
    assert layered.output.strip() == repr(LimitChanges(
        depth=2, tc="60", adjudication=Adjudication(resign_score=900, resign_moves=4)))
    plain = runner.invoke(_echo_command(False), args)
    assert plain.output.strip() == repr(Limits(
        depth=2, tc="60", adjudication=Adjudication(resign_score=900, resign_moves=4)))
    bad = runner.invoke(_echo_command(True), ["--depth", "0"])
    assert bad.exit_code != 0 and isinstance(bad.exception, FieldError)


def test_run_lays_its_limit_flags_over_the_config_file(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("depth = 2\nmovetime = 0.5\nmax_plies = 300\n")
    out = CliRunner().invoke(cli, ["run", "--config", str(f), "--depth", "4", "--resign", "900",
                                   "4", "--print-config"])
    assert out.exit_code == 0, out.output
    lines = set(out.output.splitlines())
    assert {"depth = 4", "movetime = 0.5", "max_plies = 300", "resign_score = 900",
            "resign_moves = 4", 'tc = ""'} <= lines
    # a flag's time control over the file's time per move is refused, as both in one file are
    clash = CliRunner().invoke(cli, ["run", "--config", str(f), "--tc", "60", "--print-config"])
    assert isinstance(clash.exception, ConfigError)  # main() says it in one line, exit 2
    assert "either --tc or --movetime" in str(clash.exception)
    given = CliRunner().invoke(cli, ["run", "--tc", "60", "--print-config"])
    assert 'tc = "60"' in given.output.splitlines()
