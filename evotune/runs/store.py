"""One run folder (:class:`Store`): the only writer under ``populations/<run-id>/``.

Order of writes for a generation: games (log, PGN), then the generation file, then the state.
:meth:`Store.prepare_resume` checks the whole history before a run continues and repairs only
what a crash can leave behind (see docs/internals.md, "The store's guarantees").
"""
from __future__ import annotations

import dataclasses
import io
import json
import logging
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..datafiles import DataFile
from ..errors import StoreError
from ..fileio import append_text, atomic_write_bytes, atomic_write_json, atomic_write_text
from ..match.gamerecord import GameRecord
from .finalcheck import (
    FINAL_CHECK_DOCUMENT,
    FINAL_CHECK_PGN,
    OLD_FINAL_CHECK_DOCUMENT,
    OLD_FINAL_CHECK_PGN,
    FinalCheck,
    parse_final_check,
)
from .gamelog import read_game_log
from .lock import RunLock
from .manifest import Manifest, StartFrom, check_run_id, parse_manifest
from .matchstore import MatchFolder
from .recordio import damaged, json_object, read_json
from .records import (
    EPOCH_FILE_RE,
    GEN_FILE_RE,
    GameLine,
    Generation,
    ResumePoint,
    State,
    check_verify,
    parse_generation,
    parse_state,
)
from .registry import KindConfig, stored_kind
from .trainrecords import EpochLine, parse_checkpoint, parse_epoch

log = logging.getLogger(__name__)

VERIFY_GAMES = "verify-games"
"""The folder of a run that keeps its verification matches' games (one folder per match)."""


class Store:
    """One run directory."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock = RunLock(self.root / ".lock", busy=(
            f"run '{self.root.name}' is being written by process {{pid}}; wait for it to end "
            "(or stop it) before running or resuming it"))

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
    def create(cls, out_dir: str | Path, run_id: str, *,
               config: KindConfig,
               identity: dict, data_files: tuple[DataFile, ...] = (),
               init_from: StartFrom | None = None) -> Store:
        """Make a new run directory and hold its writer lock; refuses an existing run.
        ``config``: a games run's RunConfig, a fit's TexelConfig, a
        training's TrainConfig (the last two come with the ``data_files`` they read) or a
        registered kind's config (:mod:`evotune.runs.runkind`).
        ``init_from``: where a games run's start came from."""
        check_run_id(run_id)
        cfg = config
        stored = stored_kind(cfg.kind)
        if stored is None:
            raise StoreError(f"no run kind '{cfg.kind}' is known to the store")
        if stored.data_files != bool(data_files):
            raise StoreError("a fit's manifest names its data files (so does a training's), a "
                             "games run's none")
        if init_from is not None and not stored.takes_start:
            raise StoreError("only a games run starts from earlier weights (init_from)")
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
        manifest = Manifest(run_id=run_id, config=cfg, identity=dict(identity),
                            data_files=tuple(data_files), init_from=init_from)
        atomic_write_json(store.manifest_path, manifest.to_json())
        return store

    @classmethod
    def open(cls, run: str | Path, out_dir: str | Path = "populations") -> Store:
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
        self._lock.acquire()

    def unlock(self) -> None:
        self._lock.release()

    # -- manifest and state ----------------------------------------------------------------------
    def manifest(self) -> Manifest:
        return parse_manifest(read_json(self.manifest_path, "manifest"), self.manifest_path)

    def read_state(self) -> State | None:
        """state.json, or None when it does not exist."""
        if not self.state_path.exists():
            return None
        return parse_state(read_json(self.state_path, "state file"), self.state_path)

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

    def write_state(self, state: State) -> None:
        """Commit ``state`` (the run's commit point)."""
        atomic_write_json(self.state_path, state.to_json())

    # -- generations -----------------------------------------------------------------------------
    def generation_path(self, generation: int) -> Path:
        return self.generations_dir / f"gen-{generation:04d}.json"

    def write_generation(self, gen: Generation) -> None:
        """Store generation ``gen.generation`` (its file is written once, atomically)."""
        atomic_write_json(self.generation_path(gen.generation), gen.to_json())

    def _read_generation_file(self, path: Path, number: int) -> Generation:
        gen = parse_generation(read_json(path, "generation file"), path)
        if gen.generation != number:
            raise damaged(path, f"it says generation {gen.generation}")
        return gen

    def read_generation(self, generation: int) -> Generation:
        return self._read_generation_file(self.generation_path(generation), generation)

    def _generation_files(self) -> list[tuple[int, Path]]:
        """(number, path) of every generation file, sorted; anything else there is damage."""
        d = self.generations_dir
        if not d.exists():
            return []
        if not d.is_dir():
            raise damaged(d, "a file where the generations folder should be")
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
                check_follows(out[-1], gen, files[g])
            out.append(gen)
        check_state_counts(self, state, out[-1].games_total)
        return out

    # -- games -----------------------------------------------------------------------------------
    def append_games(self, records: Iterable[GameRecord], pgn_text: str = "") -> None:
        """Append game records to the log (and their PGN text to games.pgn)."""
        lines = "".join(json.dumps(r.to_dict(), sort_keys=True) + "\n" for r in records)
        if lines:
            append_text(self.games_path, lines, sync=True)
        if pgn_text:
            self.append_pgn(pgn_text)

    def append_pgn(self, pgn_text: str) -> None:
        """Append PGN text to games.pgn (the game log stays the source of truth)."""
        append_text(self.pgn_path, pgn_text, sync=False)

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
        (:func:`~evotune.runs.gamelog.read_game_log`)."""
        return read_game_log(self.games_path)

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
            assert state is not None  # a generation file exists
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
                raise damaged(Path(f"{self.games_path} line {rec.line}"),
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
        for _g, p in extra:
            p.unlink()
        if to_pgn is not None and not self._pgn_complete(len(keep)):
            atomic_write_text(self.pgn_path, to_pgn([r.data for r in keep]))
            notes.append(f"rebuilt {self.pgn_path.name} from the game log ({len(keep)} games)")
        return ResumePoint(state, tuple(notes))

    # -- a training's files ------------------------------------------------------------------------
    @property
    def checkpoint_path(self) -> Path:
        return self.root / "checkpoint.npz"

    @property
    def epochs_dir(self) -> Path:
        return self.root / "epochs"

    def epoch_path(self, epoch: int) -> Path:
        return self.epochs_dir / f"epoch-{epoch:04d}.json"

    def write_checkpoint(self, arrays: dict, meta: dict) -> None:
        """Store a training's state (float32 vectors and their meta) atomically: a training's
        commit point."""
        parse_checkpoint(arrays, meta, self.checkpoint_path)
        buf = io.BytesIO()
        np.savez(buf, meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8),
                 **arrays)
        atomic_write_bytes(self.checkpoint_path, buf.getvalue())

    def read_checkpoint(self) -> tuple[dict, dict] | None:
        """(arrays, meta) of checkpoint.npz, checked; None when there is none."""
        path = self.checkpoint_path
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(arrays.pop("meta").tobytes().decode())
        except (OSError, EOFError, ValueError, KeyError, UnicodeDecodeError,
                zipfile.BadZipFile) as exc:  # EOFError: an empty file (click calls it 'aborted')
            raise StoreError(f"{path} is damaged ({type(exc).__name__}); restore it or start a "
                             "new training with another --run-id") from None
        return parse_checkpoint(arrays, meta, path)

    def write_epoch(self, line: EpochLine) -> None:
        """Store a training's epoch record (written once per epoch, atomically)."""
        atomic_write_json(self.epoch_path(line.epoch), line.to_json())

    def epoch_lines(self, upto: int) -> list[EpochLine]:
        """The records of epochs 1..``upto`` (each one checked; a missing one refused)."""
        out = []
        for e in range(1, upto + 1):
            path = self.epoch_path(e)
            line = parse_epoch(read_json(path, "epoch record"), path)
            if line.epoch != e:
                raise damaged(path, f"it says epoch {line.epoch}")
            out.append(line)
        return out

    def drop_epochs_after(self, epoch: int) -> int:
        """Remove the records of epochs beyond the checkpoint's (a kill between an epoch's
        record and its checkpoint); returns how many."""
        extra = [p for p in (self.epochs_dir.iterdir() if self.epochs_dir.is_dir() else ())
                 if (m := EPOCH_FILE_RE.match(p.name)) and int(m.group(1)) > epoch]
        for p in extra:
            p.unlink()
        return len(extra)

    def write_bytes(self, name: str, data: bytes) -> None:
        """A binary file of the run (a training's nets), written atomically."""
        atomic_write_bytes(self.root / name, data)

    # -- a raised budget ---------------------------------------------------------------------------
    def extend(self, config: KindConfig, record: dict) -> None:
        """Keep a raise of the run's budget: the manifest's config with the new limits and the
        raise's ``record`` appended to its extensions (:mod:`evotune.kinds.games.budget`). A final
        check of the old end is set aside first (``final-check-gNNNN.json`` and ``.pgn``; the record
        holds it too), so that the run's recommendation waits for the check at the new end."""
        for doc_name, pgn_name in ((FINAL_CHECK_DOCUMENT, FINAL_CHECK_PGN),
                                   (OLD_FINAL_CHECK_DOCUMENT, OLD_FINAL_CHECK_PGN)):
            doc = self.read_document(doc_name)  # the record, or under its old name
            if doc is None:
                continue
            tag = f"final-check-g{int(doc.get('generation', 0)):04d}"
            atomic_write_json(self.root / f"{tag}.json", doc)
            pgn = self.root / pgn_name
            if pgn.exists():
                pgn.replace(self.root / f"{tag}.pgn")
            (self.root / f"{doc_name}.json").unlink()
        manifest = self.manifest()
        atomic_write_json(self.manifest_path, dataclasses.replace(
            manifest, config=config, extensions=(*manifest.extensions, record)).to_json())

    # -- a verification's matches -------------------------------------------------------------
    def match_folder(self, identity: dict, settings: dict) -> MatchFolder:
        """The folder that keeps one verification match's games as they end
        (``verify-games/<identity hash>/``, a :class:`~evotune.runs.matchstore.MatchFolder`):
        the same verification again continues it (a stopped one where it stopped, a finished
        one with no game played); another one has a folder of its own."""
        return MatchFolder.open(self.root / VERIFY_GAMES / identity["hash"], identity=identity,
                                settings=settings, date=time.strftime("%Y.%m.%d"),
                                what="the verification")

    # -- other documents -------------------------------------------------------------------------
    def write_document(self, name: str, data: dict) -> None:
        """A named JSON document of the run (e.g. 'verify' -> verify.json)."""
        atomic_write_json(self.root / f"{name}.json", data)

    def read_verify(self) -> dict | None:
        """verify.json (checked by :func:`check_verify`), or None when the run is unverified."""
        doc = self.read_document("verify")
        return None if doc is None else check_verify(doc, self.root / "verify.json")

    def read_final_check(self, n: int | None = None) -> FinalCheck | None:
        """final-check.json (the final check, :mod:`evotune.runs.finalcheck`; guard.json in a run
        made before round 5), or None before it."""
        for name in (FINAL_CHECK_DOCUMENT, OLD_FINAL_CHECK_DOCUMENT):
            doc = self.read_document(name)
            if doc is not None:
                return parse_final_check(doc, self.root / f"{name}.json", n)
        return None

    def read_document(self, name: str) -> dict | None:
        """A named JSON document (an object), or None when there is none."""
        path = self.root / f"{name}.json"
        return json_object(read_json(path, name), path) if path.exists() else None


def check_follows(prev, gen, path: Path) -> None:
    """``gen`` (a stored generation or any record with its ``names``, ``games`` and
    ``games_total``) continues ``prev``'s history: the same weights, its games adding up; a
    damaged record naming ``path`` otherwise (the one rule every reader of a run's generations
    applies)."""
    if gen.names != prev.names:
        raise damaged(path, "its weight names differ from the previous generation's")
    if gen.games_total != prev.games_total + gen.games:
        raise damaged(path, f"games_total {gen.games_total} != {prev.games_total} + {gen.games}")


def check_state_counts(store: Store, state: State, games_total: int) -> None:
    """The state's games are the last generation's ``games_total`` (damaged state.json
    otherwise)."""
    if games_total != state.games:
        raise damaged(store.state_path, f"it counts {state.games} games but "
                                        f"{store.generation_path(state.generation).name} counts "
                                        f"{games_total}")


def list_runs(out_dir: str | Path = "populations") -> list[Store]:
    """Run directories under ``out_dir``, newest first."""
    base = Path(out_dir)
    if not base.is_dir():
        return []
    runs = [Store(p) for p in base.iterdir() if (p / "manifest.json").is_file()]
    return sorted(runs, key=lambda s: s.manifest_path.stat().st_mtime, reverse=True)
