"""Where a new games run starts: an earlier run's weights (``evotune run --init-from RUN``) or a
weights file (``evotune run --engine SPEC:WEIGHTS``).

Either way the weights become the reference values of the run's engine spec
(:func:`evotune.spec.start.with_start_values`; the bounds stay the spec's), the strategies start
from them (``init = "reference"``, :func:`evotune.kinds.games.lifecycle.with_start`), the run's copy of
its spec keeps them (resume never reads the source again) and its manifest records where they
came from, with their checksum (:class:`~evotune.runs.manifest.StartFrom`). ``evotune verify``
then plays the tuned weights against that start (its "reference" match).

A run's weights are its recommendation as its kind chooses them
(:func:`~evotune.runs.runkind.recommend`): a fit's last epoch, SPSA's theta, a population's
mean, as ``evotune export`` writes them; a kind that stores no weight vector (a training) is no
start.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...engine.evaluation import spec_evaluation
from ...errors import ConfigError
from ...runs.manifest import StartFrom
from ...runs.registry import stored_kind
from ...runs.rundata import load_run
from ...runs.runkind import recommend
from ...runs.runspec import load_run_engine
from ...runs.store import Store
from ...spec.file import load_engine_spec
from ...spec.model import EngineSpec
from ...spec.player import parse_engine_ref
from ...spec.start import start_checksum, with_start_values
from ...weightsio import weights_for


@dataclass(frozen=True)
class RunStart:
    """A new run's start: the engine it names, its spec with the start as reference values, and
    the record of where the start came from."""

    engine: str
    """The engine spec the run's configuration names (a name under engines/ or a .toml path)."""
    spec: EngineSpec
    """That spec with the start weights as its reference values."""
    init_from: StartFrom
    """Where the start came from (the manifest keeps it)."""


def start_from_run(run_ref: str, *, runs_dir: str | Path = "populations",
                   engine: str | None = None) -> RunStart:
    """The start of a run continuing run ``run_ref`` (a run id under ``runs_dir`` or a run
    folder): its recommended weights (a fit's after its last epoch, a games run's population
    mean or theta), on ``engine`` (default: the engine spec the source names), which must have
    the source's weights (same names, in the same order). ConfigError in one line otherwise."""
    store = Store.open(run_ref, runs_dir)
    manifest = store.manifest()
    stored = stored_kind(manifest.kind)
    if stored is not None and not stored.weights:
        raise ConfigError(f"--init-from {run_ref}: run {store.run_id} is a {manifest.kind} run, "
                          "which stores no vector of evaluation weights (a training's net: play "
                          "it as nnue:FILE, or continue it with 'evotune nn train --init')")
    data = load_run(store)
    rec = recommend(data)
    source_engine = data.config.engine
    name = source_engine if engine is None else engine
    try:
        spec = load_run_engine(name)  # nnue:NET too: its output layer is the run's weights
    except ConfigError as exc:
        if engine is not None:
            raise
        raise ConfigError(f"--init-from {run_ref}: the engine spec of run {store.run_id} "
                          f"cannot be read ({exc}); give --engine SPEC with its weights") from None
    if engine is None and data.spec is not None and data.spec.net and spec.net != data.spec.net:
        raise ConfigError(f"--init-from {run_ref}: run {store.run_id} tuned the output layer of "
                          f"{data.spec.net}, but '{name}' plays {spec.net} here; give --engine "
                          f"nnue:{data.spec.net}")
    if spec.names != data.names:
        raise ConfigError(f"--init-from {run_ref}: run {store.run_id} has the "
                          f"{len(data.names)} weights of engine '{source_engine}', --engine "
                          f"{name} has {len(spec.names)} other ones; give an engine spec with "
                          f"the run's weights (e.g. --engine {source_engine}) or leave --engine "
                          "out")
    spec = with_start_values(spec, rec.weights, source=f"run {store.run_id}")
    return RunStart(engine=name, spec=spec, init_from=StartFrom(
        kind=manifest.kind, source=store.run_id, path=str(store.root.resolve()),
        weights_sha256=start_checksum(spec.start_values), engine=source_engine,
        strategy=data.strategy, generation=rec.generation, description=rec.description))


def start_from_file(engine: str) -> RunStart | None:
    """``--engine SPEC:WEIGHTS``: the spec SPEC starting from the weights file (any format a
    ``SPEC:WEIGHTS`` player reads); None when ``engine`` is an engine spec itself."""
    ref = parse_engine_ref(engine)
    if ref.file is None:  # an engine spec itself
        return None
    token, path = ref.spec_name, ref.file
    spec = load_engine_spec(token)
    evaluation = spec_evaluation(spec)
    if evaluation is not None and evaluation.reads_file:  # nnue:NET: the net the run tunes
        return None
    spec = with_start_values(spec, weights_for(spec, path), source=f"weights file {path}")
    return RunStart(engine=token, spec=spec, init_from=StartFrom(
        kind="weights", source=path, path=str(Path(path).resolve()),
        weights_sha256=start_checksum(spec.start_values), engine=token,
        description=f"the weights of {path}"))


def run_start(engine: str, *, init_from: str | None, engine_named: bool,
              runs_dir: str | Path = "populations") -> RunStart | None:
    """The start of a new run: from run ``init_from`` (on ``engine`` when ``engine_named``,
    else on the source's engine), from the weights file of ``engine`` = SPEC:WEIGHTS, or None
    (the run starts as its strategy does)."""
    from_file = start_from_file(engine)
    if init_from is None:
        return from_file
    if from_file is not None:
        raise ConfigError(f"give the start once: --init-from {init_from} or --engine {engine}, "
                          "not both")
    return start_from_run(init_from, runs_dir=runs_dir, engine=engine if engine_named else None)
