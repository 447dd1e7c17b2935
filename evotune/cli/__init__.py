"""The ``evotune`` command line: a click group whose commands parse flags, build the library's
settings records, call the library and print. Library errors (EvotuneError) are printed as one
line and exit 2; a :class:`~evotune.errors.FieldError` is said as the flag that set the field.
Ctrl-C is one line (:class:`~evotune.errors.Interrupted`: what is kept and how to continue) and
exit 130.

Commands by group: :mod:`.engine` (perft, search, features, bench, uci, spec), :mod:`.match`,
:mod:`.runs` (run, resume, status, runs), :mod:`.reports` (plot, report, verify, export),
:mod:`.learning` (datagen, label, texel), :mod:`.experiments` (reproduce, compare),
:mod:`.serve` (serve, the tune page) and :mod:`.nn` (the ``nn`` group: init, info, export,
convert, and train from :mod:`.nntrain`).
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
import threading

import click

from .. import __version__
from ..errors import EvotuneError, FieldError, Interrupted
from ..reaper import no_orphans
from .options import FIELD_FLAGS

__all__ = ["cli", "main", "error_line"]

COMMAND_GROUPS = {
    "engine": ("perft", "search", "features", "bench", "uci", "spec"),
    "match": ("match",),
    "runs": ("run", "resume", "status", "runs"),
    "reports": ("plot", "report", "verify", "export"),
    "learning": ("datagen", "label", "texel"),
    "experiments": ("reproduce", "compare"),
    "nn": ("nn",),
    "serve": ("serve",),
}
"""The module of ``evotune.cli`` that holds each command."""

SHORT_HELP = {
    "perft": "Count the leaves of the legal move tree: 'evotune perft FEN DEPTH' or --suite "
             "FILE.epd.",
    "search": "Search FEN with the built-in engine; print move, score, depth, nodes, nodes/s and "
              "PV (a uct spec: then the root's moves with their visits and mean values).",
    "features": "Print the non-zero features of FEN (side to move's view) with their names, "
                "values (phi, phase folded in), weights and weighted contributions, then the "
                "evaluation.",
    "bench": "Engine speed and search signature: search_nps, reference_search_nps, speedup, "
             "perft_nps, game_seconds_median, signature (total nodes of a fixed search set; a "
             "net's: a CRC of its searches' moves, scores, depths and PVs, which stop on a node "
             "limit; changes only when the search or the evaluation changes).",
    "uci": "Speak UCI on stdin/stdout (for GUIs, cutechess, python-chess): the built-in engine "
           "with every weight as a spin option (a net: the EvalFile option).",
    "spec": "Write an engine spec from what a UCI engine declares: spin options become "
            "weights.",
    "match": "Play a colour-balanced match between players A and B and print its statistics.",
    "run": "Tune weights: evolve a population with mini-matches between weight vectors.",
    "resume": "Continue a stopped or killed run; results equal an uninterrupted run.",
    "status": "Show where a run stands: generation, games, means and deviations.",
    "runs": "List the runs under --runs-dir, newest first.",
    "plot": "Plot convergence (mean +- std), deviations and strategy statistics of runs "
            "(overlaid); for many weights also heatmaps of the piece-square tables.",
    "report": "Write report.md and a self-contained report.html for a run (with its plots).",
    "verify": "Match the recommended weights (a training: its net) against the spec's "
              "reference weights (a run from given weights: its start; a training: shannon) and "
              "the initial mean (a training: its initial net), or the --opponents players, on "
              "held-out openings; stores verify.json in the run (shown by 'evotune report').",
    "export": "Export a run's recommended weights (notes about left-out weights go to stderr).",
    "datagen": "Label quiet positions of self-play games with the games' results.",
    "label": "Score labelled positions with another engine's search (Stockfish, a deeper "
             "search).",
    "texel": "Fit evaluation weights to game results of labelled positions (Texel's method).",
    "reproduce": "Reproduce a published experiment (de-paper: the DE chess-tuning paper's "
                 "set-up).",
    "compare": "Compare strategies at an equal budget of games, verified on held-out openings.",
    "nn": "Networks: make, inspect, export and train NNUE nets; convert their data.",
    "serve": "Serve a live, read-only web page of the runs under --runs-dir (Ctrl-C stops it).",
}
"""Each command's short help (the first sentence of its docstring), so that ``evotune --help``
lists the commands without importing them; tests/test_cli_lazy.py keeps it equal to the
docstrings."""

STARTS_PROCESSES = frozenset({"match", "run", "resume", "verify", "reproduce", "compare",
                              "datagen", "label"})
"""Commands that start processes (workers, joblib's resource trackers, external engines): each
runs under the reaper (:func:`evotune.reaper.no_orphans`), so nothing it started outlives it,
however it ends (SIGKILL and SIGTERM included)."""


ARGV = "evotune.argv"
"""The key of the command line's arguments (after ``evotune``) in the click context's meta."""


class _LazyGroup(click.Group):
    """Imports a command's module when the command runs (click's documented lazy-loading
    pattern): a command pays for the engine, numba or matplotlib only when it uses them, so
    ``evotune match --games 3`` refuses in a fraction of a second. ``--help`` lists the commands
    from :data:`SHORT_HELP` and imports none of them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[ARGV] = list(args)  # the command line as given, for the line that continues it
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for names in COMMAND_GROUPS.values() for name in names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module, names in COMMAND_GROUPS.items():
            if cmd_name in names:
                commands = importlib.import_module(f"{__name__}.{module}").COMMANDS
                return next(c for c in commands if c.name == cmd_name)
        return None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The 'Commands' section of ``--help`` as click writes it, each command stood in for
        by a command that holds only its short help (its module is not imported)."""
        stand_ins = {name: click.Command(name, help=SHORT_HELP[name])
                     for name in self.list_commands(ctx)}
        click.Group(commands=stand_ins).format_commands(ctx, formatter)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evotune")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """evotune: tune a chess engine's evaluation weights by evolution."""
    if ctx.invoked_subcommand in STARTS_PROCESSES:
        no_orphans()
        terminate_as_ctrl_c()


def terminate_as_ctrl_c() -> None:
    """SIGTERM (``kill PID``, a scheduler's stop) stops the command as Ctrl-C does: what is
    finished is kept and the line that continues it is printed (SIGINT is raised in its place, so
    the command's own Ctrl-C handling, which keeps it from workers while they start, applies)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: signal.raise_signal(signal.SIGINT))


def _one_line(text: str) -> str:
    """A message as one printable line (names from files may hold newlines or escapes)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(text.splitlines()))


def error_line(exc: EvotuneError) -> str:
    """The message of a library error as the command line says it: a field error names the flag
    that sets the field ('max_plies' -> '--max-plies must be ...')."""
    if isinstance(exc, FieldError) and exc.field in FIELD_FLAGS:
        return f"{FIELD_FLAGS[exc.field]} {exc.problem}"
    return str(exc)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the click group, turning EvotuneError into one line + exit 2."""
    try:
        cli.main(args=argv, prog_name="evotune", standalone_mode=False)
    except Interrupted as exc:
        click.echo(f"evotune: {_one_line(str(exc))}", err=True)
        sys.exit(130)
    except EvotuneError as exc:
        click.echo(f"evotune: error: {_one_line(error_line(exc))}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("evotune: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:  # usage errors too: one line, not usage + hint
        click.echo(f"evotune: error: {_one_line(exc.format_message())}", err=True)
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("evotune: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(130)
    except Exception as exc:  # a bug, not a bad input: one line (EVOTUNE_DEBUG=1 shows it all)
        if os.environ.get("EVOTUNE_DEBUG"):
            raise
        click.echo(f"evotune: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                   "(please report it; EVOTUNE_DEBUG=1 shows the traceback)", err=True)
        sys.exit(1)
