"""Players that evaluate with a network: made from a net file, and the Net a worker reads for them.

A PlayerSpec crosses process boundaries as plain data: a net player carries its file's absolute
path and the net's checksum, and each process reads the file once (:func:`evaluation`), refusing
a file that changed since the player was made. A player of a run that tunes the net's output
layer (``evotune run --engine nnue:FILE``) carries its output weights, bias and scale as its
``weights`` (:func:`~evotune.engine.net.outputlayer.output_names`): its Net is the file's with that
output layer (:func:`~evotune.engine.net.outputlayer.with_output`), made once per process and vector.
"""
from __future__ import annotations

from pathlib import Path

from ..engine.evaluation import EVALUATIONS, Evaluation, spec_evaluation
from ..engine.net.network import read_net
from ..engine.net.outputlayer import output_names, output_ranges, output_values
from ..errors import NetError
from ..space import Weights
from ..spec.features import NNUE
from ..spec.file import engine_spec_from_text
from ..spec.model import EngineSpec
from ..spec.searchsettings import SearchSettings
from . import PlayerSpec


def net_player(path: str | Path, name: str = "nnue", *, output: Weights | None = None,
               search: SearchSettings = SearchSettings(),
               evaluation: Evaluation = EVALUATIONS[NNUE]) -> PlayerSpec:
    """The built-in engine evaluating with the network in ``path`` (evotune's or bullet's file;
    read and checked now, NetError naming the file); ``output``: its output layer and scale
    instead of the file's (the weights of :func:`output_weights`, checked when made);
    ``evaluation``: the spec's evaluation (a net's)."""
    p = Path(path).resolve()
    net = read_net(p)
    if output is not None and len(output) != 2 * net.hidden + 2:
        raise NetError(f"net file {p} has hidden size {net.hidden}: its output layer is "
                       f"{2 * net.hidden + 2} weights, not the {len(output)} given (did the "
                       "file change?)")
    return PlayerSpec(name=name, kind="builtin", features=evaluation.name, net=str(p),
                      net_checksum=net.checksum, weights=() if output is None else output,
                      search=search)


def output_weights(path: str) -> list[tuple[str, float, float, float, float, float]]:
    """The output layer of the net in ``path`` as weights (an engine spec's
    :data:`~evotune.spec.model.NetWeights`): per weight (name, the file's value, default lower
    and upper bounds, and the range a bound may not leave), as
    :func:`~evotune.engine.net.outputlayer.output_ranges` states them."""
    net = read_net(path)
    return [(n, float(v), float(lo), float(hi), float(least), float(most))
            for n, v, (lo, hi, least, most) in zip(output_names(net.hidden),
                                                     output_values(net).tolist(),
                                                     output_ranges(net))]


def check_net_tables(spec: EngineSpec) -> None:
    """An 'nnue' spec that names its net and was read without its output layer as weights (for
    playing, not tuning) has its [[weight]] and [[group]] tables checked against that layer as
    a run checks them (names, references, bounds the file can hold, whole numbers): a spec is
    refused alike by every command. ConfigError naming the spec otherwise."""
    evaluation = spec_evaluation(spec)
    if not (evaluation is not None and evaluation.reads_file and spec.net and spec.text):
        return
    if spec.names == output_names(read_net(spec.net).hidden):
        return  # read with its net's output layer as weights: checked then
    engine_spec_from_text(spec.text, where=spec.path, digest=spec.file_digest,
                          net_weights=output_weights)


def evaluation(player: PlayerSpec):
    """What the engine API takes for a builtin player: its weights (a Weights, checked when the
    player was made, is passed as it is), or its Net (read once per process; with the player's
    output layer when it carries one): :meth:`~evotune.engine.evaluation.Evaluation.value`."""
    return player.evaluation.value(player.weights, net=player.net, checksum=player.net_checksum)
