"""The trainer's step in plain numpy: the test oracle of the numba kernels and their speed baseline.

The same algorithm as :mod:`evotune.learn.nn.kernels` (features expanded from the packed boards,
a gather-add of the active rows, SCReLU or CReLU, the sigmoid loss, the scatter-add of the input
layer's gradient with ``np.add.at``, AdamW with clipping), vectorised over the batch with numpy,
in sub-batches of ``SUB`` positions so that the gathered rows stay small. Nets with king buckets
(``bucket_map``) and output buckets (N: the size of ``params["l1b"]``, ``l1w`` then (N, 2H)) as
the engine's reference defines them (engine/net/inputs.py: king_view, output_bucket). A factorised
net (``factoriser``): ``params["l0w"]`` holds its 768 K rows and then the factoriser's 768, and
each feature f also activates row 768 K + f % 768.
"""
from __future__ import annotations

import chess
import numpy as np

from ...engine.net.inputs import INPUTS, PLAIN_MAP, bucket_count, king_view
from .data import NO_SCORE, PackedData
from .kernels import MAX_FEATURES, SCALE

PAD = 768
"""Feature index of an empty slot of a plain net: a zero row appended to the input weights (a
net of K king buckets: 768 K)."""
SUB = 1024


def expand_batch(data: PackedData, idx: np.ndarray, bucket_map=PLAIN_MAP,
                 factoriser: bool = False) -> np.ndarray:
    """(B, 2, 32) Chess768 indices (side to move's, the other's) of positions ``idx``, with a
    map of K >= 2 king buckets mirrored and offset as :func:`evotune.engine.net.inputs.features`
    does; empty slots hold PAD (768 K). With a factoriser (B, 2, 64): the factoriser's rows
    768 K + f % 768 follow, and PAD is 768 (K + 1)."""
    occ = data.occ[idx]
    squares = np.arange(64, dtype=np.uint64)
    bits = ((occ[:, None] >> squares) & np.uint64(1)).astype(bool)           # (B, 64)
    k = np.cumsum(bits, axis=1) - 1                                            # slot of square
    b_i, sq = np.nonzero(bits)
    slot = k[b_i, sq]
    code = (data.pcs[idx][b_i, slot >> 1].astype(np.int64) >> (4 * (slot & 1))) & 15
    colour, kind = code >> 3, code & 7
    fw = 384 * colour + 64 * kind + sq
    fb = 384 * (1 - colour) + 64 * kind + (sq ^ 56)
    k_count = bucket_count(bucket_map)
    if k_count > 1:  # each perspective's own king: its bucket and mirror, from the engine's rule
        views = np.array([[INPUTS * b, f] for b, f in (king_view(bucket_map, s, chess.WHITE)
                                                       for s in range(64))], dtype=np.int64)
        wk = np.zeros(idx.size, np.int64)
        bk = np.zeros(idx.size, np.int64)
        king = kind == 5
        wk[b_i[king & (colour == 0)]] = sq[king & (colour == 0)]
        bk[b_i[king & (colour == 1)]] = sq[king & (colour == 1)] ^ 56
        fw = (fw ^ views[wk[b_i], 1]) + views[wk[b_i], 0]
        fb = (fb ^ views[bk[b_i], 1]) + views[bk[b_i], 0]
    black = data.stm[idx][b_i] == 1
    out = np.full((idx.size, 2, MAX_FEATURES), INPUTS * k_count, dtype=np.int64)
    out[b_i, 0, slot] = np.where(black, fb, fw)
    out[b_i, 1, slot] = np.where(black, fw, fb)
    if not factoriser:
        return out
    pad = INPUTS * (k_count + 1)
    shared = np.where(out == INPUTS * k_count, pad, INPUTS * k_count + out % INPUTS)
    return np.concatenate([np.where(out == INPUTS * k_count, pad, out), shared], axis=2)


def out_buckets(data: PackedData, idx: np.ndarray, n: int) -> np.ndarray:
    """MaterialCount<N>'s output bucket of positions ``idx``: (pieces - 2) // ceil(32 / N)."""
    pieces = np.unpackbits(data.occ[idx].view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    return np.clip((pieces.astype(np.int64) - 2) // -(-32 // n), 0, n - 1)


def targets(data: PackedData, idx: np.ndarray, wdl: float) -> np.ndarray:
    """Side to move's targets: wdl * result + (1 - wdl) * sigmoid(score / SCALE)."""
    black = data.stm[idx] == 1
    r = data.result[idx] / 2.0
    r = np.where(black, 1.0 - r, r)
    score = data.score[idx].astype(np.float64)
    s = np.where(black, -score, score)
    t = wdl * r + (1.0 - wdl) / (1.0 + np.exp(-s / SCALE))
    return np.where(data.score[idx] == NO_SCORE, r, t)


def _act(x, screlu):
    c = np.clip(x, 0.0, 1.0)
    return (c * c, 2 * c * ((x > 0) & (x < 1))) if screlu else (c, ((x > 0) & (x < 1)) * 1.0)


def _out(params: dict, a: np.ndarray, ob: np.ndarray | None) -> np.ndarray:
    """The output layer on activations ``a`` (B, 2, H): one bucket (a plain net's matrix
    products), or each position's bucket ``ob``."""
    h = params["l0b"].size
    if params["l1b"].size == 1:
        return a[:, 0] @ params["l1w"].reshape(-1)[:h] + a[:, 1] @ params["l1w"].reshape(-1)[h:] \
            + params["l1b"][0]
    w = params["l1w"][ob]                                                      # (B, 2H)
    return (a[:, 0] * w[:, :h]).sum(axis=1) + (a[:, 1] * w[:, h:]).sum(axis=1) + params["l1b"][ob]


def forward(params: dict, feats: np.ndarray, screlu: bool, ob: np.ndarray | None = None
            ) -> np.ndarray:
    """Float outputs (side to move's view, units of SCALE centipawns) of expanded positions
    (``ob``: their output buckets, for a net of several)."""
    w = np.vstack([params["l0w"], np.zeros((1, params["l0w"].shape[1]), params["l0w"].dtype)])
    acc = params["l0b"] + w[feats].sum(axis=2)                                 # (B, 2, H)
    return _out(params, _act(acc, screlu)[0], ob)


def loss(params: dict, data: PackedData, idx: np.ndarray, wdl: float, screlu: bool,
         bucket_map=PLAIN_MAP, factoriser: bool = False) -> float:
    """Mean squared error of positions ``idx`` (in the parameters' precision)."""
    ob = out_buckets(data, idx, params["l1b"].size)
    out = forward(params, expand_batch(data, idx, bucket_map, factoriser), screlu, ob)
    return float(np.mean((1.0 / (1.0 + np.exp(-out)) - targets(data, idx, wdl)) ** 2))


def gradients(params: dict, data: PackedData, idx: np.ndarray, wdl: float, screlu: bool,
              bucket_map=PLAIN_MAP, factoriser: bool = False) -> tuple[float, dict]:
    """Mean loss and its gradients, the way the kernels compute them, in numpy."""
    h = params["l0b"].size
    n_out = params["l1b"].size
    dt = params["l0w"].dtype
    rows = params["l0w"].shape[0]
    w = np.vstack([params["l0w"], np.zeros((1, h), dt)])
    w1 = params["l1w"].reshape(n_out, 2 * h)
    g = {"l0w": np.zeros((rows + 1, h), dt), "l0b": np.zeros(h, dt),
         "l1w": np.zeros((n_out, 2 * h), dt), "l1b": np.zeros(n_out, dt)}
    total, n = 0.0, idx.size
    for at in range(0, n, SUB):
        sub = idx[at:at + SUB]
        feats = expand_batch(data, sub, bucket_map, factoriser)
        ob = out_buckets(data, sub, n_out)
        acc = params["l0b"] + w[feats].sum(axis=2)
        a, da = _act(acc, screlu)
        out = _out(params, a, ob)
        pred = 1.0 / (1.0 + np.exp(-out))
        d = pred - targets(data, sub, wdl)
        total += float(d @ d)
        gout = (2.0 * d * pred * (1.0 - pred) / n).astype(dt)
        np.add.at(g["l1b"], ob, gout)
        np.add.at(g["l1w"], ob, gout[:, None] * a.reshape(len(sub), 2 * h))
        dacc = gout[:, None, None] * da * w1[ob].reshape(len(sub), 2, h)
        g["l0b"] += dacc.sum(axis=(0, 1))
        grows = np.broadcast_to(dacc[:, :, None, :], (*feats.shape, h))
        np.add.at(g["l0w"], feats.reshape(-1), grows.reshape(-1, h))
    g["l0w"] = g["l0w"][:rows]
    g["l1w"] = g["l1w"].reshape(params["l1w"].shape)
    return total / n, g


def step(params: dict, m: dict, v: dict, t: int, data: PackedData, idx: np.ndarray, *,
         wdl: float, screlu: bool, lr: float, beta1=0.9, beta2=0.999, eps=1e-8, decay=0.01,
         clip=1.98, bucket_map=PLAIN_MAP, factoriser: bool = False) -> float:
    """One training step (the kernels' step) in numpy, in place; ``t`` is the step's number
    (1-based). Returns the batch's mean loss before the step."""
    value, g = gradients(params, data, idx, wdl, screlu, bucket_map, factoriser)
    for name, p in params.items():
        m[name] = beta1 * m[name] + (1 - beta1) * g[name]
        v[name] = beta2 * v[name] + (1 - beta2) * g[name] ** 2
        mhat = m[name] / (1 - beta1 ** t)
        vhat = v[name] / (1 - beta2 ** t)
        p *= 1 - lr * decay
        p -= lr * mhat / (np.sqrt(vhat) + eps)
        np.clip(p, -clip, clip, out=p)
    return value
