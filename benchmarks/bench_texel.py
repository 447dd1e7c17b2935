"""Texel speed figures: feature extraction, fit time and memory (prints figures, asserts nothing).

    python benchmarks/bench_texel.py [--data FILE] [--features extended] [--positions 1000000]

1. Extraction: positions/s of the engine's batch phi extractor for the feature set (numba), of
   evotune texel's own extraction path (quiet test + phi per position) and, as the baseline in
   the same process, of the python-chess reference phi; on real positions (a datagen file, or
   the 2moves_v1 openings when none is given), repeated to the requested count.
2. Fit: K, then L-BFGS-B epochs until the training error changes by < tol, on ``--positions``
   SYNTHETIC rows (features pre-extracted): each row has the mean non-zero count measured on the
   real positions, values k/24 as phase-folded tapered features have, results drawn from the
   sigmoid of a known weight vector. Time, epochs, iterations and the error are printed.
3. Memory: bytes of the sparse matrix, and the process's peak resident memory.

The data study (error and Elo against the number of positions and the data source) is
``benchmarks/texel_study.py``.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evotune.learn import texel as tx  # noqa: E402
from evotune.paths import DEFAULT_OPENINGS  # noqa: E402


def real_fens(path: str | None, n: int) -> list[str]:
    if path:
        from evotune.learn.labels import read_positions

        return read_positions([path], max_positions=n).fens
    out = []
    for line in DEFAULT_OPENINGS.read_text().splitlines()[:n]:
        out.append(" ".join(line.split()[:4]) + " 0 1")
    return out


def batch_extractor(features: str):
    """The core's batch phi (``phi_batch(fens, features)`` -> CSR), or None when absent."""
    from evotune.engine import api

    fn = getattr(api, "phi_batch", None)
    if fn is None:
        return None
    return lambda fens: fn(fens, features).tocsr()


def bench_extraction(fens: list[str], features: str, count: int) -> float:
    """Prints positions/s; returns the mean non-zeros per row (for the synthetic fit)."""
    import chess

    from evotune.engine import reference

    reps = max(1, count // len(fens))
    nnz = None
    batch = batch_extractor(features)
    if batch is not None:
        batch(fens[:100])  # compile / load the cache
        t0 = time.perf_counter()
        for _ in range(reps):
            X = batch(fens)
        dt = time.perf_counter() - t0
        nnz = X.nnz / X.shape[0]
        core_rate = reps * len(fens) / dt
        print(f"extraction, core batch phi ({features}): {reps * len(fens)} positions in "
              f"{dt:.2f} s = {core_rate:,.0f} positions/s ({nnz:.1f} non-zeros per row)")
    else:
        core_rate = None
        print(f"extraction, core batch phi ({features}): not available in this evotune")
    from evotune.learn.phirows import extract
    from evotune.space import SHANNON_REFERENCE

    try:
        from evotune.spec.file import load_engine_spec

        w = load_engine_spec(features).space().reference_array
    except Exception:  # noqa: BLE001  (no such spec in this evotune)
        w = np.asarray(SHANNON_REFERENCE, dtype=float)
        features = "shannon"
    sub = fens[:min(len(fens), 20000)]
    extract(sub[:100], w, features=features)  # compile / load the cache
    for threads in (1, os.cpu_count() or 1):
        t0 = time.perf_counter()
        extract(sub, w, features=features, workers=threads)
        dt = time.perf_counter() - t0
        print(f"extraction, evotune texel path (batch quiescence test + leaf phi, {features}), "
              f"{threads} thread(s): {len(sub) / dt:,.0f} positions/s")
        if threads == 1 and (os.cpu_count() or 1) == 1:
            break
    sub = fens[:min(len(fens), 2000)]
    import inspect

    ref_phi = (reference.features if len(inspect.signature(reference.features).parameters) > 1
               else None)
    t0 = time.perf_counter()
    for f in sub:
        b = chess.Board(f)
        if ref_phi is not None and features != "shannon":
            ref_phi(b, features)
        else:
            reference.features(b)
    dt = time.perf_counter() - t0
    ref_rate = len(sub) / dt
    print(f"extraction, python-chess reference phi ({features if ref_phi else 'shannon'}): "
          f"{ref_rate:,.0f} positions/s")
    if core_rate:
        print(f"core batch / reference: {core_rate / ref_rate:.0f}x")
    return nnz


def synthetic_matrix(n: int, p: int, nnz_row: float, seed: int = 1):
    from scipy import sparse

    rng = np.random.default_rng(seed)
    k = max(1, int(round(nnz_row)))
    cols = rng.integers(0, p, size=(n, k)).astype(np.int32)
    cols.sort(axis=1)
    data = rng.integers(-24, 25, size=n * k).astype(np.float64) / 24.0
    X = sparse.csr_matrix((data, cols.ravel(), np.arange(0, n * k + 1, k, dtype=np.int64)),
                          shape=(n, p))
    X.sum_duplicates()
    return X


def bench_fit(n: int, p: int, nnz_row: float, iters: int, tol: float) -> None:
    rng = np.random.default_rng(2)
    t0 = time.perf_counter()
    X = synthetic_matrix(n, p, nnz_row)
    w_true = rng.normal(0, 60, size=p)
    w_true[0] = 100.0
    prob_p = tx.sigmoid(1.0 * (X @ w_true) / 400)
    y = (rng.random(n) < prob_p).astype(float)
    print(f"synthetic matrix {n:,} x {p} ({X.nnz / n:.1f} non-zeros per row) built in "
          f"{time.perf_counter() - t0:.1f} s; "
          f"{(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20:,.0f} MiB")
    free = np.arange(1, p)
    prob = tx.Problem(X, y, free=free, lower=np.full(p, -1000.0), upper=np.full(p, 1000.0))
    w = np.zeros(p)
    w[0] = 100.0
    t0 = time.perf_counter()
    K = tx.fit_k(prob, w_true)
    t_k = time.perf_counter() - t0
    last = prob.error(w, K)
    epochs = 0
    t1 = time.perf_counter()
    while epochs < 200:
        w = tx.lbfgs_epoch(prob, w, K, iters=iters)
        epochs += 1
        e = prob.error(w, K)
        if abs(last - e) < tol:
            break
        last = e
    t_fit = time.perf_counter() - t1
    print(f"fit: K {K:.3f} in {t_k:.1f} s; L-BFGS-B {epochs} epochs x {iters} iterations in "
          f"{t_fit:.1f} s (total {t_k + t_fit:.1f} s); error {e:.6f} (true weights "
          f"{prob.error(w_true, K):.6f}); max |w - w_true| {np.max(np.abs(w - w_true)):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="a file of labelled positions (default: 2moves_v1 openings)")
    ap.add_argument("--features", default="extended")
    ap.add_argument("--positions", type=int, default=1_000_000)
    ap.add_argument("--extract", type=int, default=100_000, help="positions to extract")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--nnz", type=float, default=80.0,
                    help="non-zeros per synthetic row when the core has no batch phi to measure")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    try:
        fens = real_fens(a.data, 20000)
    except ValueError as exc:  # DataError: a missing or unreadable data file
        print(f"bench_texel: {exc}", file=sys.stderr)
        sys.exit(2)
    nnz = bench_extraction(fens, a.features, a.extract) or a.nnz
    try:
        from evotune.spec.features import feature_names

        p = len(feature_names(a.features))
    except Exception:  # noqa: BLE001  (feature sets not in this evotune: the expected size)
        p = 824 if a.features == "extended" else 6
    bench_fit(a.positions, p, nnz, a.iters, a.tol)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak resident memory of this process: {rss:.2f} GiB")


if __name__ == "__main__":
    main()
