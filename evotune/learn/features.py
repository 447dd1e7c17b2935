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
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..rules import MATE_BOUND
from ..errors import ConfigError
from .quiet import qsearch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Extracted:
    """Feature rows of the kept positions."""

    X: object
    """scipy.sparse CSR (n_kept, p) float64, White's view."""
    kept: np.ndarray
    """int64 (n_kept,): index of each kept position in the input."""
    not_quiet: int
    """Positions rejected as not quiet (without qsearch)."""
    mate: int
    """Positions rejected because quiescence ends in a mate score (with qsearch)."""


def feature_set(names) -> str:
    """The feature set of an engine spec's weight names."""
    from ..featuresets import FEATURE_SETS, feature_names

    for fs in FEATURE_SETS:
        if tuple(names) == feature_names(fs):
            return fs
    raise ConfigError(f"engine weights {list(names)[:8]}... are not a feature set texel knows; "
                      "use the 'shannon' engine spec")


def extract(fens, weights, *, use_qsearch: bool = False,
            progress: Callable[[int, int], None] | None = None) -> Extracted:
    """Feature rows of ``fens`` under the evaluation with ``weights`` (quiet filter or qsearch)."""
    from .texel import require_scipy

    sparse = require_scipy().sparse
    n = len(fens)
    rows = np.zeros((n, len(weights)), dtype=np.float64)
    keep = np.zeros(n, dtype=bool)
    not_quiet = mate = 0
    for i, fen in enumerate(fens):
        static, score, check, leaf = qsearch(fen, weights)
        if use_qsearch:
            if abs(score) > MATE_BOUND:
                mate += 1
                continue
        elif check or static != score:
            not_quiet += 1
            continue
        sign = 1.0 if fen.split()[1] == "w" else -1.0
        rows[i] = sign * leaf
        keep[i] = True
        if progress is not None and (i + 1) % 4096 == 0:
            progress(i + 1, n)
    if progress is not None:
        progress(n, n)
    kept = np.flatnonzero(keep)
    return Extracted(X=sparse.csr_matrix(rows[kept]), kept=kept, not_quiet=not_quiet, mate=mate)
