"""How the store reads a run of each kind: the configuration protocol every kind's config follows
(:class:`KindConfig`), the record of how a manifest of one kind is read (:class:`StoredKind`) and
their registry (:func:`register_stored`, :func:`stored_kind`).

The lowest part of the run kinds (:mod:`evotune.runs.kinds` holds the protocol of a whole kind):
the manifest and the store read through it, so it imports nothing of theirs.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from .fitconfig import DataFile


@runtime_checkable
class KindConfig(Protocol):
    """What every kind's configuration is (:class:`~evotune.runs.config.RunConfig`,
    :class:`~evotune.runs.fitconfig.TexelConfig`, :class:`~evotune.runs.trainconfig.
    TrainConfig`): frozen, validated when made, stored as a dict in the manifest."""

    kind: ClassVar[str]

    @property
    def strategy(self) -> str: ...

    @property
    def population(self) -> int: ...

    @property
    def generations(self) -> int: ...

    def summary_items(self) -> list[tuple[str, str]]: ...

    def to_dict(self) -> dict: ...

    def identity_dict(self) -> dict: ...


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


BUILTIN = "evotune.kinds"
"""The package whose import registers the built-in kinds (loaded on the first lookup, as a
plugin's entry point would be: the kinds sit above this layer)."""

_STORED: dict[str, StoredKind] = {}


def register_stored(stored: StoredKind) -> None:
    """Lets the store read manifests of ``stored.name`` (the built-in ones: by the manifest)."""
    _STORED[stored.name] = stored


def stored_kind(name: str) -> StoredKind | None:
    """How the store reads a manifest of kind ``name``; None for an unknown kind (the built-in
    kinds are loaded first: a kind added there is read without importing them by hand)."""
    if name not in _STORED:
        load_builtin_kinds()
    return _STORED.get(name)


def load_builtin_kinds() -> None:
    """Registers the built-in kinds (:data:`BUILTIN`) unless they are registered already."""
    if BUILTIN not in sys.modules:
        importlib.import_module(BUILTIN)


def stored_kinds() -> tuple[str, ...]:
    """The names of the kinds the store reads."""
    return tuple(_STORED)


def unregister_stored(name: str) -> None:
    """Forgets how to read manifests of ``name`` (a test's toy kind)."""
    _STORED.pop(name, None)
