"""The trainer's numba kernels: feature expansion, forward, backward, AdamW.

The net (float32, the layout of :class:`evotune.engine.netfile.Net`): ``l0w`` (768, H), ``l0b``
(H,), ``l1w`` (2H,), ``l1b`` (1,). For a position seen from the side to move, ``a_s`` and
``a_n`` = l0b + the sum of the rows of ``l0w`` of the active features of the side to move's and
of the other side's perspective; ``out = l1b + act(a_s) . l1w[:H] + act(a_n) . l1w[H:]`` with
act = SCReLU (clamp(x, 0, 1)^2) or CReLU (clamp(x, 0, 1)); the evaluation in centipawns is
``out * SCALE`` (SCALE = 400), so the predicted score is ``sigmoid(out)`` (base e).

Loss per position: ``(sigmoid(out) - target)^2``, target = wdl * result + (1 - wdl) *
sigmoid(score / SCALE), result and score seen from the side to move; the step minimises the mean
over the batch.

Determinism: a step's result does not depend on the number of threads. The forward pass and the
per-position gradients are computed per position; the sums over positions are taken in a fixed
order: the output layer's in fixed chunks of ``CHUNK`` positions, then over the chunks in order;
the input layer's per hidden column (threads own whole columns and walk every position in batch
order, so no gradient buffer is shared or reduced).
"""
from __future__ import annotations

import math
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Threads that finished their share sleep instead of spinning: on a machine whose cores are
# shared with other processes, a spinning thread takes the core its partner waits for (a 2-thread
# step measured 2x slower than a 1-thread one at load 1.4 on 2 cores). Read by the OpenMP
# runtime when numba starts its threads (the first parallel call), hence before numba loads it.

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

SCALE = 400.0
"""Centipawns per unit of the net's float output (the quantised net's ``scale``)."""
CHUNK = 64
"""Positions per partial sum of the output layer's gradient (fixed: results do not depend on
the threads)."""
MAX_FEATURES = 32
_FM = {"reassoc", "contract", "nsz", "arcp"}
"""fastmath flags: vectorised reductions; no assumption of finite values."""


@njit(cache=True, inline="always")
def expand(occ, pcs, stm, out_s, out_n):
    """Chess768 indices of a packed board: side to move's into ``out_s``, the other's into
    ``out_n``; returns their number. Feature of a piece seen by ``perspective``: 384 * (its
    colour != perspective) + 64 * (type - 1) + (square, mirrored vertically for Black)."""
    k = 0
    for sq in range(64):
        if (occ >> np.uint64(sq)) & np.uint64(1):
            code = (np.int64(pcs[k >> 1]) >> (4 * (k & 1))) & 15
            colour = code >> 3
            kind = code & 7
            fw = 384 * colour + 64 * kind + sq
            fb = 384 * (1 - colour) + 64 * kind + (sq ^ 56)
            if stm == 0:
                out_s[k] = fw
                out_n[k] = fb
            else:
                out_s[k] = fb
                out_n[k] = fw
            k += 1
    return k


@njit(cache=True, inline="always")
def target_of(score, result, stm, wdl):
    """The side to move's target: wdl * result + (1 - wdl) * sigmoid(score / SCALE)."""
    r = np.float32(result) * np.float32(0.5)
    if stm != 0:
        r = np.float32(1.0) - r
    if score == -32768:  # no score: the result alone
        return r
    s = np.float32(score) if stm == 0 else -np.float32(score)
    sig = np.float32(1.0) / (np.float32(1.0) + math.exp(-s / np.float32(SCALE)))
    return np.float32(wdl) * r + (np.float32(1.0) - np.float32(wdl)) * sig


@njit(cache=True, fastmath=_FM)
def _accumulate(l0w, l0b, feats, n, acc):
    for j in range(acc.size):
        acc[j] = l0b[j]
    for k in range(n):
        row = l0w[feats[k]]
        for j in range(acc.size):
            acc[j] += row[j]


@njit(cache=True, fastmath=_FM)
def _activate(acc, act, der, l1w, l1b, screlu):
    """act = activation of ``acc`` (both halves), der = its derivative; returns the output."""
    out = np.float32(0.0)
    zero = np.float32(0.0)
    one = np.float32(1.0)
    if screlu:
        for j in range(acc.size):
            x = acc[j]
            c = min(max(x, zero), one)
            act[j] = c * c
            der[j] = np.float32(2.0) * c * np.float32((x > zero) & (x < one))
            out += act[j] * l1w[j]
    else:
        for j in range(acc.size):
            x = acc[j]
            c = min(max(x, zero), one)
            act[j] = c
            der[j] = np.float32((x > zero) & (x < one))
            out += c * l1w[j]
    return out + l1b[0]


@njit(cache=True, fastmath=_FM)
def _chunk(i0, i1, inv_b, idx, occ, pcs, score, result, stm, wdl, l0w, l0b, l1w, l1b, screlu,
           feats, nfeat, dacc, pc, gout, loss):
    h = l0b.size
    acc = np.empty(2 * h, dtype=np.float32)
    act = np.empty(2 * h, dtype=np.float32)
    der = np.empty(2 * h, dtype=np.float32)
    pc[:] = 0.0
    for i in range(i0, i1):
        p = idx[i]
        n = expand(occ[p], pcs[p], stm[p], feats[i, 0], feats[i, 1])
        nfeat[i] = n
        _accumulate(l0w, l0b, feats[i, 0], n, acc[:h])
        _accumulate(l0w, l0b, feats[i, 1], n, acc[h:])
        out = _activate(acc, act, der, l1w, l1b, screlu)
        pred = np.float32(1.0) / (np.float32(1.0) + math.exp(-out))
        d = pred - target_of(score[p], result[p], stm[p], wdl)
        loss[i] = d * d
        g = np.float32(2.0) * d * pred * (np.float32(1.0) - pred) * inv_b
        gout[i] = g
        ds = dacc[i, 0]
        dn = dacc[i, 1]
        for j in range(2 * h):
            pc[j] += g * act[j]
        for j in range(h):
            ds[j] = g * l1w[j] * der[j]
        for j in range(h):
            dn[j] = g * l1w[h + j] * der[h + j]


@njit(cache=True, parallel=True)
def forward_backward(idx, occ, pcs, score, result, stm, wdl, l0w, l0b, l1w, l1b, screlu,
                     feats, nfeat, dacc, part, gout, loss):
    """Forward and per-position backward of the positions ``idx`` (one batch): fills the
    features, ``loss[i]`` (squared error), ``gout[i]`` (d mean loss / d out), ``dacc[i, p]`` (d
    mean loss / d accumulator p) and ``part[c]`` (chunk c's output-layer weight gradient)."""
    b = idx.size
    inv_b = np.float32(1.0) / np.float32(b)
    for c in prange((b + CHUNK - 1) // CHUNK):
        _chunk(c * CHUNK, min(b, (c + 1) * CHUNK), inv_b, idx, occ, pcs, score, result, stm,
               wdl, l0w, l0b, l1w, l1b, screlu, feats, nfeat, dacc, part[c], gout, loss)


@njit(cache=True)
def _columns(feats, nfeat, dacc, gl0w, gl0b, j0, j1):
    """Columns j0..j1-1 of the input layer's gradient, every position in batch order."""
    w = j1 - j0
    gl0w[:, j0:j1] = 0.0
    gb = gl0b[j0:j1]
    gb[:] = 0.0
    for i in range(nfeat.size):
        for side in range(2):
            d = dacc[i, side, j0:j1]
            for k in range(nfeat[i]):
                row = gl0w[feats[i, side, k], j0:j1]
                for j in range(w):
                    row[j] += d[j]
            for j in range(w):
                gb[j] += d[j]


@njit(cache=True, parallel=True)
def scatter(feats, nfeat, dacc, part, gout, gl0w, gl0b, gl1w, gl1b, threads):
    """The batch's gradients from :func:`forward_backward`'s per-position ones: the input layer
    by blocks of columns, one per thread (a column's sum runs over the positions in batch order
    whatever the blocks), the output layer over the chunks in order."""
    h = gl0b.size
    nblocks = max(1, min(threads, (h + 7) // 8))
    cols = ((h + nblocks - 1) // nblocks + 7) // 8 * 8
    for blk in prange(nblocks):
        _columns(feats, nfeat, dacc, gl0w, gl0b, min(h, blk * cols), min(h, (blk + 1) * cols))
    gl1w[:] = 0.0
    for c in range(part.shape[0]):
        for j in range(2 * h):
            gl1w[j] += part[c, j]
    s = np.float32(0.0)
    for i in range(nfeat.size):
        s += gout[i]
    gl1b[0] = s


@njit(cache=True, parallel=True, fastmath=_FM)
def adamw(p, g, m, v, lr, beta1, beta2, eps, decay, t, lo, hi):
    """One AdamW step on the flat float32 arrays (decoupled decay, bias-corrected moments),
    then the weights clipped to [lo, hi]."""
    c1 = 1.0 - beta1 ** t
    c2 = 1.0 - beta2 ** t
    step = np.float32(lr / c1)
    rc2 = np.float32(1.0 / math.sqrt(c2))
    shrink = np.float32(1.0 - lr * decay)
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    e = np.float32(eps)
    flo = np.float32(lo)
    fhi = np.float32(hi)
    for i in prange(p.size):
        gi = g[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * gi
        vi = b2 * v[i] + (np.float32(1.0) - b2) * gi * gi
        m[i] = mi
        v[i] = vi
        w = p[i] * shrink - step * mi / (math.sqrt(vi) * rc2 + e)
        p[i] = min(max(w, flo), fhi)


@njit(cache=True, fastmath=_FM)
def _chunk_out(i0, i1, idx, occ, pcs, score, result, stm, wdl, l0w, l0b, l1w, l1b, screlu,
               out, loss):
    h = l0b.size
    acc = np.empty(2 * h, dtype=np.float32)
    act = np.empty(2 * h, dtype=np.float32)
    der = np.empty(2 * h, dtype=np.float32)
    fs = np.empty(MAX_FEATURES, dtype=np.int16)
    fn = np.empty(MAX_FEATURES, dtype=np.int16)
    for i in range(i0, i1):
        p = idx[i]
        n = expand(occ[p], pcs[p], stm[p], fs, fn)
        _accumulate(l0w, l0b, fs, n, acc[:h])
        _accumulate(l0w, l0b, fn, n, acc[h:])
        o = _activate(acc, act, der, l1w, l1b, screlu)
        out[i] = o
        pred = np.float32(1.0) / (np.float32(1.0) + math.exp(-o))
        d = pred - target_of(score[p], result[p], stm[p], wdl)
        loss[i] = d * d


@njit(cache=True, parallel=True)
def outputs(idx, occ, pcs, score, result, stm, wdl, l0w, l0b, l1w, l1b, screlu, out, loss):
    """Forward only: the float output (side to move's view, units of SCALE centipawns) and the
    squared error of the positions ``idx``."""
    b = idx.size
    for c in prange((b + CHUNK - 1) // CHUNK):
        _chunk_out(c * CHUNK, min(b, (c + 1) * CHUNK), idx, occ, pcs, score, result, stm, wdl,
                   l0w, l0b, l1w, l1b, screlu, out, loss)


@njit(cache=True)
def ordered_sum(x):
    """Sum in index order (float64): a loss total that does not depend on the threads."""
    s = 0.0
    for i in range(x.size):
        s += x[i]
    return s
