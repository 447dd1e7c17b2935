"""What the tune page shows, as JSON-ready dicts, read from a runs folder through the run
kinds' views (:mod:`evotune.kinds`: each kind's row and status), the run's state
(:mod:`evotune.runs.runstate`), the strength curve (:mod:`evotune.reporting.strength`) and the
final check (guard.json). A reader: it never writes, locks or repairs a run. A run whose files
fail their validators is shown as ``damaged: FILE``; a request for anything that is not a run
of the folder is refused (:class:`Refused`).

Each run's views are cached under the signature of its files (size and time of each record a
view reads, and whether its lock is held), so polling a folder of many runs reads only what
changed.
"""
from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EvotuneError
from ..kinds import kind_of
from ..reporting.strength import strength_curve
from ..runs.manifest import check_run_id
from ..runs.records import parse_game_line
from ..runs.rundata import load_run
from ..runs.runstate import run_state
from ..runs.store import Store
from ..strategies import strategy_class
from ..tuning.loop import pgn_text
from .block import final_check_block

SIGNED_FILES = ("manifest.json", "state.json", "guard.json", "verify.json", "verify-curve.json",
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
        return Store(real)

    def run_ids(self) -> list[str]:
        """Every run of the folder (a folder with a manifest, links out of it left out)."""
        out = []
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError:
            return []
        for e in entries:
            try:
                self.store(e.name)
            except Refused:
                continue
            out.append(e.name)
        return out

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
        rows = [self.row(r) for r in self.run_ids()]
        return sorted(rows, key=lambda r: r.get("started_at", 0), reverse=True)

    def row(self, run_id: str) -> dict:
        """A run's row: what ``evotune runs`` shows, its state, rate, time left and result."""
        store = self.store(run_id)
        state = _state(store)
        row = dict(self._cached("row", store, lambda: _row(store)))
        row["state"] = state
        return row

    def run(self, run_id: str) -> dict:
        """A run's page: its row, its status record and the series its charts draw."""
        store = self.store(run_id)
        detail = dict(self._cached("detail", store, lambda: _detail(store)))
        detail["row"] = self.row(run_id)
        return detail

    def strength(self, run_id: str) -> dict:
        """The run's strength curve (:func:`evotune.reporting.strength.strength_curve`)."""
        store = self.store(run_id)

        def make() -> dict:
            try:
                return strength_curve(store).to_json()
            except EvotuneError as exc:
                return {"note": f"damaged: {damaged_file(exc, store.root) or exc}",
                        "games": [], "elo": [], "error": [], "checkpoints": []}
        return self._cached("strength", store, make)

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


def _state(store: Store) -> str:
    try:
        return run_state(store)
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
        guard = store.read_guard() if (store.root / "guard.json").exists() else None
    except EvotuneError as exc:
        return {**base, "kind": "?", "damaged": damaged_file(exc, store.root) or str(exc)}
    done = state.generation if state else 0
    total = int(getattr(cfg, "generations", 0) or getattr(cfg, "epochs", 0) or 0)
    games = state.games if state else 0
    budget = int(getattr(cfg, "max_games", 0) or 0)
    seconds = state.seconds if state else 0.0
    rate = games / seconds if seconds > 0 and games else None
    left = None
    if state is not None and not state.finished and seconds > 0:
        if budget and rate:
            left = max(budget - games, 0) / rate
        elif total and done:
            left = max(total - done, 0) * seconds / done
    result = cells[4]
    if guard is not None:
        result = f"final check {guard.verdict}: {guard.elo:+.1f} +- {guard.elo_error:.1f}"
    return {**base, "kind": manifest.kind, "strategy": cells[1], "progress": cells[2],
            "amount": cells[3], "result": result, "started": cells[6],
            "engine": str(getattr(cfg, "engine", "") or ""), "generation": done,
            "generations": total, "games": games, "max_games": budget,
            "seconds": round(seconds, 2), "games_per_s": _num(rate), "left_s": _num(left),
            "verdict": guard.verdict if guard else None, "damaged": None}


def _detail(store: Store) -> dict:
    """The run page's data: the status record (``evotune status --json``) and the series."""
    try:
        kind = kind_of(store)
        status = kind.status(store, every=True).info
    except EvotuneError as exc:
        return {"run": store.run_id, "damaged": damaged_file(exc, store.root) or str(exc)}
    out: dict[str, Any] = {"run": store.run_id, "kind": store.manifest().kind,
                           "status": _clean(status), "damaged": None}
    if kind.stored.weights:
        try:
            out.update(_weights_series(store))
        except EvotuneError as exc:
            out["damaged"] = damaged_file(exc, store.root) or str(exc)
    try:
        out["latest_games"] = _latest_games(store)
    except EvotuneError as exc:
        out["damaged"] = damaged_file(exc, store.root) or str(exc)
    try:
        guard = store.read_guard() if (store.root / "guard.json").exists() else None
        out["final_check"] = final_check_block(guard) if guard is not None else None
        verify = store.read_verify()
        out["verify"] = verify["matches"] if verify else []
    except EvotuneError as exc:
        out["damaged"] = damaged_file(exc, store.root) or str(exc)
    return out


def _clean(v: Any) -> Any:
    """JSON-safe: non-finite floats become None."""
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _weights_series(store: Store) -> dict:
    """The series of a run that tunes a weight vector: per generation its games, the mean and
    deviation of each weight, the strategy's statistics (SPSA's c_k, R_k and step; CMA-ES's
    sigma; DE's replacement rate; a fit's losses) and the W/D/L of its matches."""
    data = load_run(store)
    gens = store.generations(data.state)
    population = not strategy_class(data.strategy).RECOMMENDS if data.kind == "games" else False
    spec = data.spec
    lower = [float(w.lower) for w in spec.weights] if spec is not None else None
    upper = [float(w.upper) for w in spec.weights] if spec is not None else None
    wdl = []
    for g in gens:
        w = sum(m.wins or 0 for m in g.matches)
        d = sum(m.draws or 0 for m in g.matches)
        lo = sum(m.losses or 0 for m in g.matches)
        wdl.append([w, d, lo])
    stats = {k: [_num(float(x)) for x in np.asarray(v).reshape(len(gens), -1)[:, 0]]
             for k, v in data.stats.items() if np.asarray(v).ndim == 1}
    return {"names": list(data.names), "fixed": list(data.fixed),
            "reference": [_num(float(v)) for v in data.reference],
            "lower": lower, "upper": upper,
            "generations": data.generations.tolist(), "games": data.games.tolist(),
            "seconds": [round(float(s), 2) for s in data.seconds],
            "mean": np.round(data.mean, 2).tolist(),
            "std": np.round(data.std, 2).tolist() if population else None,
            "population": population, "stats": stats, "wdl": wdl,
            "strategy": data.strategy}


def _latest_games(store: Store) -> list[dict]:
    """The last games of the log (newest first): generation, players, result, termination,
    plies."""
    try:
        with open(store.games_path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - TAIL_BYTES))
            tail = f.read()
    except OSError:
        return []
    lines = tail.split(b"\n")[:-1]  # a torn last line (no newline) is left out
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first may be cut
    out = []
    for i, raw in enumerate(reversed(lines[-LATEST_GAMES:])):
        rec = parse_game_line(raw, i, store.games_path).data
        out.append({"generation": rec["key"][0], "white": rec["white"], "black": rec["black"],
                    "result": rec["result"], "termination": rec["termination"],
                    "plies": len(rec["moves"])})
    return out
