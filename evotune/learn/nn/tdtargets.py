"""TD(lambda) targets of one game's positions (KnightCap's TDLeaf(lambda), Giraffe's TD training).

A game of T positions (plies 0 .. T-1, each the position before a move) has root search scores
s_0 .. s_{T-1} (White's view, centipawns) and a result R (White's view: 1, 0.5 or 0). Scores
become expected results with the trainer's sigmoid, v_t = 1 / (1 + exp(-s_t / SCALE)); the game
ends with v_T = R. The TD(lambda) target of position t is the lambda-return of the FOLLOWING
values (not its own score):

    G_t = (1 - lambda) * sum_{k=1}^{T-1-t} lambda^(k-1) * v_{t+k}  +  lambda^(T-1-t) * R

computed backwards as G_{T-1} = R and G_t = (1 - lambda) * v_{t+1} + lambda * G_{t+1}. The last
position's target is the result; lambda = 0 gives TD(0), the next position's score
(G_t = v_{t+1}, G_{T-1} = R); lambda = 1 gives the result everywhere (Monte Carlo). KnightCap and
Giraffe use lambda = 0.7. Training the net on these targets (wdl 0, the target given as a score)
from the net's own self-play games is TDLeaf-style learning: the root score of a search is the
value of its principal variation's leaf.
"""
from __future__ import annotations

import numpy as np

from ...errors import FieldError
from .data import SCORE_LIMIT
from .kernels import SCALE

LAMBDA = 0.7


def td_targets(scores, result: float, lam: float = LAMBDA, scale: float = SCALE) -> np.ndarray:
    """G_0 .. G_{T-1} (expected results for White, in [0, 1]) of a game with root scores
    ``scores`` (White's view, centipawns) and result ``result`` (1, 0.5 or 0)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or not np.all(np.isfinite(s)):
        raise FieldError("scores", "must be one finite score per position (centipawns)")
    if result not in (0.0, 0.5, 1.0):
        raise FieldError("result", f"must be 1, 0.5 or 0 (White's view), got {result!r}")
    if not 0.0 <= lam <= 1.0:
        raise FieldError("lam", f"must be in [0, 1], got {lam!r}")
    if not scale > 0:
        raise FieldError("scale", f"must be > 0, got {scale!r}")
    v = 1.0 / (1.0 + np.exp(-s / scale))
    out = np.empty(s.size)
    g = float(result)
    for t in range(s.size - 1, -1, -1):
        if t < s.size - 1:
            g = (1.0 - lam) * v[t + 1] + lam * g
        out[t] = g
    return out


def td_scores(scores, result: float, lam: float = LAMBDA, scale: float = SCALE) -> np.ndarray:
    """The TD(lambda) targets as White-view centipawn scores (SCALE * logit G_t, rounded to
    whole centipawns, +-SCORE_LIMIT for a certain result): the score column a training with wdl
    0 turns back into G_t."""
    g = td_targets(scores, result, lam, scale)
    with np.errstate(divide="ignore"):
        cp = scale * (np.log(g) - np.log1p(-g))
    return np.clip(np.rint(cp), -SCORE_LIMIT, SCORE_LIMIT).astype(np.int64)
