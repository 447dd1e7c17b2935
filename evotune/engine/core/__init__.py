"""The numba core of the built-in engine, one concept per module (docs/internals.md, "Core").

    layout    the two state arrays (U uint64, S int64): sizes and offsets
    bits      popcount / lsb / msb intrinsics
    moves     the move int and its inline accessors
    attacks   attack tables, slider attacks, attackers, check
    position  set-up, make/unmake, Zobrist hashing, draw rules (repetition, insufficient material)
    movegen   legal move generation
    evaluate  phi and the evaluation, dispatching to one module per feature set:
              eval_shannon, eval_pst, eval_extended
    batch     phi of many FENs in one call (parsed in numba)
    tt        transposition-table entries
    search    ordering, quiescence, negamax, iterative deepening
    game      whole games and the other entry points Python calls
    perft     move-tree counts

Numba caches each compiled function keyed on its own source file only, so an edit of a constant
in ``layout`` would leave stale machine code of ``search`` behind. The cache folder is therefore
keyed on a hash of every source file of the core (and ``evotune/rules.py`` and
``evotune/featuresets.py``, whose constants it compiles in): :func:`cache_dir` is set as numba's cache folder while the core's modules are
imported (decorated), and any edit gives a new folder, hence a fresh compilation.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

CORE_DIR = Path(__file__).resolve().parent
SHARED_FILES = (CORE_DIR.parent.parent / "rules.py", CORE_DIR.parent.parent / "featuresets.py")
"""Modules outside the core whose constants it compiles in."""


def source_files(core_dir: Path = CORE_DIR, shared=SHARED_FILES) -> list[Path]:
    """The files whose content the compiled core depends on, in a fixed order."""
    return sorted(core_dir.glob("*.py")) + list(shared)


def source_hash(files=None) -> str:
    """sha256 (16 hex digits) over the names and contents of ``files`` (default: the core's)."""
    h = hashlib.sha256()
    for f in files if files is not None else source_files():
        h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_dir(base: str | None = None) -> str:
    """The numba cache folder of this core: ``<base>/core-<source hash>``.

    ``base``: numba's configured cache folder when one is set (NUMBA_CACHE_DIR, which evotune
    sets to ~/.cache/evotune/numba for read-only installs), else ``__pycache__`` beside the core.
    """
    if base is None:
        from numba.core import config

        base = config.CACHE_DIR or str(CORE_DIR / "__pycache__")
    return os.path.join(base, f"core-{source_hash()}")


def _import_core() -> None:
    from numba.core import config

    previous = config.CACHE_DIR
    config.CACHE_DIR = cache_dir()
    try:
        from . import batch, game, perft  # noqa: F401  (decorates every jitted function of the core)
    finally:
        config.CACHE_DIR = previous


_import_core()
