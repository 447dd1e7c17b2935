"""phi of many positions in one core call, as a CSR matrix: what learning from many labelled
positions reads (``evotune.engine.phi_batch``; docs/internals.md, "Python API")."""
from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

from ..errors import ConfigError, PositionError
from ..spec.features import denominator, feature_names, feature_set_code
from .core import layout as T
from .core.batch import phi_batch_core


@dataclass(frozen=True)
class PhiBatch:
    """phi of many positions as a CSR matrix (rows: positions, columns: weights)."""

    features: str
    """The feature set."""
    indptr: np.ndarray
    """int64 (n + 1,): row i holds entries indptr[i]:indptr[i + 1]."""
    indices: np.ndarray
    """int64 (nnz,): the weight index of each entry."""
    data: np.ndarray
    """float64 (nnz,): phi values (phi_int / denominator)."""
    shape: tuple[int, int]
    """(positions, weights)."""

    def tocsr(self):
        """A scipy.sparse.csr_matrix (needs scipy)."""
        try:
            from scipy.sparse import csr_matrix
        except ImportError:  # pragma: no cover - depends on the installation
            raise ConfigError("PhiBatch.tocsr needs scipy: pip install scipy") from None
        return csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    def toarray(self) -> np.ndarray:
        """The dense float64 matrix."""
        out = np.zeros(self.shape, dtype=np.float64)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.data
        return out

    def dot(self, weights) -> np.ndarray:
        """phi @ weights for every position (float64)."""
        w = np.asarray(weights, dtype=np.float64)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        return np.bincount(rows, weights=self.data * w[self.indices], minlength=self.shape[0])


_MAX_NNZ = 128  # non-zeros of one position's phi_int: at most 120 (extended)


def phi_batch(fens, features: str = "shannon") -> PhiBatch:
    """phi of many FENs in one core call (the FENs are parsed by the core: only the board and the
    side to move are read, and a malformed board raises PositionError naming it)."""
    code = feature_set_code(features)
    width = len(feature_names(features))
    fens = list(fens)
    encoded = [f.strip().encode("ascii", "replace") if isinstance(f, str) else b"" for f in fens]
    offsets = np.zeros(len(fens) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8) if fens else np.zeros(0, np.uint8)
    cap = _MAX_NNZ * len(fens)
    indptr = np.zeros(len(fens) + 1, dtype=np.int64)
    indices = np.zeros(cap, dtype=np.int64)
    data = np.zeros(cap, dtype=np.int64)
    U = np.zeros(T.U_ALL + 1, dtype=np.uint64)
    S = np.zeros(T.S_MOVES, dtype=np.int64)
    bad = np.zeros(1, dtype=np.int64)
    nnz = phi_batch_core(buf, offsets, U, S, np.int64(code), np.int64(width),
                         np.zeros(width, dtype=np.int64), indptr, indices, data, bad)
    if nnz < 0:
        i = int(bad[0])
        raise PositionError(f"FEN #{i + 1} {fens[i]!r} is malformed or lacks a king per side; "
                            f"give FENs such as '{chess.STARTING_FEN}'")
    return PhiBatch(features=features, indptr=indptr, indices=indices[:nnz].copy(),
                    data=data[:nnz] / float(denominator(features)), shape=(len(fens), width))
