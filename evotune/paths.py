"""Where the package's data lives: the shipped engine specs, opening suites and book, and the
resolution of an ``openings`` setting to a file."""
from __future__ import annotations

import importlib.resources
from pathlib import Path

from .errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"
ENGINES_DIR = Path(str(importlib.resources.files("evotune") / "engines"))
"""The shipped engine specs: package data (in a checkout, evotune/engines links to engines/)."""
DEFAULT_BOOK = DATA_DIR / "gnuchess-book.bin"
DEFAULT_OPENINGS = DATA_DIR / "2moves_v1.epd"
HELD_OUT_OPENINGS = DATA_DIR / "8moves_v3.pgn.zip"


def resolve_openings_path(openings: str) -> Path | None:
    """'book' -> the packaged Polyglot book; 'startpos' -> None; otherwise an existing file."""
    if openings == "book":
        return DEFAULT_BOOK
    if openings == "startpos":
        return None
    if openings in ("2moves", "2moves_v1"):
        return DEFAULT_OPENINGS
    p = Path(openings)
    if not p.is_file():
        raise ConfigError(f"openings '{openings}': no such file; give an EPD/PGN/Polyglot .bin "
                          "file, 'book' or 'startpos'")
    return p
