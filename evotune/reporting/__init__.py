"""Reports of stored runs: arrays (data), plots, the report page, verification and export.

Everything here reads a run through :class:`evotune.store.Store`, so it works on any checkpoint
(finished, stopped or crashed). Only this package writes under ``reports/``; verification
results go back into the run through ``Store.write_document('verify', ...)``.
"""
from __future__ import annotations

from ..runs.rundata import RECOMMEND_RULES, Recommendation, RunData, initial_mean, load_run, recommend

__all__ = ["RECOMMEND_RULES", "Recommendation", "RunData", "initial_mean", "load_run",
           "recommend"]
