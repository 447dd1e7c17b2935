"""Evaluations: how the built-in engine values a position, one value per kind.

An :class:`Evaluation` is what a spec's ``features`` names (docs/internals.md, "Evaluations"): a
linear feature set (:class:`LinearEvaluation`: shannon, pst, extended; ``eval = w . phi``, a
weight vector of the set's names) or a network (:class:`NetEvaluation`: ``nnue``, a
:class:`~evotune.engine.net.network.Net` read from a file, no weight vector of its own and no phi).
It knows its weight names and size, the width of its phi rows, the denominator of its phi, its
code in the core's dispatch and how a value of it enters the core (:meth:`Evaluation.core_input`:
the int64 weight row or the Net), and makes what the engine API takes for a player
(:meth:`Evaluation.value`). Code above the engine asks these values (:func:`evaluation_of`,
:func:`spec_evaluation`) instead of testing the name; :data:`EVALUATIONS` registers each kind once
(a new kind: its class here, its name in :mod:`evotune.spec.features`, its code in the core).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from ..errors import ConfigError, NetError
from ..space import Weights, check_weights
from ..spec.features import FEATURE_SETS, FS_NNUE, NETS, denominator, feature_names, feature_set_code
from .net.corestate import as_net
from .net.network import Net, read_net
from .net.outputlayer import with_output


class Evaluation(Protocol):
    """How the built-in engine values a position: a linear feature set or a net."""

    @property
    def name(self) -> str:
        """The name a spec gives it (``features = "..."``)."""

    @property
    def code(self) -> int:
        """Its code in the core's dispatch (``S[S_FSET]``, a game's ``fsets``)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the weight vector it takes (a net: none, its values are a file's)."""

    @property
    def size(self) -> int:
        """The number of those weights."""

    @property
    def phi_width(self) -> int:
        """The width of its phi rows (a PV leaf's features): 0 when it has no phi (a net)."""

    @property
    def denominator(self) -> int:
        """phi = phi_int / denominator (1 where there is no phi)."""

    @property
    def reads_file(self) -> bool:
        """True when a player names a file it evaluates with (a net: ``SPEC:FILE``, the spec's
        ``net``) instead of a weight vector."""

    def core_input(self, value, what: str):
        """``value`` as the core takes it (the engine API's ``weights``): a linear set's int64
        weight row, checked (a Weights of its names as made); a net's Net. ``what`` names the
        value in the one-line error."""

    def value(self, weights, *, net: str = "", checksum: str = ""):
        """What the engine API takes for a player of this evaluation with ``weights`` (and, for
        a net, the file ``net`` whose checksum must still be ``checksum``; its output layer
        replaced by ``weights`` when given), read once per process."""


@dataclass(frozen=True)
class LinearEvaluation:
    """A linear feature set: ``eval = round(w) . phi_int / denominator``, rounded toward zero."""

    name: str
    """shannon, pst or extended (:data:`evotune.spec.features.FEATURE_SETS`)."""

    @property
    def code(self) -> int:
        return feature_set_code(self.name)

    @property
    def names(self) -> tuple[str, ...]:
        return feature_names(self.name)

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def phi_width(self) -> int:
        return self.size

    @property
    def denominator(self) -> int:
        return denominator(self.name)

    @property
    def reads_file(self) -> bool:
        return False

    def core_input(self, value, what: str):
        names = self.names
        if isinstance(value, Weights) and value.names == names:
            return value.engine
        label = names if len(names) <= 8 else (f"the {len(names)} weights of feature set "
                                               f"'{self.name}'",)
        return np.rint(check_weights(value, size=len(names), names=label,
                                     what=what)).astype(np.int64)

    def value(self, weights, *, net: str = "", checksum: str = ""):
        if isinstance(weights, Weights):
            return weights
        return np.asarray(weights, dtype=np.float64)


@dataclass(frozen=True)
class NetEvaluation:
    """A network read from a file (engine/net/network.py), evaluated incrementally by the core."""

    name: str
    """The spec's name for it (``nnue``)."""

    @property
    def code(self) -> int:
        return FS_NNUE

    @property
    def names(self) -> tuple[str, ...]:
        return ()

    @property
    def size(self) -> int:
        return 0

    @property
    def phi_width(self) -> int:
        return 0

    @property
    def denominator(self) -> int:
        return 1

    @property
    def reads_file(self) -> bool:
        return True

    def core_input(self, value, what: str):
        return as_net(value, what)

    def value(self, weights, *, net: str = "", checksum: str = ""):
        if len(weights):
            return _tuned(net, checksum, tuple(weights))
        return _net(net, checksum)


@lru_cache(maxsize=8)
def _net(path: str, checksum: str) -> Net:
    net = read_net(path)
    if net.checksum != checksum:
        raise NetError(f"net file {path} changed since the player was made (checksum "
                       f"{net.checksum}, was {checksum}); restart with the file you mean")
    return net


@lru_cache(maxsize=64)
def _tuned(path: str, checksum: str, output: tuple[float, ...]) -> Net:
    return with_output(_net(path, checksum), output)


EVALUATIONS: dict[str, Evaluation] = {
    **{name: LinearEvaluation(name) for name in FEATURE_SETS},
    **{name: NetEvaluation(name) for name in NETS},
}
"""Every evaluation by the name a spec gives it: the one registry of kinds."""

SHANNON: Evaluation = EVALUATIONS["shannon"]
"""The built-in engine's own evaluation (Shannon's terms): a player's default."""


def evaluation_of(features: str | Evaluation) -> Evaluation:
    """The evaluation a spec's ``features`` names (an Evaluation is taken as it is); ConfigError
    naming the known ones otherwise."""
    if not isinstance(features, str):
        return features
    try:
        return EVALUATIONS[features]
    except KeyError:
        raise ConfigError(f"unknown feature set {features!r}; use one of "
                          f"{', '.join(EVALUATIONS)}") from None


def spec_evaluation(spec) -> Evaluation | None:
    """The evaluation of a builtin engine (an EngineSpec or a PlayerSpec: anything with
    ``kind`` and ``features``); None for an external ('uci') engine, which evaluates its own
    way."""
    return evaluation_of(spec.features) if spec.kind == "builtin" else None


def engine_weights(weights, what: str, features: str | Evaluation = "shannon"):
    """The core's input of ``weights`` for the evaluation ``features``
    (:meth:`Evaluation.core_input`)."""
    return evaluation_of(features).core_input(weights, what)
