"""The ``evotune`` command line: a click group that parses flags, builds a config and calls the
library. No logic lives here. Library errors (EvotuneError) are printed as one line and exit 2.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from . import __version__
from .errors import ConfigError, EvotuneError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evotune")
def cli() -> None:
    """evotune: tune a chess engine's evaluation weights by evolution."""


def _one_line(text: str) -> str:
    """A message as one printable line (names from files may hold newlines or escapes)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(text.splitlines()))


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the click group, turning EvotuneError into one line + exit 2."""
    import os

    try:
        cli.main(args=argv, prog_name="evotune", standalone_mode=False)
    except EvotuneError as exc:
        click.echo(f"evotune: error: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("evotune: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:  # usage errors too: one line, not usage + hint
        click.echo(f"evotune: error: {_one_line(exc.format_message())}", err=True)
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(130)
    except Exception as exc:  # a bug, not a bad input: one line (EVOTUNE_DEBUG=1 shows it all)
        if os.environ.get("EVOTUNE_DEBUG"):
            raise
        click.echo(f"evotune: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                   "(please report it; EVOTUNE_DEBUG=1 shows the traceback)", err=True)
        sys.exit(1)


# ---- engine commands (issue 2): perft, search, bench ------------------------------------------

@cli.command()
@click.argument("fen", required=False)
@click.argument("depth", type=int, required=False)
@click.option("--divide", is_flag=True, help="One 'move: count' line per root move, then the total.")
@click.option("--suite", type=click.Path(dir_okay=False), default=None,
              help="Check every ';D<n> <count>' entry of an EPD perft suite instead.")
@click.option("--max-nodes", type=int, default=1_000_000, show_default=True,
              help="With --suite: skip entries whose expected count is above this.")
def perft(fen: str | None, depth: int | None, divide: bool, suite: str | None,
          max_nodes: int) -> None:
    """Count the leaves of the legal move tree: 'evotune perft FEN DEPTH' or --suite FILE.epd."""
    from .engine import perft as count, perft_divide
    from .engine.api import perft_suite

    if suite is not None:
        checks = perft_suite(suite, max_nodes=max_nodes)
        failed = [c for c in checks if not c.ok]
        for c in failed:
            click.echo(f"MISMATCH {c.fen} depth {c.depth}: expected {c.expected}, got {c.got}")
        click.echo(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
        if failed:
            sys.exit(1)
        return
    if fen is None or depth is None:
        raise ConfigError("perft needs FEN and DEPTH (or --suite FILE.epd)")
    if divide:
        counts = perft_divide(fen, depth)
        for move, n in counts.items():
            click.echo(f"{move}: {n}")
        click.echo(f"total: {sum(counts.values())}")
    else:
        click.echo(count(fen, depth))


@cli.command()
@click.argument("fen")
@click.option("--depth", type=int, default=3, show_default=True, help="Search depth in plies.")
@click.option("--nodes", type=int, default=0, show_default=True, help="Node limit (0 = none).")
@click.option("--weights", default=None,
              help="Shannon weights P,N,B,R,Q,M in engine units, or a JSON weights file "
                   "(default: the engine spec's reference values).")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec (its feature set and reference weights).")
def search(fen: str, depth: int, nodes: int, weights: str | None, engine: str) -> None:
    """Search FEN with the built-in engine; print move, score, depth, nodes, nodes/s and PV."""
    from .engine import search as run_search

    spec, w = _builtin_weights(engine, weights)
    r = run_search(fen, w, depth=depth, nodes=nodes, features=spec.features)
    nps = r.nodes / r.seconds if r.seconds > 0 else 0.0
    click.echo(f"bestmove {r.move or '(none)'} score {r.score} depth {r.depth} nodes {r.nodes} "
               f"nps {nps:.0f} pv {' '.join(r.pv)}")


def _builtin_weights(engine: str, weights: str | None):
    """(spec, weight vector) of a builtin engine spec: ``weights`` is a JSON file, or for shannon
    also 'P,N,B,R,Q,M' text; None means the spec's reference values."""
    from .enginespec import load_engine_spec
    from .weightsio import load_weights_file
    from .weightsio import parse_weights_text

    spec = load_engine_spec(engine)
    if spec.kind != "builtin":
        raise ConfigError(f"engine '{engine}' is a '{spec.kind}' engine; give a builtin spec "
                          "(shannon, pst, extended, pst-pesto or a .toml file)")
    if weights is None:
        return spec, spec.space().reference_array
    if Path(weights).is_file() or weights.endswith(".json"):
        return spec, load_weights_file(weights, spec)
    if spec.features != "shannon":
        raise ConfigError(f"--weights: give a JSON weights file for the '{spec.features}' "
                          "feature set")
    return spec, parse_weights_text(weights)


@cli.command()
@click.argument("fen")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec: its feature set and reference weights.")
@click.option("--weights", default=None,
              help="A JSON weights file (or P,N,B,R,Q,M for shannon) instead of the reference.")
@click.option("--all", "show_all", is_flag=True, help="Also list the features that are zero.")
def features(fen: str, engine: str, weights: str | None, show_all: bool) -> None:
    """Print the non-zero features of FEN (side to move's view) with their names, values
    (phi, phase folded in), weights and weighted contributions, then the evaluation."""
    from .engine.api import contributions

    spec, w = _builtin_weights(engine, weights)
    rows, value = contributions(fen, w, spec.features, nonzero=not show_all)
    width = max([len(r.name) for r in rows] + [7])
    click.echo(f"{'feature':<{width}} {'phi':>10} {'weight':>8} {'contribution':>13}")
    for r in rows:
        click.echo(f"{r.name:<{width}} {r.phi:>10.4f} {r.weight:>8d} {r.contribution:>13.2f}")
    total = sum(r.contribution for r in rows)
    click.echo(f"{len(rows)} features ({spec.features}, engine {spec.name}); sum of "
               f"contributions {total:.2f}; evaluation {value} (side to move, engine units)")


# ---- bench (issue 2) ----
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the six figures.")
@click.option("--quick", is_flag=True,
              help="A few-seconds smoke run (shallower searches, 2 short games); its signature "
                   "differs from the full bench's.")
@click.option("--engine", default=None,
              help="Builtin engine spec to bench with its reference weights (default: the "
                   "Shannon reference weights, signature 26878611).")
def bench(as_json: bool, quick: bool, engine: str | None) -> None:
    """Engine speed and search signature: search_nps, reference_search_nps, speedup, perft_nps,
    game_seconds_median, signature (total nodes of a fixed search set; changes only when the
    search changes). Speeds are wall-clock and depend on the machine's load."""
    import json

    from .enginespec import load_engine_spec
    from .engine.bench import QUICK, BenchSettings, format_bench, run_bench

    spec = None if engine is None else load_engine_spec(engine)
    result = run_bench(QUICK if quick else BenchSettings(), spec)
    click.echo(json.dumps(result.as_dict()) if as_json else format_bench(result))


# ---- match commands (issue 3): match ----------------------------------------------------------

@cli.command("match")
@click.argument("a")
@click.argument("b")
@click.option("--games", type=int, default=10, show_default=True,
              help="Games (even: each opening twice, colours swapped; the maximum with --sprt).")
@click.option("--openings", default="2moves", show_default=True,
              help="EPD/PGN(.zip) suite or Polyglot .bin book; '2moves', 'book' or 'startpos'.")
@click.option("--book-plies", type=int, default=8, show_default=True,
              help="Plies drawn from a Polyglot book per opening.")
@click.option("--depth", type=int, default=3, show_default=True, help="Search depth.")
@click.option("--nodes", type=int, default=0, show_default=True,
              help="Node limit per move (0 = none).")
@click.option("--movetime", type=float, default=0.0, show_default=True,
              help="Seconds per move for external engines (0 = use depth/nodes).")
@click.option("--tc", type=str, default=None, metavar="BASE+INC",
              help="Time control in seconds for external engines, e.g. 10+0.1 (real clocks; "
                   "built-in players keep --depth / --nodes).")
@click.option("--time-margin", type=float, default=0.1, show_default=True,
              help="Seconds a side may overrun its clock before it loses on time.")
@click.option("--max-plies", type=int, default=400, show_default=True,
              help="Ply cap after the opening (a draw).")
@click.option("--workers", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the openings.")
@click.option("--sprt", nargs=2, type=float, default=None, metavar="ELO0 ELO1",
              help="Run an SPRT (logistic Elo, alpha = beta = 0.05) and stop at its verdict.")
@click.option("--pgn", "pgn_path", type=click.Path(dir_okay=False), default=None,
              help="Append the games to this PGN file.")
@click.option("--resign", nargs=2, type=int, default=None, metavar="SCORE MOVES",
              help="Resign adjudication: a side whose score stays <= -SCORE for MOVES own moves "
                   "(the opponent agreeing) loses.")
@click.option("--draw", "draw_adj", nargs=3, type=int, default=None,
              metavar="SCORE MOVES FROM_PLY",
              help="Draw adjudication: |score| <= SCORE for MOVES moves of each side, counted "
                   "from ply FROM_PLY, is a draw.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def match_command(a, b, games, openings, book_plies, depth, nodes, movetime, tc, time_margin,
                  max_plies, workers, seed, sprt, resign, draw_adj, pgn_path, as_json) -> None:
    """Play a colour-balanced match between players A and B and print its statistics.

    A and B are each SPEC[:WEIGHTS]: an engine spec (a name under engines/ or a .toml;
    'reference' = 'shannon'; builtin: the built-in engine, uci: the external engine) with its
    reference values, or with the weights in a file (e.g. pst:tuned.json; any 'evotune export
    --format json' output). A bare weights file means shannon:FILE.
    """
    import datetime

    from .paths import resolve_openings_path
    from .engine import Adjudication
    from .match import MatchSettings, SprtParams, play_match, write_pgn
    from .match.resolve import check_player_starts, close_external_players, resolve_players
    from .match.scoring import format_result, summary_dict

    from .limits import check_limits
    from .match.openings import check_openings
    from .runs.lifecycle import check_workers
    from .fileio import check_writable

    if games <= 0 or games % 2:
        raise ConfigError(f"--games {games}: give a positive even number (each opening is "
                          f"played twice with colours swapped), e.g. --games {max(2, games + 1)}")
    check_limits(games=games, depth=depth, nodes=nodes, max_plies=max_plies, seed=seed,
                 workers=workers, book_plies=book_plies, movetime=movetime,
                 time_margin=time_margin)
    if depth < 1 or max_plies < 1:
        raise ConfigError("--depth and --max-plies must be at least 1")
    check_workers(workers)
    if sprt and not (all(map(math.isfinite, sprt)) and sprt[0] < sprt[1]):
        raise ConfigError(f"--sprt {sprt[0]:g} {sprt[1]:g}: need elo0 < elo1, both finite, "
                          "e.g. --sprt 0 5")
    if pgn_path:
        check_writable(pgn_path, "--pgn")
    pa, pb = resolve_players(a, b)
    path = resolve_openings_path(openings)
    check_openings(path, book_plies=book_plies)
    if (resign and min(resign) <= 0) or (draw_adj and (min(draw_adj[:2]) <= 0 or draw_adj[2] < 0)):
        raise ConfigError("--resign SCORE MOVES and --draw SCORE MOVES FROM_PLY take positive "
                          "scores and move counts (FROM_PLY >= 0), e.g. --resign 1000 3")
    adjudication = Adjudication(
        resign_score=resign[0] if resign else 0, resign_moves=resign[1] if resign else 0,
        draw_score=draw_adj[0] if draw_adj else 0, draw_moves=draw_adj[1] if draw_adj else 0,
        draw_start_ply=draw_adj[2] if draw_adj else 0)
    from .limits import parse_tc

    clock = parse_tc(tc)
    if clock is not None and movetime > 0:
        raise ConfigError("give either --tc or --movetime, not both")
    settings = MatchSettings(depth=depth, nodes=nodes, movetime=movetime, max_plies=max_plies,
                             openings=None if path is None else str(path), book_plies=book_plies,
                             adjudication=adjudication, tc=clock, time_margin=time_margin)
    params = SprtParams(sprt[0], sprt[1]) if sprt else None
    bar = click.progressbar(length=games, label="games", file=sys.stderr) \
        if sys.stderr.isatty() else None
    try:
        for p in (pa, pb):
            check_player_starts(p)
        with bar if bar is not None else _nullcontext():
            result = play_match(pa, pb, games=games, settings=settings, seed=seed,
                                workers=workers, stop="sprt" if params else "none", sprt=params,
                                progress=(lambda e: bar.update(1)) if bar is not None else None)
    finally:
        close_external_players()
    if pgn_path:
        write_pgn(result.records, pgn_path, event=f"evotune match {pa.name} vs {pb.name}",
                  date=datetime.date.today().strftime("%Y.%m.%d"))
    if as_json:
        click.echo(json.dumps(summary_dict(result)))
    else:
        click.echo(format_result(result, pa.name, pb.name))


def _nullcontext():
    import contextlib

    return contextlib.nullcontext()


# ---- uci front end (issue 3): uci -------------------------------------------------------------

@cli.command()
@click.option("--weights", "weights_file", type=click.Path(dir_okay=False), default=None,
              help="JSON file with the initial weights: a list of six numbers or {name: value}.")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec (feature set, options, reference weights).")
def uci(weights_file: str | None, engine: str) -> None:
    """Speak UCI on stdin/stdout (for GUIs, cutechess, python-chess): the built-in engine with
    every weight as a spin option."""
    from .engine.uci import run as run_uci

    run_uci(weights_file=weights_file, engine=engine)


# ---- run commands (issue 4): run, resume, status, runs ----------------------------------------

def _parse_params(items: tuple[str, ...]) -> dict:
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


def _adjudication_flags(resign, draw_adj) -> dict:
    """RunConfig fields of --resign SCORE MOVES and --draw SCORE MOVES FROM_PLY (None: not given)."""
    out = {}
    if resign:
        out.update(resign_score=resign[0], resign_moves=resign[1])
    if draw_adj:
        out.update(draw_score=draw_adj[0], draw_moves=draw_adj[1], draw_start_ply=draw_adj[2])
    if min(out.values(), default=1) < 0 or (resign and min(resign) == 0) \
            or (draw_adj and min(draw_adj[:2]) == 0):
        raise ConfigError("--resign SCORE MOVES and --draw SCORE MOVES FROM_PLY take positive "
                          "scores and move counts (FROM_PLY >= 0), e.g. --resign 1000 3")
    return out


class _RunBar:
    """One status line on stderr: generation, games, replacement rate, weight means."""

    def __init__(self, cfg, names):
        self.cfg, self.names = cfg, names
        self.tty = sys.stderr.isatty()
        self.last = ""

    def __call__(self, ev) -> None:
        total = self.cfg.generations or "?"
        if ev.kind == "game":
            if not self.tty:
                return
            line = (f"gen {ev.generation}/{total}  games {ev.games_total}  "
                    f"(this generation {ev.games_in_generation})  {self.last}")
            click.echo("\r" + line[:150].ljust(150), nl=False, err=True)
            return
        st = ev.stats
        from .reporting.tables import brief

        means = brief(self.names, st.get("mean", []))
        if "replacement_rate" in st:
            rate = f"replaced {st['replacement_rate']:.2f}  "
        elif "learning_rate" in st:
            rate = f"lr {st['learning_rate']:.4g}  "
        else:
            rate = ""
        self.last = f"{rate}means {means}"
        line = f"gen {ev.generation}/{total}  games {ev.games_total}  {self.last}"
        if self.tty:
            click.echo("\r" + line[:150].ljust(150), err=True)
        else:
            click.echo(line, err=True)


def _run_and_report(store, plan) -> None:
    from .tuning.loop import execute

    from .reaper import no_orphans

    no_orphans()
    names = plan.spec.names
    click.echo(f"run {store.run_id} in {store.root}", err=True)
    try:
        summary = execute(store, plan, progress=_RunBar(plan.config, names))
    except EvotuneError as exc:
        raise type(exc)(f"{exc} (run {store.run_id} is kept; continue it with "
                        f"'evotune resume {store.run_id}')") from None
    except KeyboardInterrupt:
        raise EvotuneError(f"interrupted; every finished generation is stored: continue with "
                           f"'evotune resume {store.run_id}'") from None
    from .reporting.tables import brief

    rec = brief(names, summary.recommended, lambda n, v: f"{n} {v:g}", sep=", ")
    click.echo(f"run {summary.run_id}: {summary.generation} generations, {summary.games} games, "
               f"{summary.seconds:.1f} s ({summary.games / max(summary.seconds, 1e-9):.1f} games/s)")
    click.echo(f"recommended weights (population mean): {rec}")


@cli.command()
@click.option("--strategy", type=str, default=None,
              help="de, jde, ea, td, spsa, cmaes or ng:NAME (default de).")
@click.option("--np", "np_", type=int, default=None, help="Population size / learners (default 20).")
@click.option("--generations", type=int, default=None, help="Generations to run (default 50).")
@click.option("--games", type=int, default=None, help="Games per mini-match, even (default 4).")
@click.option("--depth", type=int, default=None, help="Search depth per move (default 3).")
@click.option("--nodes", type=int, default=None, help="Node limit per move (default none).")
@click.option("--seed", type=int, default=None, help="The run's seed (default 1).")
@click.option("--workers", type=int, default=None, help="Worker processes (default: one per core).")
@click.option("--engine", type=str, default=None, help="Engine spec name or .toml (default shannon).")
@click.option("--openings", type=str, default=None,
              help="'book' (default), 'startpos', '2moves' or an EPD/PGN/.bin file.")
@click.option("--max-games", type=int, default=None, help="Stop after this many games.")
@click.option("--max-seconds", type=float, default=None, help="Stop after this much wall time.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Strategy parameter, e.g. --param F=0.6 (repeatable).")
@click.option("--backend", type=click.Choice(["local", "dask"]), default=None,
              help="Where games run: local processes (default) or a Dask cluster.")
@click.option("--scheduler", type=str, default=None, help="Dask scheduler, tcp://HOST:PORT.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="TOML config file (defaults < file < flags).")
@click.option("--run-id", type=str, default=None, help="Name of the run directory.")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True,
              help="Folder that holds run directories.")
@click.option("--print-config", is_flag=True, help="Print the resolved config as TOML and exit.")
@click.option("--movetime", type=float, default=None,
              help="Seconds per move for external (UCI) engines instead of --depth.")
@click.option("--tc", type=str, default=None, metavar="BASE+INC",
              help="Time control in seconds for external (UCI) engines, e.g. 10+0.1: real clocks "
                   "(go wtime btime winc binc), a side that runs out loses on time. Built-in "
                   "players keep their --depth / --nodes limits.")
@click.option("--time-margin", type=float, default=None,
              help="Seconds a side may overrun its clock before it loses on time (default 0.1).")
@click.option("--resign", nargs=2, type=int, default=None, metavar="SCORE MOVES",
              help="Resign adjudication: a side whose score stays <= -SCORE for MOVES own moves "
                   "(the opponent agreeing) loses.")
@click.option("--draw", "draw_adj", nargs=3, type=int, default=None,
              metavar="SCORE MOVES FROM_PLY",
              help="Draw adjudication: |score| <= SCORE for MOVES moves of each side, counted "
                   "from ply FROM_PLY, is a draw.")
@click.option("--opponents", type=str, default=None, metavar="SPEC[:WEIGHTS],...",
              help="Gauntlet fitness: every candidate plays colour-balanced games (--games each) "
                   "against these players, and candidates are compared by their points against "
                   "them (default: trial-vs-target mini-matches). A player is 'reference', an "
                   "engine spec (name or .toml; a UCI engine such as stockfish) or a weights file.")
@click.option("--spsa-params", "spsa_file", type=str, default=None, metavar="FILE",
              help="SPSA: the tuned weights as fishtest lines (name,start,min,max,c_end,r_end) or "
                   "OpenBench lines (name, int|float, start, min, max, c_end, r_end); names and "
                   "units as the engine spec's options; weights not listed stay at their "
                   "reference values.")
def run(strategy, np_, generations, games, depth, nodes, seed, workers, engine, openings,
        max_games, max_seconds, params, backend, scheduler, config_file, run_id, out,
        print_config, movetime, tc, time_margin, resign, draw_adj, opponents, spsa_file):
    """Tune weights: evolve a population with mini-matches between weight vectors.

    With a 'uci' engine spec (--engine my-engine.toml) the external engine is tuned through its
    UCI options (strategies de, jde, ea).

    Strategies: de, jde, ea, td, spsa (fishtest's SPSA), cmaes (pycma) and ng:NAME (any
    nevergrad optimiser, e.g. ng:NGOpt). cmaes and ng:NAME need a scalar fitness: each
    candidate's points against the gauntlet (--opponents) when one is given, otherwise its score
    in a colour-balanced mini-match against the current mean of the search distribution.
    """
    from .enginespec import load_engine_spec
    from .runs.config import build_run_config, dump_config_toml
    from .runs.lifecycle import new_run, with_budget
    from .weightsio import read_spsa_params

    if config_file is not None and not Path(config_file).is_file():
        raise ConfigError(f"--config {config_file}: no such file")
    cfg = build_run_config(file=config_file, strategy=strategy, np=np_, generations=generations,
                           games=games, depth=depth, nodes=nodes, seed=seed, workers=workers,
                           engine=engine, openings=openings, max_games=max_games,
                           max_seconds=max_seconds, backend=backend, scheduler=scheduler,
                           params=_parse_params(params) if params else None,
                           movetime=movetime, tc=tc, time_margin=time_margin,
                           opponents=opponents, **_adjudication_flags(resign, draw_adj))
    spec = load_engine_spec(cfg.engine)  # the command's one reading of the spec
    if spsa_file is not None:
        if cfg.strategy != "spsa":
            raise ConfigError(f"--spsa-params is for --strategy spsa, not '{cfg.strategy}'")
        cfg = build_run_config(base=cfg, params={"table": read_spsa_params(spsa_file, spec)})

    cfg = with_budget(cfg, spec)
    if print_config:
        click.echo(dump_config_toml(cfg), nl=False)
        return
    # checks everything before creating
    store, plan = new_run(cfg, out_dir=out, run_id=run_id, spec=spec)
    _run_and_report(store, plan)


@cli.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True)
@click.option("--workers", type=int, default=None, help="Worker processes (results unchanged).")
@click.option("--generations", type=int, default=None,
              help="Raise the generation limit to continue a finished run.")
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local",
              show_default=True, help="Where games run (never taken from the stored run).")
@click.option("--scheduler", type=str, default="", help="Dask scheduler, tcp://HOST:PORT.")
def resume(run_ref, out, workers, generations, backend, scheduler):
    """Continue a stopped or killed run; results equal an uninterrupted run. Games run locally
    unless --backend dask --scheduler ADDR is given here (a stored address is never used)."""
    import dataclasses

    from .runs.config import validate_run_config
    from .runs.lifecycle import check_backend, open_run
    from .runs.plan import with_overrides

    from .learn.fitrun import is_fit, open_fit
    from .runs.store import Store

    fit_store = Store.open(run_ref, out)
    if is_fit(fit_store):
        cfg = open_fit(fit_store)
        if generations is not None:
            cfg = dataclasses.replace(cfg, epochs=generations)
        _fit_and_report(fit_store, cfg)
        return
    store, plan = open_run(run_ref, out_dir=out)
    changes = {k: v for k, v in (("workers", workers), ("generations", generations)) if v is not None}
    plan = with_overrides(plan, backend=backend, scheduler=scheduler, **changes)
    validate_run_config(plan.config)
    check_backend(plan.config)
    _run_and_report(store, plan)


@cli.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(run_ref, out, as_json):
    """Show where a run stands: generation, games, means and deviations."""
    from .runs.store import Store

    store = Store.open(run_ref, out)
    cfg, state = store.manifest().config, store.current_state()
    gens = store.generations(state)
    last = gens[-1] if gens else None
    info = {"run_id": store.run_id, "strategy": cfg.strategy, "np": cfg.np,
            "generation": state.generation if state else 0,
            "generations": cfg.generations, "games": state.games if state else 0,
            "seconds": round(state.seconds, 2) if state else 0.0,
            "finished": bool(state and state.finished),
            "names": list(last.names) if last else [],
            "mean": list(last.mean) if last else [], "std": list(last.std) if last else []}
    if as_json:
        click.echo(json.dumps(info))
        return
    click.echo(f"run {info['run_id']}: {info['strategy']} NP {info['np']}, generation "
               f"{info['generation']}/{info['generations'] or '-'}, {info['games']} games, "
               f"{info['seconds']:.1f} s, {'finished' if info['finished'] else 'not finished'}")
    for n, m, s in zip(info["names"], info["mean"], info["std"]):
        click.echo(f"  {n:<9} mean {m:9.2f}  std {s:8.2f}")


@cli.command()
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True)
def runs(out):
    """List the runs under --out, newest first."""
    from .runs.store import list_runs

    stores = list_runs(out)
    if not stores:
        click.echo(f"no runs in {out}/")
        return
    for s in stores:
        try:
            cfg, state = s.manifest().config, s.current_state()
        except EvotuneError as exc:
            click.echo(f"{s.run_id:<40} unreadable: {exc}")
            continue
        g = state.generation if state else 0
        games = state.games if state else 0
        fin = "finished" if state and state.finished else "stopped"
        click.echo(f"{s.run_id:<40} {cfg.strategy:<4} gen {g}/{cfg.generations} "
                   f"games {games} {fin}")


# ---- report commands (issue 5): plot, report, verify, export ----------------------------------

_RUNS_DIR = click.option("--runs-dir", type=click.Path(file_okay=False), default="populations",
                         show_default=True, help="Folder that holds run directories.")
_SQUARES = click.option("--squares", default=None, metavar="NAME,...",
                        help="Runs with many weights: the weights of squares.png, e.g. "
                             "knight.e4,mg.pawn.d4,pst.eg.king.g1 (default: the table squares "
                             "that moved most).")
_RECOMMEND = click.option("--recommend", "rule", default="mean", show_default=True,
                          help="Recommended weights: 'mean' (population mean) or 'better-half'.")


@cli.command()
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN [RUN2 ...]")
@click.option("--x", "x_axis", default="generations", show_default=True,
              help="x axis: 'generations' or 'games'.")
@click.option("--out", type=click.Path(file_okay=False), default="reports", show_default=True,
              help="Folder for reports (plots go to OUT/<run-id>/ or OUT/compare-.../).")
@_RUNS_DIR
@_SQUARES
def plot(run_refs, x_axis, out, runs_dir, squares):
    """Plot convergence (mean +- std), deviations and strategy statistics of runs (overlaid);
    for many weights also heatmaps of the piece-square tables."""
    from .reporting.data import load_run
    from .reporting.plots import write_plots
    from .fileio import check_writable

    check_writable(out, "--out", folder=True)
    result = write_plots([load_run(r, out_dir=runs_dir) for r in run_refs], x=x_axis, out_dir=out,
                         squares=squares.split(",") if squares else None)
    for png, svg in result.paths.values():
        click.echo(f"{png}\n{svg}")


@cli.command()
@click.argument("run_ref", metavar="RUN")
@_RECOMMEND
@click.option("--x", "x_axis", default="generations", show_default=True,
              help="x axis of the plots: 'generations' or 'games'.")
@click.option("--out", type=click.Path(file_okay=False), default="reports", show_default=True,
              help="Folder for reports (written to OUT/<run-id>/).")
@_RUNS_DIR
@_SQUARES
def report(run_ref, rule, x_axis, out, runs_dir, squares):
    """Write report.md and a self-contained report.html for a run (with its plots)."""
    from .reporting.report import write_report
    from .fileio import check_writable

    check_writable(out, "--out", folder=True)
    files = write_report(run_ref, out_dir=out, runs_dir=runs_dir, rule=rule, x=x_axis,
                         squares=squares.split(",") if squares else None)
    click.echo(f"{files.html}\n{files.markdown}")


@cli.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--games", type=int, default=200, show_default=True,
              help="Games per match (even; the maximum with --sprt).")
@click.option("--workers", type=int, default=0, show_default=True,
              help="Worker processes (0 = one per core; results do not depend on it).")
@click.option("--depth", type=int, default=None, help="Search depth (default: the run's).")
@click.option("--sprt", nargs=2, type=float, default=None, metavar="ELO0 ELO1",
              help="Run an SPRT (logistic Elo, alpha = beta = 0.05) that may stop each match.")
@click.option("--seed", type=int, default=None, help="Seed of the openings (default: the run's).")
@_RECOMMEND
@_RUNS_DIR
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local",
              show_default=True, help="Where the games run (results do not depend on it).")
@click.option("--scheduler", default="", help="Dask scheduler, tcp://HOST:PORT.")
@click.option("--opponent", "opponents", multiple=True, metavar="SPEC[:WEIGHTS]",
              help="Play this opponent instead of the run's reference and initial mean "
                   "(repeatable; e.g. shannon, pst:tuned.json).")
@click.option("--tc", type=str, default=None, metavar="BASE+INC",
              help="Time control for external engines (default: the run's; built-in players "
                   "keep --depth).")
def verify(run_ref, games, workers, depth, sprt, seed, rule, runs_dir, backend, scheduler,
           opponents, tc):
    """Match the recommended weights against the reference and the initial mean (or the
    --opponent players) on held-out openings; stores verify.json in the run (shown by
    'evotune report')."""
    from .match.resolve import close_external_players
    from .reporting.verify import VerifySettings, describe_match, verify_run

    import contextlib

    from .limits import check_limits
    from .runs.lifecycle import check_workers

    check_limits(games=games, depth=depth, seed=seed, workers=workers)
    check_workers(workers)
    if sprt and not (all(map(math.isfinite, sprt)) and sprt[0] < sprt[1]):
        raise ConfigError(f"--sprt {sprt[0]:g} {sprt[1]:g}: need elo0 < elo1, both finite, "
                          "e.g. --sprt 0 5")
    settings = VerifySettings(games=games, depth=depth, workers=workers, seed=seed,
                              sprt=tuple(sprt) if sprt else None, rule=rule, backend=backend,
                              scheduler=scheduler, opponents=tuple(opponents), tc=tc)
    bar = click.progressbar(length=(len(opponents) or 2) * games, label="verification games",
                            file=sys.stderr) if sys.stderr.isatty() else None
    try:
        with bar if bar is not None else contextlib.nullcontext():
            doc = verify_run(run_ref, settings=settings, runs_dir=runs_dir,
                             progress=(lambda e: bar.update(1)) if bar is not None else None)
    finally:
        close_external_players()
    if doc["note"]:
        click.echo(f"note: {doc['note']}", err=True)
    weights = doc["weights"]
    shown = ",".join(f"{v:g}" for v in weights) if len(weights) <= 12 else \
        f"{len(weights)} weights (evotune export {doc['run_id']} --format json)"
    click.echo(f"run {doc['run_id']}: {doc['description']}: {shown}")
    click.echo(f"held-out openings {doc['openings']}, depth {doc['depth']}, seed {doc['seed']}")
    for m in doc["matches"]:
        click.echo(describe_match(m))


@cli.command()
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", required=True,
              help="json, csv, uci, cutechess, spsa (OpenBench lines), spsa-fishtest, header or python.")
@click.option("--engine", type=str, default=None,
              help="Map names and scales onto this engine spec (name or .toml).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Write to this file (default: stdout).")
@_RECOMMEND
@_RUNS_DIR
def export(run_ref, fmt, engine, out_file, rule, runs_dir):
    """Export a run's recommended weights (notes about left-out weights go to stderr)."""
    from .reporting.export import export_run
    from .fileio import check_writable

    if out_file is not None:
        check_writable(out_file, "--out")
    result = export_run(run_ref, fmt=fmt, engine=engine, rule=rule, runs_dir=runs_dir)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if out_file is None:
        click.echo(result.text, nl=False)
    else:
        try:
            Path(out_file).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--out {out_file}: cannot write it ({exc.strerror})") from None
        click.echo(f"wrote {out_file}", err=True)


# ---- experiments (issue 7): reproduce, compare ------------------------------------------------

def _check_experiment(*, seeds: int, workers: int, **limits) -> None:
    from .limits import check_limits
    from .runs.lifecycle import check_workers

    if seeds < 1:
        raise ConfigError(f"--seeds {seeds}: give at least 1")
    check_limits(workers=workers, **limits)
    check_workers(workers)


def _generation_lines(ev) -> None:
    if ev.kind != "generation":
        return
    st = ev.stats
    from .reporting.tables import brief

    means = brief(st.get("names") or [str(i) for i in range(len(st.get("mean", [])))],
                  st.get("mean", []), lambda n, v: f"{v:.0f}")
    click.echo(f"  gen {ev.generation}  games {ev.games_total}  means {means}", err=True)


@cli.command()
@click.argument("experiment", type=click.Choice(["de-paper"]))
@click.option("--seeds", type=int, default=1, show_default=True, help="Independent runs.")
@click.option("--first-seed", type=int, default=1, show_default=True)
@click.option("--workers", type=int, default=0, help="Worker processes (0 = one per core).")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True)
@click.option("--reports", type=click.Path(file_okay=False), default="reports", show_default=True)
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the games run (results do not depend on it).")
@click.option("--scheduler", default="", help="Dask scheduler, tcp://HOST:PORT.")
def reproduce(experiment, seeds, first_seed, workers, out, reports, backend, scheduler):
    """Reproduce a published experiment (de-paper: the DE chess-tuning paper's set-up)."""
    import time as _time

    from .tuning.experiments import paper_table, reproduce_de_paper

    _check_experiment(seeds=seeds, seed=first_seed, workers=workers)
    t0 = _time.perf_counter()
    outcomes = reproduce_de_paper(seeds=seeds, first_seed=first_seed, workers=workers,
                                  backend=backend, scheduler=scheduler, out_dir=out,
                                  reports_dir=reports, progress=_generation_lines)
    wall = _time.perf_counter() - t0
    click.echo(paper_table(outcomes))
    for o in outcomes:
        click.echo(f"run {o.run_id}: {o.games} games in {o.seconds:.1f} s "
                   f"({o.games_per_second:.1f} games/s); report in {reports}/{o.run_id}/")
    click.echo(f"wall time of this command: {wall:.1f} s")


@cli.command()
@click.option("--strategies", default="de,jde,ea,td", show_default=True,
              help="Comma-separated strategies, e.g. de,jde,ea,td,spsa,cmaes,ng:NGOpt.")
@click.option("--games-budget", type=int, required=True, help="Games each strategy may play.")
@click.option("--seeds", type=int, default=1, show_default=True)
@click.option("--np", "np_", type=int, default=20, show_default=True)
@click.option("--depth", type=int, default=3, show_default=True)
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
@click.option("--workers", type=int, default=0, help="Worker processes (0 = one per core).")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True)
@click.option("--reports", type=click.Path(file_okay=False), default="reports", show_default=True,
              help="Folder for the Elo-vs-games plot (REPORTS/compare-b<budget>[-engine][-iref]/).")
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the games run (results do not depend on it).")
@click.option("--scheduler", default="", help="Dask scheduler, tcp://HOST:PORT.")
def compare(strategies, games_budget, seeds, np_, depth, engine, verify_games, verify_every,
            init, workers, out, reports, backend, scheduler):
    """Compare strategies at an equal budget of games, verified on held-out openings.

    cmaes and ng:NAME score each candidate against the current mean of their search
    distribution (colour-balanced mini-matches); spsa plays theta +- c_k Delta in game pairs.
    """
    from .runs.config import STRATEGY_NAMES, known_strategy
    from .tuning.experiments import compare_strategies, compare_table, write_compare_plots

    _check_experiment(seeds=seeds, workers=workers, np=np_, depth=depth)
    names = tuple(s.strip() for s in strategies.split(",") if s.strip())
    unknown = [s for s in names if not known_strategy(s)]
    if not names or unknown:
        raise ConfigError(f"--strategies: unknown {unknown or 'empty list'}; use some of "
                          f"{','.join(STRATEGY_NAMES)} or ng:NAME")
    outcomes = compare_strategies(strategies=names, games_budget=games_budget, seeds=seeds,
                                  np_=np_, depth=depth, engine=engine, workers=workers,
                                  backend=backend, scheduler=scheduler,
                                  verify_games=verify_games, verify_every=verify_every,
                                  out_dir=out, init=init, progress=_generation_lines)
    click.echo(compare_table(outcomes, engine=engine))
    if verify_every:
        png, svg = write_compare_plots(outcomes, reports_dir=reports, games_budget=games_budget,
                                       engine=engine, init=init)
        click.echo(f"{png}\n{svg}")


# ---- learning from positions (issue 14): datagen, texel ---------------------------------------

@cli.command()
@click.option("--games", type=int, required=True, help="Games to play.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="Output file of labelled positions (a rerun with the same settings continues it).")
@click.option("--engine", default="shannon", show_default=True,
              help="Engine spec SPEC[:WEIGHTS.json]; a 'uci' spec plays through the external runner.")
@click.option("--depth", type=int, default=3, show_default=True, help="Search depth per move.")
@click.option("--nodes", type=int, default=0, show_default=True, help="Node limit per move (0 = none).")
@click.option("--openings", default="2moves", show_default=True,
              help="'2moves', 'book', 'startpos' or an EPD/PGN/Polyglot file.")
@click.option("--random-plies", type=int, default=2, show_default=True,
              help="Random legal moves after the opening (skipped like book plies).")
@click.option("--per-game", type=int, default=10, show_default=True,
              help="Quiet positions sampled per game at most.")
@click.option("--format", "fmt", type=click.Choice(["fen", "epd"]), default="fen", show_default=True,
              help="fen: 'FEN [1.0]'; epd: 'FEN c9 \"1-0\";' (results from White's view).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Worker processes (0 = one per core); the output does not depend on it.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--chunk", type=int, default=32, show_default=True,
              help="Games per atomic write (part of the output's settings).")
def datagen(games, out_file, engine, depth, nodes, openings, random_plies, per_game, fmt, workers,
            seed, chunk):
    """Label quiet positions of self-play games with the games' results."""
    from .learn.datagen import DatagenSettings, datagen as run_datagen
    from .runs.lifecycle import resolve_workers

    settings = DatagenSettings(games=games, engine=engine, depth=depth, nodes=nodes,
                               openings=openings, random_plies=random_plies, per_game=per_game,
                               seed=seed, fmt=fmt, chunk=chunk)
    bar = _CountBar("datagen", "games")
    summary = run_datagen(settings, out_file, workers=resolve_workers(workers), progress=bar)
    bar.close()
    fmt_text = "FEN [result]" if fmt == "fen" else 'EPD c9 "result";'
    click.echo(f"{summary.out}: {summary.positions} positions from {summary.games} games "
               f"(format {fmt}: {fmt_text}, White's view"
               + (f"; continued after game {summary.resumed_from}" if summary.resumed_from else "")
               + ")")


@cli.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--engine", default="shannon", show_default=True,
              help="Engine spec whose weights are fitted (feature set, bounds, fixed weights).")
@click.option("--init", default="reference", show_default=True,
              help="Initial weights: 'reference' or a weights JSON file.")
@click.option("--max-positions", type=int, default=0, show_default=True,
              help="Read at most this many positions (0 = all).")
@click.option("--k", "k_value", default="auto", show_default=True,
              help="Sigmoid scale K: 'auto' (fitted with the initial weights) or a number.")
@click.option("--epochs", type=int, default=30, show_default=True, help="Epochs at most.")
@click.option("--optimizer", type=click.Choice(["lbfgs", "adam"]), default="lbfgs",
              show_default=True, help="scipy L-BFGS-B or full-batch Adam.")
@click.option("--iters", type=int, default=20, show_default=True,
              help="Optimizer iterations per epoch.")
@click.option("--lr", type=float, default=2.0, show_default=True, help="Adam step (engine units).")
@click.option("--tol", type=float, default=1e-10, show_default=True,
              help="Stop when an epoch changes the training error by less than this.")
@click.option("--qsearch", is_flag=True,
              help="Fit on quiescence leaves (default: reject positions that are not quiet).")
@click.option("--val-share", type=float, default=0.1, show_default=True,
              help="Share of positions held out for validation.")
@click.option("--val-block", type=int, default=64, show_default=True,
              help="Hold out validation positions in blocks of this many consecutive lines "
                   "(a game's positions stay on one side; 1 = position by position).")
@click.option("--max-bad", type=int, default=0, show_default=True,
              help="Malformed lines to skip before stopping.")
@click.option("--l2", type=float, default=0.0, show_default=True,
              help="Ridge toward the initial weights: error + L2 * sum(((w - w0) / 100)^2) over "
                   "the free weights (0 = plain Texel); keeps weights the data barely "
                   "determine (endgame terms in opening-heavy data) near their start.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the validation split.")
@click.option("--workers", type=int, default=0, show_default=True,
              help="Threads extracting features (0 = one per core); the fit does not depend on it.")
@click.option("--run-id", type=str, default=None, help="Name of the run directory.")
@click.option("--out", type=click.Path(file_okay=False), default="populations", show_default=True,
              help="Folder that holds run directories.")
def texel(data, engine, init, max_positions, k_value, epochs, optimizer, iters, lr, tol, qsearch,
          val_share, val_block, max_bad, l2, seed, workers, run_id, out):
    """Fit evaluation weights to game results of labelled positions (Texel's method)."""
    from .learn.fitrun import TexelConfig, new_fit

    cfg = TexelConfig(data=tuple(data), engine=engine, init=init, max_positions=max_positions,
                      k=k_value, epochs=epochs, optimizer=optimizer, iters=iters, lr=lr,
                      tol=tol, qsearch=qsearch, val_share=val_share, val_block=val_block,
                      max_bad=max_bad, seed=seed, l2=l2)
    if workers < 0:
        raise ConfigError(f"--workers must be >= 0 (0 = one per core), got {workers}")
    store, positions = new_fit(cfg, out_dir=out, run_id=run_id)
    _fit_and_report(store, cfg, positions, workers=workers)


def _fit_and_report(store, cfg, positions=None, *, workers: int = 0) -> None:
    from .learn.fitrun import execute_fit

    def show(ev) -> None:
        if ev.kind == "stage":
            click.echo(ev.message, err=True)
        else:
            click.echo(f"  epoch {ev.epoch}/{ev.epochs}  error train {ev.loss_train:.6f}  "
                       f"validation {ev.loss_val:.6f}", err=True)

    click.echo(f"fit {store.run_id} in {store.root}", err=True)
    try:
        s = execute_fit(store, cfg, positions=positions, progress=show, workers=workers)
    except KeyboardInterrupt:
        raise EvotuneError(f"interrupted; every finished epoch is stored: continue with "
                           f"'evotune resume {store.run_id}'") from None
    b, a = s["error_before_rounding"], s["error_after_rounding"]
    click.echo(f"fit {s['run_id']}: {s['train']} training + {s['validation']} validation "
               f"positions, K {s['K']:.4f}, {s['epochs']} epochs"
               + (" (converged)" if s["converged"] else ""))
    click.echo(f"error train {s['error_initial']['train']:.6f} -> {b['train']:.6f} "
               f"(rounded {a['train']:.6f}); validation {s['error_initial']['validation']:.6f} "
               f"-> {b['validation']:.6f} (rounded {a['validation']:.6f})")


class _CountBar:
    """A one-line progress bar on stderr: done/total and a count of positions."""

    def __init__(self, label: str, unit: str) -> None:
        self.label, self.unit = label, unit
        self.tty = sys.stderr.isatty()
        self.shown = False

    def __call__(self, done: int, total: int, positions: int) -> None:
        width = 30
        fill = int(width * done / max(total, 1))
        line = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total} {self.unit}, "
                f"{positions} positions")
        click.echo(("\r" + line) if self.tty else line, err=True, nl=not self.tty)
        self.shown = True

    def close(self) -> None:
        if self.tty and self.shown:
            click.echo("", err=True)


if __name__ == "__main__":
    main()
