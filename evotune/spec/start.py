"""The start of a run that continues from earlier weights: a spec whose reference values are
those weights (:func:`with_start_values`) and the checksum a run's manifest names them by."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math

from ..errors import ConfigError
from .model import EngineSpec


def start_checksum(values: str) -> str:
    """The sha256 of a spec's :attr:`~EngineSpec.start_values` text (a run's manifest names its
    start by it)."""
    return hashlib.sha256(values.encode()).hexdigest()


def with_start_values(spec: EngineSpec, weights, *, source: str) -> EngineSpec:
    """``spec`` with ``weights`` (one number per weight, spec order, evotune units) as its
    reference values: the start of a run that continues from earlier weights (``evotune run
    --init-from RUN`` or ``--engine SPEC:WEIGHTS``). Bounds stay the spec's; a fixed weight is
    held at the value given. A value outside its weight's bounds is refused (ConfigError, one
    line naming a few). The digest changes with the values (a run's identity holds them); the
    values are kept as text (:attr:`~EngineSpec.start_values`), so a run's copy of its spec
    reads back the same spec."""
    if spec.start_values:
        raise ConfigError(f"engine spec {spec.name} already starts from {spec.start_source}; "
                          "give the spec itself")
    values = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
              for v in weights]
    if len(values) != len(spec.weights):
        raise ConfigError(f"{source}: {len(values)} weights, but engine spec {spec.name} has "
                          f"{len(spec.weights)}")
    bad = [w.name for w, v in zip(spec.weights, values)
           if not (math.isfinite(v) and w.lower <= v <= w.upper)]
    if bad:
        shown = ", ".join(bad[:4]) + (f" and {len(bad) - 4} more" if len(bad) > 4 else "")
        raise ConfigError(f"{source}: {len(bad)} weight(s) outside the bounds of engine spec "
                          f"{spec.name} ({shown}); widen the spec's bounds or start from other "
                          "weights")
    weights_ = tuple(dataclasses.replace(w, reference=v) for w, v in zip(spec.weights, values))
    search = spec.search
    if search.weight_names():
        search = search.with_weights(values[-len(search.weight_names()):], where=source)
    text = json.dumps(dict(zip(spec.names, values)), separators=(",", ":"))
    digest = hashlib.sha256((spec.digest + start_checksum(text)).encode()).hexdigest()
    return dataclasses.replace(spec, weights=weights_, search=search, digest=digest,
                               start_values=text, start_source=str(source))
