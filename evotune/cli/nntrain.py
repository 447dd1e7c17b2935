"""``evotune nn train``: train a net as a run; and what the run commands (resume, status, plot,
report, export) do with a training (verify: :func:`evotune.verify.run.verify_training`)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..engine.netfile import ACTIVATIONS
from ..errors import ConfigError, FieldError, Interrupted
from ..fileio import atomic_write_bytes, check_writable
from ..learn.nn.trainer import TrainSettings
from ..engine.netfile import bullet_reader_note
from ..learn.nn.trainrun import (execute_training, new_training, open_training, settings_of,
                                 stored_net)
from ..reporting.training import (export_training, load_training, status_lines,
                                  write_loss_plot, write_training_report)
from ..runs.store import Store
from ..runs.trainconfig import INIT_RANDOM, TrainConfig
from .options import runs_dir_option, seed_option, workers_option
from .progress import Progress, clock, quiet_option

_D = TrainSettings()


class TrainBar:
    """A training's progress on stderr: the positions of the epoch being trained with the
    trainer's rate and time left (:class:`~.progress.Progress`: a bar on a terminal, a line
    now and then elsewhere), and one line per finished epoch."""

    def __init__(self, epochs: int) -> None:
        self.epochs = epochs
        self.bar = Progress(f"epoch 1/{epochs}", 0, "positions")
        self.rate = 0.0
        self.left = 0.0

    def __call__(self, p) -> None:
        self.rate, self.left = p.rate, p.seconds_left
        self.bar.update(p.done, p.total, label=f"epoch {p.epoch}/{self.epochs}", rate=p.rate,
                        left=p.seconds_left)

    def epoch(self, e) -> None:
        val = f"{e.val_loss:.6f}" if e.val_loss is not None else "-"
        self.bar.line(f"  epoch {e.epoch}/{self.epochs}  loss train {e.train_loss:.6f}  "
                      f"validation {val}  lr {e.lr:.3g}  {self.rate:,.0f} positions/s  "
                      f"{clock(self.left)} left  net {e.checksum}")

    def close(self) -> None:
        self.bar.close()


def train_and_report(store: Store, cfg: TrainConfig, data=None, *, workers: int = 1) -> None:
    """Run (or continue) a training with its progress line; print its summary."""
    bar = TrainBar(cfg.generations)
    try:
        s = execute_training(store, cfg, data=data, progress=bar, on_epoch=bar.epoch,
                             workers=workers, on_start=lambda: click.echo(
                                 f"training {store.run_id} in {store.root}", err=True))
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; every finished epoch is stored: continue with "
                          f"'evotune resume {store.run_id}'") from None
    finally:
        bar.close()
    last = s.epochs[-1] if s.epochs else None
    losses = (f"loss train {last.train_loss:.6f}, validation "
              + (f"{last.val_loss:.6f}" if last.val_loss is not None else "-")) if last else ""
    click.echo(f"training {s.run_id}: {len(s.epochs)} epochs on {s.train_positions} of "
               f"{s.positions} positions, {s.seconds:.1f} s; {losses}")
    click.echo(f"net {s.net_path} (checksum {s.checksum})")
    note = few_steps_note(s.train_positions, int(cfg.settings.get("batch", 0)))
    if note:
        click.echo(f"evotune: note: {note}", err=True)


FEW_STEPS = 20
"""Fewer optimiser steps an epoch than this draw a note after the training."""


def few_steps_note(train_positions: int, batch: int) -> str:
    """A note when ``train_positions`` make fewer than :data:`FEW_STEPS` mini-batches of
    ``batch`` an epoch ('' otherwise): on 40k positions the default batch (16,384) makes 3 AdamW
    steps an epoch, and 20 epochs left a net far from converged (it lost 2-0-398 to the Texel
    evaluation its data came from; docs/results/nn-study.md)."""
    if batch <= 0:
        return ""
    steps = -(-train_positions // batch)
    if steps >= FEW_STEPS:
        return ""
    smaller = max(64, 1 << max(0, (train_positions // FEW_STEPS).bit_length() - 1))
    if smaller >= batch:  # the batch is small already: only more positions make more steps
        return (f"{train_positions} training positions make {steps} optimiser step(s) an epoch "
                f"at --batch {batch}; a data set this small trains a net little: more "
                "positions (or more epochs) train further")
    return (f"{train_positions} training positions make {steps} optimiser step(s) an epoch at "
            f"--batch {batch}; on a data set this small a smaller --batch (e.g. {smaller}, "
            f"{-(-train_positions // smaller)} steps) trains further in the same epochs")


@click.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--hidden", type=int, default=_D.hidden, show_default=True,
              help="Hidden neurons per perspective (the net is (768 -> H) x 2 -> 1).")
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
              help="The starting net: 'random' (from the seed) or a net file.")
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
def train(data, hidden, activation, wdl, epochs, batch, lr, lr_drop, gamma, init, val_share,
          val_block, max_bad, stream, cache_dir, seed, workers, run_id, runs_dir):
    """Train a net on labelled positions ('FEN | score | result', datagen's files, EPD c9; or
    bullet's binary data, files ending in .bin or .data) as a run: one record and one checkpoint
    per epoch; 'evotune resume RUN' continues it."""
    settings = TrainSettings(hidden=hidden, activation=activation, wdl=wdl, epochs=epochs,
                             batch=batch, lr=lr, lr_drop=lr_drop, gamma=gamma, seed=seed,
                             val_share=val_share, val_block=val_block, stream=stream)
    cfg = TrainConfig(data=tuple(data), settings=settings.record(), init=init, max_bad=max_bad,
                      cache_dir=cache_dir or "")
    with Progress("reading the data", 0, "positions") as reading:
        store, packed = new_training(cfg, out_dir=runs_dir, run_id=run_id, workers=workers,
                                     progress=reading.update)
    train_and_report(store, cfg, packed, workers=workers)


# ---- the run commands on a training ------------------------------------------------------------

def is_training(store: Store) -> bool:
    return isinstance(store.manifest().config, TrainConfig)


def resume_training(store: Store, generations: int | None, workers: int | None) -> None:
    cfg = open_training(store)
    if generations is not None:
        cfg = TrainConfig(data=cfg.data, settings={**cfg.settings, "epochs": generations},
                          init=cfg.init, max_bad=cfg.max_bad, cache_dir=cfg.cache_dir)
        try:
            settings_of(cfg)
        except FieldError as exc:  # resume's flag is --generations (a training's epochs)
            if exc.field != "epochs":
                raise
            raise ConfigError(f"--generations {exc.problem}") from None
    train_and_report(store, cfg, workers=0 if workers is None else workers)


def show_status(store: Store, as_json: bool) -> None:
    view = load_training(store)
    if as_json:
        click.echo(json.dumps(view.info()))
        return
    for line in status_lines(view):
        click.echo(line)


def plot_training(store: Store, out: str) -> None:
    for path in write_loss_plot(load_training(store), out):
        click.echo(str(path))


def report_training(store: Store, out: str) -> None:
    md, page = write_training_report(load_training(store), out)
    click.echo(f"{page}\n{md}")


def export_training_net(store: Store, fmt: str, out_file: str | None) -> None:
    if out_file is None:
        raise ConfigError(f"run '{store.run_id}' is a training: its net is binary; give --out "
                          "FILE")
    data = export_training(store, fmt)
    check_writable(out_file, "--out")
    atomic_write_bytes(Path(out_file), data)
    click.echo(f"wrote {out_file} ({fmt}, {len(data)} bytes)", err=True)
    note = bullet_reader_note(stored_net(store)) if fmt == "bullet" else ""
    if note:
        click.echo(f"evotune: note: {out_file}: {note}", err=True)
