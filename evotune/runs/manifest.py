"""manifest.json, what a run is: its kind and validated config, identity, data files and start
(:class:`Manifest`, :func:`parse_manifest`), the store formats it is read in, and the run id
that names the run's folder (:func:`check_run_id`)."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..datafiles import DataFile
from ..errors import EvotuneError, StoreError
from ..fileio import check_writable
from .recordio import damaged, int_field, json_object
from .registry import format1_kind, stored_kind, stored_kinds

FORMAT_VERSION = 2
"""The store format written: 2 = the manifest names its kind ('games': a RunConfig; 'fit': a
TexelConfig and the data files read). Format 1 (every manifest a RunConfig, a fit's with strategy
'texel') is still read: the kind that claims a format-1 config reads it
(:attr:`~evotune.runs.registry.StoredKind.format1`: a fit exactly, or refused in one line)."""
READ_FORMATS = (1, 2)
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


START_KINDS = ("fit", "games", "weights")
"""What a run's start came from: a Texel fit, a tuning run by games, or a weights file."""


@dataclass(frozen=True)
class StartFrom:
    """Where a games run's start came from (``evotune run --init-from RUN`` or ``--engine
    SPEC:WEIGHTS``): those weights are the reference values of the run's engine spec (its copy,
    engine-spec.json, holds them), and the strategies start from them."""

    kind: str
    """'fit', 'games' or 'weights' (:data:`START_KINDS`)."""
    source: str
    """The run id, or the weights file as given."""
    path: str
    """The absolute path of the run folder or the file."""
    weights_sha256: str
    """sha256 of the start values as the run's spec copy holds them
    (:func:`evotune.spec.start.start_checksum`)."""
    engine: str = ""
    """The source run's engine spec (a weights file: the spec named with it)."""
    strategy: str = ""
    """The source run's strategy ('texel' for a fit; '' for a weights file)."""
    generation: int = 0
    """The source run's generation (a fit's epoch) the weights come from."""
    description: str = ""
    """How the source's weights were chosen (its recommendation)."""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def parse_start_from(d, path: Path) -> StartFrom:
    """The validator of a manifest's ``init_from``."""
    if not isinstance(d, dict):
        raise damaged(path, "'init_from' must be an object")
    if d.get("kind") not in START_KINDS:
        raise damaged(path, f"'init_from.kind' must be one of {', '.join(START_KINDS)}")
    text = {k: d.get(k, "") for k in ("source", "path", "weights_sha256", "engine", "strategy",
                                       "description")}
    if not all(isinstance(v, str) for v in text.values()) \
            or not re.fullmatch(r"[0-9a-f]{64}", text["weights_sha256"]):
        raise damaged(path, "'init_from' needs source, path and weights_sha256 (64 hex digits) "
                            "strings")
    return StartFrom(kind=d["kind"],
                     generation=int_field(d, "generation", path) if "generation" in d else 0,
                     **text)


@dataclass(frozen=True)
class Manifest:
    """manifest.json: what the run is."""

    run_id: str
    """The run's id (its folder name)."""
    config: Any
    """The resolved configuration, validated (a :class:`~evotune.runs.runkind.KindConfig`): a
    RunConfig (kind 'games'), a TexelConfig (kind 'fit'), a TrainConfig (kind 'train') or a
    registered kind's."""
    identity: dict
    """Hashes: config, engine_spec, openings, hash (all strings); a fit's init and data too."""
    data_files: tuple[DataFile, ...] = ()
    """Fits and trainings: the data files read (name, size, SHA-256); empty for games runs."""
    evotune: str = __version__
    """The evotune version that created the run."""
    format: int = FORMAT_VERSION
    """The store format the manifest was read in (written: :data:`FORMAT_VERSION`)."""
    init_from: StartFrom | None = None
    """A games run that started from earlier weights: where they came from; None otherwise."""
    extensions: tuple[dict, ...] = ()
    """Each raise of the run's budget on resume (:mod:`evotune.kinds.games.budget`), oldest first."""

    @property
    def kind(self) -> str:
        """The kind's name ('games', 'fit', 'train', 'moves' or another registered kind's)."""
        return self.config.kind

    def to_json(self) -> dict:
        d = {"format": FORMAT_VERSION, "kind": self.kind, "evotune": self.evotune,
             "run_id": self.run_id, "config": self.config.to_dict()}
        stored = stored_kind(self.kind)
        if stored is not None and stored.data_files:
            d["data_files"] = [f.to_json() for f in self.data_files]
        d["identity"] = dict(self.identity)
        if self.init_from is not None:
            d["init_from"] = self.init_from.to_json()
        if self.extensions:
            d["extensions"] = [dict(e) for e in self.extensions]
        return d


def parse_manifest(data, path: Path) -> Manifest:
    """The one validator of manifest.json (formats :data:`READ_FORMATS`)."""

    d = json_object(data, path)
    fmt = d.get("format")
    if isinstance(fmt, bool) or fmt not in READ_FORMATS:
        raise StoreError(f"{path}: format {fmt!r} is not supported by this evotune (it reads "
                         f"formats {READ_FORMATS[0]} to {READ_FORMATS[-1]})")
    config = d.get("config")
    if not isinstance(config, dict):
        raise damaged(path, "no 'config' object")
    ident = d.get("identity")
    if not isinstance(ident, dict) or not all(isinstance(v, str) for v in ident.values()):
        raise damaged(path, "'identity' must be an object of strings")
    kind = d.get("kind") if fmt > 1 else format1_kind(config)
    stored = stored_kind(kind) if isinstance(kind, str) else None
    if stored is None:
        raise damaged(path, f"'kind' must be one of {', '.join(stored_kinds())}, not {kind!r}")
    try:
        cfg, files = stored.read(d, config, fmt)
    except EvotuneError as exc:
        raise damaged(path, f"its config: {exc}") from None
    run_id = d.get("run_id")
    if not isinstance(run_id, str):
        raise damaged(path, "'run_id' must be a string")
    start = d.get("init_from")
    if start is not None and not stored.takes_start:
        raise damaged(path, f"'init_from' belongs to a games run, not a {kind} run")
    extensions = d.get("extensions", [])
    if not (isinstance(extensions, list) and all(isinstance(e, dict) for e in extensions)):
        raise damaged(path, "'extensions' must be a list of objects")
    return Manifest(run_id=run_id, config=cfg, identity=dict(ident), data_files=files,
                    evotune=str(d.get("evotune", "")), format=fmt,
                    init_from=None if start is None else parse_start_from(start, path),
                    extensions=tuple(extensions))


def check_run_id(run_id: str) -> None:
    """Run ids are folder names: letters, digits, '.', '_' and '-' (no separators, no control
    characters)."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise StoreError(f"run id {run_id!r} is not allowed; use letters, digits, '.', '_' and "
                         "'-' (at most 100 characters, starting with a letter or digit)")


def check_new_run(out_dir: str | Path, run_id: str | None) -> None:
    """Before a new run's work: its runs folder writable and outside any run's folder, its id
    (when given) allowed and not taken; StoreError, one line, otherwise (the store checks the
    id once more, under the lock, when it makes the folder)."""
    if run_id is not None:
        check_run_id(run_id)
    check_runs_folder(out_dir)
    if run_id is not None and (Path(out_dir) / run_id / "manifest.json").exists():
        raise StoreError(f"run '{run_id}' already exists in {out_dir}; continue it with "
                         f"'evotune resume {run_id}' or choose another --run-id")


def check_outside_runs(path: str | Path, what: str, *, runs_dir: str | Path | None = None
                       ) -> None:
    """Refuse an output ``path`` (``what`` names its flag) inside a run's folder (a folder
    above it holds a manifest.json) or inside the runs folder ``runs_dir``: only a run's store
    writes there, and a file written beside a run's records could replace one of them."""
    target = Path(path).resolve()
    for folder in target.parents:
        if (folder / "manifest.json").is_file():
            raise StoreError(f"{what} {path} lies inside the folder of run '{folder.name}' "
                             f"({folder}), which only that run writes; give a path outside it")
    if runs_dir is not None and Path(runs_dir).resolve() == target:
        raise StoreError(f"{what} {path} is the runs folder {runs_dir}; give a file outside it")
    if runs_dir is not None and Path(runs_dir).resolve() in target.parents:
        raise StoreError(f"{what} {path} lies inside the runs folder {runs_dir}, which only the "
                         "runs write; give a path outside it")


def check_runs_folder(runs_dir: str | Path) -> None:
    """Refuse, before any work, a runs folder (``--runs-dir``) that cannot be written or that
    lies inside a run's folder (it or a folder above it holds a manifest.json): a run made there
    would write among that run's records, which only that run writes."""
    check_writable(runs_dir, "runs folder", folder=True, parents=False)
    target = Path(runs_dir).resolve()
    for folder in (target, *target.parents):
        if (folder / "manifest.json").is_file():
            raise StoreError(f"--runs-dir {runs_dir} lies inside the folder of run "
                             f"'{folder.name}' ({folder}), which only that run writes; give a "
                             "runs folder outside it")
