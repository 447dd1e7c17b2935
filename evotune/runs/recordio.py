"""Reading a run's JSON records and the field checks their validators share: a record that
fails one is a :class:`~evotune.errors.StoreError` of one line naming the file (:func:`damaged`),
never a traceback, never a guess."""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import StoreError

RUN_AFRESH = "start a new run with another --run-id"
"""How a run's records are started over (a match folder's: another --out)."""


def damaged(path: Path, what: str, *, afresh: str = RUN_AFRESH) -> StoreError:
    """The error of a record that fails its validator (``what``: the field and the fault;
    ``afresh``: how to start over instead)."""
    return StoreError(f"{path} is damaged ({what}); restore it from a backup or {afresh}")


def read_json(path: Path, what: str, *, afresh: str = RUN_AFRESH):
    """The JSON of the record ``path`` (``what`` names it); a missing, unreadable or corrupt file
    is one StoreError line (``afresh``: how to start over instead)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{what} {path} is missing") from None
    except IsADirectoryError:
        raise damaged(path, "a folder, not a file", afresh=afresh) from None
    except OSError as exc:
        raise StoreError(f"{what} {path} cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise damaged(path, "not UTF-8 text", afresh=afresh) from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise StoreError(f"{what} {path} is corrupt ({exc}); the run cannot continue safely: "
                         f"restore the file or {afresh}") from None


def int_field(d: dict, key: str, path: Path, *, low: int = 0) -> int:
    """``d[key]``, an integer >= ``low``."""
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise damaged(path, f"'{key}' must be an integer >= {low}, not {v!r}")
    return v


def float_field(d: dict, key: str, path: Path) -> float:
    """``d[key]``, a finite number >= 0."""
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise damaged(path, f"'{key}' must be a finite number >= 0, not {v!r}")
    return float(v)


def json_object(data, path: Path, *, afresh: str = RUN_AFRESH) -> dict:
    """``data``, a JSON object."""
    if not isinstance(data, dict):
        raise damaged(path, f"a JSON object was expected, not a {type(data).__name__}",
                      afresh=afresh)
    return data


_NUMBER_TYPES = frozenset({int, float})


def vector_field(v, n: int | None, key: str, path: Path) -> tuple[float, ...]:
    """``v`` (the field ``key``), a list of ``n`` finite numbers (any number when ``n`` is None)."""
    # the element types in one pass at C speed (a generation file holds tens of thousands of
    # numbers: checked one by one in Python, reading a long run took a minute); bool is a type
    # of its own here, so true/false are refused as before
    if not isinstance(v, list) or (n is not None and len(v) != n) \
            or not set(map(type, v)) <= _NUMBER_TYPES:
        raise damaged(path, f"'{key}' must be a list of {n if n is not None else 'some'} finite "
                         "numbers")
    try:
        values = tuple(map(float, v))
    except OverflowError:  # an integer beyond a float
        values = (math.inf,)
    if not all(map(math.isfinite, values)):
        raise damaged(path, f"'{key}' must be a list of {n if n is not None else 'some'} finite "
                         "numbers")
    return values


def opt_int_field(d: dict, key: str, path: Path) -> int | None:
    """``d[key]``, an integer >= 0, or None when it is missing or null."""
    return None if d.get(key) is None else int_field(d, key, path)


def ints_field(v, key: str, path: Path) -> tuple[int, ...]:
    """``v`` (the field ``key``), a list of integers."""
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                          for x in v):
        raise damaged(path, f"'{key}' must be a list of integers")
    return tuple(v)
