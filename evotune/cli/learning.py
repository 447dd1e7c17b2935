"""Learning from positions: datagen, label, texel."""
from __future__ import annotations

import click

from ..errors import FieldError, Interrupted
from ..kinds import FIT
from ..kinds.fit import TexelConfig
from ..learn.datagen import DATAGEN_FORMATS, FILTERS, DatagenSettings
from ..learn.datagen import datagen as run_datagen
from ..learn.nn.tdtargets import LAMBDA
from ..learn.relabel import LabelSettings
from ..learn.relabel import label as run_label
from ..runs.manifest import check_outside_runs
from .options import (
    limits_options,
    note_old_players,
    openings_option,
    runs_dir_option,
    seed_option,
    workers_option,
)
from .progress import CommandUI, CountBar, quiet_option, run_job


@click.command()
@click.option("--games", type=int, required=True, help="Games to play (at most).")
@click.option("--positions", type=int, default=0, show_default=True,
              help="Stop after exactly this many positions (0 = all the games give); with the "
                   "same settings the file is the first lines of any longer one.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="Output file of labelled positions (a rerun with the same settings continues it).")
@click.option("--engine", default="shannon", show_default=True,
              help="Engine spec SPEC[:WEIGHTS.json] or nnue:NET; a 'uci' spec plays through the "
                   "external runner.")
@limits_options(fields=("depth", "nodes"))
@openings_option("2moves")
@click.option("--random-plies", type=int, default=2, show_default=True,
              help="Random legal moves after the opening (skipped like book plies).")
@click.option("--per-game", type=int, default=10, show_default=True,
              help="Positions sampled per game at most; 0 = every position that passes --filter.")
@click.option("--filter", "position_filter", type=click.Choice(list(FILTERS)), default="qsearch",
              show_default=True,
              help="Positions kept: qsearch = not in check and static eval == quiescence score; "
                   "bestmove = not in check, the move played not a capture or promotion, not a "
                   "mate score (bullet-style, no search: the fast setting with --per-game 0).")
@click.option("--format", "fmt", type=click.Choice(list(DATAGEN_FORMATS)), default="fen",
              show_default=True,
              help="fen: 'FEN [1.0]'; epd: 'FEN c9 \"1-0\";'; text: 'FEN | score | 1.0', the "
                   "net trainers' data, with the search score in centipawns (all White's view); "
                   "bullet: bullet's 32-byte records (--out ending .bin or .data).")
@click.option("--target", type=click.Choice(["score", "td"]), default="score", show_default=True,
              help="The score of the text and bullet formats: the position's search score, "
                   "or its "
                   "TD(lambda) target (the lambda-return of the game's following search scores "
                   "and its result, as a score): training on it with --wdl 0 is TDLeaf-style "
                   "learning.")
@click.option("--td-lambda", type=float, default=None,
              help=f"lambda of --target td [default: {LAMBDA}].")
@workers_option(0, "Worker processes (0 = one per core); the output does not depend on it.")
@seed_option(1)
@click.option("--chunk", type=int, default=32, show_default=True,
              help="Games per atomic write (part of the output's settings).")
@quiet_option
def datagen(games, positions, out_file, engine, limits, openings, random_plies, per_game,
            position_filter, fmt, target, td_lambda, workers, seed, chunk):
    """Label quiet positions of self-play games with the games' results."""
    if td_lambda is not None and target != "td":
        raise FieldError("td_lambda", "applies to the td target only (--target td)")
    note_old_players(engine)
    check_outside_runs(out_file, "--out")  # a run's folder is its store's alone
    settings = DatagenSettings(games=games, engine=engine, limits=limits, openings=openings,
                               random_plies=random_plies, per_game=per_game, seed=seed, fmt=fmt,
                               chunk=chunk, positions=positions, target=target,
                               td_lambda=LAMBDA if td_lambda is None else td_lambda,
                               filter=position_filter)
    bar = CountBar("datagen", "games", count_total=positions)
    try:
        summary = run_datagen(settings, out_file, workers=workers, progress=bar)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished chunk of games is stored in {out_file}: "
                          "the same command continues it") from None
    finally:
        bar.close()
    score = "score" if target == "score" else f"TD({settings.td_lambda:g}) target as a score"
    fmt_text = {"fen": "FEN [result]", "epd": 'EPD c9 "result";',
                "text": f"FEN | {score} | result",
                "bullet": f"bullet's records with the {score}"}[fmt]
    click.echo(f"{summary.out}: {summary.positions} positions from {summary.games} games "
               f"(format {fmt}: {fmt_text}, "
               + ("the side to move's view" if fmt == "bullet" else "White's view")
               + (f"; continued after game {summary.resumed_from}" if summary.resumed_from else "")
               + ")")
    if summary.forfeits:
        click.echo(f"evotune: warning: {summary.forfeits} games were forfeited by the engine "
                   "(crash, timeout or illegal move) and gave no positions", err=True)


@click.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--engine", required=True,
              help="The labelling engine: spec SPEC[:WEIGHTS.json] or nnue:NET; a 'uci' spec "
                   "(e.g. Stockfish) runs through the external runner.")
@limits_options(fields=("depth", "nodes"))
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="Output file of 'FEN | score | result' lines (a rerun with the same settings "
                   "and inputs continues it).")
@click.option("--max-bad", type=int, default=0, show_default=True,
              help="Malformed input lines to skip before stopping.")
@workers_option(0, "Worker processes (0 = one per core); the output does not depend on it.")
@click.option("--chunk", type=int, default=2048, show_default=True,
              help="Positions per atomic write (part of the output's settings).")
@click.option("--move", is_flag=True, default=False,
              help="Also write the move the engine chose: 'FEN | score | result | move', the "
                   "data of 'nn train-moves'.")
@click.option("--visits", is_flag=True, default=False,
              help="Also write the root moves' visits of a UCT engine's search after the move "
                   "('... | move | e2e4:312 d2d4:200'; implies --move): the data of 'nn "
                   "train-moves --target visits'.")
@quiet_option
def label(data, engine, limits, out_file, max_bad, workers, chunk, move, visits):
    """Score labelled positions with another engine's search (Stockfish, a deeper search).

    Reads any format the trainers read and writes 'FEN | score | result' (White's view), the
    game result kept: the data of 'nn train --wdl 0'. Both --depth and --nodes apply (an
    external engine gets 'go depth D nodes N'); give --depth 64 for a node count alone.
    """
    note_old_players(engine)
    check_outside_runs(out_file, "--out")
    settings = LabelSettings(engine=engine, limits=limits, chunk=chunk, max_bad=max_bad,
                             move=move, visits=visits)
    bar = CountBar("label", "positions", "scored")
    try:
        summary = run_label(settings, data, out_file, workers=workers, progress=bar)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished chunk of positions is stored in "
                          f"{out_file}: the same command continues it") from None
    finally:
        bar.close()
    click.echo(f"{summary.out}: {summary.written} of {summary.read} positions scored by "
               f"{engine} (format text: FEN | score | result"
               f"{' | move | visits' if visits else ' | move' if move else ''}, White's view"
               + ("; it was already complete" if summary.resumed_from == summary.read else
                  f"; continued after position {summary.resumed_from}"
                  if summary.resumed_from else "") + ")")
    if summary.bad:
        click.echo(f"evotune: warning: {summary.bad} malformed input lines were skipped "
                   "(--max-bad)", err=True)
    if summary.left_out:
        click.echo(f"evotune: warning: {summary.left_out} positions were left out: no legal "
                   "move, a mate score or beyond +-32000, or an engine forfeit", err=True)


@click.command()
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
@click.option("--l2", default="auto", show_default=True,
              help="Ridge toward the initial weights: error + L2 * sum(((w - w0) / 100)^2) over "
                   "the free weights (0 = plain Texel); keeps weights the data barely "
                   "determine (endgame terms in opening-heavy data) near their start. 'auto': "
                   "fit with each of 0, 1e-5, 5e-5, 2e-4, 1e-3, 5e-3, 2e-2, 1e-1 and keep one "
                   "by --l2-rule.")
@click.option("--l2-rule", type=click.Choice(["one-se", "lowest"]), default="one-se",
              show_default=True,
              help="How --l2 auto chooses: one-se, the strongest ridge whose validation error is "
                   "within one standard error of the lowest (on small data the fit stays near "
                   "its start); lowest, the lowest validation error (of 0, 1e-5, 5e-5, 2e-4, "
                   "1e-3: what fits did before this option).")
@seed_option(1, "Seed of the validation split.")
@workers_option(0, "Threads extracting features (0 = one per core); the fit does not depend "
                   "on it.")
@click.option("--run-id", type=str, default=None, help="Name of the run directory.")
@runs_dir_option(alias=True)
@quiet_option
def texel(data, engine, init, max_positions, k_value, epochs, optimizer, iters, lr, tol, qsearch,
          val_share, val_block, max_bad, l2, l2_rule, seed, workers, run_id, runs_dir):
    """Fit evaluation weights to game results of labelled positions (Texel's method)."""
    cfg = TexelConfig.of(data=tuple(data), engine=engine, init=init, max_positions=max_positions,
                      k=k_value, epochs=epochs, optimizer=optimizer, iters=iters, lr=lr,
                      tol=tol, qsearch=qsearch, val_share=val_share, val_block=val_block,
                      max_bad=max_bad, seed=seed, l2=l2, l2_rule=l2_rule)
    run_job(FIT, FIT.new(cfg, out_dir=runs_dir, run_id=run_id, workers=workers, ui=CommandUI()))


COMMANDS = (datagen, label, texel)
