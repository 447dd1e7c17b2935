"""What the tune page shows, as JSON-ready dicts, read from a runs folder through the run
kinds' views (:mod:`evotune.kinds`: each kind's row and status), the run's state
(:mod:`evotune.runs.runstate`), the strength curve (:mod:`evotune.reporting.strength`) and the
final check (its record and its results block,
:func:`evotune.runs.finalcheck.final_check_block`, as the terminal prints it). A reader: it
never writes, locks or repairs a run. A run whose files fail their validators is shown as
``damaged: FILE``; a request for anything that is not a run of the folder is refused
(:class:`Refused`).

Each run's views are cached under the signature of its files (size and time of each record a
view reads, and whether its lock is held), so polling a folder of many runs reads only what
changed.
"""
from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EvotuneError
from ..kinds import kind_of
from ..kinds.games.solver import pgn_text
from ..match.resultsblock import stored_figures, summary_lines
from ..reporting.strength import base_of, checkpoints_of, curve_of
from ..runs.finalcheck import final_check_block
from ..runs.gamelog import log_tail
from ..runs.lock import lock_table
from ..runs.manifest import Manifest, check_run_id
from ..runs.recordio import damaged
from ..runs.records import parse_game_line
from ..runs.runstate import run_state
from ..runs.store import Store
from .facts import fit_facts, net_facts
from .journals import LogCache
from .matches import MatchReader
from .series import GenerationCache, all_played
from .weightcharts import WeightSeries, columns, first_look, space_of, weights_series

SIGNED_FILES = ("manifest.json", "state.json", "final-check.json",
                "guard.json",  # the final check's record under its old name (runs made before)
                "verify.json", "verify-curve.json",
                "texel.json", "checkpoint.npz", "games.jsonl")
"""The files whose change makes a run's cached views stale."""
LATEST_GAMES = 20
"""Games the run page lists."""
TAIL_BYTES = 1 << 20
"""How much of the end of the game log the latest games are read from."""
_PATH_RE = re.compile(r"(/[^\s:;,()']+)")


class Refused(EvotuneError):
    """A request for something that is not a run of the served folder."""


def damaged_file(exc: EvotuneError, root: Path) -> str:
    """The file an error names, relative to the run folder when it lies inside it ('' when the
    error names none)."""
    for m in _PATH_RE.finditer(str(exc)):
        p = m.group(1).rstrip(".")
        try:
            return str(Path(p).resolve().relative_to(root.resolve()))
        except ValueError:
            continue
    return ""


class Reader:
    """The page's reader of one runs folder."""

    def __init__(self, runs_dir: str | Path) -> None:
        self.root = Path(runs_dir).resolve()
        """The runs folder (resolved)."""
        self._cache: dict[tuple[str, str], tuple[tuple, Any]] = {}
        self._lock = threading.Lock()
        self._strength: dict[tuple[str, str], tuple[tuple, dict, float, float]] = {}
        self._fitting: dict[tuple[str, str], threading.Lock] = {}
        self.generations = GenerationCache()
        """Every run's parsed generations (a new one is the only file read)."""
        self.logs = LogCache()
        """Every game log read so far (its new lines are the only ones read)."""
        self.matches = MatchReader(self.root, self.logs)
        """The folder's matches and the runs' verification matches."""

    # -- locating -----------------------------------------------------------------------------
    def store(self, run_id: str) -> Store:
        """The run ``run_id`` of the folder; Refused for anything else (a path, '..', a link
        that leads out of the folder, a folder without a manifest)."""
        try:
            check_run_id(run_id)
        except EvotuneError:
            raise Refused(f"no run {run_id!r} here") from None
        if run_id in (".", "..") or "/" in run_id or "\\" in run_id:
            raise Refused(f"no run {run_id!r} here")
        folder = self.root / run_id
        try:
            real = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            raise Refused(f"no run {run_id!r} here") from None
        if real.parent != self.root or not (real / "manifest.json").is_file():
            raise Refused(f"no run {run_id!r} here")
        if not _inside(real / "manifest.json", real):
            raise Refused(f"no run {run_id!r} here")
        return ReadStore(real)

    def stores(self) -> list[Store]:
        """Every run of the folder (a folder with a manifest, links out of it left out)."""
        out = []
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError:
            return []
        for e in entries:
            try:
                out.append(self.store(e.name))
            except Refused:
                continue
        return out

    def run_ids(self) -> list[str]:
        return [s.run_id for s in self.stores()]

    # -- caching --------------------------------------------------------------------------------
    def _signature(self, store: Store) -> tuple:
        sig: list[object] = []
        for name in SIGNED_FILES:
            try:
                st = os.stat(store.root / name)
                sig.append((st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append(None)
        for folder in (store.generations_dir, store.epochs_dir):
            try:
                sig.append(os.stat(folder).st_mtime_ns)
            except OSError:
                sig.append(None)
        return tuple(sig)

    def _cached(self, view: str, store: Store, make: Callable[[], Any]) -> Any:
        key = (store.run_id, view)
        sig = self._signature(store)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == sig:
            return hit[1]
        value = make()
        with self._lock:
            self._cache[key] = (sig, value)
        return value

    # -- views ------------------------------------------------------------------------------------
    def runs(self) -> list[dict]:
        """One row per run (newest first)."""
        locks = lock_table()
        rows = [self._row(s, locks) for s in self.stores()]
        return sorted(rows, key=lambda r: r.get("started_at", 0), reverse=True)

    def match_rows(self, run_id: str | None = None) -> list[dict]:
        """One row per match of the folder and verification match of its runs (``run_id``:
        only that run's verification matches)."""
        locks = lock_table()
        ids = self.matches.ids(self.run_ids() if run_id is None else [self.store(run_id).run_id])
        if run_id is not None:
            ids = [m for m in ids if m.startswith(f"{run_id}/")]
        return [self.matches.row(m, locks) for m in ids]

    def match(self, mid: str) -> dict:
        """A match's page (:meth:`evotune.serve.matches.MatchReader.detail`)."""
        return self.matches.detail(mid, lock_table())

    def row(self, run_id: str) -> dict:
        """A run's row: what ``evotune runs`` shows, its state, rate, time left and result."""
        return self._row(self.store(run_id), lock_table())

    def _row(self, store: Store, locks: dict[str, int] | None) -> dict:
        row = dict(self._cached("row", store, lambda: _row(store)))
        row["state"] = _state(store, locks)
        return row

    def run(self, run_id: str) -> dict:
        """A run's page: its row, its status record and the series its charts draw."""
        return {**self.detail(run_id), "row": self.row(run_id)}

    def detail(self, run_id: str) -> dict:
        """A run's page without its row: the cached object itself (the same object until the
        run's files change)."""
        store = self.store(run_id)
        return self._cached("detail", store, lambda: _detail(store, lambda: self._series(store),
                                                                 self.generations))

    def _series(self, store: Store) -> WeightSeries | None:
        return self._cached("series", store,
                            lambda: weights_series(store, self.generations, self.logs))

    def columns(self, run_id: str, index: list[int]) -> dict:
        """The trajectories of the weights ``index`` of a run (those the first look left out:
        :func:`evotune.serve.weightcharts.columns`)."""
        store = self.store(run_id)
        ws = self._series(store)
        return {"columns": {}, "std_columns": None} if ws is None else columns(ws, index)

    def strength(self, run_id: str) -> dict:
        """The run's strength curve (:func:`evotune.reporting.strength.curve_of`), fitted again
        when the run's games grew by :data:`REFIT_SHARE` and :data:`REFIT_PAUSE` times the last
        fit's time has passed (or at once when its final check or checkpoints changed), so a
        page polled during a long run costs the run little."""
        store = self.store(run_id)

        def make() -> dict:
            try:
                return _strength(store, self.generations)
            except EvotuneError as exc:
                return {"note": f"damaged: {damaged_file(exc, store.root) or exc}",
                        "games": [], "elo": [], "error": [], "checkpoints": []}
        key = (store.run_id, "strength")
        with self._lock:
            fitting = self._fitting.setdefault(key, threading.Lock())
        with fitting:  # one fit at a time per run: a second page waits for it, then reads it
            sig = self._signature(store)
            with self._lock:
                hit = self._strength.get(key)
            if hit is not None and (hit[0] == sig or not _refit(hit, sig, store)):
                return hit[1]
            t0 = time.monotonic()
            value = make()
            with self._lock:
                self._strength[key] = (sig, value, time.monotonic(), time.monotonic() - t0)
            return value

    def pgn(self, run_id: str, generation: int) -> str:
        """The PGN of the games of one generation (from the game log)."""
        store = self.store(run_id)
        records = [g.data for g in store.game_lines()[0] if g.key[0] == generation]
        return pgn_text(records)


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve(strict=True).relative_to(folder)
        return True
    except (OSError, ValueError, RuntimeError):
        return False


class ReadStore(Store):
    """A Store read by one request: its manifest parsed once (the kinds' views ask it often)."""

    _manifest: Manifest | None = None

    def manifest(self) -> Manifest:
        if self._manifest is None:
            self._manifest = super().manifest()
        return self._manifest


def _state(store: Store, locks: dict[str, int] | None = None) -> str:
    try:
        return run_state(store, locks)
    except EvotuneError:
        return "damaged"


def _num(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _row(store: Store) -> dict:
    """The row's figures that depend on the run's files (the cache keeps them)."""
    started_at = store.manifest_path.stat().st_mtime
    base: dict[str, Any] = {"run": store.run_id, "started_at": started_at}
    try:
        kind = kind_of(store)
        cells = kind.row(store)
        manifest = store.manifest()
        cfg = manifest.config
        state = store.current_state()
        check = store.read_final_check()  # final-check.json (guard.json in runs made before)
    except EvotuneError as exc:
        return {**base, "kind": "?", "damaged": damaged_file(exc, store.root) or str(exc)}
    done = state.generation if state else 0
    total = int(cfg.steps or 0)
    games = (state.games if state else 0) + (check.games if check else 0)  # as status counts
    budget = int(cfg.max_games or 0)
    seconds = state.seconds if state else 0.0
    rate = games / seconds if seconds > 0 and games else None
    left = None
    if state is not None and not state.finished and seconds > 0:
        if budget and rate:
            left = max(budget - games, 0) / rate
        elif total and done:
            left = max(total - done, 0) * seconds / done
    result = cells[4]
    if check is not None:
        result = f"final check {check.verdict}: {check.elo:+.1f} +- {check.elo_error:.1f}"
    return {**base, "kind": manifest.kind, "strategy": cells[1], "progress": cells[2],
            "amount": cells[3], "result": result, "started": cells[6],
            "engine": str(getattr(cfg, "engine", "") or ""), "generation": done,
            "generations": total, "games": games, "max_games": budget,
            "seconds": round(seconds, 2), "games_per_s": _num(rate), "left_s": _num(left),
            "verdict": check.verdict if check else None, "damaged": None}


def _detail(store: Store, series: Callable[[], WeightSeries | None],
            cache: GenerationCache) -> dict:
    """The run page's data: its weights' series (runs that tune a weight vector) or its
    kind's status record (``evotune status --json``: a training's epochs), its latest games,
    final check and verification."""
    out: dict[str, Any] = {"run": store.run_id, "damaged": None}
    try:
        kind = kind_of(store)
        out["kind"] = store.manifest().kind
        if kind.stored.weights:
            ws = series()
            if ws is not None:
                out.update(first_look(ws))
        else:
            out["status"] = _clean(kind.status(store, every=True).info)
        if out["kind"] == "fit":
            gens = cache.generations(store)
            out["fit"] = _clean(fit_facts(store, gens[-1].seconds_total - gens[0].seconds_total
                                          if len(gens) > 1 else None))
        elif out["kind"] == "train":
            out["net"] = _clean(net_facts(store, out["status"].get("records") or []))
        out["latest_games"] = _latest_games(store)
        check = store.read_final_check()  # final-check.json (guard.json in runs made before)
        play = getattr(store.manifest().config, "play", None)  # a kind whose weights play
        limits = None if play is None else play.limits
        out["final_check"] = (final_check_block(check, limits) or [check.sentence]) \
            if check is not None else None
        verify = store.read_verify()
        out["verify"] = verify["matches"] if verify else []
        try:
            out["verify_blocks"] = [verify_block(m, verify) for m in verify["matches"]] \
                if verify else []
        except (KeyError, TypeError, ValueError):
            raise damaged(store.root / "verify.json", "a match without its counts") from None
    except EvotuneError as exc:
        out["damaged"] = damaged_file(exc, store.root) or str(exc)
    return out


def verify_block(m: dict, doc: dict) -> list[str]:
    """One verify.json match as the results block (its label's player against its opponent,
    at the verification's limit and openings)."""
    first = str(m.get("label", "")).split(" vs ")[0] or "A"
    where = ", ".join(str(x) for x in (m.get("limit") or _limit_of(doc), doc.get("openings"))
                      if x)
    return summary_lines(stored_figures(m), first, str(m.get("opponent", "B")), where=where)


def _limit_of(doc: dict) -> str:
    return f"{doc['depth']} plies" if doc.get("depth") else ""


def _clean(v: Any) -> Any:
    """JSON-safe: non-finite floats become None."""
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _space(store: Store, names: tuple[str, ...]):
    return space_of(store, names)


REFIT_SHARE = 0.02
"""The strength model is fitted again once the run's games grew by this share ..."""
REFIT_PAUSE = 20.0
"""... and this many times the last fit's time has passed (a fit of seconds: minutes apart)."""


def _refit(hit: tuple, sig: tuple, store: Store) -> bool:
    """Whether a cached curve is to be fitted again: a file other than the state and the game
    log changed (a final check, checkpoints, a manifest), or the games grew by REFIT_SHARE and
    the pause after the last fit is over."""
    old_sig, curve, fitted_at, took = hit
    changed = [i for i, (a, b) in enumerate(zip(old_sig, sig)) if a != b]
    steady = {SIGNED_FILES.index("state.json"), SIGNED_FILES.index("games.jsonl"),
              len(SIGNED_FILES)}  # the generations folder
    if any(i not in steady for i in changed):
        return True
    try:
        state = store.read_state()
    except EvotuneError:
        return True
    if time.monotonic() - fitted_at < REFIT_PAUSE * took:
        return False
    fitted = curve.get("games") or [0]
    return state is None or state.games >= (1 + REFIT_SHARE) * max(fitted[-1], 1)


def _strength(store: Store, cache: GenerationCache) -> dict:
    if not kind_of(store).stored.weights:  # a training: no weight vector to rate
        return {"note": "a training has no weight vector to rate; evotune verify measures its "
                        "net", "games": [], "elo": [], "error": [], "checkpoints": []}
    gens = cache.generations(store)
    if not gens:
        return curve_of(None, means=np.zeros((0, 0)), games=np.zeros(0, np.int64),
                        generations=np.zeros(0, np.int64), base=None, against="the start",
                        checkpoints=checkpoints_of(store)).to_json()
    _fixed, reference, _spec = _space(store, gens[-1].names)
    means = np.array([g.mean for g in gens], dtype=np.float64)
    base, against = base_of(store.manifest().config, reference, means[0])
    curve = curve_of(all_played(gens), means=means,
                     games=np.array([g.games_total for g in gens], dtype=np.int64),
                     generations=np.array([g.generation for g in gens], dtype=np.int64),
                     base=base, against=against, checkpoints=checkpoints_of(store))
    return curve.to_json()


def _latest_games(store: Store) -> list[dict]:
    """The last games of the log (newest first): generation, players, result, termination,
    plies."""
    lines, _ = log_tail(store.games_path, TAIL_BYTES)  # a torn last line is left out
    out = []
    for i, raw in enumerate(reversed(lines[-LATEST_GAMES:])):
        rec = parse_game_line(raw, i, store.games_path).data
        out.append({"generation": rec["key"][0], "white": rec["white"], "black": rec["black"],
                    "result": rec["result"], "termination": rec["termination"],
                    "plies": len(rec["moves"])})
    return out
