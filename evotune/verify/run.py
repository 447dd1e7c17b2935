"""Verification of a run: its recommended weights against the reference weights and against the
initial population's mean, on held-out openings the run did not tune on; of a net training: its
trained net against shannon (the built-in engine's default spec) and against its initial net.

Two matches (both from the verified player's point of view, the same openings and seed, so
they are paired): ``recommended vs reference`` (``vs start`` for a run from given weights, whose
spec's reference values are its start) and ``recommended vs initial mean`` (gen-0000's
mean, rounded); for a training ``net vs shannon`` (shannon's reference weights: a training
names no engine spec) and ``net vs initial net`` (its initial.nnue); or one match per opponent
named ``SPEC[:WEIGHTS]`` (``--opponents``, e.g. ``shannon`` or ``pst:tuned.json``; see
:mod:`evotune.match.resolve`). With a second limit (``--also-depth`` / ``--also-tc``) every
match, of a tuning run or a training, is played again under it, on the same openings with the
same seed, and both verdicts are reported (a gain at depth 3 that holds at depth 5). Openings:
the packaged 8moves_v3 suite (``HELD_OUT_OPENINGS``); when the run itself tuned on that file,
the 2moves_v1 suite is used instead and the result says so (``--openings`` names others). Each
match
reports W/D/L, pentanomial pair counts, score, Elo with its 95% error and LOS, and optionally an
SPRT. The result is stored in the run as ``verify.json`` (through :meth:`Store.write_document`,
the only writer under populations/) and shown in the report. A training's verified net is first
copied to ``verify.nnue`` beside it, so that a training going on meanwhile does not change the
net under the games, and the record names it by checksum.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..engine.evaluation import spec_evaluation
from ..errors import ConfigError, EvotuneError, FieldError, StoreError
from ..learn.nn.initnet import INITIAL_FILE, NET_FILE, InitialNet
from ..limits import LimitChanges, Limits, parse_tc, resolve_workers, tc_text
from ..match import MatchSettings, play_match
from ..match.cluster import backend_session
from ..match.fixtures import check_games
from ..match.journal import match_identity
from ..match.openings import check_openings
from ..match.resolve import (
    check_player_starts,
    close_external_players,
    resolve_player,
)
from ..match.resultsblock import conditions
from ..match.scoring import SprtParams, sprt_settings
from ..paths import HELD_OUT_OPENINGS, held_out_openings, resolve_openings_path
from ..players import PlayerSpec
from ..players.spec import player_from_engine_spec
from ..runs.registry import stored_kind
from ..runs.rundata import RunData, load_run, open_store, run_spec
from ..runs.runkind import kind_of, recommend
from ..runs.store import Store
from ..spec.file import load_engine_spec
from ..tuning.fitness import match_settings as run_match_settings
from .opponents import check_clock_given, check_clock_matters, named_opponents, run_opponents
from .text import describe_match

log = logging.getLogger(__name__)

DEFAULT_VERIFY_GAMES = 200
VERIFIED_NET_FILE = "verify.nnue"
"""A training's verified net, copied beside verify.json (the record names it by checksum)."""
NOT_HELD_OUT = ("--openings names the run's own tuning openings: this verification is not "
                "on held-out openings")
NET_ENGINE = "nnue"
"""The engine spec a training's nets play with unless --engine names another nnue spec."""


@dataclass(frozen=True)
class VerifySettings:
    """How to verify a run (None: take the run's own value); validated when made."""

    games: int = DEFAULT_VERIFY_GAMES
    """Games per match (even: each opening twice, colours swapped)."""
    limits: LimitChanges = LimitChanges()
    """Depth, time per move or time control instead of the run's (a field None: the run's;
    ``tc`` '' = none): :meth:`first_limits`."""
    workers: int = 0
    """Worker processes (0 = one per core); results do not depend on it."""
    seed: int | None = None
    """Seed of the opening draws and games (None: the run's seed)."""
    sprt: tuple[float, float] | None = None
    """(elo0, elo1) to run an SPRT that may stop each match early; None: play all games."""
    rule: str = "mean"
    """Recommendation rule: 'mean', 'better-half' or 'rated' (a tuning run's; a training has one
    net)."""
    backend: str = "local"
    """Where the games run: 'local' processes or a 'dask' cluster (results do not depend on it)."""
    scheduler: str = ""
    """Dask scheduler address, tcp://HOST:PORT (backend 'dask')."""
    opponents: tuple[str, ...] = ()
    """Opponents as ``SPEC[:WEIGHTS]`` (:func:`evotune.match.resolve.resolve_player`); empty:
    the run's reference weights and its initial mean (a training: shannon's reference weights
    and its initial net)."""
    engine: str | None = None
    """Engine spec (name or path) to play instead of the copy the run keeps (None: the run's; a
    training: an nnue spec to play its nets with, default 'nnue')."""
    openings: str | None = None
    """Openings instead of the held-out suite ('2moves', 'book', 'startpos' or a file; None:
    8moves_v3, or 2moves_v1 for a run that tuned on 8moves_v3)."""
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
            if self.also_depth is not None:
                raise ConfigError("give one second limit, --also-depth or --also-tc, not both "
                                  "(they would make one second leg of both)")
        if self.sprt is not None:
            object.__setattr__(self, "sprt", tuple(self.sprt))
            SprtParams(*self.sprt)

    def first_limits(self, run: Limits) -> Limits:
        """The verification games' limits: the run's ``run`` limits with :attr:`limits` over
        them (a time control given here replaces the run's time per move, a time per move the
        run's time control: :meth:`LimitChanges.over`)."""
        return self.limits.over(run)

    def second_limits(self, run: Limits) -> Limits | None:
        """The second limit's: :meth:`first_limits` with ``also_depth`` and ``also_tc`` (None when
        neither is given). ConfigError when it equals the first."""
        if self.also_depth is None and self.also_tc is None:
            return None
        first = self.first_limits(run)
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


def verify_openings(settings: VerifySettings, run_openings: str | None, *,
                    book_plies: int = 8) -> tuple[Path | None, str]:
    """(openings file or None for the start position, note) of a verification: the held-out
    suite (:func:`held_out_openings`; ``run_openings`` None: a training, which tuned on no
    openings) or ``--openings``, checked (with a note when those are the run's own tuning
    openings: the only case where the openings are not held out)."""
    if settings.openings is None:
        return held_out_openings(run_openings) if run_openings is not None \
            else (HELD_OUT_OPENINGS, "")
    path = resolve_openings_path(settings.openings)
    check_openings(path, book_plies=book_plies)
    note = ""
    if run_openings is not None:
        try:
            used = resolve_openings_path(run_openings)
        except ConfigError:
            used = None
        if used == path or (used is not None and path is not None
                            and Path(used).resolve() == Path(path).resolve()):
            note = NOT_HELD_OUT
    return path, note


def _net_of(player: PlayerSpec) -> dict | None:
    """The net a player evaluates with, as a record names it (None: it has weights)."""
    evaluation = spec_evaluation(player)
    if evaluation is None or not evaluation.reads_file:
        return None
    return {"file": Path(player.net).name, "checksum": player.net_checksum}


def play_verification(player: PlayerSpec, a_values: tuple[float, ...], label: str,
                      opponents: list[tuple[str, PlayerSpec]], *,
                      legs: list[MatchSettings], seed: int, settings: VerifySettings,
                      progress: Callable | None = None, store: Store | None = None
                      ) -> list[dict]:
    """The verification matches of ``player`` (whose values a record shows as ``a_values``)
    against each (label, opponent), once per leg (the first limit's match settings, then the
    second limit's when there is one), on one backend, with the same openings and seed: one
    record per match (``label vs opponent``, both sides' values, their nets, the result; with
    two legs also its ``limit``, which its label ends with). With the run's ``store`` each match
    keeps its games in the run as they end (:meth:`Store.match_folder`): given again, a stopped
    verification continues where it stopped."""
    for p in (player, *(o for _, o in opponents)):
        check_player_starts(p)  # an engine that cannot start is refused before any game
    close_external_players()
    sprt = SprtParams(*settings.sprt) if settings.sprt is not None else None
    matches = []
    with backend_session(settings.backend, settings.scheduler,
                         workers=resolve_workers(settings.workers)) as session:
        for match_settings in legs:
            # with one limit the documents are as before a second limit existed
            at = {"limit": limit_text(match_settings.limits)} if len(legs) > 1 else {}
            for name, opponent in opponents:
                stop = "sprt" if sprt is not None else "none"
                with kept_games(store, player, opponent, games=settings.games,
                                settings=match_settings, seed=seed, stop=stop,
                                sprt=sprt) as journal:
                    result = play_match(player, opponent, games=settings.games,
                                        settings=match_settings, seed=seed,
                                        workers=session.workers, backend=session.backend,
                                        stop=stop, sprt=sprt, progress=progress,
                                        journal=journal)
                nets = {k: v for k, v in (("a_net", _net_of(player)),
                                          ("b_net", _net_of(opponent))) if v is not None}
                matches.append({"label": f"{label} vs {name}"
                                         + (f" at {at['limit']}" if at else ""),
                                "opponent": name, **at, "a": list(a_values),
                                "b": list(opponent.weights), **nets, **result.to_dict()})
                log.info("%s", describe_match(matches[-1]))
    return matches


@contextlib.contextmanager
def kept_games(store: Store | None, a: PlayerSpec, b: PlayerSpec, *, games: int,
               settings: MatchSettings, seed: int, stop: str = "none",
               sprt: SprtParams | None = None):
    """The journal of one verification match in the run ``store`` (None: none), held."""
    if store is None:
        yield None
        return
    identity = match_identity(a, b, games=games, settings=settings, seed=seed, stop=stop,
                              sprt=sprt)
    where = conditions(settings.limits, settings.openings or "startpos")
    with store.match_folder(identity, {"a": a.name, "b": b.name, "games": games, "seed": seed,
                                       "where": where, "sprt": sprt_settings(sprt)}) as folder:
        yield folder.journal


def _second_limit_fields(legs: list[Limits]) -> dict:
    """verify.json's fields of a second limit: every leg's limit in words and the second's
    values (none with one limit: the document as before a second limit existed)."""
    if len(legs) < 2:
        return {}
    second = legs[1]
    return {"limits": [limit_text(leg) for leg in legs],
            "also": {"depth": second.depth, "nodes": second.nodes,
                     "movetime": second.movetime, "tc": str(second.tc or "")}}


def _store_verification(store: Store, doc: dict) -> dict:
    try:
        store.write_document("verify", doc)
    except OSError as exc:
        raise StoreError(f"cannot write {store.root / 'verify.json'} ({exc.strerror}); check "
                           "that the run directory is writable") from None
    return doc


def verify_run(run: str | Path | Store, *, settings: VerifySettings = VerifySettings(),
               runs_dir: str | Path = "populations",
               progress: Callable | None = None) -> dict:
    """Play the two verification matches, store them as verify.json and return that document
    (a training: its kind's verification, :func:`verify_training`)."""
    store = open_store(run, out_dir=runs_dir)
    stored = stored_kind(store.manifest().kind)
    if stored is not None and not stored.weights:  # a training: its net
        return kind_of(store).verify(store, settings=settings, runs_dir=str(runs_dir),
                                     progress=progress)
    data: RunData = load_run(store)
    cfg = data.config
    rec = recommend(data, settings.rule)
    spec = run_spec(data, settings.engine)
    if spec.names != data.names:
        raise ConfigError(f"engine spec {spec.path} has other weights than run {data.run_id} "
                          f"({len(spec.names)} vs {len(data.names)}, or other names); give a "
                          "spec of the run's engine")
    openings, note = verify_openings(settings, cfg.play.openings, book_plies=cfg.play.book_plies)
    if note:
        log.warning(note)
    seed = int(settings.seed if settings.seed is not None else cfg.seed)
    # the run's limits, time control and adjudication; held-out openings, maybe another depth
    limits = settings.first_limits(cfg.play.limits)
    second = settings.second_limits(cfg.play.limits)
    legs = [limits] if second is None else [limits, second]
    run_openings = None if openings is None else str(openings)
    player = player_from_engine_spec(spec, rec.weights, name=f"{data.run_id}-recommended")
    opponents = run_opponents(data, spec, settings.opponents)
    check_clock_matters(settings.also_tc, [player] + [o for _, o in opponents])
    check_clock_given(settings.limits, limits, [player] + [o for _, o in opponents])
    t0 = time.perf_counter()
    matches = play_verification(player, rec.weights, "recommended", opponents,
                                legs=[run_match_settings(cfg, limits=leg, openings=run_openings)
                                      for leg in legs],
                                seed=seed, settings=settings, progress=progress, store=store)
    doc = {"run_id": data.run_id, "generation": rec.generation, "recommend": rec.rule,
           "description": rec.description, "names": list(data.names),
           "weights": list(rec.weights), "openings": _openings_name(openings), "note": note,
           "held_out": note != NOT_HELD_OUT,
           "depth": limits.depth, "nodes": limits.nodes, "games": settings.games,
           "movetime": limits.movetime,
           "tc": (tc_text(cfg.play.limits.tc) if settings.limits.tc is None
                  else settings.limits.tc),
           "engine": spec.name,
           **_second_limit_fields(legs),
           "seed": seed, "sprt": list(settings.sprt) if settings.sprt else None,
           "seconds": time.perf_counter() - t0, "matches": matches,
           "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    return _store_verification(store, doc)


def _openings_name(path: Path | None) -> str:
    return "startpos" if path is None else Path(path).name


# ---- a net training ---------------------------------------------------------------------------

def _trained_epoch(store: Store) -> int:
    """The epoch of the training's stored checkpoint; ConfigError when no epoch is finished
    (then its net is the initial net: nothing to verify)."""
    got = store.read_checkpoint()
    epoch = int(got[1]["epoch"]) if got is not None else 0
    if epoch == 0 or not (store.root / NET_FILE).is_file():
        raise ConfigError(f"training '{store.run_id}' has not finished an epoch yet, so it has "
                          f"no trained net to verify; verify it after its first epoch "
                          f"(evotune status {store.run_id})")
    return epoch


def _net_engine(name: str | None):
    """The nnue engine spec a training's nets play with (ConfigError for a spec that
    evaluates with weights)."""
    spec = load_engine_spec(name or NET_ENGINE)
    evaluation = spec_evaluation(spec)
    if evaluation is None or not evaluation.reads_file:
        raise ConfigError(f"--engine {name}: a training's nets play with a builtin nnue spec "
                          f"(features = \"nnue\", e.g. {NET_ENGINE}); '{spec.name}' is a "
                          f"{spec.kind} spec with features {spec.features!r}")
    return spec


def _check_initial_net(store: Store, initial: InitialNet, checksum: str) -> None:
    """StoreError when initial.nnue is not the net the training's settings start from (random
    from its seed, or its --init file's, when that file is still there). An initial net fitted
    to an evaluation (``eval:SPEC``) is not made again (that would train it again on the data):
    initial.nnue is taken as the training stored it."""
    if initial.fits_eval:
        return
    try:
        want = initial.make().quantised().checksum
    except EvotuneError:
        return  # the --init file is gone: initial.nnue is the only copy of that net
    if checksum != want:
        raise StoreError(f"{store.root / INITIAL_FILE} (checksum {checksum}) is not the initial "
                         f"net of training '{store.run_id}' ({want}, "
                         + ("random from its seed" if initial.random
                            else f"from {initial.init}")
                         + "); restore it, or verify against --opponent players")


def verify_training(store: Store, *, initial: InitialNet,
                    settings: VerifySettings = VerifySettings(),
                    progress: Callable | None = None) -> dict:
    """Verify a net training: its last stored net (net.nnue, copied to verify.nnue) against
    shannon's reference weights and against its initial net (initial.nnue), or against the
    ``--opponents`` players; stored as verify.json like a tuning run's verification.

    A training names no engine spec and no limits: the games take :class:`Limits`' defaults
    (depth 3) unless ``settings`` gives a depth, time per move or time control, and a second
    limit (``also_depth`` / ``also_tc``) plays every match again under it; the seed is the
    training's. ``initial``: the training's starting net (its config's, which the training
    kind hands over). Every input is checked before verify.nnue is written."""
    train = initial.settings
    if settings.rule != "mean":
        raise ConfigError(f"--recommend {settings.rule}: a training has one net to verify; "
                          "--recommend is for tuning runs")
    _trained_epoch(store)  # a training without a trained net: refused first
    spec = _net_engine(settings.engine)
    openings, note = verify_openings(settings, None)
    if note:
        log.warning(note)
    seed = int(settings.seed if settings.seed is not None else train.seed)
    limits = settings.first_limits(Limits())
    second = settings.second_limits(Limits())  # refused before verify.nnue is written
    legs = [limits] if second is None else [limits, second]
    legs_settings = [MatchSettings(limits=leg, openings=None if openings is None
                                   else str(openings)) for leg in legs]
    initial_path = store.root / INITIAL_FILE
    if settings.opponents:
        opponents = named_opponents(settings.opponents)
    else:
        if not initial_path.is_file():
            raise StoreError(f"{initial_path} is missing: the initial net of training "
                             f"'{store.run_id}' is kept there; restore it or verify against "
                             "--opponents players")
        opponents = [("shannon", resolve_player("shannon")),
                     ("initial net", player_from_engine_spec(spec, None, name="initial-net",
                                                             net=str(initial_path)))]
        _check_initial_net(store, initial, opponents[1][1].net_checksum)
    if spec.search.is_alphabeta:  # the trained net's player: built-in, as the spec searches
        check_clock_matters(settings.also_tc, [o for _, o in opponents])
        check_clock_given(settings.limits, limits, [o for _, o in opponents])
    try:
        data = (store.root / NET_FILE).read_bytes()
    except OSError as exc:
        raise StoreError(f"cannot read {store.root / NET_FILE} ({exc.strerror})") from None
    try:
        store.write_bytes(VERIFIED_NET_FILE, data)
    except OSError as exc:
        raise StoreError(f"cannot write {store.root / VERIFIED_NET_FILE} ({exc.strerror}); "
                         "check that the run directory is writable") from None
    player = player_from_engine_spec(spec, None, name=f"{store.run_id}-net",
                                     net=str(store.root / VERIFIED_NET_FILE))
    # net.nnue is written after the checkpoint: its epoch is at most the checkpoint's now
    lines = store.epoch_lines(_trained_epoch(store))
    found = [e.epoch for e in lines if e.checksum == player.net_checksum]
    if not found:
        raise StoreError(f"{store.root / NET_FILE} (checksum {player.net_checksum}) is not the "
                         f"net of any stored epoch of training '{store.run_id}'; restore it "
                         f"('evotune resume {store.run_id}' rewrites it at the next epoch)")
    generation = found[-1]
    first = {"file": INITIAL_FILE,
             "init": f"random from seed {train.seed}" if initial.random
             else f"from {initial.init}"}
    first.update(next((net for _, o in opponents if (net := _net_of(o)) is not None
                       and o.net == str(initial_path.resolve())), {}))
    t0 = time.perf_counter()
    matches = play_verification(player, (), "net", opponents, legs=legs_settings,
                                seed=seed, settings=settings, progress=progress, store=store)
    doc = {"run_id": store.run_id, "kind": "train", "generation": generation,
           "recommend": "net",
           "description": f"the net after epoch {generation} ({train.net_text})",
           "names": [], "weights": [],
           "net": {"file": NET_FILE, "copy": VERIFIED_NET_FILE,
                   "checksum": player.net_checksum},
           "initial": first, "openings": _openings_name(openings), "note": note,
           "held_out": True,
           "depth": limits.depth, "nodes": limits.nodes, "games": settings.games,
           "movetime": limits.movetime, "tc": settings.limits.tc or "", "engine": spec.name,
           **_second_limit_fields(legs),
           "seed": seed, "sprt": list(settings.sprt) if settings.sprt else None,
           "seconds": time.perf_counter() - t0, "matches": matches,
           "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    return _store_verification(store, doc)
