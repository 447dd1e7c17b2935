"""Engine spec -> PlayerSpec: the bridge between engines/*.toml and the players that play games.

A builtin spec gives the built-in engine with a weight vector (the evaluation's weights, then
its search's numeric parameters; an 'nnue' spec: with a network file, the spec's ``net`` or one
given with the player); a 'uci' spec gives an external
engine whose start-up options are the spec's fixed options and whose weight options are the
weights mapped to the engine's option names and scales
(:meth:`evotune.spec.model.EngineSpec.engine_values`), set before each game on a reused process.
"""
from __future__ import annotations

from ..engine.evaluation import spec_evaluation
from ..engine.movemodel.modelfile import cached_model
from ..errors import ConfigError, EngineError, WeightsError
from ..space import Weights
from ..spec.model import EngineSpec
from . import PlayerSpec, builtin
from .external import ExternalEngine
from .nets import check_net_tables, net_player


def player_from_engine_spec(spec: EngineSpec, weights=None, *, name: str | None = None,
                            net: str | None = None) -> PlayerSpec:
    """The player for ``spec`` with ``weights`` (evotune units; None: the spec's reference values).

    A :class:`Weights` of the spec's names was checked when it was made (a run's plan makes them
    in its weight space) and is taken as it is; any other vector is checked against the spec's
    weight space (length, finite, bounds) here, so a player never carries a vector its engine
    does not accept. An 'nnue' spec's player evaluates with the network file ``net`` (None: the
    spec's own ``net``), read and checked here; a spec read with its net's output layer as
    weights (:data:`~evotune.spec.model.NetWeights`, a run's) plays ``weights`` as that layer.
    """
    if spec.search.model:  # read and checked now: a bad file is one line before any game
        cached_model(spec.search.model)
    evaluation = spec_evaluation(spec)
    if evaluation is not None and evaluation.reads_file:
        check_net_tables(spec)
        path = net or spec.net
        if not path:
            raise ConfigError(f"engine spec '{spec.name}' names no net; give the player as "
                              f"{spec.name}:FILE (a net file) or put net = \"FILE\" in the spec")
        if weights is None or not len(weights):  # the net as it is, searching as the spec says
            return net_player(path, name=name or spec.name, search=spec.search,
                              evaluation=evaluation)
        if net is not None or not spec.eval_size:
            raise WeightsError(f"engine spec '{spec.name}' evaluates with a network and takes no "
                               "weights (a run's spec takes its net's output layer)")
        w = weights if isinstance(weights, Weights) and weights.names == spec.names else \
            spec.space().weights(weights, what=f"{spec.name} weights")
        label = name or spec.name
        n = spec.eval_size
        return net_player(path, name=label, output=w.head(n), evaluation=evaluation,
                          search=spec.search.with_weights(w[n:], where=f"{label} weights"))
    if net is not None:
        raise ConfigError(f"engine spec '{spec.name}' has no network (features = "
                          f"{spec.features!r}); a net goes with an nnue spec, e.g. nnue:{net}")
    if isinstance(weights, Weights) and weights.names == spec.names:
        w = weights
    else:
        space = spec.space()
        w = space.reference_weights() if weights is None else space.weights(
            weights, what=f"{spec.name} weights")
    label = name or spec.name
    if evaluation is not None:  # a builtin spec
        # the search's weights follow the evaluation's
        n = spec.eval_size
        search = spec.search.with_weights(w[n:], where=f"{label} weights")
        return builtin(w.head(n), name=label, evaluation=evaluation, search=search)
    return PlayerSpec(name=label, kind="uci", weights=w,
                      command=tuple(spec.command), options=tuple(spec.options),
                      weight_options=tuple(spec.engine_values(w).items()))


def check_engine_spec(spec: EngineSpec) -> str:
    """Start a 'uci' spec's engine once and check its options; return the engine's name.

    Every fixed option and every weight's option must be declared in the engine's ``uci``
    answer, and each weight's bounds, mapped by its scale, must lie within the range the engine
    declares (so every candidate of a run is a value the engine takes). Raises EngineError with
    one line naming the first option that fails. A builtin spec is not started ('' returned).
    """
    if spec.kind != "uci":
        return ""

    eng = ExternalEngine(PlayerSpec(name=spec.name, kind="uci", command=tuple(spec.command)))
    try:
        for name, value in spec.options:
            try:
                eng.option(name).parse(value)
            except EngineError as exc:
                raise EngineError(f"engine spec {spec.path or spec.name}: {exc}") from None
        for w in spec.weights:
            try:
                opt = eng.option(w.option_name)
                if opt.type != "spin":
                    raise EngineError(f"option '{opt.name}' is a {opt.type} option; a weight "
                                      "maps onto a spin (integer) option")
                lo, hi = (w.reference, w.reference) if w.fixed else (w.lower, w.upper)
                for bound in sorted({lo, hi}):
                    opt.parse(int(round(bound * w.scale)))
            except EngineError as exc:
                raise EngineError(f"engine spec {spec.path or spec.name}: weight '{w.name}' "
                                  f"(bounds {w.lower:g}..{w.upper:g}, scale {w.scale:g}): "
                                  f"{exc}") from None
        return eng.name
    finally:
        eng.close()
