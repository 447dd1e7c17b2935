"""The data files a run read (:class:`DataFile`: name, size, SHA-256), as a fit's, a training's
or a move-model training's manifest records them, and their validator
(:func:`data_files_from_list`). A value every layer may name: the store checks them on resume,
the learners make them."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError


@dataclass(frozen=True)
class DataFile:
    """One data file a fit read, as its manifest records it (resume refuses a changed one)."""

    name: str
    """The file's name (without its folder)."""
    size: int
    """Its size in bytes."""
    sha256: str
    """SHA-256 of its bytes (64 hex digits)."""

    def to_json(self) -> dict:
        return {"name": self.name, "size": self.size, "sha256": self.sha256}


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def data_files_from_list(v) -> tuple[DataFile, ...]:
    """The validator of a fit's ``data_files``: a non-empty list of {name, size, sha256}."""
    if not isinstance(v, list) or not v or not all(
            isinstance(f, dict) and set(f) == {"name", "size", "sha256"}
            and isinstance(f["name"], str) and isinstance(f["size"], int)
            and not isinstance(f["size"], bool) and f["size"] >= 0
            and isinstance(f["sha256"], str) and _SHA256.match(f["sha256"]) for f in v):
        raise ConfigError("'data_files' must be a non-empty list of {name, size, sha256} "
                          "objects (sha256: 64 hex digits)")
    return tuple(DataFile(name=f["name"], size=f["size"], sha256=f["sha256"]) for f in v)
