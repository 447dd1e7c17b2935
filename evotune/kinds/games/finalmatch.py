"""The final check of a run that starts from given weights: its recommendation against its start.

The record and the rule are :mod:`evotune.runs.finalcheck`'s; here the games are played. The
check is one fixture, the tuned weights (A) against the start (B), at the run's limits, on the
openings of ``final_check_openings`` (by default held-out ones the run did not tune on: tuned
weights can gain on the openings they were selected on and not elsewhere), with key (0, 0):
generation 0 plays no fixture of its own, so on the run's own openings the check's draws never
repeat a generation's, and like every fixture its result is the same for any number of workers.
A run killed during the check plays it again on resume, with the same games.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np

from ...match import Fixture, SprtParams, run_fixtures, write_pgn_text
from ...runs.finalcheck import (
    FINAL_CHECK_DOCUMENT,
    FINAL_CHECK_ELO,
    FINAL_CHECK_ERRORS,
    FINAL_CHECK_PGN,
    FinalCheck,
)
from ...runs.store import Store
from ...tuning.fitness import match_settings
from .plan import RunPlan

log = logging.getLogger(__name__)

FINAL_CHECK_KEY = (0, 0)
"""The check's fixture key (generation 0 has no fixtures)."""
ELO_CAP = 999.0
"""|Elo| stored for a check whose games were all won or all lost (a tiny cap)."""


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else math.copysign(ELO_CAP, x)


def play_final_check(store: Store, plan: RunPlan, tuned: np.ndarray, *, generation: int,
                     player: Callable, backend: str, workers: int,
                     progress: Callable | None = None) -> FinalCheck:
    """Play the final check of ``tuned`` (the strategy's recommendation after ``generation``)
    against the plan's start, store it (final-check.json, final-check.pgn) and return it."""
    cfg, space = plan.config, plan.space
    start = space.round(space.reference_array)
    tuned = space.round(np.asarray(tuned, dtype=np.float64))
    t, s = tuple(float(v) for v in tuned), tuple(float(v) for v in start)
    if t == s:
        check = FinalCheck(generation=generation, tuned=t, start=s, games=0, wins=0, draws=0,
                           losses=0, pentanomial=(0, 0, 0, 0, 0), elo=0.0, elo_error=0.0,
                           verdict="same", better=False)
    else:
        settings = match_settings(cfg, limits=plan.limits,
                                  openings=None if plan.final_check_openings is None
                                  else str(plan.final_check_openings))
        fixture = Fixture(key=FINAL_CHECK_KEY, a=player(t, "tuned"), b=player(s, "start"),
                          games=cfg.final_check.games, stop="sprt",
                          sprt=SprtParams(*FINAL_CHECK_ELO, *FINAL_CHECK_ERRORS))
        result = run_fixtures([fixture], settings=settings, seed=cfg.seed, backend=backend,
                              workers=workers, progress=progress)[0]
        verdict = result.sprt.verdict if result.sprt and result.sprt.verdict else "undecided"
        elo = _finite(result.elo)
        check = FinalCheck(generation=generation, tuned=t, start=s, games=result.games,
                           wins=result.wins, draws=result.draws, losses=result.losses,
                           pentanomial=tuple(int(c) for c in result.pentanomial), elo=elo,
                           elo_error=_finite(result.elo_error), verdict=verdict,
                           better=verdict == "H1" or (verdict == "undecided" and elo > 0),
                           openings="startpos" if plan.final_check_openings is None
                           else plan.final_check_openings.name)
        pgn = write_pgn_text(result.records, limits=plan.limits)
        store.write_bytes(FINAL_CHECK_PGN, pgn.encode())
    store.write_document(FINAL_CHECK_DOCUMENT, check.to_json())
    log.info("run %s: %s", store.run_id, check.sentence)
    return check


def current_final_check(store: Store, generation: int, tuned: np.ndarray) -> FinalCheck | None:
    """The stored check when it is of this generation's recommendation (a run resumed after
    its check, with nothing new to check), else None."""
    check = store.read_final_check(len(tuned))
    if check is None or check.generation != generation \
            or check.tuned != tuple(float(v) for v in tuned):
        return None
    return check
