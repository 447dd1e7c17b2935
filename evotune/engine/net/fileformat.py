"""The bytes of a net file (engine/net/network.py reads and writes them): evotune's header, its
version 2 extension for bucketed nets, bullet's padding, the sizes of the arrays, and the
checks of the numbers a file holds.

docs/formats.md ("Network files") states the layouts.
"""
from __future__ import annotations

import struct

import numpy as np

from ...errors import NetError
from .inputs import INPUTS, KING_BUCKETS_MAX, OUTPUT_BUCKETS_MAX

HIDDEN_MIN, HIDDEN_MAX = 8, 1024
"""The hidden sizes evotune accepts."""

MAGIC = b"EVONNUE\0"
VERSION = 1
"""The format version of a plain net's file (K = 1, N = 1: the files of evotune before buckets)."""
VERSION_BUCKETS = 2
"""The format version of a bucketed net's file: version 1's header, then :data:`BUCKETS_HEADER`."""
HEADER = struct.Struct("<8sIIIiii8s")
"""magic, format version, hidden, activation code, qa, qb, scale, checksum (8 bytes)."""
HEADER_SIZE = HEADER.size  # 40
BUCKETS_HEADER = struct.Struct("<32sB7x")
"""Version 2's header extension: the king bucket map (32 bytes, one id each), the number of
output buckets (1 byte), 7 zero bytes."""
HEADER_SIZE_BUCKETS = HEADER_SIZE + BUCKETS_HEADER.size  # 80
BULLET_PAD = b"bullet"
"""bullet pads its quantised file with these bytes, repeated, to a multiple of 64 bytes (files of
bullet before March 2024 pad with zero bytes; both are read)."""


def payload_size(hidden: int, k: int = 1, n: int = 1) -> int:
    """Bytes of the arrays: 2 (768 K H + H + N (2 H + 1))."""
    return 2 * (INPUTS * k * hidden + hidden + n * (2 * hidden + 1))


def padded(n: int) -> int:
    """``n`` rounded up to a multiple of 64 (bullet pads its files so)."""
    return -(-n // 64) * 64


def bullet_hidden(size: int, king_buckets: int = 1, output_buckets: int = 1) -> int | None:
    """The hidden size of a bullet file of ``size`` bytes holding a net with ``king_buckets``
    king buckets and ``output_buckets`` output buckets (arrays of 2 (H (768 K + 1 + 2 N) + N)
    bytes, maybe padded to a multiple of 64: the padding is shorter than one hidden unit's 1542
    bytes or more, so the size names H uniquely), or None when no H in 8..1024 fits."""
    k, n = king_buckets, output_buckets
    h = (size - 2 * n) // (2 * (INPUTS * k + 1 + 2 * n))
    if HIDDEN_MIN <= h <= HIDDEN_MAX and size in (payload_size(h, k, n),
                                                  padded(payload_size(h, k, n))):
        return h
    return None


MAX_FILE_SIZE = HEADER_SIZE_BUCKETS + padded(payload_size(HIDDEN_MAX, KING_BUCKETS_MAX,
                                                       OUTPUT_BUCKETS_MAX))
"""The largest net file (H 1024, 16 king and 8 output buckets, either format): a larger file is
refused before it is read."""


def frozen_int16(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only int16 copy of ``value`` (a Net never changes after construction)."""
    arr = np.asarray(value)
    if arr.dtype != np.int16:
        raise NetError(f"net {name} must be an int16 array, got {arr.dtype}")
    if arr.shape != shape:
        raise NetError(f"net {name} has shape {arr.shape}; expected {shape}")
    out = np.array(arr, dtype=np.int16, order="C", copy=True)
    out.setflags(write=False)
    return out


def int_in(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int when it is an integer in lo..hi; NetError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not lo <= int(value) <= hi:
        raise NetError(f"net {name} {value!r} is invalid; give an integer from {lo} to {hi}")
    return int(value)
