"""The move model: the value (:class:`MoveModel`), its files, and the numpy reference of its
scores (the python-chess reference of its features is engine/movemodel/chessref.py; the core's
features and scores are engine/movemodel/corescores.py's).

A move model scores a legal move by the sum of one integer weight per feature block of
:data:`~evotune.spec.movefeatures.BLOCKS` it reads (each move activates exactly one feature of
each block; feature set 1, eight blocks: the moving piece on its to- and from-squares, the
capture, the promotion, check, the least valuable enemy attacker of the to- and from-squares,
whether the to-square is defended; feature set 2 adds eight blocks of the position around the
move: whether the from-square is defended, the one-step exchange, the threat made, the enemy
king's zone and distance, the moved piece's mobility, the game phase and the pawn's rank and
passedness; a model's set is the length of its weights),
plus, for a model with H > 0 hidden units, ``sum_j out_j * clip(acc_j, 0, 64) >> 6`` where
``acc_j`` is unit j's bias plus its weights of the move's features (:meth:`MoveModel.scores`,
the numpy reference the core must equal); the softmax of the scores over the legal moves, at
temperature ``scale`` (score units per nat), is the move's probability. The numba core
computes the same indices and scores (engine/core/movemodel.py; engine/movemodel/corescores.py asks it;
spec/movefeatures.py defines the blocks for both); ``chessref.reference_features`` is the
test oracle. Files: a 40-byte header (magic, version, feature set, weights, scale, checksum), then
the weights as int32 little-endian; a version-2 file (a model with hidden units) has the hidden
size and activation shift after the header and the hidden weights, biases and output weights
after the linear weights (docs/formats.md, "Move-model files"; a linear model is written as
version 1, as before). A file that cannot be read, is damaged or truncated raises
:class:`~evotune.errors.MoveModelError`, one line naming it.
"""
from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from ...errors import MoveModelError
from ...fileio import atomic_write_bytes, read_input
from ...seeding import STREAM_MOVE_MODEL, generator
from ...spec.movefeatures import (
    ACT_SHIFT,
    BLOCKS,
    HIDDEN_MAX,
    MODEL_SLOTS,
    N_BLOCKS,
    N_FEATURES,
    SCORE_CLAMP,
    SET_BLOCKS,
    SET_FEATURES,
)

__all__ = ["BLOCKS", "HIDDEN_MAX", "N_BLOCKS", "N_FEATURES", "SCORE_CLAMP", "SET_BLOCKS",
           "SET_FEATURES", "MoveModel",
           "read_move_model",
           "write_move_model", "is_move_model_file"]

MAGIC = b"EVOMOVE\0"
VERSION = 1
"""The format version of a linear model's file."""
VERSION_HIDDEN = 2
"""The format version of a model with hidden units (a second header after the first)."""
FEATURE_SETS = tuple(SET_BLOCKS)
"""The feature sets a file may hold (a file of another set is refused)."""
_SET_OF_SIZE = {n: fs for fs, n in SET_FEATURES.items()}
_HEADER = struct.Struct("<8sIIIi16s")
"""magic, format version, feature set, number of weights, scale, checksum (16 bytes: 8 used, 8 zero)."""
HEADER_SIZE = _HEADER.size  # 40
_HIDDEN_HEADER = struct.Struct("<II")
"""Version 2: hidden units, activation shift."""
SCALE_DEFAULT = 100
"""Score units per nat the trainer writes (a spec's prior_temperature of 100 plays the model's
own probabilities)."""
SCALE_MAX = 10_000
WEIGHT_MAX = 100_000
"""|weight| at most (8 weights per move stay far inside int64 and the score clamp)."""
FILE_SIZE = HEADER_SIZE + 4 * SET_FEATURES[1]
"""A linear model's file of feature set 1 (version 1)."""
_EMPTY = np.zeros(0, dtype=np.int32)


def file_size(hidden: int, features: int) -> int:
    """The bytes of a file of ``hidden`` units (0: a version-1 file) over feature set
    ``features``."""
    nf = SET_FEATURES[features]
    if not hidden:
        return HEADER_SIZE + 4 * nf
    return HEADER_SIZE + _HIDDEN_HEADER.size + 4 * (nf + hidden * (nf + 2))


def hidden_file_size(hidden: int, features: int = 1) -> int:
    """The bytes of a version-2 file of ``hidden`` units over feature set ``features``."""
    nf = SET_FEATURES[features]
    return HEADER_SIZE + _HIDDEN_HEADER.size + 4 * (nf + hidden * (nf + 2))


@dataclass(frozen=True, eq=False, kw_only=True)
class MoveModel:
    """A move model over the features of :data:`BLOCKS` (its feature set's), validated."""

    weights: np.ndarray
    """int32 (F,): one weight per feature, in score units; F = 897 (feature set 1) or 1,646
    (set 2) says the model's feature set."""
    scale: int = SCALE_DEFAULT
    """Score units per nat: P(move) is the softmax of score / scale."""
    hidden_weights: np.ndarray = field(default_factory=lambda: _EMPTY.reshape(0, 0))
    """int32 (F, H): each feature's weight into each hidden unit (64 = activation 1); a linear
    model's may be (0, 0)."""
    hidden_bias: np.ndarray = field(default_factory=lambda: _EMPTY)
    """int32 (H,): each hidden unit's bias (64 = activation 1)."""
    out_weights: np.ndarray = field(default_factory=lambda: _EMPTY)
    """int32 (H,): score units per unit of each hidden unit's clipped activation."""

    def __post_init__(self) -> None:
        w = np.asarray(self.weights)
        if w.dtype.kind not in "iu" or w.ndim != 1 or w.size not in _SET_OF_SIZE:
            sizes = " or ".join(str(n) for n in _SET_OF_SIZE)
            raise MoveModelError(f"move model weights must be {sizes} integers (a feature set's), "
                                 f"got {w.dtype} of shape {w.shape}")
        nf = w.size
        h = np.asarray(self.hidden_bias).size
        if not 0 <= h <= HIDDEN_MAX:
            raise MoveModelError(f"a move model has 0 to {HIDDEN_MAX} hidden units, got {h}")
        if not h and np.asarray(self.hidden_weights).size == 0:
            object.__setattr__(self, "hidden_weights", _EMPTY.reshape(nf, 0))
        for name, shape in (("hidden_weights", (nf, h)), ("hidden_bias", (h,)),
                            ("out_weights", (h,))):
            a = np.asarray(getattr(self, name))
            if a.dtype.kind not in "iu" or a.shape != shape:
                raise MoveModelError(f"move model {name} must be integers of shape {shape}, got "
                                     f"{a.dtype} of shape {a.shape}")
            if a.size and int(np.abs(a.astype(np.int64)).max()) > WEIGHT_MAX:
                raise MoveModelError(f"move model {name} must lie within +-{WEIGHT_MAX}, got "
                                     f"{int(np.abs(a.astype(np.int64)).max())}")
            frozen_a = np.array(a, dtype=np.int32, copy=True)
            frozen_a.setflags(write=False)
            object.__setattr__(self, name, frozen_a)
        if w.size and int(np.abs(w.astype(np.int64)).max()) > WEIGHT_MAX:
            raise MoveModelError(f"move model weights must lie within +-{WEIGHT_MAX}, got "
                                 f"{int(np.abs(w.astype(np.int64)).max())}")
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, np.integer)) \
                or not 1 <= int(self.scale) <= SCALE_MAX:
            raise MoveModelError(f"move model scale {self.scale!r} is invalid; give an integer "
                                 f"from 1 to {SCALE_MAX}")
        frozen = np.array(w, dtype=np.int32, copy=True)
        frozen.setflags(write=False)
        object.__setattr__(self, "weights", frozen)
        object.__setattr__(self, "scale", int(self.scale))

    @property
    def hidden(self) -> int:
        """Hidden units (0: the linear model)."""
        return int(self.hidden_bias.size)

    @property
    def features(self) -> int:
        """The feature set (1 or 2: :data:`~evotune.spec.movefeatures.SET_BLOCKS`)."""
        return _SET_OF_SIZE[int(self.weights.size)]

    @property
    def n_blocks(self) -> int:
        """The feature blocks the model reads."""
        return SET_BLOCKS[self.features]

    @cached_property
    def checksum(self) -> str:
        """16 hex digits of sha256 over the feature set, the scale and the weights (a model with
        hidden units: then the hidden size, activation shift and its hidden arrays)."""
        h = hashlib.sha256(struct.pack("<IIi", self.features, self.weights.size, self.scale))
        h.update(self.weights.astype("<i4").tobytes())
        if self.hidden:
            h.update(_HIDDEN_HEADER.pack(self.hidden, ACT_SHIFT))
            h.update(self._hidden_bytes())
        return h.hexdigest()[:16]

    def _hidden_bytes(self) -> bytes:
        return b"".join(a.astype("<i4").tobytes() for a in
                        (self.hidden_weights, self.hidden_bias, self.out_weights))

    def __eq__(self, other) -> bool:
        if not isinstance(other, MoveModel):
            return NotImplemented
        return (self.scale == other.scale and np.array_equal(self.weights, other.weights)
                and np.array_equal(self.hidden_weights, other.hidden_weights)
                and np.array_equal(self.hidden_bias, other.hidden_bias)
                and np.array_equal(self.out_weights, other.out_weights))

    def __hash__(self) -> int:
        return hash(self.checksum)

    def describe(self) -> str:
        """One line: the features, scale, weights in use and checksum."""
        blocks = ", ".join(f"{name} {size}" for name, size in BLOCKS[:self.n_blocks])
        shape = (f"linear plus {self.hidden} hidden units (CReLU)" if self.hidden else "linear")
        nonzero = int(np.count_nonzero(self.weights)) + sum(
            int(np.count_nonzero(a)) for a in (self.hidden_weights, self.hidden_bias,
                                               self.out_weights))
        return (f"move model, {shape} over feature set {self.features}: "
                f"{self.weights.size} features ({blocks}), scale "
                f"{self.scale} per nat, {nonzero} non-zero weights, checksum {self.checksum}")

    def params(self) -> np.ndarray:
        """The model as the core's search parameters take it (float64, whole numbers, laid out
        as spec.movefeatures.MODEL_SLOTS says; zeros after the model's own length). A set-1
        model's weights of the set-2 features are zeros and it reads 8 blocks."""
        out = np.zeros(MODEL_SLOTS, dtype=np.float64)
        nf = self.weights.size
        out[:nf] = self.weights
        out[N_FEATURES] = self.hidden
        out[N_FEATURES + 1] = self.n_blocks
        if self.hidden:
            hw = np.zeros((N_FEATURES, self.hidden))
            hw[:nf] = self.hidden_weights
            tail = np.concatenate([hw.ravel(), self.hidden_bias, self.out_weights])
            out[N_FEATURES + 2:N_FEATURES + 2 + tail.size] = tail
        return out

    def scores(self, feats: np.ndarray) -> np.ndarray:
        """The numpy reference of the core's score (unclamped, int64) of moves whose active
        features are the rows of ``feats`` (int, (moves, N_BLOCKS); a set-1 model reads the
        first 8 columns, and may be given only those)."""
        f = np.asarray(feats, dtype=np.int64)[:, :self.n_blocks]
        out = self.weights.astype(np.int64)[f].sum(axis=1)
        if self.hidden:
            acc = self.hidden_bias.astype(np.int64) + self.hidden_weights.astype(np.int64)[f].sum(
                axis=1)
            act = np.clip(acc, 0, 1 << ACT_SHIFT)
            out = out + ((act * self.out_weights.astype(np.int64)).sum(axis=1) >> ACT_SHIFT)
        return out


def random_model(seed: int = 0, spread: int = 200, hidden: int = 0, *,
                 features: int = 1) -> MoveModel:
    """A model of uniform random weights in [-spread, spread] over feature set ``features``
    (tests, speed figures); with ``hidden`` units, hidden weights in [-spread / 4, spread / 4]
    and biases in [-32, 96] (so that accumulators fall on both sides of the clip)."""
    rng = generator(seed, STREAM_MOVE_MODEL)
    nf = SET_FEATURES[features]
    w = rng.integers(-spread, spread + 1, size=nf)
    if not hidden:
        return MoveModel(weights=w.astype(np.int32))
    q = max(1, spread // 4)
    return MoveModel(weights=w.astype(np.int32),
                     hidden_weights=rng.integers(-q, q + 1, size=(nf, hidden)).astype(
                         np.int32),
                     hidden_bias=rng.integers(-32, 97, size=hidden).astype(np.int32),
                     out_weights=rng.integers(-spread, spread + 1, size=hidden).astype(np.int32))


# ---- files --------------------------------------------------------------------------------------

def move_model_bytes(model: MoveModel) -> bytes:
    """The bytes of ``model``'s file."""
    check = bytes.fromhex(model.checksum) + bytes(8)
    fs, nf = model.features, model.weights.size
    if not model.hidden:
        return (_HEADER.pack(MAGIC, VERSION, fs, nf, model.scale, check)
                + model.weights.astype("<i4").tobytes())
    return (_HEADER.pack(MAGIC, VERSION_HIDDEN, fs, nf, model.scale, check)
            + _HIDDEN_HEADER.pack(model.hidden, ACT_SHIFT) + model.weights.astype("<i4").tobytes()
            + model._hidden_bytes())


def write_move_model(model: MoveModel, path: str | Path) -> None:
    """Write ``model`` to ``path`` atomically."""
    atomic_write_bytes(Path(path), move_model_bytes(model))


def is_move_model_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file that starts with the move-model magic (anything else,
    a FIFO or a device included, is not opened)."""
    p = Path(path)
    try:
        if not p.is_file():
            return False
        with p.open("rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read_move_model(path: str | Path) -> MoveModel:
    """The move model in ``path``; MoveModelError (one line naming the file) when it is missing,
    not a move-model file, of another version or feature set, truncated or damaged."""
    p = Path(path)
    data = read_input(p, "move-model file", limit=file_size(HIDDEN_MAX, max(FEATURE_SETS)),
                      error=MoveModelError)
    if not data:
        raise MoveModelError(f"move-model file {p} is empty")
    if len(data) < HEADER_SIZE:
        if not MAGIC.startswith(data[:len(MAGIC)]):
            raise MoveModelError(f"move-model file {p} is not a move model (no "
                                 f"{MAGIC[:7].decode()} header)")
        raise MoveModelError(f"move-model file {p} is truncated ({len(data)} bytes, shorter "
                             f"than its {HEADER_SIZE}-byte header)")
    magic, version, fset, n, scale, check = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise MoveModelError(f"move-model file {p} is not a move model (no "
                             f"{MAGIC[:7].decode()} header)")
    if version not in (VERSION, VERSION_HIDDEN):
        raise MoveModelError(f"move-model file {p} has format version {version}; this evotune "
                             f"reads versions {VERSION} and {VERSION_HIDDEN}")
    if fset not in SET_FEATURES or n != SET_FEATURES[fset]:
        sets = ", ".join(f"set {k} of {v}" for k, v in SET_FEATURES.items())
        raise MoveModelError(f"move-model file {p} has feature set {fset} of {n} features; this "
                             f"evotune reads {sets}")
    hidden, start, size = 0, HEADER_SIZE, file_size(0, fset)
    if version == VERSION_HIDDEN:
        if len(data) < HEADER_SIZE + _HIDDEN_HEADER.size:
            raise MoveModelError(f"move-model file {p} is truncated ({len(data)} bytes, shorter "
                                 f"than its {HEADER_SIZE + _HIDDEN_HEADER.size}-byte header)")
        hidden, shift = _HIDDEN_HEADER.unpack_from(data, HEADER_SIZE)
        if not 1 <= hidden <= HIDDEN_MAX or shift != ACT_SHIFT:
            raise MoveModelError(f"move-model file {p} has {hidden} hidden units of activation "
                                 f"shift {shift}; this evotune reads 1 to {HIDDEN_MAX} of shift "
                                 f"{ACT_SHIFT}")
        start, size = HEADER_SIZE + _HIDDEN_HEADER.size, hidden_file_size(hidden, fset)
    if len(data) != size:
        raise MoveModelError(f"move-model file {p} is {'truncated' if len(data) < size else 'too long'}: "
                             f"{len(data)} bytes, expected {size}")
    arr = np.frombuffer(data, dtype="<i4", offset=start)
    nw = n * hidden
    try:
        model = MoveModel(weights=arr[:n], scale=scale,
                          hidden_weights=arr[n:n + nw].reshape(n, hidden),
                          hidden_bias=arr[n + nw:n + nw + hidden],
                          out_weights=arr[n + nw + hidden:])
    except MoveModelError as exc:
        raise MoveModelError(f"move-model file {p} is damaged: {exc}") from None
    if model.checksum != check[:8].hex() or check[8:] != bytes(8):
        raise MoveModelError(f"move-model file {p} is damaged: checksum {model.checksum} does "
                             f"not match its header's {check[:8].hex()}")
    return model


@lru_cache(maxsize=16)
def _cached(path: str, stamp: tuple[int, int]) -> MoveModel:
    return read_move_model(path)


def cached_model(path: str | Path) -> MoveModel:
    """:func:`read_move_model`, read once per process while the file's size and time stay."""
    try:
        st = os.stat(path)
    except OSError:
        return read_move_model(path)  # its one-line error
    return _cached(str(path), (st.st_mtime_ns, st.st_size))
