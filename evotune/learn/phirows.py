"""Feature rows of labelled positions: phi from White's point of view, as a sparse matrix.

The engine spec names the feature set (its weight names); phi comes from the core, side to
move's view, and is turned to White's view (negated when Black is to move) so that ``x . w`` is
the White-view evaluation the Texel model needs. Positions that are not quiet (in check, or
static evaluation != quiescence score with the given weights) are rejected and counted; with
``qsearch`` each position is replaced by the leaf of its quiescence principal variation instead
(positions whose quiescence ends in a mate score are rejected).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..engine.evaluation import Evaluation, evaluation_of
from ..engine.quiet import qsearch_batch
from ..errors import ConfigError
from ..rules import MATE_BOUND
from .texel import FeatureMatrix, require_scipy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Extracted:
    """Feature rows of the kept positions."""

    X: FeatureMatrix
    """scipy.sparse CSR (n_kept, p) float64, White's view."""
    kept: np.ndarray
    """int64 (n_kept,): index of each kept position in the input."""
    not_quiet: int
    """Positions rejected as not quiet (without qsearch)."""
    mate: int
    """Positions rejected because quiescence ends in a mate score (with qsearch)."""


def fit_evaluation(spec) -> Evaluation:
    """The linear evaluation a fit of an engine spec fits (``shannon``, ``pst``, ``extended``,
    ...), resolved once; ConfigError for an external engine or a spec with search weights."""
    fs = getattr(spec, "features", "shannon")
    if spec.kind != "builtin":
        raise ConfigError(f"engine spec {spec.name} is a '{spec.kind}' engine; texel fits the "
                          "weights of a built-in spec (shannon, pst, extended or your own "
                          ".toml with features = ...)")
    if spec.search.weight_names():
        raise ConfigError(f"engine spec {spec.name} has search weights "
                          f"({', '.join(spec.search.weight_names())}); texel fits evaluation "
                          "weights: give a spec without a uct or probability [search]")
    return evaluation_of(fs)


def extract(fens, weights, *, features: str | Evaluation = "shannon", use_qsearch: bool = False,
            chunk: int = 65536, workers: int = 1,
            progress: Callable[[int, int], None] | None = None) -> Extracted:
    """Feature rows of ``fens`` under the evaluation with ``weights`` (quiet filter or qsearch),
    in chunks (the core's batch quiescence; CSR rows with int32 indices). ``workers`` threads
    run chunks at once (the core releases the GIL; each thread has its own search arrays); the
    result does not depend on their number."""
    sparse = require_scipy().sparse
    evaluation = evaluation_of(features)  # resolved once, not per chunk
    fens = list(fens)
    n = len(fens)
    workers = max(1, int(workers))
    if workers > 1:  # at least one chunk per thread
        chunk = max(1024, min(chunk, -(-n // workers)))
    starts = list(range(0, n, chunk))

    def one(start: int):
        part = fens[start:start + chunk]
        q = qsearch_batch(part, weights, evaluation)
        if use_qsearch:
            keep = np.abs(q.score) <= MATE_BOUND
        else:
            keep = q.quiet
        idx = np.flatnonzero(keep)
        rows = q.leaf[idx]
        sign = np.array([1.0 if part[i].split()[1] == "w" else -1.0 for i in idx])
        rows.data *= np.repeat(sign, np.diff(rows.indptr))
        return rows, start + idx, int((~keep).sum())

    parts, kept = [], []
    not_quiet = mate = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for start, (rows, idx, rejected) in zip(starts, pool.map(one, starts)):
            parts.append(rows)
            kept.append(idx)
            if use_qsearch:
                mate += rejected
            else:
                not_quiet += rejected
            if progress is not None:
                progress(min(start + chunk, n), n)
    width = len(weights)
    X = sparse.vstack(parts, format="csr") if parts else sparse.csr_matrix((0, width))
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int64)
    return Extracted(X=X, kept=np.concatenate(kept) if kept else np.zeros(0, np.int64),
                     not_quiet=not_quiet, mate=mate)
