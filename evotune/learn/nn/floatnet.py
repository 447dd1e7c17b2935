"""The trainer's float net (:class:`FloatNet`): the parameters of a (768 K -> H) x 2 -> N net in
float32, held in one flat vector in the quantised net's layout, with its king buckets' tables for
the kernels (:mod:`evotune.learn.nn.kernels`) and its quantisation into the engine's
:class:`~evotune.engine.net.network.Net`."""
from __future__ import annotations

import hashlib

import chess
import numpy as np

from ...engine.net.inputs import (
    KING_BUCKET_PRESETS,
    PLAIN_MAP,
    BucketShape,
    bucket_count,
    king_bucket_map,
    king_view,
)
from ...engine.net.network import INPUTS, Net, from_floats
from ...errors import FieldError, NetError
from ...seeding import STREAM_NN_TRAIN, generator
from .kernels import SCALE

PARAMS = ("l0w", "l0b", "l1w", "l1b")


def param_views(flat: np.ndarray, hidden: int, k: int = 1, n: int = 1,
                factoriser: bool = False) -> dict[str, np.ndarray]:
    """l0w, l0b, l1w, l1b as views of one flat vector (in that order) for K king buckets and N
    output buckets (l1w (2H,) for one output bucket, (N, 2H) for more). With a factoriser its
    768 rows (``l0f``) follow l0w's, and ``l0rows`` is both blocks (the kernels' input rows)."""
    rows = INPUTS * (k + factoriser)
    sizes = (rows * hidden, hidden, n * 2 * hidden, n)
    shapes = ((rows, hidden), (hidden,), (2 * hidden,) if n == 1 else (n, 2 * hidden), (n,))
    out, at = {}, 0
    for name, size, shape in zip(PARAMS, sizes, shapes):
        out[name] = flat[at:at + size].reshape(shape)
        at += size
    if factoriser:
        out["l0rows"] = out["l0w"]
        out["l0w"], out["l0f"] = out["l0rows"][:INPUTS * k], out["l0rows"][INPUTS * k:]
    return out


def param_count(hidden: int, k: int = 1, n: int = 1, factoriser: bool = False) -> int:
    """Parameters of a net of H hidden units, K king and N output buckets (and a factoriser's
    768 H)."""
    return INPUTS * (k + factoriser) * hidden + hidden + n * (2 * hidden + 1)


def king_tables(bucket_map) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' king tables of a bucket map: (``768 * bucket``, mirror 7 or 0) per king
    square seen from its perspective (int64 (64,) each); empty for a map of one bucket (plain
    Chess768)."""
    if bucket_count(bucket_map) == 1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    views = [king_view(bucket_map, sq, chess.WHITE) for sq in range(64)]
    return (np.array([INPUTS * b for b, _ in views], np.int64),
            np.array([f for _, f in views], np.int64))


def map_text(bucket_map) -> str:
    """A bucket map as ``nn init --king-buckets`` takes it: a preset's count, else 32 ids."""
    for count, preset in KING_BUCKET_PRESETS.items():
        if tuple(bucket_map) == preset:
            return str(count)
    return ",".join(str(b) for b in bucket_map)


class FloatNet(BucketShape):
    """The net's float32 parameters in the quantised net's layout (see kernels), held in one
    flat vector (``flat``) that ``l0w`` (768 K, H: row 768 b + f is input feature f in king
    bucket b), ``l0b`` (H,), ``l1w`` (2H,, or (N, 2H) with N output buckets: the side to move's
    accumulator first) and ``l1b`` (N,) are views of; ``king_buckets`` is the bucket map (all 0:
    none). A net with king buckets may carry a factoriser, ``l0f`` (768, H; bullet's ``l0f``):
    rows shared by every bucket, added to each bucket's own when the net plays (:meth:`merged`,
    :meth:`quantised`), so that what one bucket's positions teach the others learn too."""

    def __init__(self, activation: str, l0w, l0b, l1w, l1b, *,
                 king_buckets=PLAIN_MAP, l0f=None) -> None:
        hidden = int(np.shape(l0b)[0])
        self.activation = activation
        self.king_buckets = king_bucket_map(king_buckets)
        k = bucket_count(self.king_buckets)
        n = 1 if np.ndim(l1w) == 1 else int(np.shape(l1w)[0])
        if np.shape(l0w) != (INPUTS * k, hidden):
            raise NetError(f"net l0w has shape {np.shape(l0w)}; {k} king bucket(s) of hidden "
                           f"size {hidden} take ({INPUTS * k}, {hidden})")
        self.factorised = l0f is not None
        if self.factorised and (k == 1 or np.shape(l0f) != (INPUTS, hidden)):
            raise NetError(f"a factoriser is ({INPUTS}, {hidden}) shared by king buckets; this "
                           f"net has {k} and the factoriser shape {np.shape(l0f)}")
        self._tables = king_tables(self.king_buckets)
        self.flat = np.zeros(param_count(hidden, k, n, self.factorised), np.float32)
        self._v = param_views(self.flat, hidden, k, n, self.factorised)
        for name, a in zip(PARAMS, (l0w, l0b, l1w, l1b)):
            self._v[name][...] = a
        if self.factorised:
            self._v["l0f"][...] = l0f

    l0w = property(lambda self: self._v["l0w"])
    l0b = property(lambda self: self._v["l0b"])
    l1w = property(lambda self: self._v["l1w"])
    l1b = property(lambda self: self._v["l1b"])
    l0f = property(lambda self: self._v.get("l0f"))
    """The factoriser's rows (768, H), None without one."""

    @property
    def output_buckets(self) -> int:
        """N: the output buckets."""
        return int(self.l1b.size)

    def kernel_args(self) -> tuple:
        """What the kernels take of the net's shape and parameters: the king tables, the
        output buckets' divisor ceil(32 / N), the factoriser's first row (768 K; 0: none), the
        input rows (l0w, then l0f's), l0b, l1w as (N, 2H), l1b, screlu."""
        kofs, kflip = self._tables
        fact, rows = ((self.l0w.shape[0], self._v["l0rows"]) if self.factorised
                      else (0, self.l0w))
        return (kofs, kflip, -(-32 // self.output_buckets), fact, rows, self.l0b, self.l1w_rows,
                self.l1b, self.activation == "screlu")

    @property
    def hidden(self) -> int:
        return int(self.l0b.size)

    @classmethod
    def random(cls, hidden: int, seed: int, activation: str = "screlu", *,
               king_buckets=PLAIN_MAP, output_buckets: int = 1,
               factoriser: bool = False) -> FloatNet:
        """Uniform in +-1/sqrt(fan-in) (768 for the input layer, each king bucket's block alike;
        2H for the output layer, each output bucket's row alike), biases 0, drawn from
        ``generator(seed, STREAM_NN_TRAIN, 0)`` (a plain net: the draws of before buckets); a
        factoriser starts at 0 (the same draws: the net starts as the one without)."""
        rng = generator(seed, STREAM_NN_TRAIN, 0)
        a, b = 1 / np.sqrt(INPUTS), 1 / np.sqrt(2 * hidden)
        k, n = bucket_count(king_bucket_map(king_buckets)), output_buckets
        net = cls(activation, rng.uniform(-a, a, (INPUTS * k, hidden)), np.zeros(hidden),
                  rng.uniform(-b, b, 2 * hidden if n == 1 else (n, 2 * hidden)), np.zeros(n),
                  king_buckets=king_buckets)
        return net.with_factoriser() if factoriser else net

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in self._v.items() if k != "l0rows"}

    def copy(self) -> FloatNet:
        return FloatNet(self.activation, *(self._v[n] for n in PARAMS),
                        king_buckets=self.king_buckets, l0f=self.l0f)

    def with_factoriser(self) -> FloatNet:
        """This net with a factoriser of zeros (it plays as before); itself when it has one."""
        if self.factorised:
            return self
        return FloatNet(self.activation, *(self._v[n] for n in PARAMS),
                        king_buckets=self.king_buckets,
                        l0f=np.zeros((INPUTS, self.hidden), np.float32))

    def merged(self) -> FloatNet:
        """The net without a factoriser that plays as this one: l0f added to every king
        bucket's block of l0w (float32, as bullet merges ``l0f`` into ``l0w`` when it saves)."""
        if not self.factorised:
            return self
        k = self.king_bucket_count
        l0w = (self.l0w.reshape(k, INPUTS, self.hidden) + self.l0f[None]).reshape(
            INPUTS * k, self.hidden)
        return FloatNet(self.activation, l0w, self.l0b, self.l1w, self.l1b,
                        king_buckets=self.king_buckets)

    def digest(self) -> str:
        """SHA-256 of the activation, (a bucketed net's) bucket map and output buckets (and
        'f' with a factoriser), and the parameters' bytes (l0w, l0f, l0b, l1w, l1b)."""
        shape = bytes(self.king_buckets) + bytes([self.output_buckets]) if self.bucketed else b""
        shape += b"f" if self.factorised else b""
        return hashlib.sha256(self.activation.encode() + shape + self.flat.tobytes()).hexdigest()

    def quantised(self) -> Net:
        """The engine's integer net: l0w, l0b times QA (255), l1w times QB (64), l1b times
        QA * QB, rounded half away from zero as bullet saves them (net.network.from_floats); a
        factoriser merged first (:meth:`merged`)."""
        if self.factorised:
            return self.merged().quantised()
        l1b = float(self.l1b[0]) if self.output_buckets == 1 else self.l1b
        return from_floats(self.l0w, self.l0b, self.l1w, l1b, activation=self.activation,
                           king_buckets=self.king_buckets)

    @classmethod
    def from_net(cls, net: Net) -> FloatNet:
        """The float net whose quantisation is ``net`` (a start from a net file: the training
        goes on from exactly the values the engine plays), of the net's buckets."""
        if net.scale != SCALE:
            raise FieldError("init", f"has scale {net.scale}; the trainer's nets have "
                                     f"{SCALE:g}")
        return cls(net.activation, np.asarray(net.l0w, np.float64) / net.qa,
                   np.asarray(net.l0b, np.float64) / net.qa,
                   np.asarray(net.l1w, np.float64) / net.qb,
                   np.array(net.l1b_values, np.float64) / (net.qa * net.qb),
                   king_buckets=net.king_buckets)

    def shape_text(self) -> str:
        """:func:`shape_text` of this net (and 'with a factoriser' when it has one)."""
        return shape_text(self.hidden, self.activation, self.king_buckets, self.output_buckets) \
            + (" with a factoriser" if self.factorised else "")


def shape_text(hidden: int, activation: str, bucket_map, output_buckets: int) -> str:
    """'H-neuron screlu net', with buckets '... net with K king buckets (map M) and N output
    buckets'."""
    text = f"{hidden}-neuron {activation} net"
    k = bucket_count(bucket_map)
    if k == 1 and output_buckets == 1:
        return text
    kings = f"{k} king bucket{'s' if k > 1 else ''}" + (f" (map {map_text(bucket_map)})"
                                                         if k > 1 else "")
    return f"{text} with {kings} and {output_buckets} output bucket" \
        + ("s" if output_buckets > 1 else "")
