"""The one registry of run kinds (:func:`register`, :func:`kind_named`, :func:`kinds`) and the
part of a kind the store reads through: its configuration's protocol (:class:`KindConfig`) and
how a manifest of that kind is read (:class:`StoredKind`, a kind's ``stored``).

The lowest part of the run kinds, so that the manifest and the store can ask a kind how its
manifest reads; :mod:`evotune.runs.runkind` holds the protocol of a whole kind
(:class:`~evotune.runs.runkind.RunKind`) and the kinds register themselves in
:mod:`evotune.kinds`, which the first lookup loads (as a plugin's entry point would be: the
kinds sit above this layer).
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from ..datafiles import DataFile
from ..errors import StoreError
from ..limits import Limits


@runtime_checkable
class KindConfig(Protocol):
    """What every kind's configuration is (a games run's :class:`~evotune.kinds.games.config.RunConfig`,
    a fit's, a training's, a move-model training's): frozen, validated when made, stored as a
    dict in the manifest. What every kind has: a method and its planned steps (only a games
    run has a strategy, a population and generations)."""

    kind: ClassVar[str]

    @property
    def method(self) -> str:
        """What ``evotune runs`` and ``status`` name the method: a games run's strategy,
        'texel', 'nn-train', 'move-model'."""
        ...

    @property
    def steps(self) -> int:
        """The planned steps: a games run's generations (0 = no limit), a fit's or a
        training's epochs."""
        ...

    @property
    def max_games(self) -> int:
        """The games budget (0: none; a kind that plays no games to tune has none)."""
        ...

    def summary_items(self) -> list[tuple[str, str]]: ...

    def to_dict(self) -> dict: ...

    def identity_dict(self) -> dict: ...


class PlayConfig(Protocol):
    """How a run's weights play their games (a games run's
    :class:`~evotune.kinds.games.settings.PlaySettings`, a fit's verification matches)."""

    @property
    def limits(self) -> Limits: ...

    @property
    def openings(self) -> str: ...

    @property
    def book_plies(self) -> int: ...


class WeightsConfig(KindConfig, Protocol):
    """The config of a kind whose runs tune a weight vector that plays (a games run's, a
    fit's): what the readers, verification and the final check read of it."""

    @property
    def engine(self) -> str: ...

    @property
    def play(self) -> PlayConfig: ...

    @property
    def seed(self) -> int: ...

    @property
    def keeps_population(self) -> bool:
        """Whether its steps hold a population (DE, jDE, the EA, TD) rather than one vector
        (SPSA's theta, CMA-ES's mean, a fit's weights)."""
        ...

    @property
    def vector_name(self) -> str:
        """What its one vector is called where it keeps no population ("SPSA's theta", "the
        fitted weights")."""
        ...

    @property
    def starts_from_given(self) -> bool:
        """Whether it starts from given weights (its spec's reference values), which its final
        check and verification play as 'the start'."""
        ...

    def params_dict(self) -> dict:
        """Its strategy's parameters ({} for a kind without a strategy)."""
        ...


ConfigReader = Callable[[dict, dict, int], tuple["KindConfig", tuple[DataFile, ...]]]
"""``(manifest, config, format) -> (config, data files)``: a manifest's config read, validated."""


@dataclass(frozen=True)
class StoredKind:
    """How the store reads and checks the manifest of one kind."""

    name: str
    """The manifest's ``kind``."""
    read: ConfigReader
    """Reads the manifest's config (and data files); EvotuneError when invalid."""
    data_files: bool = False
    """Whether its manifest names the data files it read (fits, trainings)."""
    takes_start: bool = False
    """Whether a run of it may start from earlier weights (``init_from``: games runs)."""
    weights: bool = True
    """Whether its runs store a weight vector per generation (:func:`evotune.runs.rundata.
    load_run` reads them; a training stores nets)."""
    format1: Callable[[dict], bool] | None = None
    """Whether a store-format-1 manifest's config (which names no kind) is one of this kind's
    (where several kinds claim one, the one registered last: a games run claims every format-1
    config, a fit those named 'texel'); None: the kind wrote no format-1 runs."""


class Registered(Protocol):
    """What the registry knows of a kind (the whole of it: :class:`~evotune.runs.runkind.
    RunKind`)."""

    name: str
    stored: StoredKind


BUILTIN = "evotune.kinds"
"""The package whose import registers the built-in kinds (loaded on the first lookup)."""

_KINDS: dict[str, Registered] = {}


def register(kind):
    """Adds a kind (once per name); the store then reads its manifests too."""
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise StoreError(f"a run kind '{kind.name}' is registered already")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Removes a kind added by :func:`register` (a test's toy kind)."""
    _KINDS.pop(name, None)


def load_builtin_kinds() -> None:
    """Registers the built-in kinds (:data:`BUILTIN`) unless they are registered already."""
    if BUILTIN not in sys.modules:
        importlib.import_module(BUILTIN)


def registered() -> tuple:
    """Every registered kind, in registration order (the built-in ones loaded first)."""
    load_builtin_kinds()
    return tuple(_KINDS.values())


def registered_kind(name: str):
    """The registered kind ``name``; StoreError naming the known ones otherwise."""
    load_builtin_kinds()
    try:
        return _KINDS[name]
    except KeyError:
        raise StoreError(f"no run kind '{name}' is known here (known: "
                         f"{', '.join(sorted(_KINDS)) or 'none'})") from None


def stored_kind(name: str) -> StoredKind | None:
    """How the store reads a manifest of kind ``name`` (the kind's ``stored``); None for an
    unknown kind."""
    load_builtin_kinds()
    kind = _KINDS.get(name)
    return None if kind is None else kind.stored


def stored_kinds() -> tuple[str, ...]:
    """The names of the kinds the store reads."""
    load_builtin_kinds()
    return tuple(_KINDS)


def format1_kind(config: dict) -> str | None:
    """The kind of a store-format-1 manifest's ``config``: the last registered one whose
    :attr:`StoredKind.format1` claims it (None: none does)."""
    claims = [kind.name for kind in registered()
              if kind.stored.format1 is not None and kind.stored.format1(config)]
    return claims[-1] if claims else None
