"""Players that evaluate with a network: made from a net file, and the Net a worker reads for them.

A PlayerSpec crosses process boundaries as plain data: a net player carries its file's absolute
path and the net's checksum, and each process reads the file once (:func:`evaluation`), refusing
a file that changed since the player was made.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..engine.netfile import Net, read_net
from ..errors import NetError
from ..featuresets import NNUE
from ..space import Weights
from . import PlayerSpec


def net_player(path: str | Path, name: str = "nnue") -> PlayerSpec:
    """The built-in engine evaluating with the network in ``path`` (evotune's or bullet's file;
    read and checked now, NetError naming the file)."""
    p = Path(path).resolve()
    net = read_net(p)
    return PlayerSpec(name=name, kind="builtin", features=NNUE, net=str(p),
                      net_checksum=net.checksum)


@lru_cache(maxsize=8)
def _net(path: str, checksum: str) -> Net:
    net = read_net(path)
    if net.checksum != checksum:
        raise NetError(f"net file {path} changed since the player was made (checksum "
                       f"{net.checksum}, was {checksum}); restart with the file you mean")
    return net


def evaluation(player: PlayerSpec):
    """What the engine API takes for a builtin player: its weights (a Weights, checked when the
    player was made, is passed as it is), or its Net (read once per process)."""
    if player.features == NNUE:
        return _net(player.net, player.net_checksum)
    if isinstance(player.weights, Weights):
        return player.weights
    return np.asarray(player.weights, dtype=np.float64)
