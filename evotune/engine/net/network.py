"""NNUE-style networks: the value (:class:`Net`), its files, and the numpy reference evaluation.

One shape, sizes free: ``(768 K -> H) x 2 -> N``, the community's perspective net (bullet's
``examples/simple.rs``; with K king buckets and N output buckets, its
``progression/3_input_buckets.rs``). The inputs are bullet's ``Chess768`` features, king-bucketed
and mirrored as its ``ChessBucketsMirrored`` when K >= 2 (engine/net/inputs.py); one accumulator
per side shares the input weights; the output layer (the material bucket's row) reads the side to
move's accumulator first. K = 1, N = 1 is the plain net. Everything is quantised as bullet saves
it: input weights and biases int16 scaled by ``qa``, output weights int16 scaled by ``qb``, the
output biases int16 scaled by ``qa * qb``; :func:`evaluate_reference` is the integer inference
with bullet's rounding rules (docs/formats.md, "Network files", states them). The numba core
evaluates the same integers incrementally (engine/core/nnue.py); this module is the test oracle
and the speed baseline.

Files: evotune's own (a header naming the format, H, activation, qa, qb, scale and a checksum,
and from version 2 the bucket map and output buckets, then the arrays) and bullet's raw quantised
layout (the arrays only, padded to a multiple of 64 bytes). A file that cannot be read, is
damaged, truncated or does not match what was asked raises :class:`~evotune.errors.NetError`,
one line naming the file.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import chess
import numpy as np

from ...errors import NetError
from ...fileio import atomic_write_bytes, read_input
from ...seeding import STREAM_NET_INIT, generator
from ...spec.features import NNUE_EVAL_LIMIT
from .fileformat import (
    BUCKETS_HEADER,
    BULLET_PAD,
    HEADER,
    HEADER_SIZE,
    HEADER_SIZE_BUCKETS,
    HIDDEN_MAX,
    HIDDEN_MIN,
    MAGIC,
    MAX_FILE_SIZE,
    VERSION,
    VERSION_BUCKETS,
    bullet_hidden,
    frozen_int16,
    int_in,
    padded,
    payload_size,
)
from .inputs import (
    INPUTS,
    OUTPUT_BUCKETS_MAX,
    PLAIN_MAP,
    BucketShape,
    bucket_count,
    describe_buckets,
    describe_map,
    feature_index,  # noqa: F401  (re-exported: the inputs' home is net.inputs)
    features,
    king_bucket_map,
    output_bucket,
)

MAX_ACTIVE = 32
"""Active features per perspective at most (one per piece on the board)."""
HIDDEN_DEFAULT = 128
ACTIVATIONS = ("screlu", "crelu")
"""Activations, in the order of their codes in evotune's file and in the core (0, 1)."""
QA, QB, SCALE = 255, 64, 400
"""bullet's simple example: quantisation of the first layer, of the output weights, eval scale."""
SCALE_MAX = 100_000
"""The largest evaluation scale a net takes (the smallest: 1)."""
FORMATS = ("evotune", "bullet")
"""Net file formats: evotune's own, and bullet's raw quantised layout."""

_I16 = np.dtype("<i2")


@dataclass(frozen=True, eq=False, kw_only=True)
class Net(BucketShape):
    """A quantised ``(768 K -> hidden) x 2 -> N`` network (bullet's layout), validated."""

    hidden: int
    """Hidden size H (8..1024): the length of each accumulator."""
    activation: str
    """'screlu' (squared clipped ReLU, bullet's simple example) or 'crelu' (clipped ReLU)."""
    l0w: np.ndarray
    """int16 (768 K, H): row 768 b + f is input feature f's column in king bucket b (scaled by
    qa)."""
    l0b: np.ndarray
    """int16 (H,): the first layer's bias (scaled by qa)."""
    l1w: np.ndarray
    """int16 (2 H,) for one output bucket, (N, 2 H) for N: output weights, the side to move's
    accumulator's first (scaled by qb)."""
    l1b: int | np.ndarray
    """The output bias, an int for one output bucket, int16 (N,) for N (scaled by qa * qb)."""
    qa: int = QA
    qb: int = QB
    scale: int = SCALE
    king_buckets: tuple[int, ...] = PLAIN_MAP
    """The king bucket of each of the 32 mirrored king squares (engine/net/inputs.py); all 0: no
    king buckets (and no mirroring)."""
    output_buckets: int = 1
    """N (1..8): bullet's MaterialCount<N> output buckets."""

    def __post_init__(self) -> None:
        h = int_in("hidden", self.hidden, HIDDEN_MIN, HIDDEN_MAX)
        if self.activation not in ACTIVATIONS:
            raise NetError(f"net activation {self.activation!r} is unknown; use one of "
                           f"{', '.join(ACTIVATIONS)}")
        bmap = king_bucket_map(self.king_buckets)
        k = bucket_count(bmap)
        n = int_in("output buckets", self.output_buckets, 1, OUTPUT_BUCKETS_MAX)
        object.__setattr__(self, "hidden", h)
        object.__setattr__(self, "king_buckets", bmap)
        object.__setattr__(self, "output_buckets", n)
        object.__setattr__(self, "qa", int_in("qa", self.qa, 1, 32767))
        object.__setattr__(self, "qb", int_in("qb", self.qb, 1, 32767))
        object.__setattr__(self, "scale", int_in("scale", self.scale, 1, SCALE_MAX))
        if n == 1:
            if np.ndim(self.l1b) == 1 and np.size(self.l1b) == 1:     # given as one bucket's
                object.__setattr__(self, "l1b", np.asarray(self.l1b)[0])
            if np.shape(self.l1w) == (1, 2 * h):
                object.__setattr__(self, "l1w", np.asarray(self.l1w)[0])
            object.__setattr__(self, "l1b", int_in("l1b", self.l1b, -32768, 32767))
            object.__setattr__(self, "l1w", frozen_int16("l1w", self.l1w, (2 * h,)))
        else:
            l1b = np.asarray(self.l1b)
            if l1b.dtype.kind not in "iu" or (l1b.size and (l1b.min() < -32768
                                                            or l1b.max() > 32767)):
                raise NetError(f"net l1b must hold {n} integers in int16 (one per output "
                               "bucket)")
            object.__setattr__(self, "l1b", frozen_int16("l1b", l1b.astype(np.int16), (n,)))
            object.__setattr__(self, "l1w", frozen_int16("l1w", self.l1w, (n, 2 * h)))
        object.__setattr__(self, "l0w", frozen_int16("l0w", self.l0w, (INPUTS * k, h)))
        object.__setattr__(self, "l0b", frozen_int16("l0b", self.l0b, (h,)))
        # the engine keeps int16 accumulators (as bullet's inference does): refuse a net whose
        # accumulator could leave int16 on some position (bias + the 32 largest rows of one king
        # bucket, per unit)
        mag = np.abs(self.l0w.astype(np.int32)).reshape(k, INPUTS, h)
        top = np.sort(mag, axis=1)[:, -MAX_ACTIVE:].sum(axis=1).max(axis=0) \
            + np.abs(self.l0b.astype(np.int32))
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
    def l1b_values(self) -> tuple[int, ...]:
        """The output bias of each output bucket."""
        return tuple(int(v) for v in np.atleast_1d(self.l1b))

    @property
    def parameters(self) -> int:
        """Number of weights and biases: 768 K H + H + N (2 H + 1)."""
        n = self.output_buckets
        return INPUTS * self.king_bucket_count * self.hidden + self.hidden \
            + n * (2 * self.hidden + 1)

    def arrays_bytes(self) -> bytes:
        """The arrays as bullet writes them: l0w (row by row), l0b, l1w (bucket by bucket), l1b,
        int16 LE, unpadded."""
        return b"".join((self.l0w.astype(_I16).tobytes(), self.l0b.astype(_I16).tobytes(),
                         self.l1w.astype(_I16).tobytes(),
                         np.array(self.l1b_values, dtype=_I16).tobytes()))

    @cached_property
    def checksum(self) -> str:
        """16 hex digits of sha256 over the shape, activation, qa, qb, scale, (a bucketed net's)
        bucket map and output buckets, and the arrays (computed once: a Net and its read-only
        arrays never change, and every search of a net asks for it)."""
        h = hashlib.sha256(struct.pack("<IIiii", self.hidden, self.activation_code, self.qa,
                                       self.qb, self.scale))
        if self.bucketed:
            h.update(BUCKETS_HEADER.pack(bytes(self.king_buckets), self.output_buckets))
        h.update(self.arrays_bytes())
        return h.hexdigest()[:16]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Net):
            return NotImplemented
        return (self.hidden, self.activation, self.qa, self.qb, self.scale,
                self.king_buckets, self.output_buckets, self.l1b_values) == \
            (other.hidden, other.activation, other.qa, other.qb, other.scale,
             other.king_buckets, other.output_buckets, other.l1b_values) and \
            all(np.array_equal(getattr(self, a), getattr(other, a)) for a in ("l0w", "l0b", "l1w"))

    def __hash__(self) -> int:
        return hash(self.checksum)

    @property
    def shape(self) -> str:
        """'(768 -> H) x 2 -> 1', with buckets '(768 x K -> H) x 2 -> N'."""
        inputs = "768" if self.king_bucket_count == 1 else f"768 x {self.king_bucket_count}"
        return f"({inputs} -> {self.hidden}) x 2 -> {self.output_buckets}"

    def describe(self) -> str:
        """One line: shape, buckets, activation, quantisation, parameters and checksum."""
        buckets = ""
        if self.bucketed:
            n = self.output_buckets
            buckets = (f"{self.king_bucket_count} king buckets (mirrored), "
                       f"{n} output bucket{'s' if n > 1 else ''}, ")
        return (f"{self.shape}, {buckets}{self.activation}, qa {self.qa}, qb {self.qb}, scale "
                f"{self.scale}, {self.parameters} parameters, checksum {self.checksum}")

    def describe_buckets(self) -> str:
        """The bucket map (rank 1 first) and the output buckets, one line."""
        return describe_buckets(self.king_buckets, self.output_buckets)


# ---- inference ----------------------------------------------------------------------------------

def _trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero (Rust's and C's integer division), b > 0."""
    q = abs(a) // b
    return q if a >= 0 else -q


def accumulator(net: Net, idx: np.ndarray) -> np.ndarray:
    """int32 (H,): the first layer's bias plus the rows of the active features ``idx``."""
    return net.l0b.astype(np.int32) + net.l0w[idx].astype(np.int32).sum(axis=0, dtype=np.int32)


def output(net: Net, us: np.ndarray, them: np.ndarray, bucket: int = 0) -> int:
    """The output layer of output bucket ``bucket`` on two accumulators (side to move's first):
    bullet's integer rules."""
    w = net.l1w_rows[bucket].astype(np.int64)
    a = np.clip(np.concatenate((us, them)).astype(np.int64), 0, net.qa)
    if net.activation == "screlu":
        s = int(np.dot(a * a, w))           # scaled by qa * qa * qb
        s = _trunc_div(s, net.qa)           # back to qa * qb
    else:
        s = int(np.dot(a, w))               # scaled by qa * qb
    return _trunc_div((s + net.l1b_values[bucket]) * net.scale, net.qa * net.qb)


def evaluate_reference(net: Net, board: chess.Board, *, clamp: bool = False) -> int:
    """The net's evaluation of ``board`` (side to move's view, centipawn-like units), from
    scratch in numpy with bullet's integer rules: each perspective's features in its king's
    bucket, the output bucket of the material on the board. ``clamp``: limited to
    +-NNUE_EVAL_LIMIT, as the engine uses it."""
    stm, nstm = features(board, net.king_buckets)
    bucket = output_bucket(chess.popcount(board.occupied), net.output_buckets)
    v = output(net, accumulator(net, stm), accumulator(net, nstm), bucket)
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


def from_floats(l0w, l0b, l1w, l1b, *, activation: str = "screlu", qa: int = QA,
                qb: int = QB, scale: int = SCALE, king_buckets=PLAIN_MAP) -> Net:
    """A Net from float weights (l0w (768 K, H), l0b (H,), l1w (2 H,) and a float l1b, or with
    N output buckets l1w (N, 2 H) and l1b (N,)), quantised as bullet's simple example saves them
    (l0 by qa, l1w by qb, l1b by qa * qb, rounded half away from 0)."""
    l0w = np.asarray(l0w, dtype=np.float64)
    if l0w.ndim != 2:
        raise NetError(f"net l0w must be 2-d (768 K, H), got shape {l0w.shape}")
    l1w = np.asarray(l1w, dtype=np.float64)
    n = 1 if l1w.ndim < 2 else l1w.shape[0]
    b = quantise(np.atleast_1d(np.asarray(l1b, dtype=np.float64)), qa * qb, "l1b")
    return Net(hidden=l0w.shape[1], activation=activation, qa=qa, qb=qb, scale=scale,
               l0w=quantise(l0w, qa, "l0w"), l0b=quantise(l0b, qa, "l0b"),
               l1w=quantise(l1w, qb, "l1w"), l1b=int(b[0]) if n == 1 else b,
               king_buckets=king_buckets, output_buckets=n)


def random_net(hidden: int = HIDDEN_DEFAULT, seed: int = 0, activation: str = "screlu", *,
               king_buckets=PLAIN_MAP, output_buckets: int = 1) -> Net:
    """A random net (a start for training or evolution): each layer's float weights and biases
    uniform in +-1/sqrt(fan in) (768 for l0, 2 H for l1), quantised as bullet saves them; with
    king buckets, one block of 768 rows per bucket, with output buckets one output row and bias
    per bucket (a plain net draws the same numbers as before buckets existed)."""
    hidden = int_in("hidden", hidden, HIDDEN_MIN, HIDDEN_MAX)
    seed = int_in("seed", seed, 0, 2**63 - 1)
    k = bucket_count(king_bucket_map(king_buckets))
    n = int_in("output buckets", output_buckets, 1, OUTPUT_BUCKETS_MAX)
    rng = generator(seed, STREAM_NET_INIT, hidden)
    b0 = 1.0 / np.sqrt(INPUTS)
    b1 = 1.0 / np.sqrt(2 * hidden)
    l0w = rng.uniform(-b0, b0, (INPUTS * k, hidden))
    l0b = rng.uniform(-b0, b0, hidden)
    l1w = rng.uniform(-b1, b1, 2 * hidden if n == 1 else (n, 2 * hidden))
    l1b = float(rng.uniform(-b1, b1)) if n == 1 else rng.uniform(-b1, b1, n)
    return from_floats(l0w, l0b, l1w, l1b, activation=activation, king_buckets=king_buckets)


# ---- files --------------------------------------------------------------------------------------

def _net_from(buf: bytes, *, hidden: int, activation: str, qa: int, qb: int, scale: int,
              king_buckets: tuple[int, ...], output_buckets: int) -> Net:
    """The Net of the arrays at the start of ``buf`` (bullet's order, :meth:`Net.arrays_bytes`)."""
    k, n = bucket_count(king_buckets), output_buckets
    a = np.frombuffer(buf, dtype=_I16, count=payload_size(hidden, k, n) // 2).astype(np.int16)
    n0 = INPUTS * k * hidden
    n1 = n0 + hidden + 2 * hidden * n
    l1w = a[n0 + hidden:n1]
    return Net(hidden=hidden, activation=activation, qa=qa, qb=qb, scale=scale,
               l0w=a[:n0].reshape(INPUTS * k, hidden), l0b=a[n0:n0 + hidden],
               l1w=l1w if n == 1 else l1w.reshape(n, 2 * hidden),
               l1b=int(a[n1]) if n == 1 else a[n1:n1 + n],
               king_buckets=king_buckets, output_buckets=n)


def _read_bytes(path: Path) -> bytes:
    return read_input(path, "net file", limit=MAX_FILE_SIZE, error=NetError)


def _read_evotune(p: Path, data: bytes) -> Net:
    if len(data) < HEADER_SIZE:
        raise NetError(f"net file {p} is truncated ({len(data)} bytes, shorter than its "
                       f"{HEADER_SIZE}-byte header)")
    magic, version, hidden, act, qa, qb, scale, check = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise NetError(f"net file {p} is not an evotune net (no {MAGIC[:7].decode()} header); "
                       "for bullet's raw layout give format bullet")
    if version not in (VERSION, VERSION_BUCKETS):
        raise NetError(f"net file {p} has format version {version}; this evotune reads "
                       f"versions {VERSION} and {VERSION_BUCKETS}")
    if not HIDDEN_MIN <= hidden <= HIDDEN_MAX or act >= len(ACTIVATIONS):
        raise NetError(f"net file {p} is damaged (hidden {hidden}, activation code {act})")
    bmap, n, start = PLAIN_MAP, 1, HEADER_SIZE
    if version == VERSION_BUCKETS:
        if len(data) < HEADER_SIZE_BUCKETS:
            raise NetError(f"net file {p} is truncated ({len(data)} bytes, shorter than its "
                           f"{HEADER_SIZE_BUCKETS}-byte header)")
        raw, n = BUCKETS_HEADER.unpack_from(data, HEADER_SIZE)
        try:
            bmap = king_bucket_map(raw)
        except NetError as exc:
            raise NetError(f"net file {p} has a damaged bucket map ({str(exc).removeprefix('net ')}"
                           ")") from None
        if not 1 <= n <= OUTPUT_BUCKETS_MAX:
            raise NetError(f"net file {p} is damaged ({n} output buckets; 1..{OUTPUT_BUCKETS_MAX}"
                           " are possible)")
        start = HEADER_SIZE_BUCKETS
    k = bucket_count(bmap)
    want = start + payload_size(hidden, k, n)
    if len(data) != want:
        kind = "truncated" if len(data) < want else "damaged (trailing bytes)"
        raise NetError(f"net file {p} is {kind}: {len(data)} bytes, expected {want} for "
                       f"hidden {hidden}, {k} king and {n} output buckets")
    net = _net_from(data[start:], hidden=hidden, activation=ACTIVATIONS[act], qa=qa, qb=qb,
                    scale=scale, king_buckets=bmap, output_buckets=n)
    if net.checksum != check.hex():
        raise NetError(f"net file {p} is damaged: checksum {net.checksum} does not match its "
                       f"header's {check.hex()}")
    return net


def _read_bullet(p: Path, data: bytes, hidden: int | None, activation: str, qa: int, qb: int,
                 scale: int, bmap: tuple[int, ...], n: int) -> Net:
    k = bucket_count(bmap)
    found = bullet_hidden(len(data), k, n)
    if found is None:
        raise NetError(f"net file {p} has {len(data)} bytes, the size of no bullet net with K "
                       f"{k} king and N {n} output buckets (2 x (H (768 K + 1 + 2 N) + N) bytes "
                       f"padded to 64, H {HIDDEN_MIN}..{HIDDEN_MAX}); is it truncated, or are its "
                       "buckets others?")
    if hidden is not None and hidden != found:
        raise NetError(f"net file {p} holds a hidden size of {found} (from its {len(data)} "
                       f"bytes, with K {k} and N {n}), not the {hidden} asked for")
    pad = data[payload_size(found, k, n):]
    pattern = (BULLET_PAD * 11)[:len(pad)]
    if pad not in (pattern, bytes(len(pad))):
        raise NetError(f"net file {p} is damaged: its {len(pad)} padding bytes are neither "
                       "zeros nor bullet's 'bullet' pattern")
    return _net_from(data, hidden=found, activation=activation, qa=qa, qb=qb, scale=scale,
                     king_buckets=bmap, output_buckets=n)


def read_net(path: str | Path, *, format: str | None = None, hidden: int | None = None,
             activation: str | None = None, qa: int = QA, qb: int = QB,
             scale: int = SCALE, king_buckets=None, output_buckets: int | None = None) -> Net:
    """The net in ``path``. ``format``: 'evotune', 'bullet', or None (evotune's when the file
    starts with its magic, else bullet's). A bullet file has no header: its hidden size is
    inferred from its size (``hidden``, when given, must agree), its activation is
    ``activation`` (default screlu), its quantisation ``qa``, ``qb``, ``scale`` (bullet's
    defaults) and its buckets ``king_buckets`` (a 32-square map; default none) and
    ``output_buckets`` (default 1); for an evotune file ``hidden``, ``activation`` and the
    buckets, when given, must agree with the header. NetError (naming the file) for anything
    unreadable, damaged or mismatched."""
    p = Path(path)
    if format is not None and format not in FORMATS:
        raise NetError(f"net format {format!r} is unknown; use one of {', '.join(FORMATS)}")
    bmap = None if king_buckets is None else king_bucket_map(king_buckets)
    if output_buckets is not None:
        int_in("output buckets", output_buckets, 1, OUTPUT_BUCKETS_MAX)
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
            if bmap is not None and bmap != net.king_buckets:
                raise NetError(f"net file {p} has the king bucket map "
                               f"{describe_map(net.king_buckets)}, not the one asked for")
            if output_buckets is not None and output_buckets != net.output_buckets:
                raise NetError(f"net file {p} has {net.output_buckets} output buckets, not the "
                               f"{output_buckets} asked for")
            return net
        return _read_bullet(p, data, hidden, activation or ACTIVATIONS[0], qa, qb, scale,
                            PLAIN_MAP if bmap is None else bmap, output_buckets or 1)
    except NetError as exc:
        msg = str(exc)
        if str(p) not in msg:
            msg = f"net file {p}: {msg.removeprefix('net ')}"
        raise NetError(msg) from None


def net_bytes(net: Net, format: str = "evotune") -> bytes:
    """The bytes of ``net``'s file in ``format`` ('evotune' or 'bullet'): a plain net's evotune
    file is version 1 (as before buckets), a bucketed net's version 2."""
    if format == "evotune":
        fields = (net.hidden, net.activation_code, net.qa, net.qb, net.scale,
                  bytes.fromhex(net.checksum))
        if not net.bucketed:
            return HEADER.pack(MAGIC, VERSION, *fields) + net.arrays_bytes()
        return (HEADER.pack(MAGIC, VERSION_BUCKETS, *fields)
                + BUCKETS_HEADER.pack(bytes(net.king_buckets), net.output_buckets)
                + net.arrays_bytes())
    if format == "bullet":
        raw = net.arrays_bytes()
        n = padded(len(raw)) - len(raw)
        return raw + (BULLET_PAD * 11)[:n]
    raise NetError(f"net format {format!r} is unknown; use one of {', '.join(FORMATS)}")


def bullet_reader_note(net: Net) -> str:
    """What the reader of ``net`` in bullet's layout must be told ('' when nothing): the layout
    keeps neither the activation, qa, qb, scale nor the buckets, and readers assume screlu, QA,
    QB, SCALE and no buckets."""
    told = [f"--activation {net.activation}"] if net.activation != ACTIVATIONS[0] else []
    told += [f"{k} {v}" for k, v, d in (("qa", net.qa, QA), ("qb", net.qb, QB),
                                        ("scale", net.scale, SCALE)) if v != d]
    if net.king_bucket_count > 1:
        told.append(f"--king-buckets {','.join(map(str, net.king_buckets))}")
    if net.output_buckets > 1:
        told.append(f"--output-buckets {net.output_buckets}")
    if not told:
        return ""
    return (f"bullet's layout keeps neither the activation, the quantisation nor the buckets; "
            f"its reader must be told {', '.join(told)} (it assumes {ACTIVATIONS[0]}, qa {QA}, "
            f"qb {QB}, scale {SCALE}, no buckets), or export --format evotune, whose header "
            "keeps them")


def write_net(net: Net, path: str | Path, format: str = "evotune") -> None:
    """Write ``net`` to ``path`` atomically: evotune's file, or bullet's raw quantised layout
    (l0w, l0b, l1w, l1b as int16 little-endian, padded to 64 bytes with bullet's pattern; it
    carries neither the activation, qa, qb, scale nor the buckets, which its reader must be
    given)."""
    atomic_write_bytes(Path(path), net_bytes(net, format))
