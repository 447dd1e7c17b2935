"""Export a run's recommended weights for other tools and engines.

The target is an engine spec: ``--engine SPEC`` or, without it, the run's own spec. Every value
is the target's engine value, ``round(evotune value * scale)``. The engine formats (uci,
cutechess, spsa, header) use the target's parameter (option) names; the data formats (json,
python, csv) use them too when ``--engine`` is given, and evotune's own weight names otherwise (so
``evotune uci --weights`` and ``evotune match`` read the file back). Weights of the run that the
target does not have are left out (``Export.omitted``). The formats themselves, written and read
back, are :mod:`evotune.weightsio`'s.

A run that tuned a net's output layer (``--engine nnue:FILE``) also exports as a net file
(:func:`export_net`, formats ``evotune`` and ``bullet``): the file's input layer with the
recommended output layer and scale.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ..engine.evaluation import spec_evaluation
from ..engine.net.network import FORMATS as NET_FORMATS
from ..engine.net.network import SCALE, Net, net_bytes, read_net
from ..engine.net.outputlayer import with_output
from ..errors import ConfigError, NetError, StoreError
from ..runs.rundata import RunData, load_run, run_spec
from ..runs.runkind import recommend
from ..runs.store import Store
from ..spec.model import EngineSpec
from ..strategies import known_strategy, strategy_class
from ..weightsio import Export, check_format, export_params, keys_are_options, render

log = logging.getLogger(__name__)


def export_run(run: str | Path | Store | RunData, *, fmt: str, engine: str | Path | None = None,
               rule: str = "mean", runs_dir: str | Path = "populations") -> Export:
    """The run's recommended weights in format ``fmt``, mapped onto ``engine`` (default: the
    run's own engine spec)."""
    check_format(fmt)
    data = run if isinstance(run, RunData) else load_run(run, out_dir=runs_dir)
    rec = recommend(data, rule)
    spec = run_spec(data, engine)
    params, omitted, notes = export_params(data.names, rec.weights, spec,
                                           option_keys=keys_are_options(fmt, engine is not None),
                                           spsa_ends=spsa_ends(data, spec))
    if data.final_check is not None and rec.description == data.final_check.sentence:
        notes = (*notes, data.final_check.sentence)  # the start, not the tuned weights
    comment = (f"evotune run {data.run_id}: {rec.description.rstrip('.')}.\n"
               f"Engine {spec.name}: engine value = round(evotune value * scale).")
    text = render(fmt, params, comment=comment)
    return Export(fmt=fmt, text=text, params=params, omitted=omitted, notes=notes)


def spsa_ends(data: RunData, spec: EngineSpec | None = None) -> dict[str, tuple[float, float]]:
    """``{weight: (c_end, r_end)}`` in evotune units, as the run's strategy used them
    (:meth:`~evotune.strategies.base.Strategy.step_ends`: SPSA's table lines or its default
    ends); {} for a strategy without such ends (the export's default ends apply). The run's own
    spec gives the space; ``spec`` (the export's ``--engine``) stands in where the run's is
    unavailable (a run made before runs kept a copy, read away from its folder)."""
    if not known_strategy(data.strategy):
        return {}
    own = data.spec if data.spec is not None else spec if spec is not None else run_spec(data)
    return strategy_class(data.strategy).step_ends(own.space(), data.config.params_dict())


@dataclass(frozen=True)
class NetExport:
    """A run's tuned net as a file."""

    fmt: str
    """'evotune' or 'bullet'."""
    data: bytes
    """The file's bytes."""
    net: Net
    """The tuned net."""
    notes: tuple[str, ...]
    """Human-readable notes for stderr (bullet's layout and the scale)."""


def is_net_run(data: RunData) -> bool:
    """True when ``data`` tuned a net's output layer (its engine spec evaluates with a net)."""
    spec = data.spec
    if spec is None:
        return False
    evaluation = spec_evaluation(spec)
    return evaluation is not None and evaluation.reads_file and bool(spec.net)


def export_net(run: str | Path | Store | RunData, *, fmt: str, rule: str = "mean",
               runs_dir: str | Path = "populations") -> NetExport:
    """The net a run tuned in format ``fmt`` ('evotune' or 'bullet'): the run's net file with
    the recommended output weights, bias and scale. bullet's layout has no scale: the file keeps
    the tuned output layer, and a note says the scale its reader must be given when it is not
    bullet's 400. StoreError when the net file changed since the run started."""
    data = run if isinstance(run, RunData) else load_run(run, out_dir=runs_dir)
    if fmt not in NET_FORMATS:
        raise ConfigError(f"--format {fmt}: a net is written as {' or '.join(NET_FORMATS)}")
    if not is_net_run(data):
        raise ConfigError(f"--format {fmt} writes a net; run {data.run_id} tunes the weights of "
                          f"'{data.config.engine}', not a net's output layer: use json, csv, "
                          "uci, cutechess, spsa, spsa-fishtest, header or python")
    spec = run_spec(data)
    started = Store(data.root).manifest().identity.get("engine_spec")
    if started != spec.digest:
        raise StoreError(f"run {data.run_id}: the net file {spec.net} changed since the run "
                         "started (the run's engine digest differs); restore the file to export "
                         "the tuned net")
    rec = recommend(data, rule)
    try:
        net = with_output(read_net(spec.net), rec.weights[:spec.eval_size])
    except NetError as exc:
        raise StoreError(f"run {data.run_id}: {exc}") from None
    notes = []
    if fmt == "bullet" and net.scale != SCALE:
        notes.append(f"bullet's layout has no scale: the tuned scale {net.scale} is not in the "
                     f"file (readers assume {SCALE}); give it to the engine that reads it, or "
                     "export --format evotune, whose header keeps it")
    return NetExport(fmt=fmt, data=net_bytes(net, fmt), net=net, notes=tuple(notes))
