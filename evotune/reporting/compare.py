"""The strategy comparison's curves: Elo against the reference as the games are spent.

:func:`verify_checkpoints` takes a stored run and, for every G games (0, G, 2G, ... up to the
run's games), the recommended weights of the first generation that had spent that many games
(``recommended`` in the generation file; the population mean for runs stored before it was
kept), and plays them against the reference weights on the held-out openings, the same games
and seed as ``evotune verify``. These verification games are not part of the tuning budget and
are counted apart. The matches are stored in the run (``verify-curve.json``) and reused.

:func:`curve_summary` aggregates the runs of one strategy over seeds: the mean Elo per checkpoint
with a 95% band (Student's t over seeds); :func:`write_compare_plot` draws one line per strategy;
:func:`games_within` finds the games needed to first come within 20 Elo of the reference.
"""
from __future__ import annotations

import json
import logging
import math
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from ..limits import Limits
from ..match import MatchSettings, play_match
from ..match.cluster import backend_session
from ..players.spec import player_from_engine_spec
from ..runs.lifecycle import resolve_workers
from ..runs.rundata import load_run, run_spec
from ..runs.store import Store
from ..verify.run import held_out_openings

log = logging.getLogger(__name__)

WITHIN_ELO = 20.0
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228}
"""Student's t quantile (0.975) by degrees of freedom; 1.96 beyond."""


def checkpoint_weights(store: Store, every: int) -> list[dict]:
    """Per checkpoint c = 0, G, 2G, ...: the first generation with games_total >= c and its
    recommended weights (rounded)."""
    gens = store.generations()
    out = []
    c = 0
    while True:
        g = next((g for g in gens if g.games_total >= c), None)
        if g is None:
            break
        out.append({"checkpoint": c, "generation": g.generation, "games": g.games_total,
                    "weights": [float(v) for v in recommended_at(store, g)]})
        c += every
    if not out:
        raise ConfigError(f"run {store.run_id} has no generation to verify")
    return out


def recommended_at(store: Store, gen) -> list[float]:
    """The recommended weights stored with a generation (its stats), else the population mean."""
    w = gen.stats.get("recommended")
    if w is None:  # stored by the first version of this module, beside the stats
        try:
            w = json.loads(store.generation_path(gen.generation).read_text()).get("recommended")
        except (OSError, ValueError):
            w = None
    if w is None:
        w = np.rint(np.asarray(gen.population, dtype=np.float64).mean(axis=0)).tolist()
    return [float(v) for v in w]


def verify_checkpoints(store: Store, *, every: int, games: int, workers: int = 0,
                       backend: str = "local", scheduler: str = "",
                       progress: Callable | None = None) -> dict:
    """Play every checkpoint's weights against the reference (stored in verify-curve.json);
    ``progress``: called after each game, as :func:`~evotune.match.play_match` calls it."""
    if every < 1:
        raise ConfigError(f"--verify-every must be at least 1 game, got {every}")
    data = load_run(store)
    cfg = data.config
    spec = run_spec(data)
    openings, _ = held_out_openings(str(cfg.openings))
    depth, seed = cfg.limits.depth, int(cfg.seed)
    settings = MatchSettings(limits=Limits(depth=depth, nodes=cfg.limits.nodes,
                                           max_plies=cfg.limits.max_plies),
                             openings=str(openings))
    old = store.read_document("verify-curve") or {}
    same = (old.get("games_per_match") == games and old.get("depth") == depth
            and old.get("openings") == openings.name and old.get("seed") == seed)
    cache = {(tuple(p["weights"])): p["match"] for p in old.get("points", [])} if same else {}
    final = store.read_document("verify") or {}
    if (final.get("games") == games and final.get("depth") == depth and final.get("seed") == seed
            and final.get("openings") == openings.name and not final.get("sprt")):
        for m in final.get("matches", []):  # the same match as the last checkpoint's: reuse it
            if m.get("opponent") == "reference":
                cache.setdefault(tuple(float(v) for v in m["a"]),
                                 {k: v for k, v in m.items()
                                  if k not in ("label", "opponent", "a", "b")})
    reference = player_from_engine_spec(spec, tuple(float(v) for v in data.reference),
                                        name="reference")
    points = []
    t0 = time.perf_counter()
    todo = [c for c in checkpoint_weights(store, every) if tuple(c["weights"]) not in cache]
    if todo:
        with backend_session(backend, scheduler, workers=resolve_workers(workers)) as session:
            for c in todo:
                player = player_from_engine_spec(spec, c["weights"],
                                                 name=f"{data.run_id}-at-{c['checkpoint']}")
                result = play_match(player, reference, games=games, settings=settings,
                                    seed=seed, workers=session.workers, backend=session.backend,
                                    progress=progress)
                cache[tuple(c["weights"])] = result.to_dict()
    for c in checkpoint_weights(store, every):
        points.append({**c, "match": cache[tuple(c["weights"])]})
    doc = {"run_id": data.run_id, "every": every, "games_per_match": games, "depth": depth,
           "openings": openings.name, "seed": seed, "points": points,
           "verification_games": sum(p["match"]["games"] for p in points),
           "seconds": time.perf_counter() - t0}
    store.write_document("verify-curve", doc)
    return doc


def match_elo(m: dict) -> float:
    """The match's Elo; a score of 0 or 1 is taken as half a game from it (finite)."""
    if m.get("elo") is not None:
        return float(m["elo"])
    n = max(int(m.get("games", 1)), 1)
    s = min(max(float(m.get("score", 0.5)), 0.5 / n), 1.0 - 0.5 / n)
    return -400.0 * math.log10(1.0 / s - 1.0)


def games_within(curve: dict, elo: float = WITHIN_ELO) -> int | None:
    """Tuning games at the first checkpoint whose Elo against the reference is >= -elo."""
    for p in curve.get("points", []):
        if match_elo(p["match"]) >= -elo:
            return int(p["checkpoint"])
    return None


def mean_band(values: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of its 95% interval over seeds; 0 for one seed)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()) if v.size else math.nan, 0.0
    t = T95.get(v.size - 1, 1.96)
    return float(v.mean()), float(t * v.std(ddof=1) / math.sqrt(v.size))


@dataclass(frozen=True)
class Curve:
    """One strategy's Elo against the reference per checkpoint, over seeds."""

    strategy: str
    """Strategy name."""
    games: np.ndarray
    """Checkpoints (tuning games spent)."""
    mean: np.ndarray
    """Mean Elo over seeds at each checkpoint."""
    band: np.ndarray
    """Half-width of the 95% interval over seeds."""
    seeds: int
    """Number of runs (seeds)."""


def curve_summary(strategy: str, curves: Sequence[dict]) -> Curve:
    """Aggregate the verify-curve documents of one strategy's runs (checkpoints all share)."""
    common = sorted(set.intersection(*(set(p["checkpoint"] for p in c["points"])
                                       for c in curves)))
    mean, band = [], []
    for x in common:
        m, b = mean_band([match_elo(p["match"]) for c in curves for p in c["points"]
                          if p["checkpoint"] == x])
        mean.append(m)
        band.append(b)
    return Curve(strategy, np.array(common), np.array(mean), np.array(band), len(curves))


def write_compare_plot(curves: Sequence[Curve], out_dir: str | Path, *,
                       title: str = "") -> tuple[Path, Path]:
    """elo-vs-games.png and .svg: one line per strategy with its 95% band over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot(1, 1, 1)
    for c in curves:
        line, = ax.plot(c.games, c.mean, marker="o", ms=3, label=f"{c.strategy} ({c.seeds} "
                        f"seed{'s' if c.seeds != 1 else ''})")
        ax.fill_between(c.games, c.mean - c.band, c.mean + c.band, color=line.get_color(),
                        alpha=0.2)
    if curves:  # the lines stay readable: wide bands of few seeds are cut at the frame
        lo = min(float(np.min(c.mean)) for c in curves)
        hi = max(float(np.max(c.mean)) for c in curves)
        ax.set_ylim(lo - 300.0, max(hi, 0.0) + 300.0)
    ax.axhline(0.0, color="black", lw=0.8, ls="--")
    ax.axhline(-WITHIN_ELO, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("tuning games spent")
    ax.set_ylabel("Elo vs reference (held-out openings)")
    # a long title (engine name, init) wraps instead of running off the figure's edge
    ax.set_title("\n".join(textwrap.wrap(title or "Elo vs games: mean over seeds, 95% band",
                                          72)))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    png, svg = out / "elo-vs-games.png", out / "elo-vs-games.svg"
    fig.savefig(png, dpi=110)
    fig.savefig(svg)
    return png, svg
