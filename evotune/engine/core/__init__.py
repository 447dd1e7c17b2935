"""The numba core of the built-in engine, one concept per module (docs/internals.md, "Core").

    layout    the two state arrays (U uint64, S int64): sizes and offsets; unowned views
    bits      popcount / lsb intrinsics, prefetch
    moves     the move int and its inline accessors
    attacks   attack tables, slider attacks (kindergarten), attackers, check
    position  set-up, make/unmake, Zobrist hashing, draw rules (repetition, insufficient material)
    movegen   legal move generation
    evaluate  phi and the evaluation, dispatching to one module per feature set:
              eval_shannon, eval_pst, eval_extended; and to nnue (a network: accumulators
              kept by make_move, the integer output layer)
    batch     phi and quiescence of many FENs in one call (parsed in numba)
    tt        transposition-table entries (accessors, prefetch)
    search    ordering, quiescence, negamax, iterative deepening
    prior     the move prior (softmax over the move ordering), the logistic score curve
    mcts      UCT (Monte-Carlo tree search) in preallocated arrays
    probability  probability-limited alpha-beta (Giraffe's), iterated by threshold
    game      whole games and the other entry points Python calls
    perft     move-tree counts

Numba caches each compiled function keyed on its own source file only, so an edit of a constant
in ``layout`` would leave stale machine code of ``search`` behind. The cache folder is therefore
keyed on a hash of every source file of the core (and ``evotune/rules.py``,
``evotune/spec/features.py`` and ``evotune/spec/movefeatures.py``, whose constants it compiles
in): :func:`cache_dir` is set as numba's
cache folder while the core's modules are imported (decorated), and any edit gives a new folder,
hence a fresh compilation.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

CORE_DIR = Path(__file__).resolve().parent
SHARED_FILES = (CORE_DIR.parent.parent / "rules.py", CORE_DIR.parent.parent / "spec" / "features.py",
                CORE_DIR.parent.parent / "spec" / "movefeatures.py")
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


KEEP_CACHES = 3
"""core-<hash> cache folders kept beside the current one's base (most recently used first)."""


def prune_caches(current: str, keep: int = KEEP_CACHES) -> list[str]:
    """Mark ``current`` as used now and delete all but the ``keep`` most recently used
    ``core-*`` folders beside it (each edit of the core leaves a folder of compiled code behind;
    two installs sharing one cache base keep theirs as long as both are in use). Best effort:
    a folder that cannot be removed is left. Returns the removed folders."""
    import shutil

    base = Path(current).parent
    try:
        Path(current).mkdir(parents=True, exist_ok=True)
        os.utime(current)
        folders = sorted((p for p in base.glob("core-*") if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    removed = []
    for old in folders[keep:]:
        if old.resolve() == Path(current).resolve():
            continue
        shutil.rmtree(old, ignore_errors=True)
        removed.append(str(old))
    return removed


COMPILE_RECORD = "compile-seconds"
"""The file in a cache folder that holds how long its compilation took (the next estimate)."""
ENTRY_POINT = "game.play_game_core-*.nbi"
"""numba's index file of the games' entry point: present once the core is compiled."""


def is_compiled() -> bool:
    """True when this core's cache folder holds the compiled games' entry point (the first
    game of a command then loads it instead of compiling: seconds, not minutes). Reads only
    the folder's listing: no compilation, no numba import beyond its config."""
    return any(Path(cache_dir()).glob(f"*/{ENTRY_POINT}"))


def compile_estimate(default: float = 120.0) -> float:
    """Seconds a compilation takes here: the last one recorded in a cache folder of this base
    (an earlier version's, on this machine), else ``default``."""
    base = Path(cache_dir()).parent
    try:
        records = sorted(base.glob(f"core-*/{COMPILE_RECORD}"), key=lambda p: p.stat().st_mtime)
        return float(records[-1].read_text()) if records else default
    except (OSError, ValueError):
        return default


def record_compile(seconds: float) -> None:
    """Keep how long this core's compilation took (best effort)."""
    try:
        (Path(cache_dir()) / COMPILE_RECORD).write_text(f"{seconds:.1f}\n")
    except OSError:
        pass


def _import_core() -> None:
    from numba.core import config

    previous = config.CACHE_DIR
    config.CACHE_DIR = cache_dir()
    try:
        from . import batch, game, perft  # noqa: F401  (decorates every jitted function of the core)
    finally:
        prune_caches(config.CACHE_DIR)
        config.CACHE_DIR = previous


_import_core()
