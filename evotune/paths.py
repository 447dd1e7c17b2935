"""Where the package's data lives: the shipped engine specs, opening suites and book, and the
resolution of an ``openings`` setting to a file."""
from __future__ import annotations

import importlib.resources
from pathlib import Path

from .errors import ConfigError
from .fileio import check_input_file

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
    if p.exists() and not p.is_file():
        check_input_file(p, "openings file")  # a folder, a FIFO or a device: says which
    if not p.is_file():
        raise ConfigError(f"openings '{openings}': no such file; give an EPD/PGN/Polyglot .bin "
                          "file, 'book' or 'startpos'")
    return p


def held_out_openings(run_openings: str) -> tuple[Path, str]:
    """(openings file, note): openings a run did not tune on, for its final check and its
    verification: 8moves_v3, or 2moves_v1 (with a note saying why) when the run tuned on
    8moves_v3."""
    try:
        used = resolve_openings_path(run_openings)
    except ConfigError:
        used = None  # the run's openings file is gone; it cannot be the packaged one
    if used is not None and Path(used).resolve() == HELD_OUT_OPENINGS.resolve():
        note = (f"the run tuned on {HELD_OUT_OPENINGS.name}, so verification uses "
                f"{DEFAULT_OPENINGS.name} instead")
        return DEFAULT_OPENINGS, note
    return HELD_OUT_OPENINGS, ""
