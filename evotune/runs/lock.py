"""One writer per folder or file: an OS lock (``fcntl.flock``) on a lock file that holds the
holder's PID. A dead holder's lock is released by the OS, so a killed writer never blocks the
next one; a live one is named in the refusal."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import StoreError


class RunLock:
    """The writer lock of one run folder (or of any output that must have one writer)."""

    def __init__(self, path: Path, *, busy: str) -> None:
        self.path = Path(path)
        """The lock file."""
        self.busy = busy
        """The refusal when another live process holds the lock; ``{pid}`` is its PID."""
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Become the only writer; StoreError naming the holder's PID when another live process
        holds the lock. Holding it already is fine."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot open the lock file {self.path} ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreError(self.busy.format(pid=holder)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Stop being the writer (closing the file releases the flock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.release()
