"""The trainer's numba kernels: feature expansion, forward, backward, AdamW.

The net (float32, the layout of :class:`evotune.engine.net.network.Net`): ``l0w`` (768 K, H), ``l0b``
(H,), ``l1w`` (N, 2H), ``l1b`` (N,) for K king buckets and N output buckets (1 and 1: the plain
net). For a position seen from the side to move, ``a_s`` and ``a_n`` = l0b + the sum of the rows
of ``l0w`` of the active features of the side to move's and of the other side's perspective;
with ``o`` its output bucket, ``out = l1b[o] + act(a_s) . l1w[o, :H] + act(a_n) . l1w[o, H:]``
with act = SCReLU (clamp(x, 0, 1)^2) or CReLU (clamp(x, 0, 1)); the evaluation in centipawns is
``out * SCALE`` (SCALE = 400), so the predicted score is ``sigmoid(out)`` (base e).

Buckets (engine/net/inputs.py states bullet's rules): a perspective's features are its Chess768
indices, with king buckets mirrored (``^ 7``) when its own king stands on files e-h and offset by
``768 * bucket``; the kernels read both from a table of 64 entries indexed by that king's square
seen from the perspective (``kofs``, ``kflip``: :func:`evotune.learn.nn.floatnet.king_tables`;
empty for a net without king buckets, whose features are plain Chess768), applied to a
perspective's features after :func:`expand` (:func:`to_king_bucket`). A factorised net (bullet's
``l0f``: ``fact`` = 768 K, 0 for none) holds 768 more input rows after the buckets' blocks, one
per mirrored Chess768 feature and shared by every bucket: each active feature ``f`` also
activates row ``fact + f % 768`` (:func:`add_factor`), so the row a bucket plays is its own plus
the shared one (:meth:`~evotune.learn.nn.floatnet.FloatNet.quantised` merges them). The output bucket is
``(pieces - 2) // div`` with ``div = ceil(32 / N)`` (MaterialCount<N>). Forward and backward read
and write only the active bucket's rows of ``l0w`` and the output bucket's row of ``l1w``.

Loss per position: ``(sigmoid(out) - target)^2``, target = wdl * result + (1 - wdl) *
sigmoid(score / SCALE), result and score seen from the side to move; the step minimises the mean
over the batch.

Threads and determinism: a step's result does not depend on the number of threads. A batch
is cut into ``SLICES`` slices of consecutive positions (the cut depends on the batch size
alone); a thread takes whole slices and runs each one's positions in batch order, forward and
backward (in groups of ``GROUP`` positions: the group's forward passes, then its scatter-adds),
summing their gradients (the input layer's as a scatter-add of the active rows) into the
slice's own flat gradient buffer, which stays in the core's cache (H 128: 386 KiB). The
batch's gradient is then the sum of the slices' buffers in slice order, the threads owning
blocks of entries. No buffer is written by two threads, and no sum's order depends on them:
1, 2 or 8 threads give the same bytes.
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
"""Positions per parallel task of the forward-only pass (:func:`outputs`)."""
SLICES = 8
"""Slices of consecutive positions a batch's gradient is summed in (fixed: results do not
depend on the threads; more than SLICES threads gain nothing)."""
GROUP = 64
"""Positions whose forward passes run before their scatter-adds (see :func:`_slice`)."""
MAX_FEATURES = 32
"""Pieces on a board (a perspective's features; a factorised net's rows are twice as many)."""
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
def to_king_bucket(kofs, kflip, feats, n):
    """One perspective's ``n`` Chess768 features (from :func:`expand`) moved into its own
    king's bucket: its king is the feature ``320 + square`` (its own colour, type 6; the square
    seen from it), and every feature becomes ``(f ^ kflip[square]) + kofs[square]`` (the board
    mirrored on files e-h, the bucket's block of 768 rows). A board without that king keeps
    bucket 0, unmirrored (as engine/net/inputs.features)."""
    king = -1
    for j in range(n):
        if 320 <= feats[j] < 384:
            king = feats[j] - 320
    if king >= 0:
        ofs = kofs[king]
        flip = kflip[king]
        for j in range(n):
            feats[j] = (feats[j] ^ flip) + ofs


@njit(cache=True, inline="always")
def add_factor(fact, feats, n):
    """A factorised net's shared rows: features ``n .. 2n - 1`` become ``fact + f % 768`` of
    features ``0 .. n - 1`` (their bucket's block taken off); returns the rows now active."""
    if fact == 0:
        return n
    for j in range(n):
        feats[n + j] = fact + feats[j] % 768
    return 2 * n


@njit(cache=True, inline="always")
def out_bucket(pieces, div, buckets):
    """MaterialCount's output bucket of a board with ``pieces`` pieces (kings included); no
    division for a net of one output bucket."""
    if buckets == 1:
        return 0
    return min(max((pieces - 2) // div, 0), buckets - 1)


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
def _activate(acc, act, der, l1w, o, bias, screlu):
    """act = activation of ``acc`` (both halves), der = its derivative; returns the output of
    output bucket ``o`` (row ``o`` of ``l1w``, its bias ``bias``). The row is indexed, not
    sliced: a view per position costs the plain net's step measurably."""
    out = np.float32(0.0)
    zero = np.float32(0.0)
    one = np.float32(1.0)
    if screlu:
        for j in range(acc.size):
            x = acc[j]
            c = min(max(x, zero), one)
            act[j] = c * c
            der[j] = np.float32(2.0) * c * np.float32((x > zero) & (x < one))
            out += act[j] * l1w[o, j]
    else:
        for j in range(acc.size):
            x = acc[j]
            c = min(max(x, zero), one)
            act[j] = c
            der[j] = np.float32((x > zero) & (x < one))
            out += c * l1w[o, j]
    return out + bias


@njit(cache=True, fastmath=_FM)
def _slice(i0, i1, inv_b, idx, occ, pcs, score, result, stm, wdl, kofs, kflip, div, fact, l0w,
           l0b, l1w, l1b, screlu, g, loss):
    """Forward and backward of positions ``i0..i1-1`` of the batch, in batch order: their
    squared errors into ``loss`` and the sum of their gradients into ``g`` (flat, the layout of
    the parameters: l0w row by row, l0b, l1w bucket by bucket, l1b), which is zeroed first. The
    positions go in groups of ``GROUP``: the group's forward passes (reading input-weight rows),
    then its scatter-adds into the gradient's rows, so that the two arrays are not both in use
    at once (at H 1024 each is 3 MiB); every gradient entry is summed in batch order all the
    same."""
    h = l0b.size
    nb = l1w.shape[0]
    ob = l0w.shape[0] * h  # offsets in g: l0b, l1w, l1b
    ow = ob + h
    o1 = ow + nb * 2 * h
    g[:] = 0.0
    acc = np.empty(2 * h, dtype=np.float32)
    act = np.empty(2 * h, dtype=np.float32)
    der = np.empty(2 * h, dtype=np.float32)
    dacc = np.empty((GROUP, 2 * h), dtype=np.float32)
    width = 2 * MAX_FEATURES if fact else MAX_FEATURES
    fs = np.empty((GROUP, width), dtype=np.int16)
    fn = np.empty((GROUP, width), dtype=np.int16)
    nf = np.empty(GROUP, dtype=np.int64)
    gb = g[ob:ow]
    gw1 = g[ow:o1].reshape((nb, 2 * h))  # rows indexed: a contiguous, vectorised update
    for c0 in range(i0, i1, GROUP):
        c1 = min(i1, c0 + GROUP)
        for i in range(c0, c1):
            q = i - c0
            p = idx[i]
            n = expand(occ[p], pcs[p], stm[p], fs[q], fn[q])
            if kofs.size:
                to_king_bucket(kofs, kflip, fs[q], n)
                to_king_bucket(kofs, kflip, fn[q], n)
            o = out_bucket(n, div, nb)
            add_factor(fact, fs[q], n)
            n = add_factor(fact, fn[q], n)
            nf[q] = n
            _accumulate(l0w, l0b, fs[q], n, acc[:h])
            _accumulate(l0w, l0b, fn[q], n, acc[h:])
            out = _activate(acc, act, der, l1w, o, l1b[o], screlu)
            pred = np.float32(1.0) / (np.float32(1.0) + math.exp(-out))
            d = pred - target_of(score[p], result[p], stm[p], wdl)
            loss[i] = d * d
            go = np.float32(2.0) * d * pred * (np.float32(1.0) - pred) * inv_b
            g[o1 + o] += go
            for j in range(2 * h):
                gw1[o, j] += go * act[j]
            da = dacc[q]
            for j in range(2 * h):
                da[j] = go * l1w[o, j] * der[j]
            for j in range(h):
                gb[j] += da[j] + da[h + j]
        for q in range(c1 - c0):
            ds = dacc[q, :h]
            dn = dacc[q, h:]
            for k in range(nf[q]):
                at = np.int64(fs[q, k]) * h
                row = g[at:at + h]
                for j in range(h):
                    row[j] += ds[j]
            for k in range(nf[q]):
                at = np.int64(fn[q, k]) * h
                row = g[at:at + h]
                for j in range(h):
                    row[j] += dn[j]


@njit(cache=True, parallel=True)
def slice_gradients(idx, occ, pcs, score, result, stm, wdl, kofs, kflip, div, fact, l0w, l0b,
                    l1w, l1b, screlu, sliced, loss):
    """Forward and backward of the positions ``idx`` (one batch) cut into ``sliced.shape[0]``
    slices of consecutive positions (slice s: ``s * b // S`` to ``(s + 1) * b // S``), the
    slices shared by the threads: ``loss[i]`` (squared error of position i) and ``sliced[s]``
    (the gradient of the mean loss summed over slice s, flat). The slices, not the threads,
    decide every sum: a thread computes whole slices."""
    b = idx.size
    s_count = sliced.shape[0]
    inv_b = np.float32(1.0) / np.float32(b)
    for s in prange(s_count):
        _slice(s * b // s_count, (s + 1) * b // s_count, inv_b, idx, occ, pcs, score, result,
               stm, wdl, kofs, kflip, div, fact, l0w, l0b, l1w, l1b, screlu, sliced[s], loss)


@njit(cache=True, parallel=True)
def reduce_slices(sliced, g, threads):
    """``g[e]`` = the sum of ``sliced[s, e]`` over the slices in order (s = 0, 1, ...): the
    batch's gradient, the same bytes whatever the threads (they own blocks of entries)."""
    size = g.size
    s_count = sliced.shape[0]
    blocks = max(1, threads)
    width = (size + blocks - 1) // blocks
    for blk in prange(blocks):
        e0 = min(size, blk * width)
        e1 = min(size, e0 + width)
        out = g[e0:e1]
        out[:] = sliced[0, e0:e1]
        for s in range(1, s_count):
            src = sliced[s, e0:e1]
            for e in range(e1 - e0):
                out[e] += src[e]


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
def _chunk_out(i0, i1, idx, occ, pcs, score, result, stm, wdl, kofs, kflip, div, fact, l0w, l0b,
               l1w, l1b, screlu, out, loss):
    h = l0b.size
    nb = l1w.shape[0]
    acc = np.empty(2 * h, dtype=np.float32)
    act = np.empty(2 * h, dtype=np.float32)
    der = np.empty(2 * h, dtype=np.float32)
    width = 2 * MAX_FEATURES if fact else MAX_FEATURES
    fs = np.empty(width, dtype=np.int16)
    fn = np.empty(width, dtype=np.int16)
    for i in range(i0, i1):
        p = idx[i]
        n = expand(occ[p], pcs[p], stm[p], fs, fn)
        if kofs.size:
            to_king_bucket(kofs, kflip, fs, n)
            to_king_bucket(kofs, kflip, fn, n)
        ob = out_bucket(n, div, nb)
        add_factor(fact, fs, n)
        n = add_factor(fact, fn, n)
        _accumulate(l0w, l0b, fs, n, acc[:h])
        _accumulate(l0w, l0b, fn, n, acc[h:])
        o = _activate(acc, act, der, l1w, ob, l1b[ob], screlu)
        out[i] = o
        pred = np.float32(1.0) / (np.float32(1.0) + math.exp(-o))
        d = pred - target_of(score[p], result[p], stm[p], wdl)
        loss[i] = d * d


@njit(cache=True, parallel=True)
def outputs(idx, occ, pcs, score, result, stm, wdl, kofs, kflip, div, fact, l0w, l0b, l1w, l1b,
            screlu, out, loss):
    """Forward only: the float output (side to move's view, units of SCALE centipawns) and the
    squared error of the positions ``idx``."""
    b = idx.size
    for c in prange((b + CHUNK - 1) // CHUNK):
        _chunk_out(c * CHUNK, min(b, (c + 1) * CHUNK), idx, occ, pcs, score, result, stm, wdl,
                   kofs, kflip, div, fact, l0w, l0b, l1w, l1b, screlu, out, loss)


@njit(cache=True)
def ordered_sum(x):
    """Sum in index order (float64): a loss total that does not depend on the threads."""
    s = 0.0
    for i in range(x.size):
        s += x[i]
    return s
