"""The match command."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import click

from ..errors import Interrupted, StoreError
from ..fileio import check_writable
from ..limits import resolve_workers
from ..match import MatchSettings, SprtParams, play_match, write_pgn, write_pgn_text
from ..match.fixtures import check_games
from ..match.journal import match_identity
from ..match.openings import check_openings
from ..match.resolve import (
    check_clock_applies,
    check_players,
    close_external_players,
    limit_notes,
    resolve_players,
)
from ..match.resultsblock import conditions, json_summary, result_figures, summary_lines
from ..match.scoring import sprt_settings, summary_dict
from ..paths import resolve_openings_path
from ..runs.matchstore import MatchFolder, default_match_folder
from .interim import IntervalBlocks, rating_interval_option
from .options import (
    DEFAULT_RUNS_DIR,
    book_plies_option,
    json_option,
    limits_options,
    note_old_players,
    openings_option,
    seed_option,
    sprt_option,
    workers_option,
)
from .progress import GameBar, command_line, info, quiet_option


@click.command("match")
@click.argument("a")
@click.argument("b")
@click.option("--games", type=int, default=10, show_default=True,
              help="Games (even: each opening twice, colours swapped; the maximum with --sprt).")
@openings_option("2moves")
@book_plies_option(8)
@limits_options()
@workers_option(0)
@seed_option(0, "Seed of the openings.")
@sprt_option
@click.option("--pgn", "pgn_path", type=click.Path(dir_okay=False), default=None,
              help="Append the games to this PGN file (when the match ends).")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None,
              help="The match's folder: every game is kept there as it ends, so a stopped "
                   "match continues with the same command (default: a new folder under "
                   f"{DEFAULT_RUNS_DIR}/matches/).")
@rating_interval_option
@json_option
@quiet_option
def match_command(a, b, games, openings, book_plies, limits, workers, seed, sprt, pgn_path,
                  out, rating_interval, as_json) -> None:
    """Play a colour-balanced match between players A and B and print its statistics.

    A and B are each SPEC[:WEIGHTS]: an engine spec (a name under engines/ or a .toml;
    shannon: the built-in engine's default spec; a 'uci' spec: an external engine) with its
    reference values, or with the weights in a file (e.g. pst:tuned.json; any 'evotune export
    --format json' output). A bare weights file means shannon:FILE.

    Every finished game is kept in the match's folder (--out, or a new one under
    populations/matches/): a match stopped by Ctrl-C, SIGTERM or kill -9 continues with the
    command it prints (the same command with --out FOLDER) and ends exactly as an uninterrupted
    one.
    """
    games = check_games(games)
    note_old_players(a, b)
    params = SprtParams(*sprt) if sprt else None
    if pgn_path:
        check_writable(pgn_path, "--pgn")
    pa, pb = resolve_players(a, b)
    check_clock_applies(limits, (pa, pb))
    for line in limit_notes(limits, (pa, pb)):
        click.echo(f"evotune: note: {line}", err=True)
    path = resolve_openings_path(openings)
    check_openings(path, book_plies=book_plies)
    settings = MatchSettings(limits=limits, openings=None if path is None else str(path),
                             book_plies=book_plies)
    where = conditions(limits, "startpos" if path is None else path)
    stop = "sprt" if params else "none"
    identity = match_identity(pa, pb, games=games, settings=settings, seed=seed, stop=stop,
                              sprt=params)
    event = f"evotune match {pa.name} vs {pb.name}"
    try:
        check_players(a, b)  # as a run checks its engine: options declared, bounds in range
        with _match_folder(out, identity, a=a, b=b, games=games, seed=seed, where=where,
                           sprt=sprt_settings(params)) as folder:
            done_before = folder.result()
            again = command_line(out=str(folder.root))
            info(f"continuing the match in {folder.root} ({folder.kept} games kept)"
                 if folder.kept else f"match in {folder.root} (continue a stopped one with "
                                     f"'{again}')")
            try:
                with GameBar(games) as bar:
                    result = play_match(pa, pb, games=games, settings=settings, seed=seed,
                                        workers=resolve_workers(workers), stop=stop,
                                        sprt=params,
                                        progress=IntervalBlocks(bar, bar.callback,
                                                                every=rating_interval,
                                                                where=where, sprt=params),
                                        journal=folder.journal)
            except KeyboardInterrupt:
                raise Interrupted(f"interrupted; the {folder.kept} finished games are kept in "
                                  f"{folder.root}: continue with '{again}'") from None
            pgn_done = (done_before or {}).get("pgn")
            pgn_now = str(Path(pgn_path).resolve()) if pgn_path else None
            folder.finish({**summary_dict(result), "pgn": pgn_done or pgn_now},
                          write_pgn_text(result.records, event=event, date=folder.date,
                                         limits=limits))
    finally:
        close_external_players()
    if pgn_path and pgn_done == pgn_now:
        info(f"the games of this match were written to {pgn_path} when it ended; not again")
    elif pgn_path:
        write_pgn(result.records, pgn_path, event=event, date=folder.date, limits=limits)
    if as_json:
        click.echo(json.dumps(json_summary(result)))
    else:
        for line in summary_lines(result_figures(result), pa.name, pb.name, where=where):
            click.echo(line)


def _match_folder(out: str | None, identity: dict, **settings) -> MatchFolder:
    """The match's folder: --out, or a new one under the runs folder."""
    date = datetime.date.today().strftime("%Y.%m.%d")
    if out is not None:
        return MatchFolder.open(out, identity=identity, settings=settings, date=date)
    path = default_match_folder(DEFAULT_RUNS_DIR, identity)
    try:
        return MatchFolder.open(path, identity=identity, settings=settings, date=date)
    except StoreError as exc:
        raise StoreError(f"{exc}; give the match a folder with --out FOLDER") from None


COMMANDS = (match_command,)
