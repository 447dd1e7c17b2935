"""A stored run read into arrays: generations, games axis, means and deviations, statistics.

Everything here reads the run directory only (through :class:`evotune.store.Store`), so it works
on any checkpoint: a finished run, a stopped one or one that crashed mid-generation (the store
only lists generations up to the stored state).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..spec.model import EngineSpec
from ..errors import ConfigError, EvotuneError, StoreError
from ..runs.config import RunConfig
from ..runs.fitconfig import TexelConfig
from ..runs.guard import Guard
from ..runs.lifecycle import RunNetError, run_engine_spec, strategy_params
from ..runs.manifest import StartFrom
from ..runs.records import Generation, State
from ..runs.store import Store
from ..space import SHANNON_NAMES, SHANNON_REFERENCE, WeightSpace
from ..strategies import strategy_class

log = logging.getLogger(__name__)

RECOMMEND_RULES = ("mean", "better-half")
RANKED_BY = {"de": "the points of each individual's selection matches",
             "jde": "the points of each individual's selection matches",
             "ea": "the score in the last tournament",
             "td": "the TD error of each learner"}


@dataclass(frozen=True)
class RunData:
    """The arrays of one stored run, one row per stored generation (gen-0000 first)."""

    run_id: str
    """The run's id (its folder name)."""
    root: Path
    """The run directory."""
    config: RunConfig | TexelConfig
    """The resolved configuration from the manifest: a games run's or a fit's."""
    strategy: str
    """Strategy name (de, jde, ea, td, ...; 'texel' for a fit)."""
    names: tuple[str, ...]
    """Weight names, in engine order."""
    fixed: tuple[bool, ...]
    """Which weights are fixed (never tuned)."""
    reference: np.ndarray
    """Reference value of each weight (NaN when the engine spec is unavailable)."""
    generations: np.ndarray
    """int64 (G,): generation numbers, 0 = the initial population."""
    games: np.ndarray
    """int64 (G,): games played in the whole run up to and including each generation."""
    seconds: np.ndarray
    """float64 (G,): wall time of the whole run up to each generation."""
    mean: np.ndarray
    """float64 (G, n): population mean per generation and weight."""
    std: np.ndarray
    """float64 (G, n): population standard deviation per generation and weight."""
    stats: dict
    """Strategy statistics: name -> float64 (G,) or (G, k) array, NaN where absent (gen 0)."""
    populations: tuple
    """Per generation, the (NP, n) population array."""
    state: State | None
    """The stored state (strategy state included), or None."""
    verify: dict | None
    """The latest verification (verify.json), or None."""
    spec: EngineSpec | None = None
    """The run's engine spec (its kept copy), read once; None when it cannot be read."""
    init_from: StartFrom | None = None
    """Where the run's start came from (``evotune run --init-from`` or SPEC:WEIGHTS), or None."""
    guard: Guard | None = None
    """The final check of a run from given weights (guard.json), or None."""

    @property
    def kind(self) -> str:
        """'games' or 'fit' (the manifest's kind)."""
        return self.config.kind

    @property
    def free(self) -> tuple[int, ...]:
        """Indices of the free (tuned) weights."""
        return tuple(i for i, f in enumerate(self.fixed) if not f)

    @property
    def free_names(self) -> tuple[str, ...]:
        return tuple(self.names[i] for i in self.free)

    @property
    def last(self) -> int:
        """The last stored generation number."""
        return int(self.generations[-1])

    @property
    def finished(self) -> bool:
        return bool(self.state and self.state.finished)

    def x(self, axis: str) -> np.ndarray:
        """The x values of every generation for a plot axis: 'generations' or 'games'."""
        if axis == "generations":
            return self.generations
        if axis == "games":
            return self.games
        raise ConfigError(f"unknown x axis '{axis}'; use 'generations' or 'games'")


def open_store(run: str | Path | Store, *, out_dir: str | Path = "populations") -> Store:
    """A Store for a run id (under ``out_dir``), a run directory path, or a Store."""
    return run if isinstance(run, Store) else Store.open(run, out_dir)


def _engine_space(root: Path, config: RunConfig | TexelConfig, names: tuple[str, ...]
                  ) -> tuple[tuple[bool, ...], np.ndarray, EngineSpec | None]:
    """Fixed flags, reference values and the run's engine spec (with a fallback when the spec
    is unavailable or has other weights)."""
    try:
        spec = run_engine_spec(root, config)
        if spec.names == names:
            return (tuple(w.fixed for w in spec.weights),
                    np.array([w.reference for w in spec.weights], dtype=np.float64), spec)
        log.warning("engine spec %s does not have the run's weights %s", spec.name, names)
    except RunNetError:
        raise  # a net-tuning run without its net is no run to read: one line
    except EvotuneError as exc:
        log.warning("engine spec of the run is unavailable (%s)", exc)
    ref = (np.array(SHANNON_REFERENCE) if names == SHANNON_NAMES
           else np.full(len(names), np.nan))
    return tuple(False for _ in names), ref, None


def run_spec(data: RunData, engine: str | Path | None = None) -> EngineSpec:
    """The engine spec to play or export a loaded run with: ``engine`` when given (a name or a
    path), else the run's own (read once by :func:`load_run`; its error when unavailable)."""
    if engine is None and data.spec is not None:
        return data.spec
    return run_engine_spec(data.root, data.config, engine)


def _stat_series(gens: list[Generation]) -> dict:
    keys: list[str] = []
    for g in gens:
        for k, v in g.stats.items():
            if k == "generation" or k in keys:
                continue
            if isinstance(v, bool):
                continue
            if isinstance(v, (int, float)) or (isinstance(v, list) and v
                                                and all(isinstance(e, (int, float)) for e in v)):
                keys.append(k)
    out = {}
    for k in keys:
        width = max(len(g.stats[k]) if isinstance(g.stats.get(k), list) else 1
                    for g in gens if k in g.stats)
        arr = np.full((len(gens), width), np.nan)
        for row, g in enumerate(gens):
            v = g.stats.get(k)
            if v is None:
                continue
            try:
                v = np.atleast_1d(np.asarray(v, dtype=np.float64))
            except (TypeError, ValueError):
                continue  # a statistic that is not numeric in this generation
            if v.size == width:
                arr[row] = v
        out[k] = arr[:, 0] if width == 1 else arr
    return out


def load_run(run: str | Path | Store, *, out_dir: str | Path = "populations") -> RunData:
    """Read a stored run; StoreError when it is unknown or has no generation yet."""
    store = open_store(run, out_dir=out_dir)
    manifest = store.manifest()
    state = store.current_state()
    gens = store.generations(state)
    if not gens:
        raise StoreError(f"run {store.run_id} has no generation yet; wait until its initial "
                         f"population is stored (evotune status {store.run_id}) or start it "
                         "with 'evotune resume'")
    # the store validated every generation (shapes, names, counts): no defaults needed here
    names = gens[-1].names
    mean = np.array([g.mean for g in gens], dtype=np.float64)
    std = np.array([g.std for g in gens], dtype=np.float64)
    pops = tuple(np.array(g.population, dtype=np.float64) for g in gens)
    generations = np.array([g.generation for g in gens], dtype=np.int64)
    games = np.array([g.games_total for g in gens], dtype=np.int64)
    seconds = np.array([g.seconds_total for g in gens], dtype=np.float64)
    config = manifest.config
    fixed, reference, spec = _engine_space(store.root, config, names)
    return RunData(run_id=store.run_id, root=store.root, config=config,
                   strategy=gens[-1].strategy, names=names, fixed=fixed, reference=reference,
                   generations=generations, games=games, seconds=seconds, mean=mean, std=std,
                   stats=_stat_series(gens), populations=pops, state=state,
                   verify=store.read_verify(), spec=spec, init_from=manifest.init_from,
                   guard=store.read_guard(len(names)) if config.kind == "games" else None)


# ---- recommended weights ------------------------------------------------------------------------

@dataclass(frozen=True)
class Recommendation:
    """The weights a run recommends, and how they were chosen."""

    rule: str
    """'mean' (the population mean) or 'better-half' (the mean of the better half)."""
    weights: tuple[float, ...]
    """Full weight vector in evotune units, rounded and inside the bounds."""
    generation: int
    """The generation they come from."""
    description: str
    """One sentence saying how they were chosen (shown in reports and exports)."""

    def as_dict(self, names) -> dict[str, float]:
        return {n: float(v) for n, v in zip(names, self.weights)}


def _run_space(run: RunData, cfg: RunConfig) -> WeightSpace:
    return run_spec(run).space(init_low=cfg.init_low, init_high=cfg.init_high)


def _restored_strategy(run: RunData, cfg: RunConfig):
    params = strategy_params(cfg)
    cls = strategy_class(cfg.strategy)
    return cls.from_state(_run_space(run, cfg), params=params, seed=cfg.seed,
                          state=run.state.strategy)


def recommend(run: RunData, rule: str = "mean") -> Recommendation:
    """The recommended weights of the last stored generation: never the luckiest single winner.

    'mean': the population mean; 'better-half': the mean of the better half by the strategy's own
    ranking (DE/jDE: points of each individual's last match; EA: tournament score; TD: TD error).
    Both come from the strategy restored from the stored state; when that cannot be restored
    (e.g. the engine spec changed), 'mean' falls back to the stored population's mean.
    """
    if rule not in RECOMMEND_RULES:
        raise ConfigError(f"unknown recommendation rule '{rule}'; use one of "
                          f"{', '.join(RECOMMEND_RULES)}")
    g = run.last
    size = len(run.populations[-1])
    strategy = None
    cfg = run.config
    if isinstance(cfg, TexelConfig):  # a fit: one weight vector per epoch
        space = run_spec(run).space()
        w = space.round(np.clip(run.populations[-1][0], space.lower_array, space.upper_array))
        return Recommendation(rule=rule, weights=tuple(float(v) for v in w), generation=g,
                              description=f"Texel fit after epoch {g}, rounded")
    if run.state is not None and run.state.generation == g:
        try:
            strategy = _restored_strategy(run, cfg)
        except (EvotuneError, KeyError, TypeError, ValueError) as exc:
            log.warning("run %s: cannot restore the strategy (%s)", run.run_id, exc)
    if strategy is not None:
        w = strategy.recommended(rule)
        if getattr(strategy, "RECOMMENDS", ""):  # one vector, whatever the rule (spsa, cmaes, ng)
            what = f"{strategy.RECOMMENDS} after generation {g}"
        elif rule == "mean":
            what = f"population mean of generation {g} ({size} individuals)"
        else:
            what = (f"mean of the better half ({max(1, size // 2)} of {size}) of generation {g}, "
                    f"ranked by {RANKED_BY.get(run.strategy, 'the strategy ranking')}")
    elif rule == "mean":
        mean = run.populations[-1].mean(axis=0)
        try:
            space = _run_space(run, cfg)
            w = space.round(np.clip(mean, space.lower_array, space.upper_array))
        except EvotuneError:
            w = np.rint(mean)
        what = f"population mean of generation {g} ({size} individuals, from the stored population)"
    else:
        raise StoreError(f"run {run.run_id}: the better half needs the strategy state of "
                         f"generation {g}, which cannot be restored; use --recommend mean")
    weights = tuple(float(v) for v in w)
    if not all(math.isfinite(v) for v in weights):
        raise StoreError(f"run {run.run_id}: recommended weights are not finite ({weights})")
    guard = run.guard
    if guard is not None and guard.generation == g and guard.tuned == weights \
            and not guard.better:  # the final check found them not better than the start
        return Recommendation(rule=rule, weights=guard.start, generation=g,
                              description=guard.sentence)
    return Recommendation(rule=rule, weights=weights, generation=g, description=what + ", rounded")


def initial_mean(run: RunData) -> tuple[float, ...]:
    """The initial population's mean (gen-0000), rounded to whole units."""
    return tuple(float(v) for v in np.rint(run.mean[0]))
