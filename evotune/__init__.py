"""evotune: tune a chess engine's evaluation weights by evolution."""
from __future__ import annotations

import os

__version__ = "0.1.0"


def configure_numba_cache(environ=os.environ, package_dir: str = os.path.dirname(__file__)) -> None:
    """Point numba's cache at a writable folder when the installed package folder is not.

    numba caches compiled code next to the sources; in a read-only install (a system
    site-packages, a container image) it would recompile in every process. The setting is made
    before numba is imported and is inherited by worker processes.
    """
    if "NUMBA_CACHE_DIR" in environ or os.access(os.path.join(package_dir, "engine"), os.W_OK):
        return
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    environ["NUMBA_CACHE_DIR"] = os.path.join(base, "evotune", "numba")


configure_numba_cache()
