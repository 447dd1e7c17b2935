"""One writer per folder or file: an OS lock (``fcntl.flock``) on a lock file that holds the
holder's PID. A dead holder's lock is released by the OS, so a killed writer never blocks the
next one; a live one is named in the refusal."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import StoreError

PROC_LOCKS = Path("/proc/locks")


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


def lock_table() -> dict[str, int] | None:
    """Every flock the system holds, as 'major:minor:inode' of the locked file -> the holder's
    PID (Linux's /proc/locks; None where there is none). A reader of many runs reads it once."""
    try:
        text = PROC_LOCKS.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    table: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK":
            continue  # a process blocked waiting for a lock is not its holder
        try:
            table[parts[5]] = int(parts[4])
        except ValueError:
            continue
    return table


def lock_holder(path: Path, table: dict[str, int] | None = None) -> int | None:
    """The PID of the live process that holds the lock ``path``, or None when nobody holds it,
    found without touching the lock: Linux's /proc/locks (:func:`lock_table`; ``table``: one
    read already) lists every flock with its holder and the lock file's device and inode.
    Elsewhere (no /proc/locks) the PID written in the file counts when that process is alive (a
    PID reused since is the one way this can be wrong)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    table = lock_table() if table is None else table
    if table is None:
        return _live_pid(path)
    return table.get(f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}")


def _live_pid(path: Path) -> int | None:
    try:
        pid = int(Path(path).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except PermissionError:  # alive, another user's
        return pid
    except OSError:
        return None
    return pid
