"""Verification of a run: its recommended weights against the reference weights and against the
initial population's mean, on held-out openings the run did not tune on.

Two matches (both from the recommended weights' point of view, the same openings and seed, so
they are paired): ``recommended vs reference`` and ``recommended vs initial mean`` (gen-0000's
mean, rounded); or one match per opponent named ``SPEC[:WEIGHTS]`` (``--opponent``, e.g.
``shannon`` or ``pst:tuned.json``; see :mod:`evotune.match.resolve`). With a second limit
(``--also-depth`` / ``--also-tc``) every match is played again under it, on the same openings
with the same seed, and both verdicts are reported (a gain at depth 3 that holds at depth 5).
Openings: the packaged
8moves_v3 suite (``HELD_OUT_OPENINGS``); when the run
itself tuned on that file, the 2moves_v1 suite is used instead and the result says so. Each match
reports W/D/L, pentanomial pair counts, score, Elo with its 95% error and LOS, and optionally an
SPRT. The result is stored in the run as ``verify.json`` (through :meth:`Store.write_document`,
the only writer under populations/) and shown in the report.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import ConfigError, FieldError, StoreError
from ..limits import Limits, parse_tc
from ..match import play_match
from ..match.cluster import backend_session
from ..match.fixtures import check_games
from ..match.resolve import (check_player_starts, close_external_players, resolve_player,
                             unique_names)
from ..match.scoring import SprtParams, elo_text
from ..paths import DEFAULT_OPENINGS, HELD_OUT_OPENINGS, resolve_openings_path
from ..players.spec import player_from_engine_spec
from ..runs.lifecycle import resolve_workers
from ..runs.store import Store
from ..tuning.fitness import match_settings as run_match_settings
from .data import RunData, initial_mean, load_run, open_store, recommend, run_spec

log = logging.getLogger(__name__)

DEFAULT_VERIFY_GAMES = 200


@dataclass(frozen=True)
class VerifySettings:
    """How to verify a run (None: take the run's own value); validated when made."""

    games: int = DEFAULT_VERIFY_GAMES
    """Games per match (even: each opening twice, colours swapped)."""
    depth: int | None = None
    """Search depth per move instead of the run's (None: the run's limits keep theirs)."""
    workers: int = 0
    """Worker processes (0 = one per core); results do not depend on it."""
    seed: int | None = None
    """Seed of the opening draws and games (None: the run's seed)."""
    sprt: tuple[float, float] | None = None
    """(elo0, elo1) to run an SPRT that may stop each match early; None: play all games."""
    rule: str = "mean"
    """Recommendation rule: 'mean' or 'better-half'."""
    backend: str = "local"
    """Where the games run: 'local' processes or a 'dask' cluster (results do not depend on it)."""
    scheduler: str = ""
    """Dask scheduler address, tcp://HOST:PORT (backend 'dask')."""
    opponents: tuple[str, ...] = ()
    """Opponents as ``SPEC[:WEIGHTS]`` (:func:`evotune.match.resolve.resolve_player`); empty:
    the run's reference weights and its initial mean."""
    tc: str | None = None
    """Time control 'BASE+INC' for external engines instead of the run's (None: the run's;
    '' = none)."""
    engine: str | None = None
    """Engine spec (name or path) to play instead of the copy the run keeps (None: the run's)."""
    movetime: float | None = None
    """Seconds per move for external engines instead of the run's limit (None: the run's)."""
    also_depth: int | None = None
    """A second limit: every match again at this depth (None: no second limit by depth)."""
    also_tc: str | None = None
    """A second limit: every match again under this time control 'BASE+INC' (external engines
    and built-in uct/probability specs; None: no second limit by time)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "games", check_games(self.games))
        if self.scheduler and self.backend != "dask":
            raise ConfigError(f"--scheduler {self.scheduler}: a scheduler is for --backend dask "
                              f"(games run on '{self.backend}' here)")
        self.limits(Limits())  # depth and tc are valid limits
        if self.also_depth is not None:
            try:
                Limits(depth=self.also_depth)
            except FieldError as exc:
                raise FieldError("also_depth", exc.problem) from None
        if self.also_tc is not None:
            try:
                ok = parse_tc(self.also_tc) is not None
            except ConfigError:
                ok = False
            if not ok:
                raise FieldError("also_tc", f"{self.also_tc!r}: give BASE+INC in seconds, e.g. "
                                            "10+0.1")
        if self.sprt is not None:
            object.__setattr__(self, "sprt", tuple(self.sprt))
            SprtParams(*self.sprt)

    def limits(self, run: Limits) -> Limits:
        """The verification games' limits: the run's ``run`` limits with this depth, time per
        move and time control (a time control given here replaces the run's time per move, a
        time per move the run's time control)."""
        changes: dict = {}
        if self.depth is not None:
            changes["depth"] = self.depth
        if self.movetime is not None:
            changes.update(movetime=self.movetime, tc=None if self.movetime else run.tc)
        if self.tc is not None:
            changes.update(tc=parse_tc(self.tc), movetime=0.0 if self.tc else run.movetime)
        return dataclasses.replace(run, **changes)

    def second_limits(self, run: Limits) -> Limits | None:
        """The second limit's: :meth:`limits` with ``also_depth`` and ``also_tc`` (None when
        neither is given). ConfigError when it equals the first."""
        if self.also_depth is None and self.also_tc is None:
            return None
        first = self.limits(run)
        changes: dict = {}
        if self.also_depth is not None:
            changes["depth"] = self.also_depth
        if self.also_tc is not None:
            changes.update(tc=parse_tc(self.also_tc), movetime=0.0)
        second = dataclasses.replace(first, **changes)
        if second == first:
            raise ConfigError(f"the second limit ({limit_text(second)}) is the first one; give "
                              "--also-depth or --also-tc another value")
        return second


def limit_text(limits: Limits) -> str:
    """A verification's limit in words: 'depth 3', 'depth 3, 10+0.1 clock', ..."""
    parts = [f"depth {limits.depth}"]
    if limits.nodes:
        parts.append(f"{limits.nodes} nodes")
    if limits.movetime:
        parts.append(f"{limits.movetime:g} s per move")
    if limits.tc is not None:
        parts.append(f"{limits.tc} clock")
    return ", ".join(parts)


def held_out_openings(run_openings: str) -> tuple[Path, str]:
    """(openings file, note): 8moves_v3, or 2moves_v1 when the run tuned on 8moves_v3."""
    try:
        used = resolve_openings_path(run_openings)
    except ConfigError:
        used = None  # the run's openings file is gone; it cannot be the packaged one
    if used is not None and Path(used).resolve() == HELD_OUT_OPENINGS.resolve():
        note = (f"the run tuned on {HELD_OUT_OPENINGS.name}, so verification uses "
                f"{DEFAULT_OPENINGS.name} instead")
        return DEFAULT_OPENINGS, note
    return HELD_OUT_OPENINGS, ""


def _fmt_elo(m: dict) -> str:
    if m.get("elo") is None:  # +-inf is stored as null
        s = m.get("score", 0.5)
        elo = math.inf if s >= 1 else -math.inf if s <= 0 else None
        return elo_text(elo, None, m.get("pentanomial", ()))
    return elo_text(m.get("elo"), m.get("elo_error"), m.get("pentanomial", ()))


def describe_match(m: dict) -> str:
    """One line for a stored verification match (a MatchResult.to_dict() plus 'label')."""
    line = (f"{m.get('label', 'match')}: {m['games']} games, +{m['wins']} ={m['draws']} "
            f"-{m['losses']}, score {m['score']:.3f}, {_fmt_elo(m)}, pentanomial "
            f"{list(m.get('pentanomial', []))}, LOS {100 * m.get('los', 0.5):.1f}%")
    sp = m.get("sprt")
    if sp:
        verdict = sp.get("verdict") or "no verdict"
        line += (f", SPRT [{sp['elo0']:g}, {sp['elo1']:g}]: {verdict} (LLR {sp['llr']:.2f}, "
                 f"bounds {sp['lower']:.2f}..{sp['upper']:.2f})")
    return line


def verdict_text(m: dict) -> str:
    """A stored match's SPRT verdict in words: 'H1 accepted (better)', 'H0 accepted', or 'no
    verdict after N games'."""
    sp = m.get("sprt") or {}
    if sp.get("verdict") == "H1":
        return f"H1 accepted (elo >= {sp['elo1']:g}) after {m['games']} games"
    if sp.get("verdict") == "H0":
        return f"H0 accepted (elo <= {sp['elo0']:g}) after {m['games']} games"
    return f"no verdict after {m['games']} games (LLR {sp.get('llr', 0.0):.2f})"


def _opponents(data: RunData, spec, named: tuple[str, ...]) -> list[tuple[str, object]]:
    """(label, PlayerSpec) of each opponent: the players named ``SPEC[:WEIGHTS]``, or the run's
    reference weights and initial mean (ConfigError before any game when one is unknown)."""
    if named:
        players = unique_names(resolve_player(arg) for arg in named)
        return [(p.name, p) for p in players]
    out = []
    for label, weights in (("reference", tuple(float(v) for v in data.reference)),
                           ("initial mean", initial_mean(data))):
        if not all(math.isfinite(v) for v in weights):
            raise ConfigError(f"run {data.run_id}: the {label} weights are unknown (engine spec "
                              f"'{data.config.engine}' is unavailable); restore it to "
                              "verify")
        out.append((label, player_from_engine_spec(spec, weights, name=label.replace(" ", "-"))))
    return out


def verify_run(run: str | Path | Store, *, settings: VerifySettings = VerifySettings(),
               runs_dir: str | Path = "populations",
               progress: Callable | None = None) -> dict:
    """Play the two verification matches, store them as verify.json and return that document."""
    store = open_store(run, out_dir=runs_dir)
    data: RunData = load_run(store)
    cfg = data.config
    rec = recommend(data, settings.rule)
    spec = run_spec(data, settings.engine)
    if spec.names != data.names:
        raise ConfigError(f"engine spec {spec.path} has other weights than run {data.run_id} "
                          f"({len(spec.names)} vs {len(data.names)}, or other names); give a "
                          "spec of the run's engine")
    openings, note = held_out_openings(cfg.openings)
    if note:
        log.warning(note)
    seed = int(settings.seed if settings.seed is not None else cfg.seed)
    # the run's limits, time control and adjudication; held-out openings, maybe another depth
    limits = settings.limits(cfg.limits)
    second = settings.second_limits(cfg.limits)
    legs = [limits] if second is None else [limits, second]
    sprt = SprtParams(*settings.sprt) if settings.sprt is not None else None
    player = player_from_engine_spec(spec, rec.weights, name=f"{data.run_id}-recommended")
    opponents = _opponents(data, spec, settings.opponents)
    for p in (player, *(o for _, o in opponents)):
        check_player_starts(p)  # an engine that cannot start is refused before any game
    close_external_players()
    matches = []
    t0 = time.perf_counter()
    with backend_session(settings.backend, settings.scheduler,
                         workers=resolve_workers(settings.workers)) as session:
        for leg in legs:
            match_settings = run_match_settings(cfg, limits=leg, openings=str(openings))
            # with one limit the documents are as before a second limit existed
            at = {"limit": limit_text(leg)} if second is not None else {}
            for label, opponent in opponents:
                result = play_match(player, opponent, games=settings.games,
                                    settings=match_settings, seed=seed, workers=session.workers,
                                    backend=session.backend,
                                    stop="sprt" if sprt is not None else "none", sprt=sprt,
                                    progress=progress)
                matches.append({"label": f"recommended vs {label}"
                                         + (f" at {at['limit']}" if at else ""),
                                "opponent": label, **at, "a": list(rec.weights),
                                "b": list(opponent.weights), **result.to_dict()})
                log.info("%s", describe_match(matches[-1]))
    doc = {"run_id": data.run_id, "generation": rec.generation, "recommend": rec.rule,
           "description": rec.description, "names": list(data.names),
           "weights": list(rec.weights), "openings": openings.name, "note": note,
           "depth": limits.depth, "nodes": limits.nodes, "games": settings.games,
           "movetime": limits.movetime,
           "tc": (cfg.tc if settings.tc is None else settings.tc) or "", "engine": spec.name,
           **({} if second is None else {
               "limits": [limit_text(leg) for leg in legs],
               "also": {"depth": second.depth, "nodes": second.nodes,
                        "movetime": second.movetime, "tc": str(second.tc or "")}}),
           "seed": seed, "sprt": list(settings.sprt) if settings.sprt else None,
           "seconds": time.perf_counter() - t0, "matches": matches,
           "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    try:
        store.write_document("verify", doc)
    except OSError as exc:
        raise StoreError(f"cannot write {store.root / 'verify.json'} ({exc.strerror}); check "
                           "that the run directory is writable") from None
    return doc
