"""Reports of stored runs: plots, the report page, export, comparison curves.

Everything here only reads a run (through :class:`evotune.runs.store.Store` and
:mod:`evotune.runs.rundata`), so it works on any checkpoint (finished, stopped or crashed).
Only this package writes under ``reports/``; starting runs (:mod:`evotune.kinds.games.start`) and
verifying them (:mod:`evotune.verify`, which stores verify.json in the run) live elsewhere.
"""
from __future__ import annotations

from ..runs.rundata import RECOMMEND_RULES, Recommendation, RunData, initial_mean, load_run
from ..runs.runkind import recommend

__all__ = ["RECOMMEND_RULES", "Recommendation", "RunData", "initial_mean", "load_run",
           "recommend"]
