"""Options shared by several commands, each declared once: the game limits (one decorator that
builds a :class:`~evotune.limits.Limits`), workers and where games run, the runs folder, the
reports folder, the seed and the openings; :func:`renamed_option`, the hidden old name of a flag;
and :data:`FIELD_FLAGS`, the flag that sets each settings field (library errors name fields, the
command line names flags).

One name for one concept across the commands: ``--max-games`` a budget of games, ``--runs-dir``
the folder of runs, ``--reports`` the folder of reports (plots, pages), ``--out`` the file a
command writes, ``--opponents`` players (repeated or comma-separated), ``--init`` where a run,
fit or training starts, ``--workers`` processes (0, the default, = one per core)."""
from __future__ import annotations

import functools

import click
from click.core import ParameterSource

from ..limits import LimitChanges, Limits, check_limits, check_workers, tc_text
from ..rules import Adjudication
from ..spec.player import old_spellings

DEFAULT_RUNS_DIR = "populations"

FIELD_FLAGS = {
    "depth": "--depth", "nodes": "--nodes", "movetime": "--movetime", "tc": "--tc",
    "time_margin": "--time-margin", "max_plies": "--max-plies",
    "adjudication": "--resign SCORE MOVES / --draw SCORE MOVES FROM_PLY",
    "games": "--games", "final_check_games": "--final-check-games",
    "final_check_openings": "--final-check-openings",
    "book_plies": "--book-plies", "population": "--np",
    "seed": "--seed", "workers": "--workers",
    "per_game": "--per-game", "random_plies": "--random-plies", "chunk": "--chunk",
    "fmt": "--format", "positions": "--positions", "target": "--target",
    "td_lambda": "--td-lambda", "filter": "--filter",
    "hidden": "--hidden", "activation": "--activation", "wdl": "--wdl", "epochs": "--epochs",
    "batch": "--batch", "lr": "--lr", "l2": "--l2", "features": "--features",
    "lr_drop": "--lr-drop", "gamma": "--gamma",
    "val_share": "--val-share", "val_block": "--val-block", "init": "--init",
    "stream": "--stream", "king_buckets": "--king-buckets", "output_buckets": "--output-buckets",
    "also_depth": "--also-depth", "also_tc": "--also-tc", "games_budget": "--max-games",
}
"""Settings field (as a :class:`~evotune.errors.FieldError` names it) -> the flag that sets it."""

LIMIT_FIELDS = ("depth", "nodes", "movetime", "tc", "time_margin", "max_plies", "adjudication")

_DEFAULT = Limits()

WORKERS_HELP = "Worker processes (0 = one per core); results do not depend on it."


class DefaultShown(click.Option):
    """An option whose help shows ``shown`` as its default although its value defaults to None:
    a flag of ``run`` must tell 'not given' from its default (defaults < config file < flags),
    and its help still says the value it takes."""

    def __init__(self, *args, shown: object = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shown = shown

    def get_help_extra(self, ctx: click.Context):
        extra = super().get_help_extra(ctx)
        if self.shown is not None:
            extra["default"] = "none" if self.shown == "" else str(self.shown)
        return extra


def renamed_option(old: str, new: str, param: str, *, multiple: bool = False,
                   type: object = None):
    """``old``, the hidden former name of ``new`` (whose parameter is ``param``), kept for one
    release: given, it sets ``param`` (a repeated option: adds to it) and prints a one-line note
    on stderr; given with ``new`` (not repeated) it is a usage error."""
    old_param = "old_" + old.lstrip("-").replace("-", "_")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            value = kwargs.pop(old_param)
            if value is None or value == ():
                return f(*args, **kwargs)
            click.echo(f"evotune: note: {old} is now called {new}; the old name will be "
                       "removed in a later release", err=True)
            ctx = click.get_current_context()
            if multiple:
                kwargs[param] = tuple(kwargs.get(param) or ()) + tuple(value)
            elif ctx.get_parameter_source(param) is ParameterSource.COMMANDLINE:
                raise click.UsageError(f"give {new} once ({old} is its old name)")
            else:
                kwargs[param] = value
            return f(*args, **kwargs)

        return click.option(old, old_param, hidden=True, multiple=multiple,
                            default=() if multiple else None, type=type)(wrapper)

    return decorate


_LIMIT_OPTIONS = {
    "depth": click.option("--depth", type=int, cls=DefaultShown,
                          help="Search depth per move in plies."),
    "nodes": click.option("--nodes", type=int, cls=DefaultShown,
                          help="Node limit per move (0 = none); simulations of a uct spec, "
                               "nodes of a probability spec (0: the spec's default)."),
    "movetime": click.option("--movetime", type=float, cls=DefaultShown,
                             help="Seconds per move for external (UCI) engines and built-in "
                                  "uct/probability specs (0 = use depth / nodes)."),
    "tc": click.option("--tc", type=str, metavar="BASE+INC", cls=DefaultShown,
                       help="Time control in seconds for external (UCI) engines and built-in "
                            "uct/probability specs, e.g. 10+0.1: real clocks (go wtime btime "
                            "winc binc), a side that runs out loses on time. Built-in "
                            "alpha-beta players keep their --depth / --nodes limits."),
    "time_margin": click.option("--time-margin", type=float, cls=DefaultShown,
                                help="Seconds a side may overrun its clock before it loses on "
                                     "time."),
    "max_plies": click.option("--max-plies", type=int, cls=DefaultShown,
                              help="Ply cap per game after the opening (a draw)."),
    "adjudication": lambda f: click.option(
        "--resign", nargs=2, type=int, default=None, metavar="SCORE MOVES",
        help="Resign adjudication: a side whose score stays <= -SCORE for MOVES own moves (the "
             "opponent agreeing) loses.")(click.option(
            "--draw", "draw_adj", nargs=3, type=int, default=None, metavar="SCORE MOVES FROM_PLY",
            help="Draw adjudication: |score| <= SCORE for MOVES moves of each side, counted from "
                 "ply FROM_PLY, is a draw.")(f)),
}


def _adjudication(resign, draw_adj) -> Adjudication | None:
    """The rules of --resign SCORE MOVES and --draw SCORE MOVES FROM_PLY (None: neither given)."""
    if not resign and not draw_adj:
        return None
    resign, draw_adj = resign or (0, 0), draw_adj or (0, 0, 0)
    return Adjudication(resign_score=resign[0], resign_moves=resign[1], draw_score=draw_adj[0],
                        draw_moves=draw_adj[1], draw_start_ply=draw_adj[2])


def limits_options(*, layered: bool = False, fields: tuple[str, ...] = LIMIT_FIELDS,
                   shown: object = None):
    """Add the flags of ``fields`` (of :data:`LIMIT_FIELDS`; 'adjudication' = --resign and
    --draw) and pass the command one ``limits`` argument.

    Plain: a :class:`Limits` of the flags over its defaults. ``layered`` (run: defaults < config
    file < flags; verify: the run's limits < flags): a :class:`LimitChanges` of the flags given
    (a valid Limits on their own, so a bad flag is named before the config or the run is read);
    ``shown``: the :class:`Limits` whose values the help shows as defaults (run: a RunConfig's)."""

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            given = {k: kwargs.pop(k) for k in fields if k != "adjudication"}
            given = {k: v for k, v in given.items() if v is not None}
            adjudication = None
            if "adjudication" in fields:
                adjudication = _adjudication(kwargs.pop("resign"), kwargs.pop("draw_adj"))
            if adjudication is not None:
                given["adjudication"] = adjudication
            # either validates every flag given
            kwargs["limits"] = LimitChanges(**given) if layered else Limits(**given)
            return f(*args, **kwargs)

        for name in reversed(fields):
            option = _LIMIT_OPTIONS[name]
            if name != "adjudication" and not layered:
                default = getattr(_DEFAULT, name)
                option = _with_default(option, default)
            elif name != "adjudication" and shown is not None:
                value = getattr(shown, name)
                if name == "tc":  # the text a flag gives ('' = none)
                    value = tc_text(value)
                option = _with_shown(option, value)
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _with_default(option, default):
    """``option`` (a click.option decorator) with a shown default."""

    def apply(f):
        f = option(f)
        param = f.__click_params__[-1]
        param.default = default
        param.show_default = default is not None
        return f

    return apply


def _with_shown(option, shown: object):
    """``option`` (a click.option decorator of a :class:`DefaultShown`) showing ``shown`` as its
    default in the help."""

    def apply(f):
        f = option(f)
        f.__click_params__[-1].shown = shown
        return f

    return apply


def _check_workers(ctx, param, value):
    if value is not None:
        check_limits(workers=value)
        check_workers(value)
    return value


def workers_option(default: int | None = 0, help: str = WORKERS_HELP, *, check: bool = True,
                   shown: object = None):
    """--workers (0, the default everywhere, = one per core); ``check``: a count this machine can
    start (0 up to 4 per core), checked when parsed (not for commands whose workers may run on a
    Dask cluster); ``shown``: the default the help shows when ``default`` is None."""
    return click.option("--workers", type=int, default=default, show_default=default is not None,
                        help=help, callback=_check_workers if check else None, cls=DefaultShown,
                        shown=shown)


def cluster_options(*, workers: int | None = 0, backend: str | None = "local",
                    scheduler: str | None = "", check: bool = True,
                    workers_help: str = WORKERS_HELP, shown: object = None):
    """--workers, --backend and --scheduler: how many processes play and where; ``shown``: an
    object whose workers and backend the help shows as defaults (run: a RunConfig's cluster)."""

    def decorate(f):
        f = click.option("--scheduler", type=str, default=scheduler,
                         show_default=bool(scheduler),
                         help="Dask scheduler, tcp://HOST:PORT (with --backend dask).")(f)
        f = click.option("--backend", type=click.Choice(["local", "dask"]), default=backend,
                         show_default=backend is not None, cls=DefaultShown,
                         shown=getattr(shown, "backend", None),
                         help="Where the games run: local processes or a Dask cluster (results "
                              "do not depend on it).")(f)
        return workers_option(workers, workers_help, check=check,
                              shown=getattr(shown, "workers", None))(f)

    return decorate


def runs_dir_option(*, alias: bool = False):
    """--runs-dir: the folder holding run directories. ``alias``: also the hidden --out, its
    old name on the commands whose --out meant that folder (old scripts keep working)."""
    option = click.option("--runs-dir", type=click.Path(file_okay=False),
                          default=DEFAULT_RUNS_DIR, show_default=True,
                          help="Folder that holds run directories.")
    if not alias:
        return option

    def decorate(f):
        return option(renamed_option("--out", "--runs-dir", "runs_dir",
                                     type=click.Path(file_okay=False))(f))

    return decorate


def reports_option(help: str = "Folder for reports (written to REPORTS/<run-id>/).", *,
                   alias: bool = False):
    """--reports: the folder that plots and report pages go to. ``alias``: also the hidden --out,
    its old name (plot, report)."""
    option = click.option("--reports", type=click.Path(file_okay=False), default="reports",
                          show_default=True, help=help)
    if not alias:
        return option

    def decorate(f):
        return option(renamed_option("--out", "--reports", "reports",
                                     type=click.Path(file_okay=False))(f))

    return decorate


def note_old_players(*texts: str) -> None:
    """A one-line note on stderr for each old spelling among the players ``texts``
    (``reference``: now ``shannon``); the old spelling still plays the same player."""
    for note in old_spellings(texts):
        click.echo(f"evotune: note: {note}", err=True)


def opponents_option(help: str):
    """--opponents: players SPEC[:WEIGHTS], repeated or comma-separated (a tuple of names)."""

    def split(ctx, param, value):
        names = tuple(p.strip() for v in value for p in v.split(","))
        if any(not n for n in names):
            raise click.BadParameter("an empty player name; give SPEC[:WEIGHTS],...",
                                     param_hint="--opponents")
        note_old_players(*names)
        return names

    return click.option("--opponents", multiple=True, metavar="SPEC[:WEIGHTS],...",
                        callback=split, help=help)


def _check_seed(ctx, param, value):
    if value is not None:
        check_limits(seed=value)
    return value


def seed_option(default: int | None = 1, help: str = "The seed.", name: str = "--seed", *,
                shown: object = None):
    """A seed flag (a whole number from 0 to 2**63 - 1, checked when parsed)."""
    return click.option(name, type=int, default=default, show_default=default is not None,
                        help=help, callback=_check_seed, cls=DefaultShown, shown=shown)


def openings_option(default: str | None = "2moves",
                    help: str = "'2moves', 'book', 'startpos' or an EPD/PGN(.zip) suite or "
                                "Polyglot .bin book.", *, shown: object = None):
    """--openings: a packaged suite's name or a file."""
    return click.option("--openings", type=str, default=default, cls=DefaultShown, shown=shown,
                        show_default=default is not None, help=help)


def book_plies_option(default: int | None = 8):
    """--book-plies: plies drawn from a Polyglot book per opening."""
    return click.option("--book-plies", type=int, default=default,
                        show_default=default is not None,
                        help="Plies drawn from a Polyglot book per opening.")


json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")

recommend_option = click.option("--recommend", "rule", default="mean", show_default=True,
                                help="Recommended weights: 'mean' (population mean), "
                                     "'better-half' or 'rated' (the individual the rating model "
                                     "rates highest; runs with selection=model).")

squares_option = click.option("--squares", default=None, metavar="NAME,...",
                              help="Runs with many weights: the weights of squares.png, e.g. "
                                   "knight.e4,mg.pawn.d4,pst.eg.king.g1 (default: the table "
                                   "squares that moved most).")

sprt_option = click.option("--sprt", nargs=2, type=float, default=None, metavar="ELO0 ELO1",
                           help="Run an SPRT (logistic Elo, alpha = beta = 0.05) that may stop "
                                "each match at its verdict.")
