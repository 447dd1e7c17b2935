"""Search speed of this checkout's engine core against other git revisions, in one process.

    python benchmarks/bench_versions.py [--rev 4a7014e] [--rev HEAD~1] [--engine extended]
                                        [--depth 6] [--repeats 5]

Each revision's ``evotune`` package is exported with ``git archive`` into a temporary folder
under another name (``evotune_<rev>``: the core imports itself relatively) and imported beside
the working tree's, each compiling into its own core folder (the copies' are deleted with the
temporary folder, so they compile on every run, about a minute each). The bench's fixed
searches (evotune/engine/bench.py) then alternate between the versions, position by position,
and each position keeps its best time of ``--repeats``: on a shared machine that removes most
of the noise that separate processes see (+-10% run to run here), so the ratio is the figure to
read. The node counts of
every version are printed: the same count means the same search.
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fail(message: str) -> None:
    """Bad input: one line on stderr, exit 2."""
    print(f"bench_versions: {message}", file=sys.stderr)
    sys.exit(2)


def commit(rev: str) -> str:
    """The short hash of the commit ``rev`` names (exit 2 when it names none)."""
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "--verify",
                            f"{rev}^{{commit}}"], capture_output=True, text=True)
    if found.returncode != 0:
        fail(f"'{rev}' is not a commit of {ROOT}")
    return found.stdout.strip()


def export(sha: str, into: Path) -> str:
    """Export commit ``sha``'s evotune package into ``into/evotune_<sha>``; returns the module
    name."""
    name = f"evotune_{sha}"
    data = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "evotune"], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
            tar.extractall(into / sha, filter="data")
        else:
            tar.extractall(into / sha)
    os.rename(into / sha / "evotune", into / name)
    return name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", action="append", default=[],
                    help="git revision to compare against (repeatable; for shannon the default "
                         "is 4a7014e, the round-1 core; other engines need a revision that has "
                         "feature sets, 57bc112 or later)")
    ap.add_argument("--engine", default="shannon", help="builtin engine spec (reference weights)")
    ap.add_argument("--depth", type=int, default=6, help="search depth (the bench uses 7)")
    ap.add_argument("--repeats", type=int, default=5, help="best of this many per position")
    args = ap.parse_args()
    if not args.rev and args.engine != "shannon":
        fail(f"--engine {args.engine} needs --rev (a revision with feature sets, e.g. 57bc112)")
    if args.depth < 1 or args.repeats < 1:
        fail("--depth and --repeats must be at least 1")
    shas = list(dict.fromkeys(commit(rev) for rev in args.rev or ["4a7014e"]))

    # every version compiles into its own core's __pycache__ (the copies' in the temporary
    # folder): a shared NUMBA_CACHE_DIR would hold same-named modules of several versions
    os.environ.pop("NUMBA_CACHE_DIR", None)
    sys.path.insert(0, str(ROOT))
    from evotune.engine import api
    from evotune.engine.bench import BENCH_WEIGHTS
    from evotune.errors import EvotuneError
    from evotune.spec.file import load_engine_spec

    try:
        spec = load_engine_spec(args.engine)
    except EvotuneError as exc:
        fail(f"{exc}")
    if spec.kind != "builtin":
        fail(f"'{args.engine}' is not a builtin engine spec")
    weights = BENCH_WEIGHTS if args.engine == "shannon" else spec.space().reference_array
    kw = {} if spec.features == "shannon" else {"features": spec.features}
    with tempfile.TemporaryDirectory(prefix="evotune-versions-") as tmp:
        sys.path.insert(0, tmp)
        versions = {"worktree": api}
        for sha in shas:
            versions[sha] = importlib.import_module(export(sha, Path(tmp)) + ".engine.api")
        compare(versions, weights, kw, args)


def compare(versions: dict, weights, kw: dict, args) -> None:
    """Alternate the fixed searches between ``versions`` (name -> engine.api module); print."""
    from evotune.engine.bench import BENCH_FENS

    print(f"{args.engine}, depth {args.depth}, {len(BENCH_FENS)} positions, best of "
          f"{args.repeats}; compiling {len(versions)} versions ...", flush=True)
    for mod in versions.values():
        mod.search(BENCH_FENS[0], weights, depth=2, **kw)
    best = {k: [float("inf")] * len(BENCH_FENS) for k in versions}
    nodes = {k: 0 for k in versions}
    for r in range(args.repeats):
        for i, fen in enumerate(BENCH_FENS):
            for k, mod in versions.items():
                start = time.perf_counter()
                res = mod.search(fen, weights, depth=args.depth, **kw)
                best[k][i] = min(best[k][i], time.perf_counter() - start)
                if r == 0:
                    nodes[k] += res.nodes
        print(f"  repeat {r + 1}/{args.repeats}", flush=True)
    base = sum(best["worktree"])
    for k in versions:
        t = sum(best[k])
        print(f"{k:>10}: {nodes[k] / t / 1e6:6.3f} M nodes/s  nodes {nodes[k]:>10,}  "
              f"worktree is x{t / base:.3f} its speed")


if __name__ == "__main__":
    main()
