"""NNUE-style networks: the value (:class:`Net`), its files, and the numpy reference evaluation.

One shape, sizes free: ``(768 -> H) x 2 -> 1``, the community's simple perspective net (bullet's
``examples/simple.rs``). The inputs are bullet's ``Chess768`` features (:func:`feature_index`);
one accumulator per side shares the input weights; the output layer reads the side to move's
accumulator first. Everything is quantised as bullet saves it: input weights and biases int16
scaled by ``qa``, output weights int16 scaled by ``qb``, the output bias int16 scaled by
``qa * qb``; :func:`evaluate_reference` is the integer inference with bullet's rounding rules
(docs/formats.md, "Network files", states them). The numba core evaluates the same integers
incrementally (engine/core/nnue.py); this module is the test oracle and the speed baseline.

Files: evotune's own (a 40-byte header naming the format, H, activation, qa, qb, scale and a
checksum, then the arrays) and bullet's raw quantised layout (the arrays only, padded to a
multiple of 64 bytes). A file that cannot be read, is damaged, truncated or does not match what
was asked raises :class:`~evotune.errors.NetError`, one line naming the file.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import chess
import numpy as np

from ..errors import NetError
from ..fileio import atomic_write_bytes, read_input
from ..seeding import STREAM_NET_INIT, generator
from ..spec.features import NNUE_EVAL_LIMIT

INPUTS = 768
"""Input features per perspective: 2 colours x 6 piece types x 64 squares (Chess768)."""
MAX_ACTIVE = 32
"""Active features per perspective at most (one per piece on the board)."""
HIDDEN_MIN, HIDDEN_MAX = 8, 1024
"""The hidden sizes evotune accepts."""
HIDDEN_DEFAULT = 128
ACTIVATIONS = ("screlu", "crelu")
"""Activations, in the order of their codes in evotune's file and in the core (0, 1)."""
QA, QB, SCALE = 255, 64, 400
"""bullet's simple example: quantisation of the first layer, of the output weights, eval scale."""
SCALE_MAX = 100_000
"""The largest evaluation scale a net takes (the smallest: 1)."""
FORMATS = ("evotune", "bullet")
"""Net file formats: evotune's own, and bullet's raw quantised layout."""

MAGIC = b"EVONNUE\0"
VERSION = 1
_HEADER = struct.Struct("<8sIIIiii8s")
"""magic, format version, hidden, activation code, qa, qb, scale, checksum (8 bytes)."""
HEADER_SIZE = _HEADER.size  # 40
BULLET_PAD = b"bullet"
"""bullet pads its quantised file with these bytes, repeated, to a multiple of 64 bytes (files of
bullet before March 2024 pad with zero bytes; both are read)."""
_I16 = np.dtype("<i2")


def _frozen_int16(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only int16 copy of ``value`` (a Net never changes after construction)."""
    arr = np.asarray(value)
    if arr.dtype != np.int16:
        raise NetError(f"net {name} must be an int16 array, got {arr.dtype}")
    if arr.shape != shape:
        raise NetError(f"net {name} has shape {arr.shape}; expected {shape}")
    out = np.array(arr, dtype=np.int16, order="C", copy=True)
    out.setflags(write=False)
    return out


def _int_in(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not lo <= int(value) <= hi:
        raise NetError(f"net {name} {value!r} is invalid; give an integer from {lo} to {hi}")
    return int(value)


@dataclass(frozen=True, eq=False, kw_only=True)
class Net:
    """A quantised ``(768 -> hidden) x 2 -> 1`` network (bullet's simple layout), validated."""

    hidden: int
    """Hidden size H (8..1024): the length of each accumulator."""
    activation: str
    """'screlu' (squared clipped ReLU, bullet's simple example) or 'crelu' (clipped ReLU)."""
    l0w: np.ndarray
    """int16 (768, H): row f is input feature f's column of the first layer (scaled by qa)."""
    l0b: np.ndarray
    """int16 (H,): the first layer's bias (scaled by qa)."""
    l1w: np.ndarray
    """int16 (2 H,): output weights, the side to move's accumulator's first (scaled by qb)."""
    l1b: int
    """The output bias (scaled by qa * qb; stored as int16)."""
    qa: int = QA
    qb: int = QB
    scale: int = SCALE

    def __post_init__(self) -> None:
        h = _int_in("hidden", self.hidden, HIDDEN_MIN, HIDDEN_MAX)
        if self.activation not in ACTIVATIONS:
            raise NetError(f"net activation {self.activation!r} is unknown; use one of "
                           f"{', '.join(ACTIVATIONS)}")
        object.__setattr__(self, "hidden", h)
        object.__setattr__(self, "qa", _int_in("qa", self.qa, 1, 32767))
        object.__setattr__(self, "qb", _int_in("qb", self.qb, 1, 32767))
        object.__setattr__(self, "scale", _int_in("scale", self.scale, 1, SCALE_MAX))
        object.__setattr__(self, "l1b", _int_in("l1b", self.l1b, -32768, 32767))
        object.__setattr__(self, "l0w", _frozen_int16("l0w", self.l0w, (INPUTS, h)))
        object.__setattr__(self, "l0b", _frozen_int16("l0b", self.l0b, (h,)))
        object.__setattr__(self, "l1w", _frozen_int16("l1w", self.l1w, (2 * h,)))
        # the engine keeps int16 accumulators (as bullet's inference does): refuse a net whose
        # accumulator could leave int16 on some position (bias + the 32 largest rows, per unit)
        mag = np.abs(self.l0w.astype(np.int32))
        top = np.sort(mag, axis=0)[-MAX_ACTIVE:].sum(axis=0) + np.abs(self.l0b.astype(np.int32))
        if int(top.max()) > 32767:
            unit = int(top.argmax())
            raise NetError(f"net l0w/l0b: hidden unit {unit} could reach {int(top.max())} in an "
                           "int16 accumulator (bias + 32 active rows); keep |l0b| + 32 x max "
                           "|l0w| within 32767 (bullet clips weights to 1.98 for this)")

    @property
    def activation_code(self) -> int:
        """0 for screlu, 1 for crelu (evotune's file and the core)."""
        return ACTIVATIONS.index(self.activation)

    @property
    def parameters(self) -> int:
        """Number of weights and biases: 768 H + H + 2 H + 1."""
        return INPUTS * self.hidden + 3 * self.hidden + 1

    def arrays_bytes(self) -> bytes:
        """The arrays as bullet writes them: l0w (row by row), l0b, l1w, l1b, int16 LE, unpadded."""
        return b"".join((self.l0w.astype(_I16).tobytes(), self.l0b.astype(_I16).tobytes(),
                         self.l1w.astype(_I16).tobytes(), struct.pack("<h", self.l1b)))

    @cached_property
    def checksum(self) -> str:
        """16 hex digits of sha256 over the shape, activation, qa, qb, scale and the arrays
        (computed once: a Net and its read-only arrays never change, and every search of a net
        asks for it)."""
        h = hashlib.sha256(struct.pack("<IIiii", self.hidden, self.activation_code, self.qa,
                                       self.qb, self.scale))
        h.update(self.arrays_bytes())
        return h.hexdigest()[:16]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Net):
            return NotImplemented
        return (self.hidden, self.activation, self.qa, self.qb, self.scale, self.l1b) == \
            (other.hidden, other.activation, other.qa, other.qb, other.scale, other.l1b) and \
            all(np.array_equal(getattr(self, a), getattr(other, a)) for a in ("l0w", "l0b", "l1w"))

    def __hash__(self) -> int:
        return hash(self.checksum)

    def describe(self) -> str:
        """One line: shape, activation, quantisation, parameters and checksum."""
        return (f"(768 -> {self.hidden}) x 2 -> 1, {self.activation}, qa {self.qa}, qb "
                f"{self.qb}, scale {self.scale}, {self.parameters} parameters, checksum "
                f"{self.checksum}")


# ---- inputs -------------------------------------------------------------------------------------

def feature_index(colour: bool, piece_type: int, square: int, perspective: bool) -> int:
    """bullet's Chess768 index of a piece seen from ``perspective`` (python-chess colours, types
    1..6, squares a1 = 0): ``384 * (colour != perspective) + 64 * (type - 1) + square``, the square
    mirrored vertically (``^ 56``) for Black's perspective."""
    return 384 * (colour != perspective) + 64 * (piece_type - 1) \
        + (square if perspective == chess.WHITE else square ^ 56)


def features(board: chess.Board) -> tuple[np.ndarray, np.ndarray]:
    """The active Chess768 features of ``board`` from the side to move's and the other side's
    perspective (int64 arrays, one entry per piece, White's pawns first, squares ascending)."""
    masks = np.array([board.pieces_mask(t, c) for c in (chess.WHITE, chess.BLACK)
                      for t in chess.PIECE_TYPES], dtype="<u8")
    bits = np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(12, 64)
    kind, sq = np.nonzero(bits)             # kind = 6 * (colour is Black) + type - 1
    black = kind >= 6
    typ = kind % 6

    def view(perspective: bool) -> np.ndarray:
        rel = sq if perspective == chess.WHITE else sq ^ 56
        return 384 * (black == (perspective == chess.WHITE)) + 64 * typ + rel

    return view(board.turn), view(not board.turn)


# ---- inference ----------------------------------------------------------------------------------

def _trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero (Rust's and C's integer division), b > 0."""
    q = abs(a) // b
    return q if a >= 0 else -q


def accumulator(net: Net, idx: np.ndarray) -> np.ndarray:
    """int32 (H,): the first layer's bias plus the rows of the active features ``idx``."""
    return net.l0b.astype(np.int32) + net.l0w[idx].astype(np.int32).sum(axis=0, dtype=np.int32)


def output(net: Net, us: np.ndarray, them: np.ndarray) -> int:
    """The output layer on two accumulators (side to move's first): bullet's integer rules."""
    w = net.l1w.astype(np.int64)
    a = np.clip(np.concatenate((us, them)).astype(np.int64), 0, net.qa)
    if net.activation == "screlu":
        s = int(np.dot(a * a, w))           # scaled by qa * qa * qb
        s = _trunc_div(s, net.qa)           # back to qa * qb
    else:
        s = int(np.dot(a, w))               # scaled by qa * qb
    return _trunc_div((s + net.l1b) * net.scale, net.qa * net.qb)


def evaluate_reference(net: Net, board: chess.Board, *, clamp: bool = False) -> int:
    """The net's evaluation of ``board`` (side to move's view, centipawn-like units), from
    scratch in numpy with bullet's integer rules. ``clamp``: limited to +-NNUE_EVAL_LIMIT, as the
    engine uses it."""
    stm, nstm = features(board)
    v = output(net, accumulator(net, stm), accumulator(net, nstm))
    return max(-NNUE_EVAL_LIMIT, min(NNUE_EVAL_LIMIT, v)) if clamp else v


# ---- making nets --------------------------------------------------------------------------------

def _round_away(x: np.ndarray) -> np.ndarray:
    """Round half away from zero (Rust's f64::round, which bullet's ``.round()`` uses)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantise(values, factor: int, name: str) -> np.ndarray:
    """``round(values * factor)`` as int16, as bullet's ``.round().quantise::<i16>(factor)``;
    NetError when a value leaves int16 (bullet refuses those too)."""
    q = _round_away(np.asarray(values, dtype=np.float64) * float(factor))
    if not np.isfinite(q).all() or (q.size and (q.min() < -32768 or q.max() > 32767)):
        raise NetError(f"net {name}: a value leaves int16 when quantised by {factor}; clip the "
                       "float weights")
    return q.astype(np.int16)


def from_floats(l0w, l0b, l1w, l1b: float, *, activation: str = "screlu", qa: int = QA,
                qb: int = QB, scale: int = SCALE) -> Net:
    """A Net from float weights (l0w (768, H), l0b (H,), l1w (2 H,), l1b), quantised as bullet's
    simple example saves them (l0 by qa, l1w by qb, l1b by qa * qb, rounded half away from 0)."""
    l0w = np.asarray(l0w, dtype=np.float64)
    if l0w.ndim != 2:
        raise NetError(f"net l0w must be 2-d (768, H), got shape {l0w.shape}")
    return Net(hidden=l0w.shape[1], activation=activation, qa=qa, qb=qb, scale=scale,
               l0w=quantise(l0w, qa, "l0w"), l0b=quantise(l0b, qa, "l0b"),
               l1w=quantise(l1w, qb, "l1w"),
               l1b=int(quantise(np.array([l1b]), qa * qb, "l1b")[0]))


def random_net(hidden: int = HIDDEN_DEFAULT, seed: int = 0, activation: str = "screlu") -> Net:
    """A random net (a start for training or evolution): each layer's float weights and biases
    uniform in +-1/sqrt(fan in) (768 for l0, 2 H for l1), quantised as bullet saves them."""
    hidden = _int_in("hidden", hidden, HIDDEN_MIN, HIDDEN_MAX)
    seed = _int_in("seed", seed, 0, 2**63 - 1)
    rng = generator(seed, STREAM_NET_INIT, hidden)
    b0 = 1.0 / np.sqrt(INPUTS)
    b1 = 1.0 / np.sqrt(2 * hidden)
    return from_floats(rng.uniform(-b0, b0, (INPUTS, hidden)), rng.uniform(-b0, b0, hidden),
                       rng.uniform(-b1, b1, 2 * hidden), float(rng.uniform(-b1, b1)),
                       activation=activation)


# ---- the output layer as weights ------------------------------------------------------------

OUTPUT_SCALE = "scale"
"""The name of the evaluation scale among a net's output weights."""
OUTPUT_BIAS = "out.bias"


def output_names(hidden: int) -> tuple[str, ...]:
    """The names of a net's output layer as weights: ``out.us.J`` (the side to move's
    accumulator's weight J), ``out.them.J``, ``out.bias``, then ``scale``: 2 H + 2 names."""
    return (tuple(f"out.us.{j}" for j in range(hidden))
            + tuple(f"out.them.{j}" for j in range(hidden)) + (OUTPUT_BIAS, OUTPUT_SCALE))


def output_values(net: Net) -> np.ndarray:
    """int64 (2 H + 2,): l1w, l1b and the scale, in the file's integer units (the order of
    :func:`output_names`)."""
    return np.concatenate((net.l1w.astype(np.int64), [net.l1b, net.scale]))


def output_ranges(net: Net) -> list[tuple[int, int, int, int]]:
    """(lower, upper, least, most) of each output weight (:func:`output_names`' order): the
    default bounds and the range a bound may not leave. A weight or the bias may move by its own
    magnitude or a quarter of one float unit (``qb / 4``; ``qa * qb / 4`` for the bias),
    whichever is more, within int16; the scale from half to twice the file's, within
    1..100000."""
    out = []
    floor_w, floor_b = max(1, net.qb // 4), max(1, net.qa * net.qb // 4)
    for i, v in enumerate(output_values(net)[:-1].tolist()):
        d = max(abs(v), floor_b if i == 2 * net.hidden else floor_w)
        out.append((max(-32768, v - d), min(32767, v + d), -32768, 32767))
    out.append((max(1, net.scale // 2), min(SCALE_MAX, 2 * net.scale), 1, SCALE_MAX))
    return out


def with_output(net: Net, values) -> Net:
    """``net`` with its output layer and scale replaced by ``values`` (:func:`output_names`'
    order, whole numbers in the file's units); NetError when one is not whole or leaves what the
    file can hold (int16; a scale of 1..100000)."""
    v = np.asarray(values, dtype=np.float64)
    h = net.hidden
    if v.shape != (2 * h + 2,):
        raise NetError(f"net output layer: {v.size} values given, the net has {2 * h + 2} "
                       f"(2 x {h} weights, the bias and the scale)")
    if not np.all(np.isfinite(v)) or not np.array_equal(v, np.rint(v)):
        raise NetError("net output layer: the values must be whole numbers (the file's "
                       "integer units)")
    if v[:-1].min() < -32768 or v[:-1].max() > 32767:
        raise NetError("net output layer: a weight or the bias leaves int16 (-32768..32767)")
    return Net(hidden=h, activation=net.activation, qa=net.qa, qb=net.qb, scale=int(v[-1]),
               l0w=net.l0w, l0b=net.l0b, l1w=v[:2 * h].astype(np.int16), l1b=int(v[2 * h]))


# ---- files --------------------------------------------------------------------------------------

def _payload_size(hidden: int) -> int:
    return 2 * (INPUTS * hidden + 3 * hidden + 1)


def _padded(n: int) -> int:
    return -(-n // 64) * 64


def _arrays_from(buf: bytes, hidden: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    a = np.frombuffer(buf, dtype=_I16, count=_payload_size(hidden) // 2).astype(np.int16)
    n0 = INPUTS * hidden
    return (a[:n0].reshape(INPUTS, hidden), a[n0:n0 + hidden],
            a[n0 + hidden:n0 + 3 * hidden], int(a[n0 + 3 * hidden]))


def bullet_hidden(size: int) -> int | None:
    """The hidden size of a bullet simple-layout file of ``size`` bytes (arrays of 2 (771 H + 1)
    bytes, maybe padded to a multiple of 64: the padding is shorter than one hidden unit's 1542
    bytes, so the size names H uniquely), or None when no H in 8..1024 fits."""
    h = (size - 2) // (2 * (INPUTS + 3))
    if HIDDEN_MIN <= h <= HIDDEN_MAX and size in (_payload_size(h), _padded(_payload_size(h))):
        return h
    return None


MAX_FILE_SIZE = HEADER_SIZE + _padded(_payload_size(HIDDEN_MAX))
"""The largest net file (H 1024, either format): a larger file is refused before it is read."""


def _read_bytes(path: Path) -> bytes:
    return read_input(path, "net file", limit=MAX_FILE_SIZE, error=NetError)


def _read_evotune(p: Path, data: bytes) -> Net:
    if len(data) < HEADER_SIZE:
        raise NetError(f"net file {p} is truncated ({len(data)} bytes, shorter than its "
                       f"{HEADER_SIZE}-byte header)")
    magic, version, hidden, act, qa, qb, scale, check = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise NetError(f"net file {p} is not an evotune net (no {MAGIC[:7].decode()} header); "
                       "for bullet's raw layout give format bullet")
    if version != VERSION:
        raise NetError(f"net file {p} has format version {version}; this evotune reads "
                       f"version {VERSION}")
    if not HIDDEN_MIN <= hidden <= HIDDEN_MAX or act >= len(ACTIVATIONS):
        raise NetError(f"net file {p} is damaged (hidden {hidden}, activation code {act})")
    want = HEADER_SIZE + _payload_size(hidden)
    if len(data) != want:
        kind = "truncated" if len(data) < want else "damaged (trailing bytes)"
        raise NetError(f"net file {p} is {kind}: {len(data)} bytes, expected {want} for "
                       f"hidden {hidden}")
    l0w, l0b, l1w, l1b = _arrays_from(data[HEADER_SIZE:], hidden)
    net = Net(hidden=hidden, activation=ACTIVATIONS[act], qa=qa, qb=qb, scale=scale, l0w=l0w,
              l0b=l0b, l1w=l1w, l1b=l1b)
    if net.checksum != check.hex():
        raise NetError(f"net file {p} is damaged: checksum {net.checksum} does not match its "
                       f"header's {check.hex()}")
    return net


def _read_bullet(p: Path, data: bytes, hidden: int | None, activation: str, qa: int, qb: int,
                 scale: int) -> Net:
    found = bullet_hidden(len(data))
    if found is None:
        raise NetError(f"net file {p} has {len(data)} bytes, the size of no bullet simple net "
                       f"(2 x (771 H + 1) bytes padded to 64, H {HIDDEN_MIN}..{HIDDEN_MAX}); "
                       "is it truncated, or another architecture?")
    if hidden is not None and hidden != found:
        raise NetError(f"net file {p} holds a hidden size of {found} (from its {len(data)} "
                       f"bytes), not the {hidden} asked for")
    pad = data[_payload_size(found):]
    pattern = (BULLET_PAD * 11)[:len(pad)]
    if pad not in (pattern, bytes(len(pad))):
        raise NetError(f"net file {p} is damaged: its {len(pad)} padding bytes are neither "
                       "zeros nor bullet's 'bullet' pattern")
    l0w, l0b, l1w, l1b = _arrays_from(data, found)
    return Net(hidden=found, activation=activation, qa=qa, qb=qb, scale=scale, l0w=l0w,
               l0b=l0b, l1w=l1w, l1b=l1b)


def read_net(path: str | Path, *, format: str | None = None, hidden: int | None = None,
             activation: str | None = None, qa: int = QA, qb: int = QB,
             scale: int = SCALE) -> Net:
    """The net in ``path``. ``format``: 'evotune', 'bullet', or None (evotune's when the file
    starts with its magic, else bullet's). A bullet file has no header: its hidden size is
    inferred from its size (``hidden``, when given, must agree), its activation is
    ``activation`` (default screlu) and its quantisation ``qa``, ``qb``, ``scale`` (bullet's
    defaults); for an evotune file ``hidden`` and ``activation``, when given, must agree with
    the header. NetError (naming the file) for anything unreadable, damaged or mismatched."""
    p = Path(path)
    if format is not None and format not in FORMATS:
        raise NetError(f"net format {format!r} is unknown; use one of {', '.join(FORMATS)}")
    data = _read_bytes(p)
    if not data:
        raise NetError(f"net file {p} is empty")
    try:
        if format == "evotune" or (format is None and data.startswith(MAGIC)):
            net = _read_evotune(p, data)
            if hidden is not None and hidden != net.hidden:
                raise NetError(f"net file {p} has hidden size {net.hidden}, not the {hidden} "
                               "asked for")
            if activation is not None and activation != net.activation:
                raise NetError(f"net file {p} uses {net.activation}, not the {activation} asked "
                               "for")
            return net
        return _read_bullet(p, data, hidden, activation or ACTIVATIONS[0], qa, qb, scale)
    except NetError as exc:
        msg = str(exc)
        if str(p) not in msg:
            msg = f"net file {p}: {msg.removeprefix('net ')}"
        raise NetError(msg) from None


def net_bytes(net: Net, format: str = "evotune") -> bytes:
    """The bytes of ``net``'s file in ``format`` ('evotune' or 'bullet')."""
    if format == "evotune":
        header = _HEADER.pack(MAGIC, VERSION, net.hidden, net.activation_code, net.qa, net.qb,
                              net.scale, bytes.fromhex(net.checksum))
        return header + net.arrays_bytes()
    if format == "bullet":
        raw = net.arrays_bytes()
        n = _padded(len(raw)) - len(raw)
        return raw + (BULLET_PAD * 11)[:n]
    raise NetError(f"net format {format!r} is unknown; use one of {', '.join(FORMATS)}")


def bullet_reader_note(net: Net) -> str:
    """What the reader of ``net`` in bullet's layout must be told ('' when nothing): the layout
    keeps neither the activation nor qa, qb, scale, and readers assume screlu, QA, QB, SCALE."""
    told = [f"--activation {net.activation}"] if net.activation != ACTIVATIONS[0] else []
    told += [f"{k} {v}" for k, v, d in (("qa", net.qa, QA), ("qb", net.qb, QB),
                                        ("scale", net.scale, SCALE)) if v != d]
    if not told:
        return ""
    return (f"bullet's layout keeps neither the activation nor the quantisation; its reader "
            f"must be told {', '.join(told)} (it assumes {ACTIVATIONS[0]}, qa {QA}, qb {QB}, "
            f"scale {SCALE}), or export --format evotune, whose header keeps them")


def write_net(net: Net, path: str | Path, format: str = "evotune") -> None:
    """Write ``net`` to ``path`` atomically: evotune's file, or bullet's raw quantised layout
    (l0w, l0b, l1w, l1b as int16 little-endian, padded to 64 bytes with bullet's pattern; it
    carries neither the activation nor qa, qb, scale, which its reader must be given)."""
    atomic_write_bytes(Path(path), net_bytes(net, format))
