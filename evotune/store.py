"""Everything under ``populations/<run-id>/``: typed records, atomic writes, one writer, resume.

Layout of a run directory::

    manifest.json            version, resolved config, identity (hashes of config, engine spec,
                             openings)                                        -> Manifest
    state.json               the commit point: generation, games, seconds, strategy state -> State
    generations/gen-NNNN.json one file per generation: population, matches, statistics and the
                             strategy state after it (gen-0000 = the initial population) -> Generation
    games.jsonl              append-only game log, one game record per line  -> GameLine
    games.pgn                every game in PGN (rebuilt from the log when it is behind)
    verify.json              the latest verification (written by ``evotune verify``)
    .lock                    the writer lock (fcntl.flock) and the holder's PID

Each record has exactly one reader and one validator here (``parse_*``); every other module reads
runs through them, never through dict keys with defaults of its own. A record that fails its
validator is reported as one line naming the file (and line) - never a traceback, never a guess.

Order of writes for a generation: games (log, PGN), then the generation file, then the state.
:meth:`Store.prepare_resume` checks the whole history before a run continues and repairs only
what a crash can leave behind (see docs/internals.md, "The store's guarantees").
Only this module writes under ``populations/``.
"""
from __future__ import annotations

import dataclasses
import errno
import fcntl
import json
import logging
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from . import __version__
from .errors import StoreError

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
GEN_FILE_RE = re.compile(r"^gen-(\d{4,})\.json$")
RESULTS = ("1-0", "0-1", "1/2-1/2")


# ---- writing -------------------------------------------------------------------------------------

def _write_failed(path: Path, exc: OSError) -> StoreError:
    why = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why += "; free some space"
    return StoreError(f"could not write {path} ({why})")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder + os.replace)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise _write_failed(path, exc) from None
        raise


def atomic_write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _append(path: Path, text: str, *, sync: bool) -> None:
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
    except OSError as exc:
        raise _write_failed(path, exc) from None


# ---- reading and validating -------------------------------------------------------------------

def _bad(path: Path, what: str) -> StoreError:
    return StoreError(f"{path} is damaged ({what}); restore it from a backup or start a new run "
                      "with another --run-id")


def _read_json(path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{what} {path} is missing") from None
    except IsADirectoryError:
        raise _bad(path, "a folder, not a file") from None
    except OSError as exc:
        raise StoreError(f"{what} {path} cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8 text") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise StoreError(f"{what} {path} is corrupt ({exc}); the run cannot continue safely: "
                         "restore the file or start a new run with another --run-id") from None


def _int(d: dict, key: str, path: Path, *, low: int = 0) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise _bad(path, f"'{key}' must be an integer >= {low}, not {v!r}")
    return v


def _float(d: dict, key: str, path: Path) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise _bad(path, f"'{key}' must be a finite number >= 0, not {v!r}")
    return float(v)


def _object(data, path: Path) -> dict:
    if not isinstance(data, dict):
        raise _bad(path, f"a JSON object was expected, not a {type(data).__name__}")
    return data


def _vector(v, n: int | None, key: str, path: Path) -> tuple[float, ...]:
    if not isinstance(v, list) or (n is not None and len(v) != n) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in v):
        raise _bad(path, f"'{key}' must be a list of {n if n is not None else 'some'} finite "
                         "numbers")
    return tuple(float(x) for x in v)


@dataclass(frozen=True)
class Manifest:
    """manifest.json: what the run is."""

    run_id: str
    """The run's id (its folder name)."""
    config: "RunConfig"  # noqa: F821 (evotune.config.RunConfig; imported lazily)
    """The resolved configuration, validated."""
    identity: dict
    """Hashes: config, engine_spec, openings, hash (all strings)."""
    evotune: str = __version__
    """The evotune version that created the run."""
    format: int = FORMAT_VERSION
    """The store format."""

    def to_json(self) -> dict:
        return {"format": self.format, "evotune": self.evotune, "run_id": self.run_id,
                "config": self.config.to_dict(), "identity": dict(self.identity)}


def parse_manifest(data, path: Path) -> Manifest:
    """The one validator of manifest.json."""
    from .config import run_config_from_dict
    from .errors import EvotuneError

    d = _object(data, path)
    if d.get("format") != FORMAT_VERSION:
        raise StoreError(f"{path}: format {d.get('format')!r} is not supported by this evotune "
                         f"(format {FORMAT_VERSION})")
    if not isinstance(d.get("config"), dict):
        raise _bad(path, "no 'config' object")
    ident = d.get("identity")
    if not isinstance(ident, dict) or not all(isinstance(v, str) for v in ident.values()):
        raise _bad(path, "'identity' must be an object of strings")
    try:
        cfg = run_config_from_dict(d["config"])
    except EvotuneError as exc:
        raise _bad(path, f"its config: {exc}") from None
    run_id = d.get("run_id")
    if not isinstance(run_id, str):
        raise _bad(path, "'run_id' must be a string")
    return Manifest(run_id=run_id, config=cfg, identity=dict(ident),
                    evotune=str(d.get("evotune", "")), format=FORMAT_VERSION)


@dataclass(frozen=True)
class State:
    """state.json: the commit point of the run (the last generation stored completely)."""

    generation: int
    """Generations completed (0 = only the initial population)."""
    games: int
    """Games played in the whole run."""
    seconds: float
    """Wall time of the whole run."""
    finished: bool
    """True once a stop condition was reached."""
    strategy: dict
    """The strategy's state (``Strategy.state()``)."""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def parse_state(data, path: Path) -> State:
    """The one validator of state.json."""
    d = _object(data, path)
    finished = d.get("finished", False)
    if not isinstance(finished, bool):
        raise _bad(path, f"'finished' must be true or false, not {finished!r}")
    if not isinstance(d.get("strategy"), dict):
        raise _bad(path, "'strategy' must be an object")
    return State(generation=_int(d, "generation", path), games=_int(d, "games", path),
                 seconds=_float(d, "seconds", path) if "seconds" in d else 0.0,
                 finished=finished, strategy=d["strategy"])


@dataclass(frozen=True)
class Generation:
    """generations/gen-NNNN.json: one generation (gen-0000 is the initial population)."""

    generation: int
    """Its number."""
    strategy: str
    """Strategy name."""
    names: tuple[str, ...]
    """Weight names, in engine order."""
    population: tuple[tuple[float, ...], ...]
    """The population after the generation, one row per individual."""
    mean: tuple[float, ...]
    """Population mean per weight."""
    std: tuple[float, ...]
    """Population standard deviation per weight."""
    games: int
    """Games played in this generation."""
    games_total: int
    """Games played in the whole run up to and including it."""
    matches: tuple[dict, ...] = ()
    """Per match: players, points, games, W/D/L."""
    stats: dict = dataclasses.field(default_factory=dict)
    """The strategy's statistics of the generation."""
    seconds: float = 0.0
    """Wall time of the generation."""
    seconds_total: float = 0.0
    """Wall time of the whole run up to it."""
    state: dict | None = None
    """The strategy state after it (lets a lost state.json be rebuilt exactly); None in runs
    stored before it was kept here."""
    gauntlet: dict | None = None
    """Runs with --opponents: {'opponents': [names], 'candidates': [{'weights', 'points',
    'games', 'wins', 'draws', 'losses'} (per opponent)]}; None otherwise."""

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(names=list(self.names), population=[list(r) for r in self.population],
                 mean=list(self.mean), std=list(self.std), matches=list(self.matches))
        for optional in ("state", "gauntlet"):
            if d[optional] is None:
                del d[optional]
        return d

    def as_state(self, *, finished: bool = False) -> State:
        """The state this generation commits (needs the strategy state stored with it)."""
        return State(generation=self.generation, games=self.games_total,
                     seconds=self.seconds_total, finished=finished, strategy=self.state)


def parse_generation(data, path: Path) -> Generation:
    """The one validator of a generation file."""
    d = _object(data, path)
    names = d.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise _bad(path, "'names' must be a non-empty list of strings")
    n = len(names)
    pop = d.get("population")
    if not isinstance(pop, list) or not pop:
        raise _bad(path, "'population' must be a non-empty list of rows")
    population = tuple(_vector(row, n, "population", path) for row in pop)
    strategy = d.get("strategy")
    if not isinstance(strategy, str):
        raise _bad(path, "'strategy' must be a string")
    matches, stats, state = d.get("matches", []), d.get("stats", {}), d.get("state")
    if not isinstance(matches, list) or not all(isinstance(m, dict) for m in matches):
        raise _bad(path, "'matches' must be a list of objects")
    if not isinstance(stats, dict):
        raise _bad(path, "'stats' must be an object")
    if state is not None and not isinstance(state, dict):
        raise _bad(path, "'state' must be an object")
    gauntlet = d.get("gauntlet")
    if gauntlet is not None and not (isinstance(gauntlet, dict)
                                     and isinstance(gauntlet.get("opponents"), list)
                                     and isinstance(gauntlet.get("candidates"), list)):
        raise _bad(path, "'gauntlet' must be an object with 'opponents' and 'candidates' lists")
    gen = Generation(
        generation=_int(d, "generation", path), strategy=strategy, names=tuple(names),
        population=population, mean=_vector(d.get("mean"), n, "mean", path),
        std=_vector(d.get("std"), n, "std", path), games=_int(d, "games", path),
        games_total=_int(d, "games_total", path), matches=tuple(matches), stats=stats,
        seconds=_float(d, "seconds", path) if "seconds" in d else 0.0,
        seconds_total=_float(d, "seconds_total", path) if "seconds_total" in d else 0.0,
        state=state, gauntlet=gauntlet)
    if gen.games > gen.games_total:
        raise _bad(path, f"games {gen.games} > games_total {gen.games_total}")
    return gen


@dataclass(frozen=True)
class GameLine:
    """One line of games.jsonl: a game record (``GameRecord.to_dict()``) and where it is."""

    line: int
    """1-based line number in games.jsonl."""
    key: tuple[int, int, int, int]
    """(generation, fixture, pair, game index)."""
    data: dict
    """The record (``GameRecord.from_dict`` reads it)."""


_GAME_STR = ("white", "black", "result", "termination")
_GAME_LIST = ("white_weights", "black_weights", "moves")


def parse_game_line(raw: bytes, line: int, path: Path) -> GameLine:
    """The one validator of a game log line."""
    where = f"{path} line {line}"
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise _bad(Path(where), "not a JSON game record") from None
    if not isinstance(d, dict):
        raise _bad(Path(where), "not a JSON object")
    key = d.get("key")
    if not (isinstance(key, list) and len(key) == 4
            and all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in key)):
        raise _bad(Path(where), f"'key' must be 4 integers >= 0, not {key!r}")
    for k in _GAME_STR:
        if not isinstance(d.get(k), str):
            raise _bad(Path(where), f"'{k}' must be a string")
    for k in _GAME_LIST:
        if not isinstance(d.get(k), list):
            raise _bad(Path(where), f"'{k}' must be a list")
    if d["result"] not in RESULTS:
        raise _bad(Path(where), f"result {d['result']!r} is not one of {', '.join(RESULTS)}")
    if not isinstance(d.get("opening"), dict) or not isinstance(d["opening"].get("fen"), str):
        raise _bad(Path(where), "'opening' must be an object with a 'fen'")
    return GameLine(line=line, key=tuple(key), data=d)


# ---- the run directory ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ResumePoint:
    """What :meth:`Store.prepare_resume` found and did."""

    state: State | None
    """The state to continue from (None: nothing stored yet, start at generation 0)."""
    notes: tuple[str, ...]
    """One line per repair (shown to the user)."""


class Store:
    """One run directory."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock_fd: int | None = None

    # -- locating ------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    @property
    def games_path(self) -> Path:
        return self.root / "games.jsonl"

    @property
    def pgn_path(self) -> Path:
        return self.root / "games.pgn"

    @property
    def generations_dir(self) -> Path:
        return self.root / "generations"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    @classmethod
    def create(cls, out_dir: str | Path, run_id: str, *, config, identity: dict) -> "Store":
        """Make a new run directory and hold its writer lock; refuses an existing run."""
        from .config import RunConfig, run_config_from_dict

        check_run_id(run_id)
        cfg = config if isinstance(config, RunConfig) else run_config_from_dict(config)
        root = Path(out_dir) / run_id
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot make the run folder {root} ({exc.strerror})") from None
        store = cls(root)
        store.lock()
        if store.manifest_path.exists():
            store.unlock()
            raise StoreError(f"run '{run_id}' already exists in {root.parent}; continue it with "
                             f"'evotune resume {run_id}' or choose another --run-id")
        manifest = Manifest(run_id=run_id, config=cfg, identity=dict(identity))
        atomic_write_json(store.manifest_path, manifest.to_json())
        return store

    @classmethod
    def open(cls, run: str | Path, out_dir: str | Path = "populations") -> "Store":
        """Open a run by id (under ``out_dir``) or by path."""
        if "\x00" in str(run) or "\x00" in str(out_dir):
            raise StoreError("a run id or path cannot hold a NUL character")
        for cand in (Path(out_dir) / str(run), Path(run)):
            try:
                if (cand / "manifest.json").is_file():
                    return cls(cand)
            except OSError:
                continue
        known = ", ".join(s.run_id for s in list_runs(out_dir)[:10]) or "none"
        raise StoreError(f"no run {str(run)!r} in {out_dir}/ (runs there: {known}); give a run "
                         "id or the path of a run directory")

    # -- the writer lock -------------------------------------------------------------------------
    def lock(self) -> None:
        """Become the run's only writer (an OS lock: a dead holder's lock is released by the OS);
        refuses with the holder's PID when another live process writes the run."""
        if self._lock_fd is not None:
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot open the lock file {self.lock_path} ({exc.strerror})") \
                from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreError(f"run '{self.run_id}' is being written by process {holder}; wait "
                             "for it to end (or stop it) before running or resuming it") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def __del__(self) -> None:
        self.unlock()

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    # -- manifest and state ----------------------------------------------------------------------
    def manifest(self) -> Manifest:
        return parse_manifest(_read_json(self.manifest_path, "manifest"), self.manifest_path)

    def read_state(self) -> State | None:
        """state.json, or None when it does not exist."""
        if not self.state_path.exists():
            return None
        return parse_state(_read_json(self.state_path, "state file"), self.state_path)

    def current_state(self) -> State | None:
        """The state for readers: state.json, else the one the last generation file commits
        (None when nothing is stored yet)."""
        state = self.read_state()
        if state is not None:
            return state
        files = self._generation_files()
        if not files:
            return None
        last = self._read_generation_file(files[-1][1], files[-1][0])
        if last.state is None:
            raise StoreError(f"{self.state_path} is missing and {files[-1][1]} does not hold "
                             "the strategy state to rebuild it; restore state.json or start a "
                             "new run with another --run-id")
        return last.as_state()

    def write_state(self, state: State | dict) -> None:
        if isinstance(state, dict):
            state = parse_state(state, self.state_path)
        atomic_write_json(self.state_path, state.to_json())

    # -- generations -----------------------------------------------------------------------------
    def generation_path(self, generation: int) -> Path:
        return self.generations_dir / f"gen-{generation:04d}.json"

    def write_generation(self, generation: int, data: Generation | dict) -> None:
        path = self.generation_path(generation)
        if isinstance(data, dict):
            data = parse_generation(data, path)
        atomic_write_json(path, data.to_json())

    def _read_generation_file(self, path: Path, number: int) -> Generation:
        gen = parse_generation(_read_json(path, "generation file"), path)
        if gen.generation != number:
            raise _bad(path, f"it says generation {gen.generation}")
        return gen

    def read_generation(self, generation: int) -> Generation:
        return self._read_generation_file(self.generation_path(generation), generation)

    def _generation_files(self) -> list[tuple[int, Path]]:
        """(number, path) of every generation file, sorted; anything else there is damage."""
        d = self.generations_dir
        if not d.exists():
            return []
        if not d.is_dir():
            raise _bad(d, "a file where the generations folder should be")
        out = []
        for p in d.iterdir():
            if p.name.startswith("."):
                continue  # a temporary file of an interrupted atomic write
            m = GEN_FILE_RE.match(p.name)
            if not m:
                raise StoreError(f"{p} does not belong in {d}; move it away")
            out.append((int(m.group(1)), p))
        return sorted(out)

    def generations(self, state: State | None = None) -> list[Generation]:
        """Every generation up to the state's, in order, checked to form one history: no gap,
        the same weights throughout, game counts adding up (gen-0000 = the initial population)."""
        state = self.current_state() if state is None else state
        files = dict(self._generation_files())
        if state is None:
            return []
        out: list[Generation] = []
        for g in range(state.generation + 1):
            if g not in files:
                raise StoreError(f"{self.generation_path(g)} is missing (the run's state is at "
                                 f"generation {state.generation}); restore it or start a new run "
                                 "with another --run-id")
            gen = self._read_generation_file(files[g], g)
            if out:
                prev = out[-1]
                if gen.names != prev.names:
                    raise _bad(files[g], "its weight names differ from the previous generation's")
                if gen.games_total != prev.games_total + gen.games:
                    raise _bad(files[g], f"games_total {gen.games_total} != {prev.games_total} "
                                         f"+ {gen.games}")
            out.append(gen)
        if out[-1].games_total != state.games:
            raise _bad(self.state_path, f"it counts {state.games} games but "
                                        f"{files[state.generation].name} counts "
                                        f"{out[-1].games_total}")
        return out

    # -- games -----------------------------------------------------------------------------------
    def append_games(self, records: Iterable[dict], pgn_text: str = "") -> None:
        """Append game records to the log (and their PGN text to games.pgn)."""
        lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
        if lines:
            _append(self.games_path, lines, sync=True)
        if pgn_text:
            self.append_pgn(pgn_text)

    def append_pgn(self, pgn_text: str) -> None:
        """Append PGN text to games.pgn (the game log stays the source of truth)."""
        _append(self.pgn_path, pgn_text, sync=False)

    def pgn_game_count(self) -> int:
        """Number of games in games.pgn (counted by their Event tags)."""
        try:
            data = self.pgn_path.read_bytes()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise StoreError(f"{self.pgn_path} cannot be read ({exc.strerror})") from None
        return data.count(b"\n[Event ") + int(data.startswith(b"[Event "))

    def _pgn_complete(self, games: int) -> bool:
        try:
            data = self.pgn_path.read_bytes()
        except FileNotFoundError:
            return games == 0
        except OSError:
            return False
        count = data.count(b"\n[Event ") + int(data.startswith(b"[Event "))
        return count == games and (games == 0 or data.endswith(b"\n\n"))

    def game_lines(self) -> tuple[list[GameLine], int]:
        """Every complete line of the log, validated, and the byte length of a torn last line
        (written without its newline by a process killed mid-write; 0 when there is none).
        Damage anywhere else and a duplicated game key are refused, naming the line."""
        try:
            data = self.games_path.read_bytes()
        except FileNotFoundError:
            return [], 0
        except OSError as exc:
            raise StoreError(f"{self.games_path} cannot be read ({exc.strerror})") from None
        parts = data.split(b"\n")
        torn = len(parts[-1])  # the bytes after the last newline
        out, seen = [], {}
        for i, raw in enumerate(parts[:-1], start=1):
            rec = parse_game_line(raw, i, self.games_path)
            if rec.key in seen:
                raise StoreError(f"{self.games_path} line {i} repeats the game {list(rec.key)} "
                                 f"of line {seen[rec.key]}; remove the duplicate line")
            seen[rec.key] = i
            out.append(rec)
        return out, torn

    def read_games(self) -> list[dict]:
        """All complete game records in the log (a torn last line is left out)."""
        return [g.data for g in self.game_lines()[0]]

    # -- resume ------------------------------------------------------------------------------------
    def prepare_resume(self, *, to_pgn=None, check_only: bool = False) -> ResumePoint:
        """Check the whole stored history, repair what a crash leaves behind, return the state.

        Repaired (one note each): a missing state.json when the last generation file holds the
        strategy state (rebuilt exactly); the games and the generation file of a generation not
        yet committed by the state; a torn last line of the log; a games.pgn behind the log
        (rebuilt in full from it with ``to_pgn(records) -> str``). Refused (StoreError naming
        the file and line): anything else - a damaged or missing generation, a damaged line
        before the end, a duplicated game, a log that lacks games the generations count.
        ``check_only``: refuse what is refused, but write nothing.
        """
        notes = []
        files = self._generation_files()
        state = self.read_state()
        if state is None and files:
            state = self.current_state()
            if not check_only:
                self.write_state(state)
            notes.append(f"{self.state_path.name} was missing: rebuilt from "
                         f"{files[-1][1].name} (generation {state.generation})")
        if state is None:
            if self.games_path.exists() and self.games_path.stat().st_size:
                raise StoreError(f"{self.games_path} holds games but no generation is stored; "
                                 "restore the generations folder or start a new run")
            return ResumePoint(None, tuple(notes))
        gens = self.generations(state)
        committed = state.generation
        extra = [(g, p) for g, p in files if g > committed]
        if any(g != committed + 1 for g, _ in extra):
            bad = next(p for g, p in extra if g != committed + 1)
            raise StoreError(f"{bad} lies beyond the run's state (generation {committed}); "
                             "restore state.json or move the file away")
        lines, torn = self.game_lines()
        per_gen: dict[int, int] = {}
        for rec in lines:
            g = rec.key[0]
            if g < 1 or g > committed + 1:
                raise _bad(Path(f"{self.games_path} line {rec.line}"),
                           f"a game of generation {g}, but the run is at generation {committed}")
            per_gen[g] = per_gen.get(g, 0) + 1
        for gen in gens[1:]:
            have = per_gen.get(gen.generation, 0)
            if have != gen.games:
                raise StoreError(
                    f"{self.games_path} holds {have} games of generation {gen.generation} but "
                    f"{self.generation_path(gen.generation).name} counts {gen.games}; restore the "
                    "game log from a backup or start a new run with another --run-id")
        keep = [rec for rec in lines if rec.key[0] <= committed]
        if check_only:
            return ResumePoint(state, tuple(notes))
        if len(keep) != len(lines) or torn:
            atomic_write_text(self.games_path, "".join(
                json.dumps(r.data, sort_keys=True) + "\n" for r in keep))
            notes.append(f"dropped {len(lines) - len(keep)} games of the unfinished generation "
                         f"{committed + 1}" + (" and a torn last line" if torn else ""))
        for g, p in extra:
            p.unlink()
        if to_pgn is not None and not self._pgn_complete(len(keep)):
            atomic_write_text(self.pgn_path, to_pgn([r.data for r in keep]))
            notes.append(f"rebuilt {self.pgn_path.name} from the game log ({len(keep)} games)")
        return ResumePoint(state, tuple(notes))

    # -- other documents -------------------------------------------------------------------------
    def write_document(self, name: str, data: dict) -> None:
        """A named JSON document of the run (e.g. 'verify' -> verify.json)."""
        atomic_write_json(self.root / f"{name}.json", data)

    def read_verify(self) -> dict | None:
        """verify.json (checked by :func:`check_verify`), or None when the run is unverified."""
        doc = self.read_document("verify")
        return None if doc is None else check_verify(doc, self.root / "verify.json")

    def read_document(self, name: str) -> dict | None:
        """A named JSON document (an object), or None when there is none."""
        path = self.root / f"{name}.json"
        return _object(_read_json(path, name), path) if path.exists() else None


def check_verify(doc: dict, path: Path) -> dict:
    """The validator of verify.json (written by ``evotune verify``): the fields reports use."""
    def bad(what):
        return StoreError(f"{path} is damaged ({what}); run 'evotune verify' again to replace it")

    g = doc.get("generation")
    if g is not None and (isinstance(g, bool) or not isinstance(g, int) or g < 0):
        raise bad(f"'generation' must be an integer >= 0, not {g!r}")
    w = doc.get("weights", [])
    if not isinstance(w, list) or not all(isinstance(x, (int, float)) for x in w):
        raise bad("'weights' must be a list of numbers")
    matches = doc.get("matches", [])
    if not isinstance(matches, list) or not all(
            isinstance(m, dict) and all(isinstance(m.get(k), int) and not isinstance(m.get(k), bool)
                                        for k in ("games", "wins", "draws", "losses"))
            for m in matches):
        raise bad("'matches' must be a list of match objects with games, wins, draws, losses")
    return doc


def check_run_id(run_id: str) -> None:
    """Run ids are folder names: letters, digits, '.', '_' and '-' (no separators, no control
    characters)."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise StoreError(f"run id {run_id!r} is not allowed; use letters, digits, '.', '_' and "
                         "'-' (at most 100 characters, starting with a letter or digit)")


def list_runs(out_dir: str | Path = "populations") -> list[Store]:
    """Run directories under ``out_dir``, newest first."""
    base = Path(out_dir)
    if not base.is_dir():
        return []
    runs = [Store(p) for p in base.iterdir() if (p / "manifest.json").is_file()]
    return sorted(runs, key=lambda s: s.manifest_path.stat().st_mtime, reverse=True)
