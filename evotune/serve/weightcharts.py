"""A run's weights as the tune page draws them: per generation (thinned evenly to
:data:`MAX_POINTS`) the mean of each weight (SPSA's theta, CMA-ES's mean, a fit's weights), a
population's deviation, the strategy's statistics, the W/D/L of its requests and (from the
game log) their pentanomial, and its piece-square tables.

The first look (:func:`first_look`) sends every weight's start and now and the trajectories of
only the weights charted first (a run of many weights: the :data:`CHARTED` that moved most
since the start); a weight ticked later is fetched on its own (:func:`columns`), so the page of
an 824-weight run sends kilobytes, not the whole matrix, before it draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..reporting.tables import MANY_WEIGHTS, pst_layout
from ..runs.rundata import engine_space
from ..runs.store import Store
from ..strategies import strategy_terms
from .journals import LogCache, by_generation
from .series import GenerationCache

MAX_POINTS = 400
"""At most this many generations in a page's series (the first and the last always)."""
CHARTED = 8
"""A run of more than MANY_WEIGHTS weights charts this many at first (the ones that moved most)."""


@dataclass(frozen=True)
class WeightSeries:
    """A run's series: the page's fields and the matrices its trajectories come from."""

    page: dict
    """JSON-ready: names, bounds, generations, games, statistics, W/D/L, tables."""
    mean: np.ndarray
    """(generations, weights): each generation's mean, rounded to 0.01."""
    std: np.ndarray | None
    """(generations, weights): a population's deviation (None: no population)."""


def space_of(store: Store, names: tuple[str, ...]):
    """(fixed, reference, spec) of the run's weights (its kept engine spec)."""
    return engine_space(store.root, store.manifest().config, names)


def _num(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def weights_series(store: Store, cache: GenerationCache, logs: LogCache) -> WeightSeries | None:
    """The series of a run that tunes a weight vector (None before its first generation)."""
    gens = cache.generations(store)
    if not gens:
        return None
    if len(gens) > MAX_POINTS:  # a chart is a few hundred pixels wide: thinned evenly
        keep = np.unique(np.linspace(0, len(gens) - 1, MAX_POINTS).round().astype(int))
        gens = [gens[i] for i in keep]
    names = gens[-1].names
    fixed, reference, spec = space_of(store, names)
    strategy = gens[-1].strategy
    terms = strategy_terms(strategy)
    population = store.manifest().config.keeps_population
    keys: list[str] = []
    for g in gens:
        keys += [k for k in g.stats if k not in keys]
    page = {"names": list(names), "fixed": list(fixed),
            "reference": [_num(float(v)) for v in reference],
            "lower": [float(w.lower) for w in spec.weights] if spec is not None else None,
            "upper": [float(w.upper) for w in spec.weights] if spec is not None else None,
            "generations": [g.generation for g in gens],
            "games": [g.games_total for g in gens],
            "seconds": [round(g.seconds_total, 2) for g in gens],
            "population": population,
            "stats": {k: [_num(g.stats.get(k, math.nan)) for g in gens] for k in keys},
            "wdl": [list(g.wdl) for g in gens], "strategy": strategy,
            "terms": {k: terms[k] for k in ("title", "centre", "step")},
            "pentanomial": _pentanomial(store, logs, [g.generation for g in gens]),
            "pst": pst_tables(names)}
    mean = np.round(np.array([g.mean for g in gens], dtype=np.float64), 2)
    std = np.round(np.array([g.std for g in gens], dtype=np.float64), 2) if population else None
    return WeightSeries(page=page, mean=mean, std=std)


def moved_order(ws: WeightSeries) -> list[int]:
    """The free weights, the one that moved most since the start first (ties: name order)."""
    change = np.abs(ws.mean[-1] - ws.mean[0])
    free = [i for i, f in enumerate(ws.page["fixed"]) if not f]
    return sorted(free, key=lambda i: (-change[i], i))


def first_look(ws: WeightSeries) -> dict:
    """The page's fields, every weight's start and now (and deviation now), the order of the
    weights by how far they moved, and the trajectories of those charted first: all of a run
    of at most MANY_WEIGHTS weights, else the CHARTED that moved most."""
    order = moved_order(ws)
    shown = list(range(len(ws.page["names"]))) if len(ws.page["names"]) <= MANY_WEIGHTS \
        else order[:CHARTED]
    return {**ws.page, "start": ws.mean[0].tolist(), "now": ws.mean[-1].tolist(),
            "std_now": None if ws.std is None else ws.std[-1].tolist(), "order": order,
            **columns(ws, shown)}


def columns(ws: WeightSeries, index: list[int]) -> dict:
    """The trajectories of the weights ``index`` (mean and, with a population, deviation), by
    weight index (as text: JSON keys)."""
    n = ws.mean.shape[1]
    index = [i for i in index if 0 <= i < n]
    return {"columns": {str(i): ws.mean[:, i].tolist() for i in index},
            "std_columns": None if ws.std is None else {str(i): ws.std[:, i].tolist()
                                                        for i in index}}


def pst_tables(names: tuple[str, ...]) -> list[dict] | None:
    """The run's piece-square tables (:func:`evotune.reporting.tables.pst_layout`, names read by
    the feature-name contract): phase, piece and per square (a1, b1, ..., h8) the index of its
    weight (-1: none); None for a run without tables."""
    layout = pst_layout(names)
    return [{"phase": ph, "piece": pc, "index": idx.tolist()}
            for (ph, pc), idx in layout.items()] or None


def _pentanomial(store: Store, logs: LogCache, generations: list[int]) -> list | None:
    """Each generation's pentanomial (its requests' complete pairs, A's side) from the game
    log (None: the run keeps no game: a gauntlet's requests, a synthetic run)."""
    log = logs.read(store.games_path)
    if not log.games:
        return None
    per = by_generation(log.games)
    return [per[g]["pentanomial"] if g in per else None for g in generations]
