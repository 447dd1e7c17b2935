"""One flag name per concept across the commands (issue 37, item 3): the renamed flags still work
under their old names for a release, each with a one-line note on stderr; every option has help
text and shows its default; --workers defaults to one per core everywhere."""
from __future__ import annotations

import click
import pytest

from evotune.cli import COMMAND_GROUPS, cli, main
from evotune.cli import reports as reports_cli
from evotune.kinds import weights as weights_kind

NOTE = "evotune: note: {old} is now called {new}; the old name will be removed in a later release"


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    out = []
    for name in sorted(n for names in COMMAND_GROUPS.values() for n in names):
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            out += [(f"{name} {sub}", c) for sub, c in command.commands.items()]
        else:
            out.append((name, command))
    return out


class Result:
    """What ``evotune ARGS`` did: exit code, stdout, stderr (main's error handling included)."""

    def __init__(self, capsys, args: list[str]) -> None:
        try:
            main(args)
            self.exit_code = 0
        except SystemExit as exc:
            self.exit_code = exc.code
        self.stdout, self.stderr = capsys.readouterr()
        self.output = self.stdout + self.stderr


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("evotune: note:")]


def test_compare_games_budget_is_max_games_with_a_note(capsys):
    res = Result(capsys, ["compare", "--games-budget", "0"])
    assert res.exit_code == 2
    assert _notes(res.stderr) == [NOTE.format(old="--games-budget", new="--max-games")]
    assert "--max-games must be at least 1, got 0" in res.stderr  # the old value was taken
    both = Result(capsys, ["compare", "--games-budget", "5", "--max-games", "5"])
    assert both.exit_code == 2 and "give --max-games once (--games-budget is its old name)" \
        in both.stderr
    missing = Result(capsys, ["compare"])
    assert missing.exit_code == 2 and "Missing option '--max-games'" in missing.stderr


def test_verify_opponent_is_opponents_repeated_or_comma_list(tmp_path, make_fake_run,
                                                             monkeypatch, capsys):
    make_fake_run(tmp_path)
    seen = []

    def fake_verify(run_ref, *, settings, runs_dir, progress):
        seen.append(settings.opponents)
        return {"note": "", "matches": []}

    monkeypatch.setattr(weights_kind, "verify_run", fake_verify)  # what the games kind plays
    monkeypatch.setattr(reports_cli, "describe_verification", lambda doc: [])
    monkeypatch.setattr(reports_cli, "verdict_lines", lambda doc: [])
    base = ["verify", "fake", "--runs-dir", str(tmp_path), "--games", "2"]
    new = Result(capsys, [*base, "--opponents", "shannon,pst", "--opponents", "extended"])
    assert new.exit_code == 0, new.output
    assert _notes(new.stderr) == []
    old = Result(capsys, [*base, "--opponent", "shannon", "--opponent", "pst"])
    assert old.exit_code == 0, old.output
    assert _notes(old.stderr) == [NOTE.format(old="--opponent", new="--opponents")]
    assert seen == [("shannon", "pst", "extended"), ("shannon", "pst")]


def test_run_opponents_repeated_or_comma_list_and_init(capsys):
    res = Result(capsys, ["run", "--opponents", "shannon", "--opponents",
                                   "pst,extended", "--init", "reference", "--print-config"])
    assert res.exit_code == 0, res.output
    assert 'opponents = "shannon,pst,extended"' in res.stdout
    assert 'init = "reference"' in res.stdout
    clash = Result(capsys, ["run", "--init", "reference", "--param", "init=sample",
                                     "--print-config"])
    assert clash.exit_code == 2
    assert "--init reference and --param init=sample disagree" in clash.stderr


def test_out_is_runs_dir_on_runs_with_a_note(tmp_path, capsys):
    res = Result(capsys, ["runs", "--out", str(tmp_path / "elsewhere")])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"no runs in {tmp_path / 'elsewhere'}/"
    assert _notes(res.stderr) == [NOTE.format(old="--out", new="--runs-dir")]


@pytest.mark.parametrize("command", ["plot", "report"])
def test_out_is_reports_on_plot_and_report_with_a_note(tmp_path, command, monkeypatch,
                                                       capsys):
    seen = []
    monkeypatch.setattr(reports_cli, "check_writable",
                        lambda path, flag, folder=False: seen.append((path, flag)))
    res = Result(capsys, [command, "nosuch", "--runs-dir", str(tmp_path),
                                   "--out", str(tmp_path / "rep")])
    assert res.exit_code == 2  # the run is unknown; the folder was taken from --out
    assert seen == [(str(tmp_path / "rep"), "--reports")]
    assert _notes(res.stderr) == [NOTE.format(old="--out", new="--reports")]


def test_nn_train_activation_is_a_choice(tmp_path, capsys):
    res = Result(capsys, ["nn", "train", str(tmp_path / "x.txt"), "--activation", "relu"])
    assert res.exit_code == 2
    assert "'relu' is not one of 'screlu', 'crelu'" in res.output


def test_every_option_has_help_and_shows_its_default():
    ctx = click.Context(cli)
    unhelped, unshown = [], []
    for name, command in _commands():
        for p in command.params:
            if not isinstance(p, click.Option) or p.hidden or p.name == "help":
                continue
            if not p.help:
                unhelped.append(f"{name} {p.opts[0]}")
            valued = (p.default not in (None, (), False, "") and not p.required
                      and type(p.default).__name__ != "Sentinel"  # click 8.3+: no default
                      ) or getattr(p, "shown", None) is not None
            if valued and not p.is_flag and "default" not in p.get_help_extra(ctx):
                unshown.append(f"{name} {p.opts[0]}")
    assert unhelped == [] and unshown == []


def test_run_shows_every_config_default():
    from evotune.kinds.games.config import RunConfig

    ctx = click.Context(cli)
    run = cli.get_command(ctx, "run")
    fields = set(RunConfig().to_dict())  # the stored keys (the limits flat)
    shown = {p.name: p.get_help_extra(ctx).get("default") for p in run.params
             if isinstance(p, click.Option) and p.name in fields
             and p.name not in ("scheduler", "opponents", "params")}
    assert shown["depth"] == "3" and shown["workers"] == "0" and shown["openings"] == "book"
    assert shown["tc"] == "none"
    assert all(v is not None for v in shown.values()), shown


def test_workers_default_is_one_per_core_everywhere():
    ctx = click.Context(cli)
    defaults = {}
    for name, command in _commands():
        for p in command.params:
            if p.name == "workers":
                defaults[name] = p.get_help_extra(ctx).get("default")
                assert "0 = one per core" in p.help, name
    assert defaults.pop("resume") == "the run's"
    assert set(defaults.values()) == {"0"}, defaults
    assert {"match", "datagen", "label", "nn train", "verify", "run", "texel"} <= set(defaults)
