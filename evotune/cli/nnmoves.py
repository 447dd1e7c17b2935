"""``evotune nn train-moves`` (a move model from ``label --move`` data) and what ``nn info`` says
of a move-model file (:mod:`evotune.engine.movemodel.modelfile`, :mod:`evotune.learn.movetrain`)."""
from __future__ import annotations

import math

import chess
import click

from ..engine.movemodel.corescores import move_scores as core_move_scores
from ..engine.movemodel.modelfile import is_move_model_file, read_move_model, write_move_model
from ..kinds.moves import MOVES, MoveRunConfig, check_model_out, stored_move_model
from ..learn.movetrain import TARGETS, MoveTrainSettings
from .options import runs_dir_option, seed_option
from .progress import CommandUI

_D = MoveTrainSettings()
__all__ = ["is_move_model_file", "move_model_info", "train_moves_command"]


def move_model_info(path: str) -> None:
    """Print a move model's features, scale, checksum and its start position's likeliest
    moves."""
    model = read_move_model(path)
    click.echo(f"file        {path} (move model)")
    click.echo(f"model       {model.describe()}")
    scores = core_move_scores(model, chess.Board())
    top = max(scores.values())  # the softmax from the best move: any scale stays finite
    z = sum(math.exp((s - top) / model.scale) for s in scores.values())
    best = sorted(scores.items(), key=lambda kv: -kv[1])[:3]
    click.echo("startpos    " + ", ".join(f"{uci} {math.exp((s - top) / model.scale) / z:.1%}"
                                          for uci, s in best))


class _EchoUI(CommandUI):
    """``nn train-moves`` prints its baseline and epoch lines on stdout, as before it was a
    run."""

    def info(self, text: str) -> None:
        click.echo(text)


@click.command("train-moves")
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="The move-model file to write.")
@click.option("--epochs", type=int, default=_D.epochs, show_default=True, help="Epochs.")
@click.option("--batch", type=int, default=_D.batch, show_default=True,
              help="Positions per Adam step.")
@click.option("--lr", type=float, default=_D.lr, show_default=True, help="Adam's learning rate.")
@click.option("--l2", type=float, default=_D.l2, show_default=True,
              help="L2 penalty on the weights (nats).")
@click.option("--val-share", type=float, default=_D.val_share, show_default=True,
              help="Share of positions held out.")
@click.option("--val-block", type=int, default=_D.val_block, show_default=True,
              help="Hold out positions in blocks of this many consecutive lines.")
@click.option("--hidden", type=int, default=_D.hidden, show_default=True,
              help="Hidden units (CReLU) beside the linear weights, 0 to 32; 0: the linear "
                   "model.")
@click.option("--features", type=click.IntRange(1, 2), default=_D.features, show_default=True,
              help="The feature set: 1 the move alone (the shipped models' set), 2 also the "
                   "position around it (threats, exchanges, the enemy king, mobility, phase, "
                   "pawns).")
@click.option("--target", type=click.Choice(TARGETS), default=_D.target, show_default=True,
              help="What the model learns: move, the chosen move (the fourth field); visits, "
                   "a UCT search's visit shares over the root moves (the fifth, 'evotune "
                   "label --visits'; lines without it are bad lines).")
@click.option("--max-bad", type=int, default=0, show_default=True,
              help="Malformed lines to skip before stopping.")
@seed_option(_D.seed, "Seed of the held-out split and the epochs' orders.")
@click.option("--run-id", type=str, default=None,
              help="Name of the run directory (default: moves- and a hash of the settings and "
                   "data).")
@runs_dir_option()
def train_moves_command(data, out_file, epochs, batch, lr, l2, val_share, val_block, hidden,
                        features, target, max_bad, seed, run_id, runs_dir) -> None:
    """Train a move model on 'FEN | score | result | move' lines ('evotune label --move'):
    softmax cross-entropy of the chosen move over the legal moves (--target visits: of a UCT
    search's visit shares, 'evotune label --visits'), as a run: one checkpoint per
    epoch, 'evotune resume RUN' continues it, 'evotune status RUN' and 'evotune plot RUN' show
    it. Prints the held-out loss, top-1 and top-3 accuracy per epoch, and the engine's ordering
    prior's as the baseline; writes the model to --out at the end. Play it with
    '[search] prior = "model:FILE"'."""
    if max_bad < 0:
        raise click.BadParameter("must be >= 0", param_hint="--max-bad")
    settings = MoveTrainSettings(epochs=epochs, batch=batch, lr=lr, l2=l2, val_share=val_share,
                                 val_block=val_block, seed=seed, hidden=hidden,
                                 features=features, target=target)
    check_model_out(out_file, data=data, runs_dir=runs_dir)
    cfg = MoveRunConfig(data=tuple(data), settings=settings, max_bad=max_bad)
    job = MOVES.new(cfg, out_dir=runs_dir, run_id=run_id, workers=0, ui=_EchoUI())
    summary = MOVES.execute(job, _EchoUI())
    for line in summary.lines:
        click.echo(line)
    model = stored_move_model(job.store)
    write_move_model(model, out_file)
    click.echo(f"{out_file}: {model.describe()}")
