"""Run commands: run, resume, status, runs."""
from __future__ import annotations

import json
from types import SimpleNamespace

import click

from ..errors import ConfigError, FieldError
from ..kinds import GAMES, kind_of
from ..kinds.games.config import RunConfig, build_run_config, dump_config_toml, load_config_file
from ..kinds.games.lifecycle import with_budget
from ..kinds.games.start import run_start
from ..kinds.view import SUMMARY_WEIGHTS
from ..match.resolve import limit_notes, resolve_player_list
from ..players.spec import player_from_engine_spec
from ..runs.runkind import PlayOptions, ResumeRequest, refuse_unread
from ..runs.runspec import load_run_engine
from ..runs.store import Store, list_runs
from ..strategies import STRATEGIES, strategy_class, strategy_names
from ..weightsio import read_spsa_params
from .options import (
    DefaultShown,
    cluster_options,
    json_option,
    limits_options,
    openings_option,
    opponents_option,
    renamed_option,
    runs_dir_option,
    seed_option,
)
from .progress import CommandUI, quiet_option, run_job
from .runview import table


def parse_params(items: tuple[str, ...]) -> dict:
    """--param NAME=VALUE flags as a dict (values read as JSON when they are JSON)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--param '{item}': expected NAME=VALUE, e.g. --param F=0.6")
        key, value = item.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


_C = RunConfig()
"""The defaults a run's help shows (a flag not given leaves the config file's value, else these)."""

_LEARN_FEATURES = " and ".join(n for n, cls in STRATEGIES.items() if cls.NEEDS_FEATURES)
"""The strategies that learn from the built-in engine's features (td): no UCI engine exposes them."""

RUN_HELP = f"""Tune weights: evolve a population with mini-matches between weight vectors.

    With a 'uci' engine spec (--engine my-engine.toml) the external engine is tuned through its
    UCI options (every strategy but those that learn from the built-in engine's features:
    {_LEARN_FEATURES}).

    Strategies: {strategy_names(joiner="and", about=True)}. A library's strategy (pycma's,
    nevergrad's) needs a scalar fitness: each candidate's points against the gauntlet
    (--opponents) when one is given, otherwise its score in a colour-balanced mini-match against
    the current mean of the search distribution.

    A run continues from earlier weights with --init-from RUN (a fit's or a tuning run's
    weights) or --engine SPEC:WEIGHTS (a weights file): they become the spec's reference values,
    every strategy starts from them, and the manifest records their source and checksum.
    """
"""``evotune run --help``: its list of strategies is the registry's
(:func:`evotune.strategies.strategy_names`), never written out."""


@click.command(help=RUN_HELP)
@click.option("--strategy", type=str, default=None, cls=DefaultShown, shown=_C.strategy,
              help=f"{strategy_names()}.")
@click.option("--np", "population", type=int, default=None, cls=DefaultShown,
              shown=_C.population,
              help="Population size / learners.")
@click.option("--generations", type=int, default=None, cls=DefaultShown,
              shown=_C.budget.generations,
              help="Generations to run (0 = no limit: --max-games or --max-seconds ends it).")
@click.option("--games", type=int, default=None, cls=DefaultShown, shown=_C.play.games,
              help="Games per mini-match, even.")
@limits_options(layered=True, shown=_C.play.limits)
@seed_option(None, "The run's seed.", shown=_C.seed)
@cluster_options(workers=None, backend=None, scheduler=None, check=False, shown=_C.cluster)
@click.option("--engine", type=str, default=None, cls=DefaultShown, shown=_C.engine,
              help="Engine spec name or .toml, or nnue:FILE: a net, whose output layer and "
                   "scale are tuned.")
@openings_option(None, "'book', 'startpos', '2moves' or an EPD/PGN/.bin file.",
                 shown=_C.play.openings)
@click.option("--max-games", type=int, default=None, cls=DefaultShown,
              shown=_C.budget.max_games,
              help="Stop after the generation in which the run's games reach this many (0 = no "
                   "limit). Generations are played whole, so the last one may pass the budget "
                   "by up to one generation's games (NP x --games for de/jde/ea; e.g. 600 with "
                   "32-game generations plays 608).")
@click.option("--max-seconds", type=float, default=None, cls=DefaultShown,
              shown=_C.budget.max_seconds,
              help="Stop after this much wall time (0 = no limit).")
@click.option("--init", type=click.Choice(["sample", "reference"]), default=None,
              cls=DefaultShown, shown="sample",
              help="Start of the population: 'sample' = uniform in the initial range; "
                   "'reference' = around the spec's reference values (--param init=...).")
@click.option("--final-check-games", "final_check_games", type=int, default=None, metavar="N",
              cls=DefaultShown,
              shown="10% of the budget",
              help="A run from given weights (--init-from, SPEC:WEIGHTS, init=reference, a net, "
                   "a UCI engine) ends by playing its recommendation against that start, an "
                   "SPRT [0, 5] of at most N games taken from --max-games, and recommends the "
                   "start unless the tuned weights are better. Default: 10% of the planned "
                   "games within [200, 4000]; 0: no final check.")
# the deprecated spelling of --final-check-games, still read
@renamed_option("--guard-games", "--final-check-games", "final_check_games", type=int)
@click.option("--final-check-openings", "final_check_openings", type=str, default=None,
              metavar="OPENINGS", cls=DefaultShown,
              shown="held-out",
              help="Openings of the final check: 'held-out' (8moves_v3, which no run tunes on "
                   "by default; 2moves_v1 for a run on 8moves_v3), 'run' (the run's own "
                   "openings) or openings as --openings gives them. Tuned weights can gain on "
                   "the openings they were selected on and not elsewhere: check on others.")
# the deprecated spelling of --final-check-openings, still read
@renamed_option("--guard-openings", "--final-check-openings", "final_check_openings",
                type=str)
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Strategy parameter, e.g. --param F=0.6 (repeatable).")
@click.option("--batch", type=int, default=None, metavar="N", cls=DefaultShown, shown=8,
              help="SPSA: perturbations per generation (--param batch=N). A "
                   "generation plays N x --games games, each a task of its own on the workers; "
                   "a larger batch leaves the cores less idle at each generation's end.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="TOML config file (defaults < file < flags).")
@click.option("--run-id", type=str, default=None,
              help="Name of the run directory (default: STRATEGY-DATE-TIME-HASH).")
@runs_dir_option(alias=True)
@click.option("--print-config", is_flag=True, help="Print the resolved config as TOML and exit.")
@opponents_option("Gauntlet fitness: every candidate plays colour-balanced games (--games "
                  "each) against these players (repeated or comma-separated), and candidates are "
                  "compared by their points against them (default: trial-vs-target "
                  "mini-matches). A player is an engine spec (name or .toml; a UCI "
                  "engine such as stockfish) or a weights file.")
@click.option("--spsa-params", "spsa_file", type=str, default=None, metavar="FILE",
              help="SPSA: the tuned weights as fishtest lines (name,start,min,max,c_end,r_end) or "
                   "OpenBench lines (name, int|float, start, min, max, c_end, r_end); names and "
                   "units as the engine spec's options; weights not listed stay at their "
                   "reference values.")
@click.option("--init-from", "init_from", type=str, default=None, metavar="RUN",
              help="Start from the weights of an earlier run (a Texel fit or a tuning run: its "
                   "recommended weights, as 'evotune export' writes them): they become the "
                   "reference the strategies start from (--init reference), within the "
                   "spec's bounds. --engine defaults to the run's engine spec.")
@quiet_option
def run(strategy, population, generations, games, limits, seed, workers, backend, scheduler,
        engine, openings, max_games, max_seconds, final_check_games, final_check_openings, init,
        params, batch, config_file, run_id, runs_dir, print_config, opponents, spsa_file,
        init_from):
    if final_check_games is not None and final_check_games < 0:  # -1: the config's 'auto'
        raise FieldError("final_check_games", f"must be 0 (no final check) or an even number of "
                                              f"games (leave it out for 10% of the budget), got "
                                              f"{final_check_games}")
    cfg = build_run_config(file=config_file, strategy=strategy, population=population,
                           generations=generations,
                           games=games, seed=seed, workers=workers, engine=engine,
                           openings=openings, max_games=max_games, max_seconds=max_seconds,
                           final_check_games=final_check_games,
                           final_check_openings=final_check_openings,
                           backend=backend, scheduler=scheduler,
                           params=parse_params(params) if params else None,
                           opponents=",".join(opponents) if opponents else None,
                           limits=limits)
    # what the flags add to the config's strategy parameters and engine, applied in one step
    extra: dict = {}
    if batch is not None:
        extra.update(batch_param(batch, cfg))
    if init is not None:
        extra.update(init_param(init, cfg))
    named = engine is not None or (config_file is not None
                                   and "engine" in load_config_file(config_file))
    start = run_start(cfg.engine, init_from=init_from, engine_named=named, runs_dir=runs_dir)
    spec = start.spec if start else load_run_engine(cfg.engine)  # the one reading of the spec
    if spsa_file is not None:
        if "table" not in strategy_class(cfg.strategy).PARAMS:
            raise ConfigError(f"--spsa-params is for {having('table')}, not "
                              f"--strategy {cfg.strategy}")
        extra["table"] = read_spsa_params(spsa_file, spec)
    if extra or start is not None:
        cfg = build_run_config(base=cfg, engine=start.engine if start else None,
                               params=extra or None)
    cfg = with_budget(cfg, spec)
    if print_config:
        if start is not None:
            click.echo(f"# starts from {start.init_from.description} ({start.spec.start_source});"
                       " a config file cannot hold the start: give --init-from or --engine "
                       "SPEC:WEIGHTS with --config")
        click.echo(dump_config_toml(cfg), nl=False)
        return
    job = GAMES.new(cfg, out_dir=runs_dir, run_id=run_id, workers=cfg.cluster.workers,
                    ui=CommandUI(), spec=spec,
                    init_from=start.init_from if start else None)  # checks first
    if start is not None:
        click.echo(f"starting from {start.spec.start_source}: {start.init_from.description} "
                   f"(weights sha256 {start.init_from.weights_sha256[:12]})", err=True)
    builtin_opponents_note(spec, cfg)
    deep_leaf_note(spec, cfg)
    run_job(GAMES, job)


def deep_leaf_note(spec, cfg) -> None:
    """A line for each built-in UCT player (the engine, its opponents) whose simulations are
    deep alpha-beta searches (:func:`~evotune.match.resolve.limit_notes`)."""
    players = [player_from_engine_spec(spec)] if spec.kind == "builtin" else []
    players += [p for p in resolve_player_list(cfg.play.opponents) if p.is_builtin] \
        if cfg.play.opponents else []
    for line in limit_notes(cfg.play.limits, players):
        click.echo(f"evotune: note: {line}", err=True)


def builtin_opponents_note(spec, cfg) -> None:
    """One line when a UCI engine's gauntlet includes evotune's built-in engine: its games
    against a weak engine say little about the user's own, which --opponents ENGINE (the
    engine at its start) measures."""
    if spec.kind != "uci" or not cfg.play.opponents:
        return
    builtin = [p.name for p in resolve_player_list(cfg.play.opponents) if p.is_builtin]
    if builtin:
        click.echo(f"evotune: note: the opponents include evotune's built-in engine "
                   f"({', '.join(builtin)}), not {spec.name}; to play {spec.name} against its "
                   f"own start give --opponents {cfg.engine}", err=True)


def having(param: str) -> str:
    """'--strategy spsa' (or '--strategy a or b'): the strategies with parameter ``param``."""
    names = [name for name, cls in STRATEGIES.items() if param in cls.PARAMS]
    return "--strategy " + " or ".join(names)


def batch_param(batch: int, cfg) -> dict:
    """``--batch N`` as SPSA's parameter ``batch`` (one line when the strategy is not SPSA or
    --param batch says otherwise)."""
    param = strategy_class(cfg.strategy).PARAMS.get("batch")
    if param is None:
        raise ConfigError(f"--batch is for {having('batch')} (perturbations per generation); a "
                          f"{cfg.strategy} generation is --np candidates of --games games each")
    high = int(param.high or 0)
    if not 1 <= batch <= high:
        raise ConfigError(f"--batch must be from 1 to {high} perturbations, got {batch}")
    given = cfg.params_dict().get("batch")
    if given is not None and int(given) != batch:
        raise ConfigError(f"--batch {batch} and --param batch={given} disagree; give one")
    return {"batch": batch}


def init_param(init: str, cfg) -> dict:
    """``--init sample|reference`` as the strategies' parameter ``init`` (one line when --param
    init says otherwise)."""
    given = cfg.params_dict().get("init")
    if given is not None and given != init:
        raise ConfigError(f"--init {init} and --param init={given} disagree; give one")
    return {"init": init}


@click.command()
@click.argument("run_ref", metavar="RUN")
@runs_dir_option(alias=True)
@cluster_options(workers=None, backend="local", scheduler="", check=False,
                 workers_help="Worker processes (0 = one per core; results do not depend on "
                              "it).", shown=SimpleNamespace(workers="the run's"))
@click.option("--generations", type=int, default=None,
              help="Raise the run's generation limit (kept in the run; a training's or a "
                   "fit's: its epochs).")
@click.option("--max-games", type=int, default=None,
              help="Raise the run's games budget (kept in the run; never lower).")
@click.option("--max-seconds", type=float, default=None,
              help="Raise the run's wall-time limit in seconds (kept in the run; never lower).")
@quiet_option
def resume(run_ref, runs_dir, workers, backend, scheduler, generations, max_games, max_seconds):
    """Continue a stopped or killed run; results equal an uninterrupted run. Games run locally
    unless --backend dask --scheduler ADDR is given here (a stored address is never used).
    --max-games, --generations and --max-seconds extend a run: the new limit is kept in the run
    (its identity unchanged); a value that would shrink it is refused."""
    store = Store.open(run_ref, runs_dir)
    kind = kind_of(store)
    refuse_unread(kind, ["play"] if backend != "local" or scheduler else [])
    request = ResumeRequest(generations=generations, max_games=max_games,
                            max_seconds=max_seconds, workers=workers,
                            play=PlayOptions(backend=backend, scheduler=scheduler))
    state = store.current_state()
    job = kind.resume(store, request)
    if state is not None and state.finished and (generations, max_games, max_seconds) == (
            None, None, None):
        click.echo(f"evotune: note: run {store.run_id} has finished: nothing is played; raise "
                   "one of its limits to continue it (evotune resume --help)", err=True)
    run_job(kind, job)


@click.command()
@click.argument("run_ref", metavar="RUN")
@runs_dir_option(alias=True)
@json_option
@click.option("--all", "every", is_flag=True,
              help=f"Every weight (a run of more than {2 * SUMMARY_WEIGHTS} weights shows "
                   f"the {SUMMARY_WEIGHTS} that changed most).")
def status(run_ref, runs_dir, as_json, every):
    """Show where a run stands: generation, games, means and deviations."""
    store = Store.open(run_ref, runs_dir)
    status_ = kind_of(store).status(store, every=every)
    if as_json:
        click.echo(json.dumps(status_.info))
        return
    for line in status_.lines:
        click.echo(line)


@click.command()
@runs_dir_option(alias=True)
def runs(runs_dir):
    """List the runs under --runs-dir, newest first."""
    stores = list_runs(runs_dir)
    if not stores:
        click.echo(f"no runs in {runs_dir}/")
        return
    for line in table(stores):
        click.echo(line)


COMMANDS = (run, resume, status, runs)
