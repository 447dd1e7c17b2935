"""``evotune nn train``: train a net as a run (what the run commands do with a training is the
training kind's: :mod:`evotune.kinds.training`)."""
from __future__ import annotations

import click

from ..engine.net.inputs import OUTPUT_BUCKETS_MAX
from ..engine.net.network import ACTIVATIONS
from ..kinds import TRAINING
from ..kinds.training import TrainConfig
from ..learn.nn.initnet import INIT_EPOCHS, INIT_RANDOM, init_shape
from ..learn.nn.trainer import TrainSettings
from .options import runs_dir_option, seed_option, workers_option
from .progress import CommandUI, quiet_option, run_job

_D = TrainSettings()


@click.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--hidden", type=int, default=_D.hidden, show_default=True,
              help="Hidden neurons per perspective (the net is (768 x K -> H) x 2 -> N).")
@click.option("--king-buckets", default=None,
              help="King buckets K (bullet's ChessBucketsMirrored): a preset's bucket count (1, "
                   "2, 4, 8, 16) or 32 comma-separated bucket ids of the mirrored king squares, "
                   "rank 1's a-d first; default: --init's, else 1 (none).")
@click.option("--output-buckets", type=int, default=None,
              help=f"Output buckets N by material (bullet's MaterialCount), 1..{OUTPUT_BUCKETS_MAX}"
                   "; default: --init's, else 1.")
@click.option("--factoriser", is_flag=True, default=False,
              help="With king buckets: train 768 input rows shared by every bucket (bullet's "
                   "l0f), added to each bucket's own and merged into them when the net is "
                   "saved, so that each bucket learns from every position (the net file is the "
                   "same shape).")
@click.option("--activation", type=click.Choice(ACTIVATIONS), default=_D.activation,
              show_default=True, help="The hidden layer's activation.")
@click.option("--wdl", type=float, default=_D.wdl, show_default=True,
              help="Weight of the game result in the target (the score's: 1 - wdl); 1 for "
                   "data without scores.")
@click.option("--epochs", type=int, default=_D.epochs, show_default=True, help="Epochs.")
@click.option("--batch", type=int, default=_D.batch, show_default=True,
              help="Positions per optimiser step.")
@click.option("--lr", type=float, default=_D.lr, show_default=True, help="AdamW's learning rate.")
@click.option("--lr-drop", type=int, default=_D.lr_drop, show_default=True,
              help="Multiply the learning rate by --gamma every this many epochs (0 = never).")
@click.option("--gamma", type=float, default=_D.gamma, show_default=True,
              help="The learning rate's factor at each drop.")
@click.option("--init", default=INIT_RANDOM, show_default=True,
              help="The starting net: 'random' (from the seed), a net file, or eval:SPEC"
                   "[:WEIGHTS]: the seed's net first fitted to that linear evaluation's scores "
                   "of the same positions (e.g. eval:shannon; better on small data).")
@click.option("--init-epochs", type=int, default=INIT_EPOCHS, show_default=True,
              help="Epochs of the fit to the evaluation of --init eval:SPEC (learning rate "
                   "0.001).")
@click.option("--val-share", type=float, default=_D.val_share, show_default=True,
              help="Share of positions held out for the validation loss.")
@click.option("--val-block", type=int, default=_D.val_block, show_default=True,
              help="Hold out positions in blocks of this many consecutive lines.")
@click.option("--max-bad", type=int, default=0, show_default=True,
              help="Malformed lines to skip before stopping.")
@click.option("--stream", type=int, default=_D.stream, show_default=True,
              help="Stream bullet data files (.bin, .data) larger than memory: hold this many "
                   "positions at once, shuffled within them (0 = read every position into "
                   "memory).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the packed data cache (default: beside the first data file).")
@seed_option(_D.seed, "Seed of the initial net, the shuffles and the validation split.")
@workers_option(0, "Threads (0 = one per core); the net does not depend on it.")
@click.option("--run-id", type=str, default=None, help="Name of the run directory.")
@runs_dir_option(alias=True)
@quiet_option
def train(data, hidden, king_buckets, output_buckets, factoriser, activation, wdl, epochs, batch, lr, lr_drop,
          gamma, init, init_epochs, val_share,
          val_block, max_bad, stream, cache_dir, seed, workers, run_id, runs_dir):
    """Train a net on labelled positions ('FEN | score | result', datagen's files, EPD c9; or
    bullet's binary data, files ending in .bin or .data) as a run: one record and one checkpoint
    per epoch; 'evotune resume RUN' continues it. A net with king or output buckets trains as
    a plain one: give --king-buckets/--output-buckets, or an --init net that has them."""
    king_buckets, output_buckets = init_shape(init, king_buckets, output_buckets)
    settings = TrainSettings(hidden=hidden, activation=activation, wdl=wdl, epochs=epochs,
                             batch=batch, lr=lr, lr_drop=lr_drop, gamma=gamma, seed=seed,
                             val_share=val_share, val_block=val_block, stream=stream,
                             king_buckets=king_buckets, output_buckets=output_buckets,
                             factoriser=factoriser)
    cfg = TrainConfig(data=tuple(data), settings=settings, init=init, max_bad=max_bad,
                      cache_dir=cache_dir or "", init_epochs=init_epochs)
    run_job(TRAINING, TRAINING.new(cfg, out_dir=runs_dir, run_id=run_id, workers=workers,
                                   ui=CommandUI()))
