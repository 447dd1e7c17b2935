"""Export a run's recommended weights for other tools and engines, and read the exports back.

Formats (:data:`FORMATS`):

- ``json``: an object ``{name: value}``; dotted names nest, one object per table
  (``{"pst": {"mg": {"knight": {"a1": ..}}}, "material": {"mg": {...}}}``, a piece-square table
  laid out as a board, rank 8 first); ``python``: a flat Python dict literal;
  ``csv``: ``name,value`` rows under a header;
- ``uci``: ``setoption name X value Y`` lines (paste into an engine or a GUI's init string);
- ``cutechess``: ``option.X=Y`` arguments on one line (cutechess-cli and fastchess read them);
- ``spsa``: OpenBench SPSA lines ``name, int, value, min, max, c_end, r_end`` for the
  tunable weights, with c_end = (max - min) / 20 and r_end = 0.002; ``spsa-fishtest``: the same
  as fishtest lines ``name,value,min,max,c_end,r_end``. Both read back exactly with
  ``evotune run --strategy spsa --spsa-params FILE``;
- ``header``: a C/C++ header: the piece-square tables as ``constexpr int pst_mg[6][64]`` and
  ``pst_eg[6][64]`` (pieces pawn..king, squares a1 = 0 .. h8 = 63 from White's view) when a run
  has every square of a phase, and one ``constexpr int`` per other weight.

Names and units. The target is an engine spec: ``--engine SPEC`` or, without it, the run's own
spec. Every value is the target's engine value, ``round(evotune value * scale)``. The engine
formats (uci, cutechess, spsa, header) use the target's parameter (option) names; the data
formats (json, python, csv) use them too when ``--engine`` is given, and evotune's own weight
names otherwise (so ``evotune uci --weights`` and ``evotune match`` read the file back). Weights
of the run that the target does not have are left out (:attr:`Export.omitted`).

:func:`parse` reads each format back into ``{evotune name: evotune value}``; the round trip gives
the exported weights within the rounding the scale implies (0.5 / scale).
"""
from __future__ import annotations

import logging
from pathlib import Path

from ..enginespec import load_engine_spec
from ..runs.store import Store
from ..weightsio import Export, check_format, export_params, keys_are_options, render
from .data import RunData, load_run, recommend

log = logging.getLogger(__name__)













# ---- reading exports back -----------------------------------------------------------------------





# ---- runs ---------------------------------------------------------------------------------------

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
