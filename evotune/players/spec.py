"""Engine spec -> PlayerSpec: the bridge between engines/*.toml and the players that play games.

A builtin spec gives the built-in engine with a weight vector; a 'uci' spec gives an external
engine whose start-up options are the spec's fixed options followed by the weights mapped to the
engine's option names and scales (:meth:`evotune.config.EngineSpec.engine_values`).
"""
from __future__ import annotations

from ..config import EngineSpec
from . import PlayerSpec, builtin


def player_from_engine_spec(spec: EngineSpec, weights=None, *, name: str | None = None) -> PlayerSpec:
    """The player for ``spec`` with ``weights`` (evotune units; None: the spec's reference values).

    The weights are validated against the spec's weight space (length, finite, bounds), so a
    player never carries a vector its engine does not accept.
    """
    space = spec.space()
    w = space.reference_array if weights is None else space.validate(weights, what=f"{spec.name} weights")
    label = name or spec.name
    if spec.kind == "builtin":
        return builtin(w, name=label, features=spec.features)
    options = tuple(spec.options) + tuple(spec.engine_values(w).items())
    return PlayerSpec(name=label, kind="uci", weights=tuple(float(x) for x in w),
                      command=tuple(spec.command), options=options)
