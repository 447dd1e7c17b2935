"""Export a run's recommended weights for other tools and engines.

The target is an engine spec: ``--engine SPEC`` or, without it, the run's own spec. Every value
is the target's engine value, ``round(evotune value * scale)``. The engine formats (uci,
cutechess, spsa, header) use the target's parameter (option) names; the data formats (json,
python, csv) use them too when ``--engine`` is given, and evotune's own weight names otherwise (so
``evotune uci --weights`` and ``evotune match`` read the file back). Weights of the run that the
target does not have are left out (``Export.omitted``). The formats themselves, written and read
back, are :mod:`evotune.weightsio`'s.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..runs.store import Store
from ..strategies import strategy_class
from ..strategies.spsa import finetune_ends, parse_spsa_lines
from ..weightsio import Export, check_format, export_params, keys_are_options, render
from .data import RunData, load_run, recommend, run_spec

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
                                           spsa_ends=spsa_ends(data))
    comment = (f"evotune run {data.run_id}: {rec.description}.\n"
               f"Engine {spec.name}: engine value = round(evotune value * scale).")
    text = render(fmt, params, comment=comment)
    return Export(fmt=fmt, text=text, params=params, omitted=omitted, notes=notes)


def spsa_ends(data: RunData) -> dict[str, tuple[float, float]]:
    """``{weight: (c_end, r_end)}`` in evotune units, as an SPSA run used them: its table's lines,
    or its c_end (a fraction of each weight's width) and r_end, or with ``finetune`` the ends of
    each weight's scale (:func:`~evotune.strategies.spsa.finetune_ends`); {} for a run of another
    strategy (the export's default ends apply)."""
    if data.strategy != "spsa":
        return {}
    params = data.config.params_dict()
    if params.get("table"):
        return {ln.name: (ln.c_end, ln.r_end)
                for ln in parse_spsa_lines(str(params["table"]), where=f"run {data.run_id}")}
    resolved = strategy_class("spsa").resolve_params(params)
    space = run_spec(data).space()
    free = space.free
    if resolved["finetune"]:
        c_end, r_end = finetune_ends(space.reference_array[free], space.lower_array[free],
                                     space.upper_array[free], resolved["c_end"])
    else:
        c_end = resolved["c_end"] * (space.upper_array - space.lower_array)[free]
        r_end = np.full(free.size, resolved["r_end"])
    return {space.names[i]: (float(c), float(r)) for i, c, r in zip(free, c_end, r_end)}
