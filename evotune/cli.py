"""The ``evotune`` command line: a click group that parses flags, builds a config and calls the
library. No logic lives here. Library errors (EvotuneError) are printed as one line and exit 2.
"""
from __future__ import annotations

import sys

import click

from . import __version__
from .errors import EvotuneError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evotune")
def cli() -> None:
    """evotune: tune a chess engine's evaluation weights by evolution."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the click group, turning EvotuneError into one line + exit 2."""
    try:
        cli.main(args=argv, prog_name="evotune", standalone_mode=False)
    except EvotuneError as exc:
        click.echo(f"evotune: error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("evotune: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


# ---- engine commands (issue 2): perft, search, bench ------------------------------------------

# ---- match commands (issue 3): match ----------------------------------------------------------

# ---- uci front end (issue 3): uci -------------------------------------------------------------

# ---- run commands (issue 4): run, resume, status, runs ----------------------------------------

# ---- report commands (issue 5): plot, report, verify, export ----------------------------------


if __name__ == "__main__":
    main()
