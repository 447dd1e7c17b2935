"""A stored run read into arrays: generations, games axis, means and deviations, statistics; and
the weights it recommends (:func:`recommend`, as its kind chooses them).

Everything here reads the run directory only (through :class:`evotune.runs.store.Store`), so it works
on any checkpoint: a finished run, a stopped one or one that crashed mid-generation (the store
only lists generations up to the stored state).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError, EvotuneError, StoreError
from ..runs.finalcheck import FinalCheck
from ..runs.manifest import StartFrom
from ..runs.records import Generation, State
from ..runs.store import Store
from ..space import SHANNON_NAMES, SHANNON_REFERENCE
from ..spec.model import EngineSpec
from .registry import WeightsConfig, stored_kind
from .runspec import RunNetError, run_engine_spec

log = logging.getLogger(__name__)

RECOMMEND_RULES = ("mean", "better-half", "rated")


@dataclass(frozen=True)
class RunData:
    """The arrays of one stored run, one row per stored generation (gen-0000 first)."""

    run_id: str
    """The run's id (its folder name)."""
    root: Path
    """The run directory."""
    config: WeightsConfig
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
    final_check: FinalCheck | None = None
    """The final check of a run from given weights (final-check.json), or None."""

    @property
    def kind(self) -> str:
        """The manifest's kind ('games', 'fit' or a registered kind's)."""
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


def engine_space(root: Path, config: WeightsConfig, names: tuple[str, ...]
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
    stored = stored_kind(config.kind)
    if stored is not None and not stored.weights:  # (a training stores epochs, not generations)
        raise StoreError(f"run {store.run_id} is a {config.kind} run: it has no population to "
                         "read")
    fixed, reference, spec = engine_space(store.root, config, names)
    return RunData(run_id=store.run_id, root=store.root, config=config,
                   strategy=gens[-1].strategy, names=names, fixed=fixed, reference=reference,
                   generations=generations, games=games, seconds=seconds, mean=mean, std=std,
                   stats=_stat_series(gens), populations=pops, state=state,
                   verify=store.read_verify(), spec=spec, init_from=manifest.init_from,
                   final_check=store.read_final_check(len(names)) if _takes_start(config.kind)
                   else None)


def _takes_start(kind: str) -> bool:
    """Whether runs of ``kind`` start from given weights, and so end with a final check."""
    stored = stored_kind(kind)
    return stored is not None and stored.takes_start


# ---- recommended weights ------------------------------------------------------------------------

@dataclass(frozen=True)
class Recommendation:
    """The weights a run recommends, and how they were chosen."""

    rule: str
    """'mean' (the population mean), 'better-half' (the mean of the better half) or 'rated'
    (the individual the rating model rates highest; selection=model)."""
    weights: tuple[float, ...]
    """Full weight vector in evotune units, rounded and inside the bounds."""
    generation: int
    """The generation they come from."""
    description: str
    """One sentence saying how they were chosen (shown in reports and exports)."""

    def as_dict(self, names) -> dict[str, float]:
        return {n: float(v) for n, v in zip(names, self.weights)}


def initial_mean(run: RunData) -> tuple[float, ...]:
    """The initial population's mean (gen-0000), rounded to whole units."""
    return tuple(float(v) for v in np.rint(run.mean[0]))
