"""A weights run's engine spec: the spec a run names (:func:`load_run_engine`: a name, a .toml
path or ``SPEC:FILE``), the copy a run keeps in its folder (:data:`SPEC_FILE`,
:func:`store_engine_spec`) and that copy read back (:func:`run_engine_spec`), with the net or
move model it plays checked against the bytes the run started with (:class:`RunNetError`).

Every kind whose weights play (games runs, fits) reads its spec here, so the readers below the
kinds (:mod:`evotune.runs.rundata`, verify, reporting) read any such run's spec alike."""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from ..engine.evaluation import spec_evaluation
from ..engine.movemodel.modelfile import cached_model
from ..errors import ConfigError, EvotuneError, NetError, StoreError
from ..fileio import atomic_write_json
from ..players.nets import output_weights
from ..spec.file import engine_spec_from_text, engine_spec_with_net, load_engine_spec, resolve_command
from ..spec.model import EngineSpec
from ..spec.player import parse_engine_ref
from .recordio import read_json
from .registry import WeightsConfig


def load_run_engine(engine: str | Path) -> EngineSpec:
    """The engine spec a run names (``--engine``): a spec's name or .toml path, or ``SPEC:FILE``,
    an 'nnue' spec playing the net file FILE (``nnue:net.nnue``). An 'nnue' spec is read with
    its net's output layer and scale as its weights (what a run tunes:
    :func:`~evotune.players.nets.output_weights`); one that names no net is refused."""
    ref = parse_engine_ref(str(engine))
    if ref.file is None:
        spec = load_engine_spec(ref.spec, net_weights=output_weights)
    else:
        spec = engine_spec_with_net(ref.spec, ref.file, net_weights=output_weights)
    if spec.search.model:  # its move model read and checked: a damaged file is one line
        cached_model(spec.search.model)
    evaluation = spec_evaluation(spec)
    if evaluation is not None and evaluation.reads_file and not spec.net:
        raise ConfigError(f"engine spec '{spec.name}' names no net; give --engine "
                          f"{spec.name}:FILE (a net file) or put net = \"FILE\" in the spec")
    return spec


SPEC_FILE = "engine-spec.json"
"""The copy of its engine spec a run keeps: the spec file's text, its reference file's, the
command resolved to absolute paths, the spec's digest and where it was read; for a run that
starts from earlier weights also those weights (``start_values``) and their source."""


def store_engine_spec(root: Path, spec: EngineSpec) -> None:
    """Keep a copy of ``spec`` in the run folder ``root`` (see :data:`SPEC_FILE`), so that the
    run is read, verified, exported and resumed from any working directory."""
    if not spec.text:  # a spec made in code, not read from a file: runs name it by path
        return
    atomic_write_json(Path(root) / SPEC_FILE, {
        "source": spec.path, "digest": spec.file_digest, "text": spec.text,
        "reference_text": spec.reference_text if spec.reference_file else None,
        "command": list(resolve_command(spec.command)),
        **({"start_values": spec.start_values, "start_source": spec.start_source}
           if spec.start_values else {})})


class RunNetError(StoreError):
    """The net file a run's engine spec plays is missing, unreadable or not the bytes the run
    started with (they are part of its identity): no command reads such a run."""


def _check_run_net(root: Path, spec: EngineSpec) -> None:
    """RunNetError when ``spec`` (read from the run's copy) plays a net whose bytes changed since
    the run started: the spec's digest, which holds the net's, differs from the manifest's."""
    try:
        stored = read_json(root / "manifest.json", "manifest")["identity"]["engine_spec"]
    except (EvotuneError, KeyError, TypeError):
        return  # the manifest's own readers refuse it, naming it
    if stored != spec.digest:
        files = ([f"net file {spec.net}"] if spec.net else []) + (
            [f"move-model file {spec.search.model}"] if spec.search.model else [])
        what = " or ".join(files)
        raise RunNetError(f"run '{root.name}': its {what} changed since the run started (the "
                          "run's identity holds the file's bytes); restore the file the run "
                          "was started with")


def check_run_net(root: str | Path, cfg: WeightsConfig) -> None:
    """RunNetError when the run in ``root`` plays a net that is missing or changed since it
    started (as :func:`run_engine_spec` finds); any other trouble with its spec is left to the
    commands that need the spec (``status`` shows the stored numbers without it)."""
    try:
        run_engine_spec(root, cfg)
    except RunNetError:
        raise
    except EvotuneError:
        pass


def run_engine_spec(root: str | Path, cfg: WeightsConfig,
                    engine: str | Path | None = None) -> EngineSpec:
    """The engine spec of the run in ``root``: ``engine`` when given (a name or path), else the
    copy the run keeps, else (a run made before runs kept one) ``cfg.engine`` as a path. A net
    the copy plays must be the file the run started with (:class:`RunNetError`)."""
    path = Path(root) / SPEC_FILE
    if engine is not None or not path.is_file():
        return load_run_engine(cfg.engine if engine is None else engine)
    doc = read_json(path, "engine spec copy")
    text, digest, ref = doc.get("text"), doc.get("digest"), doc.get("reference_text")
    command = doc.get("command")
    start, start_source = doc.get("start_values", ""), doc.get("start_source", "")
    if not (isinstance(text, str) and isinstance(digest, str) and isinstance(command, list)
            and all(isinstance(c, str) for c in command) and isinstance(ref, (str, type(None)))
            and isinstance(start, str) and isinstance(start_source, str)
            and digest in (hashlib.sha256(t.encode()).hexdigest() for t in (text, "\ufeff" + text))):
        raise StoreError(f"{path} is damaged; restore it, or delete it to read the spec from "
                         f"{doc.get('source') or cfg.engine}")
    try:
        spec = engine_spec_from_text(text, where=str(doc.get("source") or cfg.engine),
                                     digest=digest, reference_text=ref, command=tuple(command),
                                     start_values=start, start_source=start_source,
                                     net_weights=output_weights)
    except NetError as exc:
        raise RunNetError(f"run '{Path(root).name}': {exc}; put back the net file the run was "
                          "started with") from None
    except ConfigError as exc:
        if not start:
            raise
        raise StoreError(f"{path} is damaged ({exc}); restore it (the run's start weights are "
                         "kept there only)") from None
    if spec.net or spec.search.model:  # their bytes are in the spec's digest
        _check_run_net(Path(root), spec)
    return dataclasses.replace(spec, path=f"{doc.get('source')} (copy kept in {path})")
