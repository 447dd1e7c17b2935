"""Reading the text files users give (configs, engine specs, weights, suites): one reader that
turns every way a file can be unreadable into one ConfigError line naming it."""
from __future__ import annotations

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
        raise error(f"{what} {p}: no such file") from None
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
