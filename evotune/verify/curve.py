"""The checkpoints of a run played against its reference: the games behind the strategy
comparison's curves (:mod:`evotune.reporting.compare` reads them).

:func:`verify_checkpoints` takes a stored run and, for every G games (0, G, 2G, ... up to the
run's games), the recommended weights of the first generation that had spent that many games
(``recommended`` in the generation file; the population mean for runs stored before it was
kept), and plays them against the reference weights on the held-out openings, the same games
and seed as ``evotune verify``. These verification games are not part of the tuning budget and
are counted apart. The matches are stored in the run (``verify-curve.json``) and reused.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np

from ..errors import ConfigError
from ..limits import Limits, resolve_workers
from ..match import MatchSettings, play_match
from ..match.cluster import backend_session
from ..players.spec import player_from_engine_spec
from ..runs.rundata import load_run, run_spec
from ..runs.store import Store
from .run import held_out_openings, kept_games


def checkpoint_weights(store: Store, every: int, *, first: int = 0) -> list[dict]:
    """Per checkpoint c = first, first + G, ... (0, G, 2G, ... by default): the first generation
    with games_total >= c and its recommended weights (rounded)."""
    gens = store.generations()
    out = []
    c = first
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
                       backend: str = "local", scheduler: str = "", first: int = 0,
                       progress: Callable | None = None) -> dict:
    """Play every checkpoint's weights against the reference (stored in verify-curve.json);
    ``first``: the first checkpoint's games (0: the start itself, a match of the start against
    itself); ``progress``: called after each game, as :func:`~evotune.match.play_match` calls
    it."""
    if every < 1:
        raise ConfigError(f"--verify-every must be at least 1 game, got {every}")
    if first < 0:
        raise ConfigError(f"the first checkpoint must be at 0 games or later, got {first}")
    data = load_run(store)
    cfg = data.config
    spec = run_spec(data)
    openings, _ = held_out_openings(str(cfg.play.openings))
    depth, seed = cfg.play.limits.depth, int(cfg.seed)
    settings = MatchSettings(limits=Limits(depth=depth, nodes=cfg.play.limits.nodes,
                                           max_plies=cfg.play.limits.max_plies),
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
    todo = [c for c in checkpoint_weights(store, every, first=first)
            if tuple(c["weights"]) not in cache]
    if todo:
        with backend_session(backend, scheduler, workers=resolve_workers(workers)) as session:
            for c in todo:
                player = player_from_engine_spec(spec, c["weights"],
                                                 name=f"{data.run_id}-at-{c['checkpoint']}")
                with kept_games(store, player, reference, games=games, settings=settings,
                                seed=seed) as journal:
                    result = play_match(player, reference, games=games, settings=settings,
                                        seed=seed, workers=session.workers,
                                        backend=session.backend, progress=progress,
                                        journal=journal)
                cache[tuple(c["weights"])] = result.to_dict()
    for c in checkpoint_weights(store, every, first=first):
        points.append({**c, "match": cache[tuple(c["weights"])]})
    doc = {"run_id": data.run_id, "every": every, "games_per_match": games, "depth": depth,
           "openings": openings.name, "seed": seed, "points": points,
           "verification_games": sum(p["match"]["games"] for p in points),
           "seconds": time.perf_counter() - t0}
    store.write_document("verify-curve", doc)
    return doc
