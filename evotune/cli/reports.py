"""Report commands: plot, report, verify, export."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError, Interrupted
from ..fileio import atomic_write_bytes, atomic_write_text, check_writable
from ..kinds import kind_of
from ..match.resolve import close_external_players
from ..match.resultsblock import stored_figures, summary_lines
from ..match.scoring import SprtParams
from ..runs.manifest import check_outside_runs
from ..runs.runkind import ExportRequest, ViewRequest, refuse_unread
from ..runs.store import VERIFY_GAMES, Store
from ..verify.run import VerifySettings
from ..verify.text import block_where, describe_match, describe_verification, verdict_lines
from .interim import IntervalBlocks, rating_interval_option
from .options import (
    cluster_options,
    limits_options,
    openings_option,
    opponents_option,
    recommend_option,
    renamed_option,
    reports_option,
    runs_dir_option,
    seed_option,
    sprt_option,
    squares_option,
)
from .progress import GameBar, command_line, quiet_option, steps


def _view_options(x_axis: str, squares: str | None) -> list[str]:
    """The options of a ViewRequest the user set that only some kinds read
    (:data:`~evotune.runs.runkind.OPTIONS`)."""
    return (["x"] if x_axis == "games" else []) + (["squares"] if squares else [])


def _rule_option(rule: str) -> list[str]:
    """['rule'] when ``--recommend`` names a rule other than its default (the population mean)."""
    return ["rule"] if rule != "mean" else []


@click.command()
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN [RUN2 ...]")
@click.option("--x", "x_axis", default="generations", show_default=True,
              help="x axis: 'generations' or 'games'.")
@reports_option("Folder for reports (plots go to REPORTS/<run-id>/ or REPORTS/compare-.../).",
                alias=True)
@runs_dir_option()
@squares_option
@quiet_option
def plot(run_refs, x_axis, reports, runs_dir, squares):
    """Plot convergence (mean +- std), deviations and strategy statistics of runs (overlaid);
    for many weights also heatmaps of the piece-square tables."""
    out = reports
    check_writable(out, "--reports", folder=True)
    stores = [Store.open(r, runs_dir) for r in run_refs]
    kinds = [kind_of(s) for s in stores]
    for s, kind in zip(stores, kinds):
        if len(stores) > 1 and not kind.overlays:
            raise ConfigError(f"run '{s.run_id}' ({kind.name}) is plotted alone: give one run")
        refuse_unread(kind, _view_options(x_axis, squares))
    bar, progress = steps("plot")
    with bar:
        paths = kinds[0].plot(stores, ViewRequest(
            out=out, x=x_axis, runs_dir=runs_dir, progress=progress,
            squares=tuple(squares.split(",")) if squares else None))
    for path in paths:
        click.echo(str(path))


@click.command()
@click.argument("run_ref", metavar="RUN")
@recommend_option
@click.option("--x", "x_axis", default="generations", show_default=True,
              help="x axis of the plots: 'generations' or 'games'.")
@reports_option(alias=True)
@runs_dir_option()
@squares_option
@quiet_option
def report(run_ref, rule, x_axis, reports, runs_dir, squares):
    """Write report.md and a self-contained report.html for a run (with its plots)."""
    out = reports
    check_writable(out, "--reports", folder=True)
    store = Store.open(run_ref, runs_dir)
    refuse_unread(kind_of(store), _view_options(x_axis, squares) + _rule_option(rule))
    bar, progress = steps("report: plots")
    with bar:
        paths = kind_of(store).report(store, ViewRequest(
            out=out, rule=rule, x=x_axis, runs_dir=runs_dir, progress=progress,
            squares=tuple(squares.split(",")) if squares else None))
    for path in paths:
        click.echo(str(path))


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--games", type=int, default=200, show_default=True,
              help="Games per match (even; the maximum with --sprt).")
@limits_options(layered=True, fields=("depth", "nodes", "movetime", "tc"))
@sprt_option
@seed_option(None, "Seed of the openings (default: the run's).")
@recommend_option
@runs_dir_option()
@cluster_options(workers=0)
@opponents_option("Play these players instead of the run's reference and initial mean (a "
                  "training's: initial net), one match each (repeated or comma-separated; e.g. "
                  "shannon, pst:tuned.json, nnue:other.nnue).")
@renamed_option("--opponent", "--opponents", "opponents", multiple=True)
@click.option("--engine", type=str, default=None,
              help="Engine spec (name or .toml) to play instead of the copy the run keeps (a "
                   "training: an nnue spec to play its nets with; default nnue).")
@openings_option(None, "Openings instead of the held-out 8moves_v3 suite: '2moves', 'book', "
                       "'startpos' or an EPD/PGN(.zip) suite or Polyglot .bin book.")
@click.option("--also-depth", type=int, default=None, metavar="D",
              help="A second limit: play every match again at depth D (same openings and seed) "
                   "and report both results and SPRT verdicts, e.g. --depth 3 --also-depth 5.")
@click.option("--also-tc", type=str, default=None, metavar="BASE+INC",
              help="A second limit: play every match again under this time control (external "
                   "engines, uct/probability specs).")
@rating_interval_option
@quiet_option
def verify(run_ref, games, limits, sprt, seed, rule, runs_dir, workers, backend, scheduler,
           opponents, engine, openings, also_depth, also_tc, rating_interval):
    """Match the recommended weights (a training: its net) against the spec's reference weights
    (a run from given weights: its start; a training: shannon) and the initial mean (a
    training: its initial net), or the --opponents players, on held-out openings; stores
    verify.json in the run (shown by 'evotune report'). --depth, --nodes, --movetime and --tc
    default to the run's (a training: depth 3).

    The end of a tuning: 'evotune verify RUN --sprt 0 5 --games 20000 --depth 3
    --also-depth 5' plays until the SPRT decides (or the games run out), at both depths; the
    match against the start ('recommended vs start') says whether the games added anything."""
    settings = VerifySettings(games=games, workers=workers, seed=seed,
                              sprt=tuple(sprt) if sprt else None, rule=rule, backend=backend,
                              scheduler=scheduler, opponents=tuple(opponents), engine=engine,
                              openings=openings, also_depth=also_depth, also_tc=also_tc,
                              limits=limits)
    store = Store.open(run_ref, runs_dir)  # an unknown run is named before the engine loads
    kind = kind_of(store)  # a kind without a rule refuses --recommend itself
    legs = 1 if also_depth is None and also_tc is None else 2
    try:
        with GameBar(legs * (len(opponents) or 2) * games, "verification games") as bar:
            blocks = IntervalBlocks(bar, bar.callback, every=rating_interval,
                                    sprt=SprtParams(*sprt) if sprt else None)
            doc = kind.verify(store, settings=settings, runs_dir=runs_dir, progress=blocks)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished game is kept in {store.root}/"
                          f"{VERIFY_GAMES}: continue with '{command_line()}'") from None
    finally:
        close_external_players()
    if doc["note"]:
        click.echo(f"note: {doc['note']}", err=True)
    for line in describe_verification(doc):
        click.echo(line)
    for m in doc["matches"]:
        click.echo(describe_match(m))
        first = m.get("label", "A").split(" vs ")[0]
        for line in summary_lines(stored_figures(m), first, m.get("opponent", "B"),
                                  where=block_where(doc, m)):
            click.echo(line)
    for line in verdict_lines(doc):
        click.echo(line)


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", required=True,
              help="json, csv, uci, cutechess, spsa (OpenBench lines), spsa-fishtest, header or "
                   "python; a net (a training's, or a run's tuned output layer): evotune or "
                   "bullet (with --out); a move-model training's model: evotune (with --out).")
@click.option("--engine", type=str, default=None,
              help="Map names and scales onto this engine spec (name or .toml; default: the "
                   "copy of its spec the run keeps).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Write to this file (default: stdout).")
@recommend_option
@runs_dir_option()
def export(run_ref, fmt, engine, out_file, rule, runs_dir):
    """Export a run's recommended weights (notes about left-out weights go to stderr)."""
    if out_file is not None:
        check_writable(out_file, "--out")
        check_outside_runs(out_file, "--out")  # a run's folder is its store's alone
    store = Store.open(run_ref, runs_dir)
    refuse_unread(kind_of(store), (["engine"] if engine is not None else []) + _rule_option(rule))
    result = kind_of(store).export(store, ExportRequest(
        fmt=fmt, engine=engine, rule=rule, runs_dir=runs_dir, out_file=out_file))
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if isinstance(result.data, bytes):
        assert out_file is not None  # a kind refuses a binary export without --out
        atomic_write_bytes(Path(out_file), result.data)
        click.echo(f"wrote {out_file} ({result.what})", err=True)
    elif out_file is None:
        click.echo(result.data, nl=False)
    else:
        atomic_write_text(Path(out_file), result.data)
        click.echo(f"wrote {out_file}", err=True)
    for note in result.after:
        click.echo(note, err=True)


COMMANDS = (plot, report, verify, export)
