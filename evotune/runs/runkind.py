"""What a run kind is: the protocols every kind follows (:class:`RunKind`), its configuration's
(:class:`KindConfig`), the record of what a run did (:class:`Summary`), and the one registry of kinds
(:func:`register`, :func:`kind_named`, :func:`kind_of`).

A kind is one object: games runs (:mod:`evotune.kinds.games`, one package), Texel fits
(:mod:`evotune.kinds.fit`) and net trainings (:mod:`evotune.kinds.training`) each register one
(:mod:`evotune.kinds` does, once, on import); the commands ask it for a run's status, its row
in ``evotune runs``, how it continues, its report, plots, export, verification and
recommendation, and never test a kind's name. How the store reads a kind's manifest is the
kind's :class:`StoredKind`; the one registry of kinds is :mod:`evotune.runs.registry` (low, so
the manifest can ask it), which :func:`register` and :func:`kind_named` are.

This module sits low (runs/) so that every layer can name the protocol; the kinds themselves sit
above reporting and verify, whose readers and matches they use.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError
from .registry import StoredKind, register, registered, registered_kind, unregister
from .rundata import RECOMMEND_RULES, Recommendation, RunData
from .store import Store


@dataclass(frozen=True)
class Summary:
    """What a run of any kind did when it stopped, as the command prints it; ``record`` is the
    kind's own summary (:class:`evotune.kinds.games.solver.RunSummary`, a fit's dict,
    :class:`evotune.kinds.training.solver.TrainSummary`)."""

    run_id: str
    """The run's id."""
    lines: tuple[str, ...]
    """What the command prints on stdout."""
    notes: tuple[str, ...] = ()
    """Notes and warnings for stderr (whole lines, ``evotune: note: ...``)."""
    record: Any = None
    """The kind's own summary record."""


class Bar(Protocol):
    """A progress display (the command line's :class:`~evotune.cli.progress.Progress`)."""

    def update(self, done: int, total: int | None = None, *, label: str | None = None,
               note: str | None = None, rate: float | None = None,
               left: float | None = None) -> None: ...

    def line(self, text: str) -> None: ...

    def close(self) -> None: ...


class RunUI(Protocol):
    """What a kind may show while it runs (the command line gives one)."""

    def progress(self, label: str, total: int = 0, unit: str = "games") -> Bar: ...

    def info(self, text: str) -> None:
        """A line on stderr (where the run is, what it starts from)."""
        ...


@dataclass(frozen=True)
class Status:
    """``evotune status`` of a run: its record (``--json``) and its lines."""

    info: dict
    """The JSON record."""
    lines: tuple[str, ...]
    """What the command prints."""


@dataclass(frozen=True)
class Exported:
    """What ``evotune export`` writes: text or binary data, and the lines around it."""

    data: str | bytes
    """The export (bytes: a net, written only to a file)."""
    what: str = ""
    """How the 'wrote FILE (...)' line describes a binary export ('' for text)."""
    notes: tuple[str, ...] = ()
    """Notes for stderr before the export is written."""
    after: tuple[str, ...] = field(default=())
    """Notes for stderr after it is written."""


@dataclass(frozen=True)
class Job:
    """A run ready to execute, new or reopened: its store and what its kind continues."""

    store: Store
    """The run's store (its writer lock is taken by the kind's lifecycle)."""
    plan: Any
    """What the kind's :meth:`RunKind.execute` runs: a games run's plan, a fit's or a
    training's config."""
    data: Any = None
    """Data read already (a new fit's or training's positions); None: the kind reads them."""
    workers: int = 0
    """Worker processes or threads (0: one per core)."""


@dataclass(frozen=True)
class PlayOptions:
    """Where a kind that plays games plays them when it continues (``evotune resume --backend
    --scheduler``); only such a kind (a games run) reads them."""

    backend: str = "local"
    """'local' (joblib's processes) or 'dask'."""
    scheduler: str = ""
    """The Dask scheduler's address ('' with the local backend)."""


@dataclass(frozen=True)
class ResumeRequest:
    """What ``evotune resume`` asks of a stopped run: the limits it raises (kept in the run where
    the kind has that limit; a kind without it refuses it in one line), its workers, and the
    options only a kind that plays games reads."""

    generations: int | None = None
    """A raised step limit (a games run's generations, a fit's or a training's epochs)."""
    max_games: int | None = None
    """A raised games budget."""
    max_seconds: float | None = None
    """A raised wall-time limit."""
    workers: int | None = None
    """Worker processes or threads (None: the run's own)."""
    play: PlayOptions = PlayOptions()
    """Where its games are played (read by a games run only)."""


@dataclass(frozen=True)
class ViewRequest:
    """What ``evotune plot`` and ``evotune report`` ask of a kind: where the files go and the
    options a kind reads when it has them (a kind without weights per step reads ``out`` only)."""

    out: str
    """The reports folder (files go to OUT/<run-id>/)."""
    progress: Callable[[int, int], None]
    """Called as the figures are drawn (done, total)."""
    runs_dir: str = "populations"
    """The runs folder (where a run's start run is found)."""
    x: str = "generations"
    """The plots' x axis: 'generations' or 'games' (runs with weights per step)."""
    squares: tuple[str, ...] | None = None
    """The weights of the 'squares' plot (runs with piece-square tables; None: chosen)."""
    rule: str = "mean"
    """The recommendation rule a report states (runs with a weight vector)."""


@dataclass(frozen=True)
class ExportRequest:
    """What ``evotune export`` asks of a kind."""

    fmt: str
    """The format ('evotune', 'uci', 'json', a net's 'nnue'/'bullet' ...)."""
    out_file: str | None = None
    """The file it goes to (None: stdout, text only)."""
    runs_dir: str = "populations"
    """The runs folder."""
    rule: str = "mean"
    """The recommendation rule (runs with a weight vector)."""
    engine: str | None = None
    """Another engine spec to map the weights onto (runs with a weight vector)."""


class RunKind(Protocol):
    """One kind of run: its stored form, its lifecycle and how the commands show it."""

    name: str
    """The manifest's ``kind`` ('games', 'fit', 'train')."""
    stored: StoredKind
    """How the store reads its manifest."""
    overlays: bool
    """Whether its plots overlay with other runs' (``evotune plot RUN RUN2``)."""
    reads: frozenset[str]
    """The options of :data:`OPTIONS` its requests read (a games run: all; a fit: all but where
    games are played and the games axis; a training: none); :func:`refuse_unread` refuses the
    others in one line."""

    @property
    def config_class(self) -> type:
        """Its configuration's class (a :class:`KindConfig`)."""
        ...

    def new(self, config: Any, *, out_dir: str | Path, run_id: str | None, workers: int,
            ui: RunUI, **start: Any) -> Job:
        """Creates a new run of ``config`` (every input checked first; ``start``: what the kind
        starts from, e.g. a games run's engine spec and ``init_from``)."""
        ...

    def resume(self, store: Store, request: ResumeRequest) -> Job:
        """Opens a stopped run to continue (``evotune resume``, :class:`ResumeRequest`)."""
        ...

    def execute(self, job: Job, ui: RunUI) -> Summary:
        """Runs (or continues) the run to its end."""
        ...

    def status(self, store: Store, *, every: bool) -> Status: ...

    def row(self, store: Store) -> tuple[str, ...]:
        """Its row in ``evotune runs`` (RUN, KIND, PROGRESS, AMOUNT, RESULT, STATE, STARTED)."""
        ...

    def plot(self, stores: Sequence[Store], request: ViewRequest) -> list[Path]:
        """Draws the runs' plots (several runs overlaid when the kind ``overlays``)."""
        ...

    def report(self, store: Store, request: ViewRequest) -> list[Path]:
        """Writes the run's report (ConfigError for a kind without one)."""
        ...

    def export(self, store: Store, request: ExportRequest) -> Exported:
        """What ``evotune export`` writes of the run."""
        ...

    def verify(self, store: Store, *, settings: Any, runs_dir: str,
               progress: Callable | None) -> dict:
        """Plays the verification matches and stores verify.json (:mod:`evotune.verify`)."""
        ...

    def recommend(self, run: RunData, rule: str) -> Recommendation:
        """The weights a stored run recommends (:func:`recommend` asks);
        ConfigError for a kind without a weight vector (a training: its net)."""
        ...


OPTIONS = {
    "play": ("--backend/--scheduler", "plays no games to send to a cluster", "them"),
    "x": ("--x games", "plays no games to plot against", "it"),
    "squares": ("--squares", "has no piece-square weights to plot", "it"),
    "rule": ("--recommend", "recommends its net or model, not weights chosen by a rule", "it"),
    "engine": ("--engine", "has no weights to map onto another engine spec", "it"),
}
"""The request options only some kinds read: :attr:`ResumeRequest.play`, :attr:`ViewRequest.x`
(its 'games' axis), :attr:`ViewRequest.squares`, a recommendation rule other than the default
(:attr:`ViewRequest.rule`, :attr:`ExportRequest.rule`) and
:attr:`ExportRequest.engine`; each with its flags, what a kind without it lacks, and how the
line names the flags."""


def refuse_unread(kind: RunKind, given: Sequence[str]) -> None:
    """ConfigError, one line, for the first option of ``given`` (names of :data:`OPTIONS` the
    user set) that ``kind`` does not read (:attr:`RunKind.reads`): a flag a run ignores would
    look as though it had been applied."""
    for option in given:
        if option not in kind.reads:
            flag, lacks, pronoun = OPTIONS[option]
            raise ConfigError(f"{flag}: a {kind.name} run {lacks}; leave {pronoun} out")


def kind_named(name: str) -> RunKind:
    """The registered kind ``name`` (:func:`evotune.runs.registry.registered_kind`);
    StoreError naming the known ones otherwise."""
    return registered_kind(name)


def kind_of(store: Store) -> RunKind:
    """The kind of the run in ``store`` (its manifest's)."""
    return kind_named(store.manifest().kind)


def kinds() -> tuple[RunKind, ...]:
    """Every registered kind, in registration order."""
    return registered()


__all__ = ["OPTIONS", "Bar", "ExportRequest", "Exported", "Job", "PlayOptions", "ResumeRequest", "RunKind",
           "RunUI", "Status", "Summary", "ViewRequest", "kind_named", "kind_of", "kinds", "recommend",
           "refuse_unread", "register", "unregister"]


def recommend(run: RunData, rule: str = "mean") -> Recommendation:
    """The recommended weights of the last stored generation (never the luckiest single
    winner), as the run's kind chooses them (:meth:`RunKind.recommend`: a games run's restored
    strategy, a fit's last epoch); ``rule``: one of :data:`~evotune.runs.rundata.RECOMMEND_RULES`."""
    if rule not in RECOMMEND_RULES:
        raise ConfigError(f"unknown recommendation rule '{rule}'; use one of "
                          f"{', '.join(RECOMMEND_RULES)}")
    return kind_named(run.kind).recommend(run, rule)
