"""A net's output layer as weights (Blondie25's line: the output layer evolved by games): its
names, values and ranges in the file's integer units, and the net with them replaced.

Nets with one output bucket only (a net with king buckets is fine: its output layer is the plain
net's); NetError for a net with output buckets.
"""
from __future__ import annotations

import numpy as np

from ...errors import NetError
from .network import SCALE_MAX, Net

OUTPUT_SCALE = "scale"
"""The name of the evaluation scale among a net's output weights."""
OUTPUT_BIAS = "out.bias"


def _one_bucket(net: Net) -> None:
    if net.output_buckets != 1:
        raise NetError(f"the output layer of a net with {net.output_buckets} output buckets as "
                       "weights is not yet supported (nets with one output bucket only)")


def output_names(hidden: int) -> tuple[str, ...]:
    """The names of a net's output layer as weights: ``out.us.J`` (the side to move's
    accumulator's weight J), ``out.them.J``, ``out.bias``, then ``scale``: 2 H + 2 names."""
    return (tuple(f"out.us.{j}" for j in range(hidden))
            + tuple(f"out.them.{j}" for j in range(hidden)) + (OUTPUT_BIAS, OUTPUT_SCALE))


def output_values(net: Net) -> np.ndarray:
    """int64 (2 H + 2,): l1w, l1b and the scale, in the file's integer units (the order of
    :func:`output_names`)."""
    _one_bucket(net)
    return np.concatenate((net.l1w.astype(np.int64),
                           np.array([net.l1b_values[0], net.scale], dtype=np.int64)))


def output_ranges(net: Net) -> list[tuple[int, int, int, int]]:
    """(lower, upper, least, most) of each output weight (:func:`output_names`' order): the
    default bounds and the range a bound may not leave. A weight or the bias may move by its own
    magnitude or a quarter of one float unit (``qb / 4``; ``qa * qb / 4`` for the bias),
    whichever is more, within int16; the scale from half to twice the file's, within
    1..100000."""
    out = []
    floor_w, floor_b = max(1, net.qb // 4), max(1, net.qa * net.qb // 4)
    for i, v in enumerate(output_values(net)[:-1].tolist()):
        d = max(abs(v), floor_b if i == 2 * net.hidden else floor_w)
        out.append((max(-32768, v - d), min(32767, v + d), -32768, 32767))
    out.append((max(1, net.scale // 2), min(SCALE_MAX, 2 * net.scale), 1, SCALE_MAX))
    return out


def with_output(net: Net, values) -> Net:
    """``net`` with its output layer and scale replaced by ``values`` (:func:`output_names`'
    order, whole numbers in the file's units); NetError when one is not whole or leaves what the
    file can hold (int16; a scale of 1..100000)."""
    _one_bucket(net)
    v = np.asarray(values, dtype=np.float64)
    h = net.hidden
    if v.shape != (2 * h + 2,):
        raise NetError(f"net output layer: {v.size} values given, the net has {2 * h + 2} "
                       f"(2 x {h} weights, the bias and the scale)")
    if not np.all(np.isfinite(v)) or not np.array_equal(v, np.rint(v)):
        raise NetError("net output layer: the values must be whole numbers (the file's "
                       "integer units)")
    if v[:-1].min() < -32768 or v[:-1].max() > 32767:
        raise NetError("net output layer: a weight or the bias leaves int16 (-32768..32767)")
    return Net(hidden=h, activation=net.activation, qa=net.qa, qb=net.qb, scale=int(v[-1]),
               l0w=net.l0w, l0b=net.l0b, l1w=v[:2 * h].astype(np.int16), l1b=int(v[2 * h]),
               king_buckets=net.king_buckets)
