"""Engine commands: perft, search, features, bench, uci, spec."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click
import numpy as np

from ..engine import perft as count_leaves
from ..engine import perft_divide
from ..engine import search as run_search
from ..engine.bench import QUICK, BenchSettings, format_bench, run_bench
from ..engine.evaluation import SHANNON, Evaluation, spec_evaluation
from ..engine.explain import contributions
from ..engine.movemodel.modelfile import cached_model
from ..engine.perftsuite import perft_suite
from ..engine.uci.frontend import run as run_uci
from ..errors import ConfigError
from ..fileio import atomic_write_text, check_writable, read_text
from ..players.nets import check_net_tables
from ..players.nets import evaluation as player_evaluation
from ..players.spec import player_from_engine_spec
from ..players.specmaker import spec_from_engine
from ..spec.file import load_engine_spec
from ..spec.model import EngineSpec
from ..spec.player import parse_engine_ref
from ..weightsio import load_weights_file, parse_weights_text


@click.command()
@click.argument("fen", required=False)
@click.argument("depth", type=int, required=False)
@click.option("--divide", is_flag=True, help="One 'move: count' line per root move, then the total.")
@click.option("--suite", type=click.Path(dir_okay=False), default=None,
              help="Check every ';D<n> <count>' entry of an EPD perft suite instead.")
@click.option("--max-nodes", type=int, default=1_000_000, show_default=True,
              help="With --suite: skip entries whose expected count is above this.")
def perft(fen: str | None, depth: int | None, divide: bool, suite: str | None,
          max_nodes: int) -> None:
    """Count the leaves of the legal move tree: 'evotune perft FEN DEPTH' or --suite FILE.epd.

    FEN may be 'startpos', UCI's name for the initial position."""
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
        click.echo(count_leaves(fen, depth))


def engine_and_net(engine: str) -> tuple[EngineSpec, str | None]:
    """``--engine``: a spec, or ``nnue:FILE`` (a net spec and a net file) -> (spec, net file or
    None)."""
    ref = parse_engine_ref(engine)
    spec = load_engine_spec(ref.spec)
    if spec.search.model:  # read and checked now: a damaged file is one line at start-up
        cached_model(spec.search.model)
    if ref.file is not None:  # SPEC:FILE
        evaluation = spec_evaluation(spec)
        if evaluation is None or not evaluation.reads_file:
            raise ConfigError(f"--engine {engine}: give an engine spec (weights go in "
                              "--weights), or nnue:FILE for a network")
        return spec, ref.file
    check_net_tables(spec)  # a spec naming its net: its tables as a run checks them
    return spec, None


def builtin_weights(engine: str, weights: str | None) -> tuple[EngineSpec, Evaluation, Any]:
    """(spec, its evaluation, weight vector) of a builtin engine spec: ``weights`` is a JSON
    file, or for shannon also 'P,N,B,R,Q,M' text; None means the spec's reference values. For an nnue engine
    (``nnue:FILE``, or a spec naming its net) the Net instead."""
    spec, net = engine_and_net(engine)
    evaluation = spec_evaluation(spec)
    if evaluation is None:
        raise ConfigError(f"engine '{engine}' is a '{spec.kind}' engine; give a builtin spec "
                          "(shannon, pst, extended, pst-pesto, nnue:FILE or a .toml file)")
    if evaluation.reads_file:
        if weights is not None:
            raise ConfigError("--weights: an nnue engine has no weights; give its net as "
                              "--engine nnue:FILE")
        return spec, evaluation, player_evaluation(player_from_engine_spec(spec, net=net))
    if weights is None:
        return spec, evaluation, spec.space().reference_array
    if Path(weights).is_file() or weights.endswith(".json"):
        return spec, evaluation, load_weights_file(weights, spec)
    if evaluation.names != SHANNON.names:
        raise ConfigError(f"--weights: give a JSON weights file for the '{spec.features}' "
                          "feature set")
    # P,N,B,R,Q,M are the evaluation's; a search's weights stay at their reference values
    tail = spec.space().reference_array[spec.eval_size:]
    return spec, evaluation, np.concatenate([parse_weights_text(weights), tail])


@click.command()
@click.argument("fen")
@click.option("--depth", type=int, default=3, show_default=True, help="Search depth in plies.")
@click.option("--nodes", type=int, default=0, show_default=True,
              help="Node limit (0 = none); a uct spec's simulations, a probability spec's nodes "
                   "(0: the spec's default budget).")
@click.option("--weights", default=None,
              help="Shannon weights P,N,B,R,Q,M in engine units, or a JSON weights file "
                   "(default: the engine spec's reference values).")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec (its feature set, search and reference weights), or "
                   "nnue:FILE.")
def search(fen: str, depth: int, nodes: int, weights: str | None, engine: str) -> None:
    """Search FEN with the built-in engine; print move, score, depth, nodes, nodes/s and PV
    (a uct spec: then the root's moves with their visits and mean values). FEN may be
    'startpos'."""
    spec, evaluation, w = builtin_weights(engine, weights)
    if evaluation.reads_file:  # a net: its evaluation, the spec's search
        r = run_search(fen, w, depth=depth, nodes=nodes, features=evaluation,
                       settings=spec.search)
    else:
        player = player_from_engine_spec(spec, w)
        r = run_search(fen, player.weights, depth=depth, nodes=nodes, features=evaluation,
                       settings=player.search)
    nps = r.nodes / r.seconds if r.seconds > 0 else 0.0
    sims = f" simulations {r.simulations}" if r.simulations else ""
    click.echo(f"bestmove {r.move or '(none)'} score {r.score} depth {r.depth} nodes {r.nodes} "
               f"nps {nps:.0f}{sims} pv {' '.join(r.pv)}")
    if r.children:
        click.echo(f"{'move':<6} {'visits':>9} {'value':>7}")
        for move, visits, value in r.children:
            if visits:
                click.echo(f"{move:<6} {visits:>9d} {value:>7.3f}")
        unvisited = sum(1 for c in r.children if not c[1])
        if unvisited:
            click.echo(f"({unvisited} root moves not visited)")


@click.command()
@click.argument("fen")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec: its feature set and reference weights.")
@click.option("--weights", default=None,
              help="A JSON weights file (or P,N,B,R,Q,M for shannon) instead of the reference.")
@click.option("--all", "show_all", is_flag=True, help="Also list the features that are zero.")
def features(fen: str, engine: str, weights: str | None, show_all: bool) -> None:
    """Print the non-zero features of FEN (side to move's view) with their names, values
    (phi, phase folded in), weights and weighted contributions, then the evaluation. FEN may be
    'startpos'."""
    spec, evaluation, w = builtin_weights(engine, weights)
    rows, value = contributions(fen, w, evaluation, nonzero=not show_all)
    width = max([len(r.name) for r in rows] + [7])
    click.echo(f"{'feature':<{width}} {'phi':>10} {'weight':>8} {'contribution':>13}")
    for r in rows:
        click.echo(f"{r.name:<{width}} {r.phi:>10.4f} {r.weight:>8d} {r.contribution:>13.2f}")
    total = sum(r.contribution for r in rows)
    click.echo(f"{len(rows)} features ({spec.features}, engine {spec.name}); sum of "
               f"contributions {total:.2f}; evaluation {value} (side to move, engine units)")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the six figures.")
@click.option("--quick", is_flag=True,
              help="A few-seconds smoke run (shallower searches, 2 short games); its signature "
                   "differs from the full bench's.")
@click.option("--engine", default=None,
              help="Builtin engine spec to bench with its reference weights, or nnue:FILE "
                   "(default: the Shannon reference weights, signature 21833316).")
def bench(as_json: bool, quick: bool, engine: str | None) -> None:
    """Engine speed and search signature: search_nps, reference_search_nps, speedup, perft_nps,
    game_seconds_median, signature (total nodes of a fixed search set; a net's: a CRC of its
    searches' moves, scores, depths and PVs, which stop on a node limit; changes only when the
    search or the evaluation changes). Speeds are wall-clock and depend on the machine's load."""
    spec, evaluation, net = (None, None, None) if engine is None else builtin_weights(engine, None)
    result = run_bench(QUICK if quick else BenchSettings(), spec,
                       weights=net if evaluation is not None and evaluation.reads_file else None)
    click.echo(json.dumps(result.as_dict()) if as_json else format_bench(result))


@click.command()
@click.option("--weights", "weights_file", type=click.Path(dir_okay=False), default=None,
              help="JSON file with the initial weights: a list of six numbers or {name: value}.")
@click.option("--engine", default="shannon", show_default=True,
              help="Builtin engine spec (feature set, options, reference weights), or nnue:FILE.")
def uci(weights_file: str | None, engine: str) -> None:
    """Speak UCI on stdin/stdout (for GUIs, cutechess, python-chess): the built-in engine with
    every weight as a spin option (a net: the EvalFile option)."""
    spec, net = engine_and_net(engine)
    run_uci(weights_file=weights_file, engine=spec, net=net)


def _new_file(path: Path, flag: str, force: bool) -> None:
    check_writable(path, flag, parents=False)
    if path.exists() and not force:
        raise ConfigError(f"{flag} {path} exists; give --force to replace it, or another file")


@click.command("spec")
@click.option("--uci", "command", required=True, metavar="CMD",
              help="The command that starts the engine (quoted as a shell would: "
                   "'/path/engine --arg'); it is started once to read its options.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="The engine spec to write (.toml).")
@click.option("--spsa", "spsa_file", type=click.Path(dir_okay=False), default=None,
              help="Weights from OpenBench/fishtest SPSA lines instead of every spin option; "
                   "their C_end and R_end go to OUT with suffix .spsa (for --spsa-params).")
@click.option("--tune", "tune_file", type=click.Path(dir_okay=False), default=None,
              help="Weights from Stockfish's TUNE() output (what the engine prints at start); "
                   "as --spsa.")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Tune only the spin options matching GLOB (case-insensitive; repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Leave out the options matching GLOB (case-insensitive; repeatable).")
@click.option("--name", default="", help="The spec's name (default: the engine's id name).")
@click.option("--force", is_flag=True, help="Replace an existing OUT (and its .spsa).")
def spec(command: str, out_file: str, spsa_file: str | None, tune_file: str | None,
         include: tuple[str, ...], exclude: tuple[str, ...], name: str, force: bool) -> None:
    """Write an engine spec from what a UCI engine declares: spin options become weights."""
    out = Path(out_file)
    if spsa_file and tune_file:
        raise ConfigError("--spsa and --tune both give the weights; give one")
    table_file = spsa_file or tune_file
    table = out.with_suffix(".spsa") if table_file else None
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ConfigError(f"--uci {command!r}: {exc}; quote it as a shell would") from None
    if not argv:
        raise ConfigError("--uci: give the command that starts the engine")
    _new_file(out, "--out", force)
    if table is not None:
        _new_file(table, "--out (its SPSA table)", force)
    flag = "--spsa" if spsa_file else "--tune"
    made = spec_from_engine(
        argv, name=name, fallback_name=out.stem, include=include, exclude=exclude,
        table_text=read_text(Path(table_file), flag) if table_file else None,
        table_kind="tune" if tune_file else "spsa", where=f"{flag} {table_file}")
    atomic_write_text(out, made.text)
    roles = [c.role for c in made.choices]
    click.echo(f"wrote {out}: {len(made.weights)} weights, {roles.count('setting')} settings "
               f"as comments, {roles.count('out')} options left out"
               + (", the engine's book off" if "off" in roles else ""), err=True)
    line = f"evotune run --engine {out} --strategy spsa --tc 10+0.1 --max-games 20000 " \
           "--generations 0 "
    if table is not None:
        atomic_write_text(table, made.spsa_table)
        click.echo(f"wrote {table}: its SPSA lines (C_end, R_end) for --spsa-params", err=True)
        line += f"--spsa-params {table}"
    else:
        line += "--param finetune=true"
    click.echo(f"next: {line}", err=True)


COMMANDS = (perft, search, features, bench, uci, spec)
