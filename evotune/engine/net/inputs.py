"""A net's inputs and output buckets: bullet's ``Chess768`` features, its king buckets
(``ChessBucketsMirrored``) and its material output buckets (``MaterialCount<N>``).

The conventions, from bullet's source (``crates/bullet_lib/src/game/inputs/chess768.rs``,
``chess_buckets.rs``, ``game/outputs.rs``; docs/formats.md, "Network files", states them):

* Chess768: a piece seen from a perspective is ``384 * (colour != perspective) + 64 * (type - 1)
  + square``, the square flipped vertically (``^ 56``) for Black's perspective.
* King buckets (a net with K >= 2): each perspective looks up its OWN king's square, seen from
  that perspective (``^ 56`` for Black), in a map of the 32 mirrored squares (index ``4 * rank +
  file`` with files e-h folded onto d-a); when that king is on files e-h every feature of the
  perspective is mirrored horizontally (``square ^ 7``); the feature's row is ``768 * bucket +
  index``. A net with one bucket (K = 1) is plain Chess768: no mirroring (evotune's net until
  now; bullet's ``Chess768``).
* Output buckets (N): ``(pieces on the board, kings included, - 2) // ceil(32 / N)``.

Plain Python and numpy: the numba core (engine/core/nnue.py) computes the same from its state.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import chess
import numpy as np

from ...errors import NetError

INPUTS = 768
"""Input features per perspective and king bucket: 2 colours x 6 piece types x 64 squares."""
KING_SQUARES = 32
"""Squares of a king bucket map: 4 files (a-d; e-h mirrored onto them) x 8 ranks."""
KING_BUCKETS_MAX = 16
OUTPUT_BUCKETS_MAX = 8
PLAIN_MAP: tuple[int, ...] = (0,) * KING_SQUARES
"""The bucket map of a net without king buckets (one bucket, no mirroring)."""

KING_BUCKET_PRESETS: dict[int, tuple[int, ...]] = {
    1: PLAIN_MAP,
    2: (0,) * 8 + (1,) * 24,
    4: (0, 0, 1, 1,
        2, 2, 2, 2) + (3,) * 24,
    8: (0, 1, 2, 3,
        4, 4, 5, 5,
        6, 6, 6, 6) + (7,) * 20,
    16: (0, 1, 2, 3,
         4, 5, 6, 7,
         8, 8, 9, 9,
         10, 10, 11, 11,
         12, 12, 13, 13,
         14, 14, 14, 14) + (15,) * 8,
}
"""Standard bucket maps by bucket count (``nn init --king-buckets K``), rank 1 first, files a-d
(from the perspective's own side): finer near the king's home, as the field's nets do."""


def king_bucket_map(value: Sequence[int]) -> tuple[int, ...]:
    """``value`` as a validated bucket map: 32 integers (rank 1's a-d first), bucket ids from 0
    with K = max + 1 <= 16; NetError (one line) otherwise."""
    try:
        out = tuple(int(v) for v in value)
        same = all(not isinstance(v, bool) and int(v) == v for v in value)
    except (TypeError, ValueError):
        raise NetError(f"net king bucket map {value!r} is not a list of integers") from None
    if not same or len(out) != KING_SQUARES:
        raise NetError(f"net king bucket map must hold {KING_SQUARES} whole numbers (the "
                       f"mirrored king squares), got {len(out)}")
    if min(out) < 0 or max(out) >= KING_BUCKETS_MAX:
        raise NetError(f"net king bucket map: bucket ids must be 0..{KING_BUCKETS_MAX - 1}, got "
                       f"{min(out)}..{max(out)}")
    missing = sorted(set(range(max(out) + 1)) - set(out))
    if missing:
        raise NetError(f"net king bucket map skips bucket {missing[0]}: use the ids 0..K-1, "
                       "each at least once")
    return out


def bucket_count(bucket_map: Sequence[int]) -> int:
    """K: the number of king buckets of a (validated) map."""
    return max(bucket_map) + 1


class _Shaped(Protocol):
    @property
    def hidden(self) -> int: ...
    @property
    def king_buckets(self) -> Sequence[int]: ...
    @property
    def output_buckets(self) -> int: ...
    @property
    def l1w(self) -> np.ndarray: ...


class BucketShape:
    """What a net derives from its bucket map and output buckets, shared by the quantised
    :class:`~evotune.engine.net.network.Net` and the trainer's float net."""

    @property
    def king_bucket_count(self: _Shaped) -> int:
        """K: the number of king buckets (1: none)."""
        return bucket_count(self.king_buckets)

    @property
    def bucketed(self: _Shaped) -> bool:
        """Whether the net has king buckets or output buckets (a version 2 file)."""
        return bucket_count(self.king_buckets) > 1 or self.output_buckets > 1

    @property
    def l1w_rows(self: _Shaped) -> np.ndarray:
        """(N, 2 H): the output weights of each output bucket (a view)."""
        return self.l1w.reshape(self.output_buckets, 2 * self.hidden)


def mirrored_index(square: int) -> int:
    """The index of a (perspective-relative) king square in a 32-square bucket map."""
    file = square & 7
    return 4 * (square >> 3) + (file if file < 4 else 7 - file)


def king_view(bucket_map: Sequence[int], king_square: int, perspective: bool) -> tuple[int, int]:
    """(bucket, flip) of a perspective whose own king is on ``king_square`` (absolute): the
    bucket of the mirrored square and 7 when the king is on files e-h (the features' squares are
    then ``^ 7``), 0 otherwise. A plain map (K = 1) never flips."""
    if bucket_count(bucket_map) == 1:
        return 0, 0
    rel = king_square if perspective == chess.WHITE else king_square ^ 56
    return bucket_map[mirrored_index(rel)], (7 if rel & 7 > 3 else 0)


def output_bucket(pieces: int, buckets: int) -> int:
    """bullet's MaterialCount<N>: ``(pieces - 2) // ceil(32 / N)`` for ``pieces`` on the board
    (kings included)."""
    return (pieces - 2) // -(-32 // buckets)


def feature_index(colour: bool, piece_type: int, square: int, perspective: bool) -> int:
    """bullet's Chess768 index of a piece seen from ``perspective`` (python-chess colours, types
    1..6, squares a1 = 0): ``384 * (colour != perspective) + 64 * (type - 1) + square``, the square
    mirrored vertically (``^ 56``) for Black's perspective."""
    return 384 * (colour != perspective) + 64 * (piece_type - 1) \
        + (square if perspective == chess.WHITE else square ^ 56)


def features(board: chess.Board, bucket_map: Sequence[int] = PLAIN_MAP
             ) -> tuple[np.ndarray, np.ndarray]:
    """The active features (rows of l0w) of ``board`` from the side to move's and the other
    side's perspective (int64 arrays, one entry per piece, White's pawns first, squares
    ascending): Chess768 indices, with a bucket map of K >= 2 buckets mirrored and offset by
    ``768 * bucket`` per perspective (:func:`king_view`)."""
    masks = np.array([board.pieces_mask(t, c) for c in (chess.WHITE, chess.BLACK)
                      for t in chess.PIECE_TYPES], dtype="<u8")
    bits = np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(12, 64)
    kind, sq = np.nonzero(bits)             # kind = 6 * (colour is Black) + type - 1
    black = kind >= 6
    typ = kind % 6

    def view(perspective: bool) -> np.ndarray:
        rel = sq if perspective == chess.WHITE else sq ^ 56
        king = board.king(perspective)
        bucket, flip = (0, 0) if king is None else king_view(bucket_map, king, perspective)
        return INPUTS * bucket + 384 * (black == (perspective == chess.WHITE)) + 64 * typ \
            + (rel ^ flip)

    return view(board.turn), view(not board.turn)


def describe_map(bucket_map: Sequence[int]) -> str:
    """The map as 8 ranks of 4 ids, rank 1 first ('0 0 1 1 / 2 2 2 2 / ...')."""
    return " / ".join(" ".join(str(b) for b in bucket_map[r * 4:r * 4 + 4]) for r in range(8))


def describe_buckets(bucket_map: Sequence[int], output_buckets: int) -> str:
    """A net's king bucket map (rank 1 first) and output buckets, one line."""
    k = bucket_count(bucket_map)
    kings = "none (plain Chess768, no mirroring)" if k == 1 else \
        f"{k}, mirrored on files e-h; map {describe_map(bucket_map)}"
    n = output_buckets
    outs = "1" if n == 1 else f"{n} (MaterialCount: (pieces - 2) // {-(-32 // n)})"
    return f"king buckets {kings}; output buckets {outs}"


def parse_king_buckets(text: str) -> tuple[int, ...]:
    """A bucket map from the command line: a preset's bucket count (``4``: the map
    KING_BUCKET_PRESETS[4]) or 32 comma-separated bucket ids (rank 1's a-d first); NetError
    otherwise."""
    text = text.strip()
    if "," not in text:
        try:
            return KING_BUCKET_PRESETS[int(text)]
        except (ValueError, KeyError):
            raise NetError(f"king buckets {text}: give a preset's bucket count ("
                           f"{', '.join(map(str, KING_BUCKET_PRESETS))}) or 32 comma-separated "
                           "bucket ids") from None
    try:
        ids = [int(v) for v in text.split(",")]
    except ValueError:
        raise NetError(f"king buckets {text!r}: the bucket ids must be whole numbers") from None
    return king_bucket_map(ids)
