"""Net trainer speed: positions/s of one training step, numba against numpy (prints figures).

    python benchmarks/nn_train_speed.py [--hidden 32 128 256] [--threads 1 2] [--batch 16384]
                                        [--memory 10000000] [--no-numpy] [--rounds 1] [--pair]
                                        [--king-buckets 4] [--output-buckets 8]

A training step is forward, backward and AdamW on one mini-batch of ``--batch`` positions
(feature expansion from the packed boards included). The positions are 20,000 positions of
seeded random games (python-chess), scored by material; the batch is a seeded draw of them.
For each hidden size: the numba step (:func:`evotune.learn.nn.trainer.step`) with each thread
count (and the ratio of each to the first thread count's figure, the gain from threads),
and in the same process the same step in plain numpy
(:func:`evotune.learn.nn.numpystep.step`: gather of the active rows, ``np.add.at`` scatter), and
as a second baseline a dense numpy step (one-hot input matrix, BLAS matrix products for the input
layer; same maths; ``--no-numpy`` leaves both out). ``--rounds R`` measures the thread counts
R times in turn and keeps each one's best (a shared machine's load comes and goes).
``--pair``: also two single-thread steps at once in two processes (their positions/s added, and
the ratio to one thread): what two independent trainers get from the machine, the ceiling of a
2-thread step whatever its code (the cores' shared cache, memory and clock, or vCPUs that share a
physical core, show here). ``--memory N``: one epoch on N positions (the 20,000 repeated) at
H=128 and the process's peak resident memory; with ``--stream W`` the N positions are written
to a temporary bullet data file and streamed, W at once (:mod:`evotune.learn.nn.stream`).
``--king-buckets K`` / ``--output-buckets N``: the numba step of a bucketed net (the numpy
baselines are of plain nets: give ``--no-numpy``). Prints the machine's load before and after: on
a shared machine the figures of 2 threads depend on it.
"""
from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chess  # noqa: E402
import numba  # noqa: E402

from evotune.learn.nn import numpystep as ref  # noqa: E402
from evotune.learn.nn.bulletdata import RECORD, bullet_bytes  # noqa: E402
from evotune.learn.nn.data import NO_SCORE, PackedData, pack_fen  # noqa: E402
from evotune.learn.nn.stream import BulletStream, train_stream  # noqa: E402
from evotune.learn.nn.trainer import Buffers, FloatNet, TrainSettings, TrainState, step, train_packed  # noqa: E402

VALUES = {1: 100, 2: 300, 3: 320, 4: 500, 5: 900, 6: 0}


def positions(n: int, seed: int = 1) -> PackedData:
    rng = random.Random(seed)
    occ, pcs, score, result, stm = [], [], [], [], []
    while len(occ) < n:
        b = chess.Board()
        for _ in range(rng.randrange(2, 100)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rng.choice(moves))
            if rng.random() < 0.3 and len(occ) < n:
                o, nib, s = pack_fen(b.fen())
                m = sum(VALUES[p.piece_type] * (1 if p.color else -1)
                        for p in b.piece_map().values())
                occ.append(o)
                pcs.append(np.frombuffer(nib, np.uint8))
                score.append(m)
                result.append(2 if m > 150 else 0 if m < -150 else 1)
                stm.append(s)
    return PackedData(np.array(occ, np.uint64), np.array(pcs, np.uint8),
                      np.array(score, np.int16), np.array(result, np.uint8),
                      np.array(stm, np.uint8))


def dense_step(params, m, v, t, data, idx, *, wdl, lr, beta1=0.9, beta2=0.999, eps=1e-8,
               decay=0.01, clip=1.98):
    """The step with a one-hot (B, 769) input matrix and BLAS products (SCReLU)."""
    h = params["l0b"].size
    feats = ref.expand_batch(data, idx)
    rows = np.arange(idx.size)[:, None]
    xs = np.zeros((idx.size, ref.PAD + 1), np.float32)
    xn = np.zeros((idx.size, ref.PAD + 1), np.float32)
    np.add.at(xs, (rows, feats[:, 0]), 1.0)
    np.add.at(xn, (rows, feats[:, 1]), 1.0)
    xs, xn = xs[:, :ref.PAD], xn[:, :ref.PAD]
    acc_s = xs @ params["l0w"] + params["l0b"]
    acc_n = xn @ params["l0w"] + params["l0b"]
    cs, cn = np.clip(acc_s, 0, 1), np.clip(acc_n, 0, 1)
    out = cs * cs @ params["l1w"][:h] + cn * cn @ params["l1w"][h:] + params["l1b"][0]
    pred = 1 / (1 + np.exp(-out))
    d = pred - ref.targets(data, idx, wdl)
    gout = (2 * d * pred * (1 - pred) / idx.size).astype(np.float32)
    ds = gout[:, None] * params["l1w"][:h] * 2 * cs * ((acc_s > 0) & (acc_s < 1))
    dn = gout[:, None] * params["l1w"][h:] * 2 * cn * ((acc_n > 0) & (acc_n < 1))
    g = {"l0w": xs.T @ ds + xn.T @ dn, "l0b": ds.sum(0) + dn.sum(0),
         "l1w": np.concatenate([gout @ (cs * cs), gout @ (cn * cn)]),
         "l1b": np.array([gout.sum()], np.float32)}
    for name, p in params.items():
        m[name] = beta1 * m[name] + (1 - beta1) * g[name]
        v[name] = beta2 * v[name] + (1 - beta2) * g[name] ** 2
        p *= 1 - lr * decay
        p -= lr * (m[name] / (1 - beta1 ** t)) / (np.sqrt(v[name] / (1 - beta2 ** t)) + eps)
        np.clip(p, -clip, clip, out=p)


def rate(fn, batch: int, seconds: float) -> tuple[float, float]:
    """(positions/s, CPU seconds per wall second: how many cores the process got)."""
    fn()  # warm-up (compilation or cache load)
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while n < 3 or time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    wall = time.perf_counter() - t0
    return n * batch / wall, (time.process_time() - c0) / wall


def _alone(settings: TrainSettings, data: PackedData, idx: np.ndarray, seconds: float, barrier,
           out) -> None:
    """One process of ``--pair``: the 1-thread step's rate, started with its twin."""
    numba.set_num_threads(1)
    state = TrainState.start(settings.new_net())
    buf = Buffers.of(idx.size, settings)
    step(state, data, idx, settings, 1e-3, buf)  # warm-up before the start line
    barrier.wait()
    out.put(rate(lambda: step(state, data, idx, settings, 1e-3, buf), idx.size, seconds))


def pair_rate(settings: TrainSettings, data: PackedData, idx: np.ndarray, seconds: float
              ) -> tuple[float, float]:
    """(positions/s of two 1-thread steps in two processes at once, added; their cores)."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with OpenMP threads
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_alone, args=(settings, data, idx, seconds, barrier, out))
             for _ in range(2)]
    for proc in procs:
        proc.start()
    got = [out.get() for _ in procs]
    for proc in procs:
        proc.join()
    return sum(r for r, _ in got), sum(c for _, c in got)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hidden", type=int, nargs="+", default=[32, 128, 256])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    ap.add_argument("--memory", type=int, default=0, help="positions of the memory epoch")
    ap.add_argument("--stream", type=int, default=0, help="with --memory: stream the positions "
                    "from a bullet file, this many at once")
    ap.add_argument("--no-numpy", action="store_true", help="leave out the numpy baselines")
    ap.add_argument("--pair", action="store_true", help="also two 1-thread steps in two "
                    "processes at once")
    ap.add_argument("--rounds", type=int, default=1, help="measure the thread counts R times, "
                    "keep each one's best")
    ap.add_argument("--king-buckets", default="1", help="the net's king buckets (nn init's)")
    ap.add_argument("--output-buckets", type=int, default=1, help="the net's output buckets")
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, "
          f"numba {numba.__version__}, numpy {np.__version__}; load before: "
          f"{os.getloadavg()[0]:.2f}")
    data = positions(20_000)
    idx = np.random.default_rng(0).choice(len(data), args.batch, replace=False).astype(np.int64)
    shape = {"king_buckets": args.king_buckets, "output_buckets": args.output_buckets}
    for h in args.hidden:
        settings = TrainSettings(hidden=h, wdl=0.25, **shape)
        line = [f"H={h:4d}:" + (f" K {settings.king_buckets} N {settings.output_buckets}:"
                                if settings.new_net().bucketed else "")]
        figures: dict[int, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for threads in args.threads:
                numba.set_num_threads(threads)
                state = TrainState.start(settings.new_net())
                buf = Buffers.of(args.batch, settings)
                got = rate(functools.partial(step, state, data, idx, settings, 1e-3, buf),
                           args.batch, args.seconds)
                figures[threads] = max(figures.get(threads, got), got)
        base = figures[args.threads[0]][0]
        for threads, (r, cores) in figures.items():
            line.append(f"numba {threads} thread{'s' if threads > 1 else ''} {r:>9,.0f} pos/s "
                        f"({cores:.2f} cores, {r / base:.2f}x)")
        if args.pair:
            r, cores = pair_rate(settings, data, idx, args.seconds)
            line.append(f"two 1-thread processes {r:>9,.0f} pos/s ({cores:.2f} cores, "
                        f"{r / base:.2f}x)")
        if args.no_numpy:
            print("  ".join(line), flush=True)
            continue
        for name, fn in (("numpy", ref.step), ("numpy dense", dense_step)):
            params = {k: a.copy() for k, a in FloatNet.random(h, 1).arrays().items()}
            m = {k: np.zeros_like(a) for k, a in params.items()}
            v = {k: np.zeros_like(a) for k, a in params.items()}
            t = [0]

            def one(fn=fn, params=params, m=m, v=v, t=t):
                t[0] += 1
                fn(params, m, v, t[0], data, idx, wdl=0.25, lr=1e-3, **(
                    {"screlu": True} if fn is ref.step else {}))

            r, _ = rate(one, args.batch, args.seconds)
            best = max(r for r, _ in figures.values())
            line.append(f"{name} {r:>9,.0f} pos/s (numba best {best / r:5.1f}x)")
        print("  ".join(line), flush=True)
    if args.memory and args.stream:
        numba.set_num_threads(max(args.threads))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bench.bin"
            rec = bullet_bytes(data).tobytes()
            with open(path, "wb") as fh:
                for at in range(0, args.memory, len(data)):
                    fh.write(rec[:min(len(data), args.memory - at) * RECORD])
            t0 = time.perf_counter()
            settings = TrainSettings(hidden=128, epochs=1, batch=args.batch, stream=args.stream)
            got = train_stream(BulletStream([path], args.stream), settings,
                               workers=max(args.threads))
            dt = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"stream: {args.memory:,} positions in a {args.memory * RECORD / 2**20:,.0f} MiB "
              f"bullet file, {args.stream:,} at once; one epoch at H=128 in {dt:.1f} s (every "
              f"record read and checked, {got.records[0].positions:,} trained, the held-out "
              f"evaluated: {got.records[0].positions / dt:,.0f} trained pos/s); peak resident "
              f"memory {peak:,.2f} GiB")
    elif args.memory:
        numba.set_num_threads(max(args.threads))
        reps = -(-args.memory // len(data))
        big = PackedData(*(np.ascontiguousarray(np.concatenate([getattr(data, c)] * reps)
                                                [:args.memory])
                           for c in ("occ", "pcs", "score", "result", "stm")))
        assert np.count_nonzero(big.score == NO_SCORE) == 0
        t0 = time.perf_counter()
        train_packed(big, TrainSettings(hidden=128, epochs=1, batch=args.batch),
                     workers=max(args.threads))
        dt = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"memory: {args.memory:,} positions = {big.nbytes / 2**20:,.0f} MiB packed "
              f"({big.nbytes / len(big):.0f} bytes each); one epoch at H=128 in {dt:.1f} s "
              f"({args.memory * 0.9 / dt:,.0f} pos/s with validation); peak resident memory "
              f"{peak:,.2f} GiB")
    print(f"numba threading layer: {numba.threading_layer()}; load after: "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
