"""The match command."""
from __future__ import annotations

import datetime
import json

import click

from ..fileio import check_writable
from ..match import MatchSettings, SprtParams, play_match, write_pgn
from ..match.fixtures import check_games
from ..match.openings import check_openings
from ..match.resolve import (
    check_clock_applies,
    check_players,
    close_external_players,
    resolve_players,
)
from ..match.resultsblock import conditions, json_summary, result_figures, summary_lines
from ..paths import resolve_openings_path
from ..runs.lifecycle import resolve_workers
from .interim import IntervalBlocks, rating_interval_option
from .options import (
    book_plies_option,
    json_option,
    limits_options,
    note_old_players,
    openings_option,
    seed_option,
    sprt_option,
    workers_option,
)
from .progress import GameBar, quiet_option


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
              help="Append the games to this PGN file.")
@rating_interval_option
@json_option
@quiet_option
def match_command(a, b, games, openings, book_plies, limits, workers, seed, sprt, pgn_path,
                  rating_interval, as_json) -> None:
    """Play a colour-balanced match between players A and B and print its statistics.

    A and B are each SPEC[:WEIGHTS]: an engine spec (a name under engines/ or a .toml;
    shannon: the built-in engine's default spec; a 'uci' spec: an external engine) with its
    reference values, or with the weights in a file (e.g. pst:tuned.json; any 'evotune export
    --format json' output). A bare weights file means shannon:FILE.
    """
    games = check_games(games)
    note_old_players(a, b)
    params = SprtParams(*sprt) if sprt else None
    if pgn_path:
        check_writable(pgn_path, "--pgn")
    pa, pb = resolve_players(a, b)
    check_clock_applies(limits, (pa, pb))
    path = resolve_openings_path(openings)
    check_openings(path, book_plies=book_plies)
    settings = MatchSettings(limits=limits, openings=None if path is None else str(path),
                             book_plies=book_plies)
    where = conditions(limits, "startpos" if path is None else path)
    try:
        check_players(a, b)  # as a run checks its engine: options declared, bounds in range
        with GameBar(games) as bar:
            result = play_match(pa, pb, games=games, settings=settings, seed=seed,
                                workers=resolve_workers(workers),
                                stop="sprt" if params else "none", sprt=params,
                                progress=IntervalBlocks(bar, bar.callback, every=rating_interval,
                                                        where=where, sprt=params))
    finally:
        close_external_players()
    if pgn_path:
        write_pgn(result.records, pgn_path, event=f"evotune match {pa.name} vs {pb.name}",
                  date=datetime.date.today().strftime("%Y.%m.%d"), limits=limits)
    if as_json:
        click.echo(json.dumps(json_summary(result)))
    else:
        for line in summary_lines(result_figures(result), pa.name, pb.name, where=where):
            click.echo(line)


COMMANDS = (match_command,)
