"""Experiments: reproduce, compare."""
from __future__ import annotations

import time

import click

from ..errors import ConfigError, Interrupted
from ..experiments import (
    compare_strategies,
    compare_table,
    paper_table,
    reproduce_de_paper,
    write_compare_plots,
)
from ..strategies import STRATEGIES, known_strategy, strategy_names
from .options import cluster_options, renamed_option, reports_option, runs_dir_option, seed_option
from .progress import ExperimentBar, command_line, quiet_option

_SEEDS = click.IntRange(min=1)

@click.command()
@click.argument("experiment", type=click.Choice(["de-paper"]))
@click.option("--seeds", type=_SEEDS, default=1, show_default=True, help="Independent runs.")
@seed_option(1, "Seed of the first run (the others follow).", name="--first-seed")
@cluster_options(workers=0)
@runs_dir_option(alias=True)
@reports_option("Folder for each run's report (REPORTS/<run-id>/).")
@quiet_option
def reproduce(experiment, seeds, first_seed, workers, backend, scheduler, runs_dir, reports):
    """Reproduce a published experiment (de-paper: the DE chess-tuning paper's set-up)."""
    t0 = time.perf_counter()
    bar = ExperimentBar()
    try:
        outcomes = reproduce_de_paper(seeds=seeds, first_seed=first_seed, workers=workers,
                                      backend=backend, scheduler=scheduler, out_dir=runs_dir,
                                      reports_dir=reports, progress=bar)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished generation and verification game is "
                          f"kept in {runs_dir}/: continue with '{command_line()}'") from None
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    click.echo(paper_table(outcomes))
    for o in outcomes:
        click.echo(f"run {o.run_id}: {o.games} games in {o.seconds:.1f} s "
                   f"({o.games_per_second:.1f} games/s); report in {reports}/{o.run_id}/")
    click.echo(f"wall time of this command: {wall:.1f} s")


@click.command()
@click.option("--strategies", default="de,jde,ea,td", show_default=True,
              help=f"Comma-separated strategies: {strategy_names()} (e.g. ng:NGOpt).")
@click.option("--max-games", "games_budget", type=int, default=None,
              help="Games each strategy may play (required; as run --max-games: whole "
                   "generations, the last may pass it by up to one generation).")
@renamed_option("--games-budget", "--max-games", "games_budget", type=int)
@click.option("--seeds", type=_SEEDS, default=1, show_default=True,
              help="Independent runs of each strategy (seeds 1..SEEDS).")
@click.option("--np", "population", type=int, default=20, show_default=True,
              help="Population size / learners of each run (as run --np).")
@click.option("--depth", type=int, default=3, show_default=True,
              help="Search depth per move in plies, of the runs and the verification.")
@click.option("--engine", type=str, default="shannon", show_default=True,
              help="Engine spec (name or .toml) whose free weights are tuned.")
@click.option("--verify-games", type=int, default=200, show_default=True,
              help="Games of each verification match against the reference weights.")
@click.option("--verify-every", type=int, default=0, show_default=True, metavar="G",
              help="Also verify each run's recommended weights after every G tuning games "
                   "(games not counted in the budget); draws the Elo-vs-games plot.")
@click.option("--init", type=click.Choice(["sample", "reference"]), default="sample",
              show_default=True,
              help="Start of every run: 'sample' = uniform in the initial range (the paper's "
                   "problem); 'reference' = the spec's reference values (de/jde/ea: a "
                   "population around them, +-init_spread of each bound width).")
@cluster_options(workers=0)
@runs_dir_option(alias=True)
@reports_option("Folder of the Elo-vs-games plot (with --verify-every): "
                "REPORTS/compare-b<max-games>[-engine][-iref]/.")
@quiet_option
def compare(strategies, games_budget, seeds, population, depth, engine, verify_games, verify_every,
            init, workers, backend, scheduler, runs_dir, reports):
    """Compare strategies at an equal budget of games, verified on held-out openings.

    cmaes and ng:NAME score each candidate against the current mean of their search
    distribution (colour-balanced mini-matches); spsa plays theta +- c_k Delta in game pairs.
    """
    if games_budget is None:
        raise click.UsageError("Missing option '--max-games'.")
    names = tuple(s.strip() for s in strategies.split(",") if s.strip())
    unknown = [s for s in names if not known_strategy(s)]
    if not names or unknown:
        raise ConfigError(f"--strategies: unknown {unknown or 'empty list'}; use some of "
                          f"{','.join(STRATEGIES)} or ng:NAME")
    bar = ExperimentBar()
    try:
        outcomes = compare_strategies(strategies=names, games_budget=games_budget, seeds=seeds,
                                      population=population, depth=depth, engine=engine,
                                      workers=workers, backend=backend, scheduler=scheduler,
                                      verify_games=verify_games, verify_every=verify_every,
                                      out_dir=runs_dir, init=init, progress=bar)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished generation and verification game is "
                          f"kept in {runs_dir}/: continue with '{command_line()}'") from None
    finally:
        bar.close()
    click.echo(compare_table(outcomes, engine=engine))
    if verify_every:
        png, svg = write_compare_plots(outcomes, reports_dir=reports, games_budget=games_budget,
                                       engine=engine, init=init)
        click.echo(f"{png}\n{svg}")


COMMANDS = (reproduce, compare)
