"""Network commands, the ``evotune nn`` group: init (a random net), info, export (evotune's file
or bullet's raw layout), convert (training data between text and bullet's binary records), and
train (:mod:`.nntrain`). The nets are those of
:mod:`evotune.engine.net.network`."""
from __future__ import annotations

from pathlib import Path

import chess
import click

from ..engine.net.inputs import OUTPUT_BUCKETS_MAX, parse_king_buckets
from ..engine.net.network import (
    ACTIVATIONS,
    FORMATS,
    HIDDEN_DEFAULT,
    bullet_reader_note,
    evaluate_reference,
    net_bytes,
    random_net,
    read_net,
    write_net,
)
from ..errors import ConfigError
from ..fileio import check_writable
from ..learn.nn.bulletdata import SUFFIXES, is_bullet
from ..learn.nn.bulletdata import convert as convert_data
from ..runs.manifest import check_outside_runs
from .nnmoves import is_move_model_file, move_model_info, train_moves_command
from .nntrain import train


def _read(path: str, input_format: str, hidden: int | None, activation: str | None,
          king_buckets: str | None = None, output_buckets: int | None = None):
    return read_net(path, format=None if input_format == "auto" else input_format,
                    hidden=hidden, activation=activation,
                    king_buckets=None if king_buckets is None else parse_king_buckets(king_buckets),
                    output_buckets=output_buckets)


_KING_BUCKETS_HELP = ("a preset's bucket count (1, 2, 4, 8, 16) or 32 comma-separated bucket ids "
                      "of the mirrored king squares, rank 1's a-d first")


def _reading_options(f):
    """How to read a net file: bullet's raw layout has no header (its hidden size comes from its
    size; its activation and buckets must be given when they are not screlu and none)."""
    f = click.option("--output-buckets", type=int, default=None,
                     help="A bullet file's output buckets (default 1); for an evotune file, a "
                          "check.")(f)
    f = click.option("--king-buckets", default=None,
                     help=f"A bullet file's king buckets: {_KING_BUCKETS_HELP} (default none); "
                          "for an evotune file, a check.")(f)
    f = click.option("--activation", type=click.Choice(ACTIVATIONS), default=None,
                     help="A bullet file's activation (default screlu); for an evotune file, a "
                          "check.")(f)
    f = click.option("--hidden", type=int, default=None,
                     help="A check of the hidden size (a bullet file's comes from its size).")(f)
    f = click.option("--input-format", type=click.Choice(("auto",) + FORMATS), default="auto",
                     show_default=True,
                     help="auto: evotune's file when it starts with its header, else bullet's.")(f)
    return f


@click.group()
def nn() -> None:
    """Networks: make, inspect, export and train NNUE nets; convert their data. They are the
    built-in engine's (768 x K -> H) x 2 -> N nets in bullet's layout (K king buckets, N output
    buckets; 1 and 1: bullet's simple net); play one as the player nnue:FILE."""


@nn.command()
@click.option("--hidden", type=int, default=HIDDEN_DEFAULT, show_default=True,
              help="Hidden size H (8..1024).")
@click.option("--seed", type=int, default=1, show_default=True, help="The seed.")
@click.option("--activation", type=click.Choice(ACTIVATIONS), default="screlu",
              show_default=True, help="The hidden layer's activation.")
@click.option("--king-buckets", default="1", show_default=True,
              help=f"King buckets (bullet's ChessBucketsMirrored): {_KING_BUCKETS_HELP}; 1: none.")
@click.option("--output-buckets", type=int, default=1, show_default=True,
              help=f"Output buckets by material (bullet's MaterialCount), 1..{OUTPUT_BUCKETS_MAX}.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="evotune",
              show_default=True, help="evotune's file, or bullet's raw quantised layout.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="The net file to write.")
def init(hidden: int, seed: int, activation: str, king_buckets: str, output_buckets: int,
         fmt: str, out_file: str) -> None:
    """Write a random net: every weight uniform in +-1/sqrt(fan in), quantised as bullet saves
    it (a start for training or evolution; it knows nothing, so search it with a node limit)."""
    net = random_net(hidden, seed, activation, king_buckets=parse_king_buckets(king_buckets),
                     output_buckets=output_buckets)
    check_writable(out_file, "--out", parents=False)
    check_outside_runs(out_file, "--out")
    write_net(net, out_file, fmt)
    click.echo(f"{out_file}: {fmt} net, {net.describe()}")


@nn.command()
@click.argument("net_file", type=click.Path(dir_okay=False))
@_reading_options
def info(net_file: str, input_format: str, hidden: int | None, activation: str | None,
         king_buckets: str | None, output_buckets: int | None) -> None:
    """Print a net's shape, buckets, quantisation, size and checksum, and its evaluation of the
    start position (a move-model file: its features, scale, checksum and the start position's
    likeliest moves)."""
    if is_move_model_file(net_file):
        given = [flag for flag, v in (("--input-format", input_format != "auto"),
                                      ("--hidden", hidden is not None),
                                      ("--activation", activation is not None),
                                      ("--king-buckets", king_buckets is not None),
                                      ("--output-buckets", output_buckets is not None)) if v]
        if given:
            raise ConfigError(f"{net_file} is a move-model file: {', '.join(given)} read or "
                              "check a net file and do not apply to it; leave them out")
        move_model_info(net_file)
        return
    net = _read(net_file, input_format, hidden, activation, king_buckets, output_buckets)
    data = Path(net_file).read_bytes()
    fmt = "evotune" if data == net_bytes(net, "evotune") else "bullet"
    click.echo(f"file        {net_file} ({len(data)} bytes, {fmt} format)")
    click.echo(f"shape       {net.shape}")
    click.echo(f"buckets     {net.describe_buckets()}")
    click.echo(f"activation  {net.activation}")
    click.echo(f"quantised   qa {net.qa}, qb {net.qb}, scale {net.scale}")
    click.echo(f"parameters  {net.parameters}")
    click.echo(f"checksum    {net.checksum}")
    click.echo(f"startpos    {evaluate_reference(net, chess.Board())} (side to move)")


@nn.command()
@click.argument("net_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True,
              help="evotune's file, or bullet's raw quantised layout (padded to 64 bytes; it "
                   "keeps neither the activation, qa, qb, scale nor the buckets).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="The file to write.")
@_reading_options
def export(net_file: str, fmt: str, out_file: str, input_format: str, hidden: int | None,
           activation: str | None, king_buckets: str | None, output_buckets: int | None) -> None:
    """Write NET_FILE in another format (the arrays are copied exactly)."""
    net = _read(net_file, input_format, hidden, activation, king_buckets, output_buckets)
    check_writable(out_file, "--out", parents=False)
    check_outside_runs(out_file, "--out")
    if Path(out_file).exists() and Path(out_file).samefile(net_file):
        raise ConfigError(f"--out {out_file} is the net file being exported; give another file")
    write_net(net, out_file, fmt)
    click.echo(f"{out_file}: {fmt} net, {net.describe()}")
    if fmt == "bullet":
        note = bullet_reader_note(net)
        if note:
            click.echo(f"evotune: note: {out_file}: {note}", err=True)


@nn.command()
@click.argument("data", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help=f"The file to write: bullet's binary records when it ends in "
                   f"{' or '.join(SUFFIXES)}, else 'FEN | score | result' lines.")
@click.option("--max-bad", type=int, default=0, show_default=True,
              help="Malformed text lines to skip before stopping.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the packed cache of text data (default: beside the first file).")
def convert(data, out_file, max_bad, cache_dir) -> None:
    """Convert training data between evotune's labelled text (any format 'nn train' reads) and
    bullet's binary data (bulletformat's 32-byte ChessBoard records, files ending in .bin or
    .data). Every position needs a score for bullet's records; a position with Black to move is
    stored from Black's side (the records keep no side to move)."""
    if max_bad < 0:
        raise click.BadParameter("must be >= 0", param_hint="--max-bad")
    packed, out = convert_data(data, out_file, max_bad=max_bad, cache_dir=cache_dir)
    kind = "bullet records" if is_bullet(out) else "text lines"
    click.echo(f"{out}: {len(packed)} positions as {kind} ({out.stat().st_size} bytes)")


nn.add_command(train)
nn.add_command(train_moves_command)

COMMANDS = (nn,)
