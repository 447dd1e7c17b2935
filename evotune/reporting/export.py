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

from ..enginespec import load_engine_spec
from ..runs.store import Store
from ..weightsio import Export, check_format, export_params, keys_are_options, render
from .data import RunData, load_run, recommend

log = logging.getLogger(__name__)


def export_run(run: str | Path | Store | RunData, *, fmt: str, engine: str | Path | None = None,
               rule: str = "mean", runs_dir: str | Path = "populations") -> Export:
    """The run's recommended weights in format ``fmt``, mapped onto ``engine`` (default: the
    run's own engine spec)."""
    check_format(fmt)
    data = run if isinstance(run, RunData) else load_run(run, out_dir=runs_dir)
    rec = recommend(data, rule)
    spec = load_engine_spec(engine if engine is not None
                            else data.config.engine)
    params, omitted, notes = export_params(data.names, rec.weights, spec,
                                           option_keys=keys_are_options(fmt, engine is not None))
    comment = (f"evotune run {data.run_id}: {rec.description}.\n"
               f"Engine {spec.name}: engine value = round(evotune value * scale).")
    text = render(fmt, params, comment=comment)
    return Export(fmt=fmt, text=text, params=params, omitted=omitted, notes=notes)
