"""The files users give and name: one reader for text inputs (configs, engine specs, weights,
suites) that turns every way a file can be unreadable into one ConfigError line naming it, and
one check of output paths made before any work is done."""
from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import ConfigError

_BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def read_text(path: str | Path, what: str, *, error=ConfigError) -> str:
    """The UTF-8 text of ``path``; ``error`` (one line naming ``what`` and the file) when it is
    missing, a folder, unreadable, not UTF-8 or binary."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{what} {p}: cannot read it (no such file)") from None
    except IsADirectoryError:
        raise error(f"{what} {p} is a folder; give a file") from None
    except OSError as exc:
        raise error(f"{what} {p}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {p} is not UTF-8 text (byte {exc.start}); save it as UTF-8") \
            from None
    if _BINARY.search(text):
        raise error(f"{what} {p} holds control characters (a binary file?); give a text file")
    return text


def check_writable(path: str | Path, what: str, *, folder: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written: a read-only place, a
    folder where a file is wanted (or the reverse), a parent that is a file. Creates nothing."""
    p = Path(path)
    if p.exists():
        if folder != p.is_dir():
            raise ConfigError(f"{what} {p} is {'a file' if folder else 'a folder'}; give "
                              f"{'a folder' if folder else 'a file path'}")
        target = p
    else:
        target = p.parent
        while not target.exists() and target != target.parent:
            target = target.parent
        if not target.is_dir():
            raise ConfigError(f"{what} {p}: {target} is a file, not a folder")
    if not os.access(target, os.W_OK | (os.X_OK if target.is_dir() else 0)):
        raise ConfigError(f"{what} {p}: {target} is not writable")
