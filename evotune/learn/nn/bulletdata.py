"""bullet's binary training data: bulletformat's 32-byte ``ChessBoard`` records, read and written.

The layout (bulletformat 1.8.0, ``src/chess.rs``, ``#[repr(C)] struct ChessBoard``, asserted 32
bytes; the files are the records back to back, no header, little-endian):

========  =====  ============================================================================
bytes     type   field
========  =====  ============================================================================
0-7       u64    ``occ``: occupied squares, bit ``sq`` (a1 = 0, h8 = 63)
8-23      u8x16  ``pcs``: one 4-bit code per occupied square in ascending square order, the
                 first of a byte in its low nibble; code = 8 * colour + piece type (0 pawn ..
                 5 king), colour 0 = the side to move's
24-25     i16    ``score``: centipawns, the side to move's view
26        u8     ``result``: the game's result for the side to move in half points (0, 1, 2)
27        u8     ``ksq``: the side to move's king square
28        u8     ``opp_ksq``: the other king's square XOR 56 (seen from its own side)
29-31     u8x3   ``extra``: unused (0)
========  =====  ============================================================================

The board is the side to move's view: a position with Black to move is stored mirrored
vertically (square XOR 56) with the colours swapped, its score negated and its result 2 -
result, so the record does not say which side was to move. Read, a record is a position with
White to move (``stm`` 0) in :class:`~evotune.learn.nn.data.PackedData`'s columns; its features
and target are those of the original position (the trainer sees the same position either
way). Written, a position with Black to move is mirrored so.

A file is read as bullet's data by its extension (:data:`SUFFIXES`). Every record is checked
before it is used (size a multiple of 32, at most 32 pieces, piece codes 0-5 and 8-13, unused
nibbles 0, one king a side, ``ksq`` and ``opp_ksq`` those kings, result 0-2): a bad one is one
:class:`~evotune.learn.labels.DataError` naming the file and the record. Scores beyond +-32,000
are clipped as text scores are (-32,768 is evotune's "no score").
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba import njit

from ...fileio import atomic_write_bytes, check_input_file, check_writable
from ..labels import DATA_HINT as HINT
from ..labels import DataError, file_record, format_line
from .data import NO_SCORE, SCORE_LIMIT, PackedData, load_data

log = logging.getLogger(__name__)

RECORD = 32
"""Bytes per record."""
SUFFIXES = (".bin", ".data")
"""File extensions read and written as bullet's binary data (any case)."""
DTYPE = np.dtype([("occ", "<u8"), ("pcs", "u1", (16,)), ("score", "<i2"), ("result", "u1"),
                  ("ksq", "u1"), ("opp_ksq", "u1"), ("extra", "u1", (3,))])
"""A record as a numpy structured type (C layout, 32 bytes)."""
_BLOCK = 1 << 20
"""Records checked per block while reading."""
_WHY = {1: "more than 32 pieces", 2: "a piece code that is no piece (6, 7, 14 or 15)",
        3: "a non-zero nibble after the last piece", 4: "not one king a side",
        5: "ksq or opp_ksq is not its king's square", 6: "a result that is not 0, 1 or 2"}
_PIECE = "PNBRQK"


def bullet_key(records: list[dict]) -> str:
    """The key of bullet data files (a run's ``cache`` identity): SHA-256 over a name of the
    format and the files' digests, in order."""
    h = hashlib.sha256(b"evotune-bullet-data 1\n")
    for rec in records:
        h.update(rec["sha256"].encode() + b"\n")
    return h.hexdigest()


def is_bullet(path: str | Path) -> bool:
    """Whether ``path`` is read and written as bullet's binary data (by its extension)."""
    return Path(path).suffix.lower() in SUFFIXES


@njit(cache=True)
def _first_bad(occ, pcs, result, ksq, opp_ksq):
    """(index, reason) of the first bad record (reason codes of ``_WHY``), (-1, 0) if none."""
    for i in range(occ.size):
        o = occ[i]
        n = 0
        for sq in range(64):
            n += (o >> np.uint64(sq)) & np.uint64(1)
        if n > 32:
            return i, 1
        k = 0
        ours = -1
        theirs = -1
        kings = 0
        for sq in range(64):
            if (o >> np.uint64(sq)) & np.uint64(1):
                code = (np.int64(pcs[i, k >> 1]) >> (4 * (k & 1))) & 15
                if (code & 7) > 5:
                    return i, 2
                if code == 5:
                    ours = sq
                    kings += 1
                elif code == 13:
                    theirs = sq
                    kings += 16
                k += 1
        for j in range(k, 32):
            if (np.int64(pcs[i, j >> 1]) >> (4 * (j & 1))) & 15:
                return i, 3
        if kings != 17:
            return i, 4
        if ksq[i] != ours or opp_ksq[i] != theirs ^ 56:
            return i, 5
        if result[i] > 2:
            return i, 6
    return -1, 0


@njit(cache=True)
def _to_records(occ, pcs, score, result, stm, r_occ, r_pcs, r_score, r_result, r_ksq, r_opp):
    """Packed positions (White's view, checked) as records (the side to move's view)."""
    codes = np.empty(64, dtype=np.int64)
    for i in range(occ.size):
        o = occ[i]
        black = stm[i] != 0
        codes[:] = -1
        k = 0
        for sq in range(64):
            if (o >> np.uint64(sq)) & np.uint64(1):
                c = (np.int64(pcs[i, k >> 1]) >> (4 * (k & 1))) & 15
                if black:  # mirrored, colours swapped
                    codes[sq ^ 56] = c ^ 8
                else:
                    codes[sq] = c
                k += 1
        r_pcs[i, :] = 0
        ro = np.uint64(0)
        k = 0
        for sq in range(64):
            c = codes[sq]
            if c >= 0:
                ro |= np.uint64(1) << np.uint64(sq)
                r_pcs[i, k >> 1] |= np.uint8(c << (4 * (k & 1)))
                if c == 5:
                    r_ksq[i] = sq
                elif c == 13:
                    r_opp[i] = sq ^ 56
                k += 1
        r_occ[i] = ro
        r_score[i] = -score[i] if black else score[i]
        r_result[i] = 2 - result[i] if black else result[i]


def _file_error(path: Path, problem: str) -> DataError:
    return DataError(f"data file {path} (bullet's binary data by its extension "
                     f"{path.suffix}): {problem}")


def record_count(path: Path) -> int:
    """The number of records of a bullet data file (DataError when its size is not whole)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataError(f"data file {path}: cannot read it ({exc.strerror})") from None
    if size % RECORD:
        raise _file_error(path, f"{size} bytes is not a whole number of {RECORD}-byte "
                                "ChessBoard records; is it bulletformat's chess data?")
    return size // RECORD


def empty_packed(n: int) -> PackedData:
    """``n`` zeroed positions."""
    return PackedData(np.zeros(n, np.uint64), np.zeros((n, 16), np.uint8),
                      np.zeros(n, np.int16), np.zeros(n, np.uint8), np.zeros(n, np.uint8))


def read_into(path: Path, n: int, data: PackedData, start: int, first: int = 0) -> int:
    """Read ``n`` records of ``path`` from its record ``first`` into ``data`` from position
    ``start``, in blocks of :data:`_BLOCK`, each checked first; returns the number of scores
    clipped."""
    clipped = 0
    try:
        with open(path, "rb") as fh:
            fh.seek(first * RECORD)
            for at in range(0, n, _BLOCK):
                want = min(_BLOCK, n - at)
                b = np.fromfile(fh, dtype=DTYPE, count=want)
                if b.size != want:
                    raise DataError(f"data file {path} changed while it was read; read it "
                                    "again")
                occ, pcs = np.ascontiguousarray(b["occ"]), np.ascontiguousarray(b["pcs"])
                result = np.ascontiguousarray(b["result"])
                i, why = _first_bad(occ, pcs, result, np.ascontiguousarray(b["ksq"]),
                                    np.ascontiguousarray(b["opp_ksq"]))
                if i >= 0:
                    k = first + at + i
                    raise _file_error(path, f"record {k} (byte {k * RECORD}) is not a "
                                            f"ChessBoard: {_WHY[int(why)]}")
                score = b["score"].astype(np.int32)
                clipped += int(np.count_nonzero(np.abs(score) > SCORE_LIMIT))
                lo, hi = start + at, start + at + want
                data.occ[lo:hi] = occ
                data.pcs[lo:hi] = pcs
                data.score[lo:hi] = np.clip(score, -SCORE_LIMIT, SCORE_LIMIT)
                data.result[lo:hi] = result
    except OSError as exc:
        raise DataError(f"data file {path}: cannot read it ({exc.strerror})") from None
    return clipped


def read_bullet(path: str | Path) -> tuple[PackedData, int]:
    """(the positions of a bullet data file, White to move; the number of scores clipped)."""
    path = Path(path)
    n = record_count(path)
    data = empty_packed(n)
    return data, read_into(path, n, data, 0)


def load_bullet(paths, *, check: Callable[[PackedData], object] | None = None) -> PackedData:
    """The positions of bullet data files, in order, read into the columns once (their memory:
    28 bytes a position and one block of records; no cache: the files are packed already);
    ``info`` as a text cache's (key, files, counts; no bad lines)."""
    paths = [Path(p) for p in paths]
    for p in paths:
        check_input_file(p, "data file", error=DataError, hint=HINT)
    counts = [record_count(p) for p in paths]
    if sum(counts) == 0:
        raise DataError(f"{', '.join(str(p) for p in paths)}: no positions (empty files)")
    data = empty_packed(sum(counts))
    records, clipped, at = [], 0, 0
    for p, n in zip(paths, counts):
        clipped += read_into(p, n, data, at)
        at += n
        rec = file_record(p)
        if rec["size"] != n * RECORD:
            raise DataError(f"data file {p} changed while it was read; read it again")
        rec["positions"] = n
        records.append(rec)
    data.info = {"key": bullet_key(records), "format": "bullet", "files": records,
                 "positions": len(data), "scored": len(data), "bad": 0, "bad_lines": [],
                 "clipped_scores": clipped}
    if check is not None:
        check(data)
    log.info("%s: %d positions (bullet)", ", ".join(map(str, paths)), len(data))
    return data


def load_positions(paths, *, max_bad: int = 0, cache_dir: str | Path | None = None,
                   progress: Callable[[int], None] | None = None,
                   check: Callable[[PackedData], object] | None = None) -> PackedData:
    """The packed positions of data files: bullet's binary data (:func:`load_bullet`) when
    every file has a bullet extension, text (:func:`evotune.learn.nn.data.load_data`, cached)
    when none has; a mix is a DataError."""
    kinds = {is_bullet(p) for p in paths}
    if len(kinds) > 1:
        raise DataError("the data files mix bullet's binary data (" + ", ".join(SUFFIXES)
                        + ") and text; give one kind (convert one with 'evotune nn convert')")
    if kinds == {True}:
        return load_bullet(paths, check=check)
    return load_data(paths, max_bad=max_bad, cache_dir=cache_dir, progress=progress,
                     check=check)


def bullet_bytes(data: PackedData) -> np.ndarray:
    """The records of packed positions (White's view, each with a score), as a structured
    array of :data:`DTYPE`; DataError when a position has no score."""
    missing = int(np.count_nonzero(data.score == NO_SCORE))
    if missing:
        raise DataError(f"{missing} of the {len(data)} positions have no score; bullet's records "
                        "need one on every position ('FEN | score | result' lines)")
    n = len(data)
    out = np.zeros(n, DTYPE)
    cols = [np.zeros(n, np.uint64), np.zeros((n, 16), np.uint8), np.zeros(n, np.int16),
            np.zeros(n, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.uint8)]
    _to_records(data.occ, data.pcs, data.score, data.result, data.stm, *cols)
    for name, col in zip(("occ", "pcs", "score", "result", "ksq", "opp_ksq"), cols):
        out[name] = col
    return out


def board_fen(occ: int, pcs: np.ndarray, stm: int) -> str:
    """The FEN of a packed board (no castling, no en passant, clocks 0 1)."""
    rows = [["1"] * 8 for _ in range(8)]
    k = 0
    for sq in range(64):
        if occ >> sq & 1:
            code = (int(pcs[k >> 1]) >> (4 * (k & 1))) & 15
            ch = _PIECE[code & 7]
            rows[sq >> 3][sq & 7] = ch.lower() if code >> 3 else ch
            k += 1
    ranks = []
    for r in range(7, -1, -1):
        text, run = "", 0
        for ch in rows[r]:
            if ch == "1":
                run += 1
            else:
                text += (str(run) if run else "") + ch
                run = 0
        ranks.append(text + (str(run) if run else ""))
    return f"{'/'.join(ranks)} {'b' if stm else 'w'} - - 0 1"


def text_lines(data: PackedData) -> list[str]:
    """``FEN | score | result`` lines (White's view) of packed positions with scores."""
    out = []
    for i in range(len(data)):
        s = int(data.score[i])
        if s == NO_SCORE:
            raise DataError(f"position {i} has no score; the text format needs one")
        out.append(format_line(board_fen(int(data.occ[i]), data.pcs[i], int(data.stm[i])),
                               int(data.result[i]) / 2, "text", s) + "\n")
    return out


def convert(paths, out: str | Path, *, max_bad: int = 0,
            cache_dir: str | Path | None = None) -> tuple[PackedData, Path]:
    """Write the positions of ``paths`` (text or bullet data) to ``out``: bullet's records when
    its extension is one of :data:`SUFFIXES`, else ``FEN | score | result`` lines. Everything
    is read and checked before ``out`` is written (atomically)."""
    out = Path(out)
    check_writable(out, "output file")
    if any(Path(p).resolve() == out.resolve() for p in paths):
        raise DataError(f"the output file {out} is one of the inputs; give another file")
    data = load_positions(paths, max_bad=max_bad, cache_dir=cache_dir)
    if is_bullet(out):
        atomic_write_bytes(out, bullet_bytes(data).view(np.uint8).data)
    else:
        atomic_write_bytes(out, "".join(text_lines(data)).encode())
    return data, out
