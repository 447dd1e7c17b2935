"""Training positions for networks: read once from text, packed into a binary cache beside the data.

Input lines are read by :mod:`evotune.learn.labels` (the one reader of labelled positions):
``FEN | score | result`` (score White's view in centipawns, result 1.0/0.5/0.0), ``FEN | result``,
evotune datagen's ``FEN [1.0]`` and EPD ``c9 "1-0";``. A malformed line is one
:class:`~evotune.learn.labels.DataError` naming ``file:line`` unless ``max_bad`` allows it.

The positions are packed ONCE into a cache file named for the SHA-256 of the data files (their
contents, in order), in the folder of the first file (or ``cache_dir``), written atomically
through :mod:`evotune.fileio`; every later load (the next epoch, the next training on the same
files) reads the cache and no text. Per position (28 bytes in memory and on disk):

- ``occ``: uint64, the occupied squares (bit ``sq``, a1 = 0, h8 = 63);
- ``pcs``: 16 bytes, one 4-bit piece code per occupied square in ascending square order, the
  first of a byte in its low nibble; code = 8 * colour (0 White, 1 Black) + piece type - 1;
- ``score``: int16, White's view in centipawns clipped to +-32000; ``NO_SCORE`` when the line had
  none;
- ``result``: uint8, the game's result for White in half points (0, 1, 2);
- ``stm``: uint8, 0 White to move, 1 Black.

The trainer expands a packed board into its Chess768 feature indices in numba
(:func:`evotune.learn.nn.kernels.expand`).
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import ConfigError
from ...fileio import atomic_write_bytes, check_input_file, check_writable
from ..labels import DATA_HINT as HINT
from ..labels import DataError, ReadStats, file_record, iter_labelled, log_notices

log = logging.getLogger(__name__)

MAGIC = b"EVNNDATA"
CACHE_VERSION = 1
CACHE_SUFFIX = ".nncache"
NO_SCORE = -32768
"""``score`` of a position whose line carried no score."""
SCORE_LIMIT = 32000
"""Scores are clipped to +-SCORE_LIMIT centipawns (mate scores included)."""
BYTES_PER_POSITION = 28
_COLUMNS = (("occ", np.uint64, ()), ("pcs", np.uint8, (16,)), ("score", np.int16, ()),
            ("result", np.uint8, ()), ("stm", np.uint8, ()))
_CODES = {"P": 0, "N": 1, "B": 2, "R": 3, "Q": 4, "K": 5,
          "p": 8, "n": 9, "b": 10, "r": 11, "q": 12, "k": 13}
_BLOCK = 1 << 16
"""Positions packed per block while reading (bounds the text-side memory)."""


@dataclass
class PackedData:
    """Positions packed for the trainer (see the module docstring for the columns)."""

    occ: np.ndarray
    pcs: np.ndarray
    score: np.ndarray
    result: np.ndarray
    stm: np.ndarray
    info: dict = field(default_factory=dict)
    """The cache's header: key, files, bad lines, counts."""

    def __len__(self) -> int:
        return int(self.occ.size)

    @property
    def scored(self) -> int:
        """Positions that carry a score."""
        return int(np.count_nonzero(self.score != NO_SCORE))

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name, _, _ in _COLUMNS)

    @classmethod
    def from_columns(cls, cols: Sequence[np.ndarray], info: dict | None = None) -> PackedData:
        """The data of the columns in :data:`_COLUMNS` order."""
        occ, pcs, score, result, stm = cols
        return cls(occ, pcs, score, result, stm, info={} if info is None else info)

    def subset(self, idx: np.ndarray) -> PackedData:
        """The positions ``idx`` (a copy), same info."""
        return PackedData.from_columns([getattr(self, name)[idx] for name, _, _ in _COLUMNS],
                                       dict(self.info))


def pack_fen(fen: str) -> tuple[int, bytes, int]:
    """(occupancy, 16 bytes of piece nibbles, side to move) of a FEN already checked legal."""
    placement, side = fen.split()[:2]
    by_square = {}
    rank, file = 7, 0
    for ch in placement:
        if ch == "/":
            rank, file = rank - 1, 0
        elif ch.isdigit():
            file += int(ch)
        else:
            by_square[rank * 8 + file] = _CODES[ch]
            file += 1
    occ = 0
    nib = bytearray(16)
    for k, sq in enumerate(sorted(by_square)):
        occ |= 1 << sq
        nib[k >> 1] |= by_square[sq] << (4 * (k & 1))
    return occ, bytes(nib), 0 if side == "w" else 1


def unpack(data: PackedData, i: int) -> list[tuple[int, int, int]]:
    """(square, colour 0 White / 1 Black, piece type 1-6) of position ``i``, by square."""
    occ, pcs = int(data.occ[i]), data.pcs[i]
    out, k = [], 0
    for sq in range(64):
        if occ >> sq & 1:
            code = (int(pcs[k >> 1]) >> (4 * (k & 1))) & 15
            out.append((sq, code >> 3, (code & 7) + 1))
            k += 1
    return out


def data_key(records: list[dict]) -> str:
    """The cache key of data files: SHA-256 over the cache version and the files' digests."""
    h = hashlib.sha256(f"evotune-nn-data {CACHE_VERSION}\n".encode())
    for rec in records:
        h.update(rec["sha256"].encode() + b"\n")
    return h.hexdigest()


def cache_path(paths, records: list[dict], cache_dir: str | Path | None = None) -> Path:
    """Where the cache of ``paths`` lives: ``<first file>.<key[:16]>.nncache`` beside it."""
    first = Path(paths[0])
    folder = Path(cache_dir) if cache_dir is not None else first.parent
    return folder / f"{first.name}.{data_key(records)[:16]}{CACHE_SUFFIX}"


def _records(paths) -> list[dict]:
    if not paths:
        raise DataError("no data files given; give files of labelled positions")
    out = []
    for p in paths:
        path = Path(p)
        check_input_file(path, "data file", error=DataError, hint=HINT)
        try:
            out.append(file_record(path))
        except OSError as exc:
            raise DataError(f"data file {path}: cannot read it ({exc.strerror})") from None
    return out


def _check_bad(info: dict, max_bad: int, where: Path) -> None:
    bad = int(info["bad"])
    if bad > max_bad:
        kept = info["bad_lines"]
        line = kept[max_bad] if max_bad < len(kept) else f"{bad} bad lines (listed in {where})"
        raise DataError(f"{line} (bad lines allowed: {max_bad}; raise --max-bad to skip such "
                        "lines)")


def _parse(paths, max_bad: int, progress,
           notices: list[str]) -> tuple[PackedData, ReadStats]:
    stats = ReadStats()
    blocks: list[list[np.ndarray]] = []
    cur = _empty(_BLOCK)
    n = k = 0
    clipped = 0
    for fen, result, score in iter_labelled(paths, max_bad=max_bad, stats=stats,
                                            notices=notices):
        occ, nib, stm = pack_fen(fen)
        cur[0][k] = occ
        cur[1][k] = np.frombuffer(nib, dtype=np.uint8)
        if score is None:
            cur[2][k] = NO_SCORE
        else:
            s = int(round(score))
            if abs(s) > SCORE_LIMIT:
                clipped += 1
                s = SCORE_LIMIT if s > 0 else -SCORE_LIMIT
            cur[2][k] = s
        cur[3][k] = int(round(2 * result))
        cur[4][k] = stm
        k += 1
        n += 1
        if k == _BLOCK:
            blocks.append(cur)
            cur, k = _empty(_BLOCK), 0
            if progress is not None:
                progress(n)
    blocks.append([a[:k] for a in cur])
    cols = [np.ascontiguousarray(np.concatenate([b[c] for b in blocks]))
            for c in range(len(_COLUMNS))]
    data = PackedData.from_columns(cols, {"clipped_scores": clipped})
    return data, stats


def _empty(n: int) -> list[np.ndarray]:
    return [np.zeros((n, *shape), dtype=dtype) for _, dtype, shape in _COLUMNS]


def write_cache(path: Path, data: PackedData) -> None:
    """The cache file: magic, version, header length (8 bytes LE), JSON header (with ``digest``,
    the SHA-256 of the columns' bytes), the columns."""
    arrays = [getattr(data, name) for name, _, _ in _COLUMNS]
    data.info["digest"] = _columns_digest(arrays)
    header = json.dumps(data.info, sort_keys=True).encode()
    cols = [np.ascontiguousarray(a).data.cast("B") for a in arrays]
    atomic_write_bytes(path, MAGIC, CACHE_VERSION.to_bytes(4, "little"),
                       len(header).to_bytes(8, "little"), header, *cols)


class CacheDamaged(DataError):
    """A data cache that is not what :func:`write_cache` wrote (damaged, truncated, edited or of
    another version): :func:`load_data` rebuilds it from the data files."""


def _columns_digest(cols) -> str:
    h = hashlib.sha256()
    for col in cols:
        h.update(np.ascontiguousarray(col).data.cast("B"))
    return h.hexdigest()


def _check_codes(cols: list[np.ndarray]) -> bool:
    """Every position holds at most 32 pieces of valid codes (0-5 White, 8-13 Black), a result
    of 0-2 half points, a side to move 0/1 and a score within +-SCORE_LIMIT or NO_SCORE: what
    the trainer's kernels index tables with is never taken unchecked from a file."""
    occ, pcs, score, result, stm = cols
    if result.size and (int(result.max()) > 2 or int(stm.max()) > 1):
        return False
    if np.any((score != NO_SCORE) & (np.abs(score.astype(np.int32)) > SCORE_LIMIT)):
        return False
    slot = np.arange(32)
    for at in range(0, occ.size, _BLOCK):
        bits = np.unpackbits(occ[at:at + _BLOCK].view(np.uint8).reshape(-1, 8), axis=1)
        count = bits.sum(axis=1, dtype=np.int64)
        if count.size and int(count.max()) > 32:
            return False
        block = pcs[at:at + _BLOCK]
        nib = np.empty((block.shape[0], 32), dtype=np.uint8)
        nib[:, 0::2], nib[:, 1::2] = block & 15, block >> 4
        if np.any(((nib & 7) > 5) & (slot < count[:, None])):
            return False
    return True


def read_cache(path: Path) -> PackedData:
    """A cache written by :func:`write_cache`; :class:`CacheDamaged` naming it when its bytes
    are not what was written (the digest of its columns in its header) or hold impossible
    codes."""
    if not path.is_file():
        raise DataError(f"data cache {path} is not a regular file (a FIFO, socket, device or "
                        "folder); remove it or give another --cache-dir")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"data cache {path}: cannot read it ({exc.strerror})") from None
    damaged = CacheDamaged(f"data cache {path} is damaged or of another version")
    if raw[:8] != MAGIC or int.from_bytes(raw[8:12], "little") != CACHE_VERSION:
        raise damaged
    hlen = int.from_bytes(raw[12:20], "little")
    try:
        info = json.loads(raw[20:20 + hlen])
        n = int(info["positions"])
        digest = str(info["digest"])
    except (ValueError, KeyError, TypeError):
        raise damaged from None
    at = 20 + hlen
    if n < 0 or len(raw) != at + n * BYTES_PER_POSITION:
        raise damaged
    cols = []
    for _, dtype, shape in _COLUMNS:
        size = n * int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        cols.append(np.frombuffer(raw, dtype=dtype, count=size // np.dtype(dtype).itemsize,
                                  offset=at).reshape((n, *shape)))
        at += size
    if digest != _columns_digest(cols) or not _check_codes(cols):
        raise damaged
    return PackedData.from_columns(cols, info)


def load_data(paths, *, max_bad: int = 0, cache_dir: str | Path | None = None,
              progress: Callable[[int], None] | None = None,
              check: Callable[[PackedData], object] | None = None) -> PackedData:
    """The packed positions of ``paths`` (in order): from the cache when it exists, else read
    from the text (``progress(positions)`` every 65,536 positions) and cached.

    Everything is checked before the cache is written: the files exist, the cache's place is
    writable, every line parses (up to ``max_bad`` malformed ones), ``check(data)`` (the
    caller's use of the data) raises nothing. A cache made with a larger ``max_bad`` than this
    call's is refused naming the first line beyond the limit. A damaged cache (its bytes differ
    from its header's digest, or hold impossible codes) is never used: it is rebuilt from the
    text, with a warning naming it.
    """
    paths = [Path(p) for p in paths]
    records = _records(paths)
    path = cache_path(paths, records, cache_dir)
    if path.exists() or path.is_symlink():
        try:
            data = read_cache(path)
            if data.info.get("key") != data_key(records):
                raise CacheDamaged(f"data cache {path} belongs to other data")
        except CacheDamaged as exc:
            log.warning("%s: rebuilt from the data files", exc)
        else:
            _check_bad(data.info, max_bad, path)
            if check is not None:
                check(data)
            log.info("%s: %d positions from the cache", path, len(data))
            return data
    try:
        check_writable(path, "data cache", parents=False)
    except ConfigError as exc:
        raise DataError(f"{exc}; give a writable cache folder") from None
    notices: list[str] = []  # skipped lines: said once every check passed
    data, stats = _parse(paths, max_bad, progress, notices)
    for rec, got in zip(records, stats.files):
        if rec["sha256"] != got["sha256"]:
            raise DataError(f"data file {rec['path']} changed while it was read; read it again")
        rec["positions"] = got["positions"]
    data.info.update({"key": data_key(records), "version": CACHE_VERSION, "files": records,
                      "positions": len(data), "scored": data.scored, "bad": stats.bad,
                      "bad_lines": stats.bad_lines})
    if len(data) == 0:
        raise DataError(f"{', '.join(str(p) for p in paths)}: no labelled positions")
    if check is not None:
        check(data)
    log_notices(notices)
    write_cache(path, data)
    log.info("%s: %d positions packed (%d bytes)", path, len(data), data.nbytes)
    return data
