"""The trainer's step in plain numpy: the test oracle of the numba kernels and their speed baseline.

The same algorithm as :mod:`evotune.learn.nn.kernels` (features expanded from the packed boards,
a gather-add of the active rows, SCReLU or CReLU, the sigmoid loss, the scatter-add of the input
layer's gradient with ``np.add.at``, AdamW with clipping), vectorised over the batch with numpy,
in sub-batches of ``SUB`` positions so that the gathered rows stay small.
"""
from __future__ import annotations

import numpy as np

from .data import NO_SCORE, PackedData
from .kernels import MAX_FEATURES, SCALE

PAD = 768
"""Feature index of an empty slot: a zero row appended to the input weights."""
SUB = 1024


def expand_batch(data: PackedData, idx: np.ndarray) -> np.ndarray:
    """(B, 2, 32) Chess768 indices (side to move's, the other's) of positions ``idx``; empty
    slots hold PAD."""
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
    black = data.stm[idx][b_i] == 1
    out = np.full((idx.size, 2, MAX_FEATURES), PAD, dtype=np.int64)
    out[b_i, 0, slot] = np.where(black, fb, fw)
    out[b_i, 1, slot] = np.where(black, fw, fb)
    return out


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


def forward(params: dict, feats: np.ndarray, screlu: bool) -> np.ndarray:
    """Float outputs (side to move's view, units of SCALE centipawns) of expanded positions."""
    w = np.vstack([params["l0w"], np.zeros((1, params["l0w"].shape[1]), params["l0w"].dtype)])
    h = params["l0b"].size
    acc = params["l0b"] + w[feats].sum(axis=2)                                 # (B, 2, H)
    a = _act(acc, screlu)[0]
    return a[:, 0] @ params["l1w"][:h] + a[:, 1] @ params["l1w"][h:] + params["l1b"][0]


def loss(params: dict, data: PackedData, idx: np.ndarray, wdl: float, screlu: bool) -> float:
    """Mean squared error of positions ``idx`` (in the parameters' precision)."""
    out = forward(params, expand_batch(data, idx), screlu)
    return float(np.mean((1.0 / (1.0 + np.exp(-out)) - targets(data, idx, wdl)) ** 2))


def gradients(params: dict, data: PackedData, idx: np.ndarray, wdl: float, screlu: bool
              ) -> tuple[float, dict]:
    """Mean loss and its gradients, the way the kernels compute them, in numpy."""
    h = params["l0b"].size
    dt = params["l0w"].dtype
    w = np.vstack([params["l0w"], np.zeros((1, h), dt)])
    g = {"l0w": np.zeros((PAD + 1, h), dt), "l0b": np.zeros(h, dt),
         "l1w": np.zeros(2 * h, dt), "l1b": np.zeros(1, dt)}
    total, n = 0.0, idx.size
    for at in range(0, n, SUB):
        sub = idx[at:at + SUB]
        feats = expand_batch(data, sub)
        acc = params["l0b"] + w[feats].sum(axis=2)
        a, da = _act(acc, screlu)
        out = a[:, 0] @ params["l1w"][:h] + a[:, 1] @ params["l1w"][h:] + params["l1b"][0]
        pred = 1.0 / (1.0 + np.exp(-out))
        d = pred - targets(data, sub, wdl)
        total += float(d @ d)
        gout = (2.0 * d * pred * (1.0 - pred) / n).astype(dt)
        g["l1b"][0] += gout.sum()
        g["l1w"][:h] += gout @ a[:, 0]
        g["l1w"][h:] += gout @ a[:, 1]
        dacc = gout[:, None, None] * da * np.stack([params["l1w"][:h], params["l1w"][h:]])
        g["l0b"] += dacc.sum(axis=(0, 1))
        rows = np.broadcast_to(dacc[:, :, None, :], (*feats.shape, h))
        np.add.at(g["l0w"], feats.reshape(-1), rows.reshape(-1, h))
    g["l0w"] = g["l0w"][:PAD]
    return total / n, g


def step(params: dict, m: dict, v: dict, t: int, data: PackedData, idx: np.ndarray, *,
         wdl: float, screlu: bool, lr: float, beta1=0.9, beta2=0.999, eps=1e-8, decay=0.01,
         clip=1.98) -> float:
    """One training step (the kernels' step) in numpy, in place; ``t`` is the step's number
    (1-based). Returns the batch's mean loss before the step."""
    value, g = gradients(params, data, idx, wdl, screlu)
    for name, p in params.items():
        m[name] = beta1 * m[name] + (1 - beta1) * g[name]
        v[name] = beta2 * v[name] + (1 - beta2) * g[name] ** 2
        mhat = m[name] / (1 - beta1 ** t)
        vhat = v[name] / (1 - beta2 ** t)
        p *= 1 - lr * decay
        p -= lr * mhat / (np.sqrt(vhat) + eps)
        np.clip(p, -clip, clip, out=p)
    return value
