"""The files users give and the files evotune writes.

Reading: one reader for text inputs (configs, engine specs, weights, suites) that turns every way a
file can be unreadable into one ConfigError line naming it, and one check of output paths made
before any work is done. Writing: every writer (runs, datagen, texel, exports) writes through
:func:`atomic_write_text` (a temporary file in the same folder, fsync, os.replace), so a reader
never sees half a file, and appends through :func:`append_text`.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path

from .errors import ConfigError, StoreError

_BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def check_input_file(path: str | Path, what: str, *, error=ConfigError, hint: str = "") -> int:
    """The size of the input file ``path``, after refusing (``error``: one line naming ``what``
    and the file, then ``hint``) a missing one, a folder, or one that is not a regular file (a
    FIFO would block a read for good, a device such as /dev/zero never ends). Opens nothing."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise error(f"{what} {p}: cannot read it (no such file){hint}") from None
    except OSError as exc:
        raise error(f"{what} {p}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{what} {p} is a folder; give a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{what} {p} is not a regular file (a FIFO, socket or device); give a file")
    return st.st_size


def read_input(path: str | Path, what: str, *, limit: int | None = None,
               error=ConfigError) -> bytes:
    """The bytes of the input file ``path``; ``error`` (one line naming ``what`` and the file)
    when it is missing, a folder, not a regular file (:func:`check_input_file`), unreadable, or
    larger than ``limit`` bytes (checked before reading, and the read stops there)."""
    p = Path(path)
    size = check_input_file(p, what, error=error)
    if limit is not None and size > limit:
        raise error(f"{what} {p} has {size} bytes, more than the {limit} bytes any "
                    f"{what} has")
    try:
        with open(p, "rb") as fh:
            raw = fh.read() if limit is None else fh.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{what} {p}: cannot read it (no such file)") from None
    except IsADirectoryError:
        raise error(f"{what} {p} is a folder; give a file") from None
    except OSError as exc:
        raise error(f"{what} {p}: cannot read it ({exc.strerror or exc})") from None
    if limit is not None and len(raw) > limit:  # it grew while it was read
        raise error(f"{what} {p} has more than the {limit} bytes any {what} has")
    return raw


def read_text(path: str | Path, what: str, *, error=ConfigError) -> str:
    """The UTF-8 text of ``path``; ``error`` (one line naming ``what`` and the file) when it is
    missing, a folder, not a regular file, unreadable, not UTF-8 or binary."""
    p = Path(path)
    raw = read_input(p, what, error=error)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {p} is not UTF-8 text (byte {exc.start}); save it as UTF-8") \
            from None
    if _BINARY.search(text):
        raise error(f"{what} {p} holds control characters (a binary file?); give a text file")
    return text


def check_writable(path: str | Path, what: str, *, folder: bool = False,
                   parents: bool = True) -> None:
    """Refuse, before any work, an output path that cannot be written: a read-only place, a
    folder where a file is wanted (or the reverse), a parent that is a file, a FIFO or a device
    (writing to one hangs or fails after the work is done), a name with a control character (a
    newline: no listing or log line could show it). ``parents=False``: the folder that would
    hold ``path`` must exist (a typo in it is not made into folders). Creates nothing."""
    p = Path(path)
    if any(not c.isprintable() for c in str(p)):
        raise ConfigError(f"{what} {str(p)!r} has a control character (a newline?) in its name; "
                          "give a plain path")
    if p.exists():
        if not (p.is_dir() or p.is_file()):
            raise ConfigError(f"{what} {p} is not a regular file (a FIFO, socket or device); give "
                              f"{'a folder' if folder else 'a file path'}")
        if folder != p.is_dir():
            raise ConfigError(f"{what} {p} is {'a file' if folder else 'a folder'}; give "
                              f"{'a folder' if folder else 'a file path'}")
        target = p
    else:
        target = p.parent
        if not parents and not target.exists() and not target.is_symlink():
            raise ConfigError(f"{what} {p}: the folder {target} does not exist; make it first "
                              "(nothing makes it for you)")
        while not target.exists() and target != target.parent:
            target = target.parent
        if not target.is_dir():
            raise ConfigError(f"{what} {p}: {target} is a file, not a folder")
    if not os.access(target, os.W_OK | (os.X_OK if target.is_dir() else 0)):
        raise ConfigError(f"{what} {p}: {target} is not writable")


def file_digest(path: Path | None) -> str:
    """sha256 of a file's bytes (hex); 'none' for no file."""
    if path is None:
        return "none"
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---- writing ------------------------------------------------------------------------------------


def _write_failed(path: Path, exc: OSError) -> StoreError:
    why = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why += "; free some space"
    return StoreError(f"could not write {path} ({why})")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder + os.replace)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _new_file_mode(path: Path) -> int:
    """The mode of a file written to ``path``: the mode of the file it replaces, else what
    ``open`` gives a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0o022)  # reading the umask means setting it: set it straight back
        os.umask(mask)
        return 0o666 & ~mask


def atomic_write_bytes(path: Path, *parts) -> None:
    """Write the bytes-like ``parts`` one after the other to ``path`` atomically (temporary file
    in the same folder + os.replace); a numpy array's memoryview is written without a copy. The
    file gets the mode of the one it replaces, a new one the umask's (as ``open`` would)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, _new_file_mode(path))  # mkstemp's is 0600 whatever the umask
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise _write_failed(path, exc) from None
        raise


def atomic_write_json(path: Path, data) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def append_text(path: Path, text: str, *, sync: bool) -> None:
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
    except OSError as exc:
        raise _write_failed(path, exc) from None
