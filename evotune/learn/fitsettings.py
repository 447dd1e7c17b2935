"""The grouped settings of a Texel fit: which positions it reads (:class:`FitPositions`), how it
minimises its loss (:class:`FitOptimiser`), the positions it holds out (:class:`FitValidation`)
and its ridge (:class:`FitRidge`). :class:`~evotune.kinds.fit.config.TexelConfig` is made of
them; the fit's numerics (:mod:`evotune.learn.fitdata`, :mod:`evotune.learn.texel`) read them as
values, below the kind."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FitPositions:
    """Which positions a fit reads from its data files, and which of them it fits."""

    max_positions: int = 0
    """Read at most this many positions (0 = all)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""
    qsearch: bool = False
    """Fit on each position's quiescence leaf instead of rejecting non-quiet positions."""


@dataclass(frozen=True)
class FitOptimiser:
    """How the loss is minimised, and for how long."""

    name: str = "lbfgs"
    """'lbfgs' (scipy L-BFGS-B) or 'adam' (full batch): the ``--optimizer`` flag."""
    epochs: int = 30
    """Epochs at most (the fit stops earlier when an epoch improves the error by < tol)."""
    iters: int = 20
    """Optimizer iterations per epoch."""
    lr: float = 2.0
    """Adam step size in engine units."""
    tol: float = 1e-10
    """Stop when an epoch changes the training error by less than this."""


@dataclass(frozen=True)
class FitValidation:
    """The positions held out to measure the fit (and choose its ridge)."""

    share: float = 0.1
    """Share of positions held out for validation (``--val-share``)."""
    block: int = 64
    """The validation share is drawn in blocks of this many consecutive positions
    (``--val-block``): datagen writes a game's positions together, so the positions of one game
    (which share its result) rarely fall on both sides and overfitting shows in the validation
    error. 1 = position by position (fits stored before this setting existed)."""


@dataclass(frozen=True)
class FitRidge:
    """The ridge toward the initial weights."""

    l2: float | str = "auto"
    """Its strength (0 = none; see :class:`texel.Problem`), or 'auto': the value of
    :data:`evotune.learn.texel.L2_GRID` whose fit has the lowest validation error."""
    rule: str = "one-se"
    """How ``l2 = 'auto'`` chooses (:data:`L2_RULES`, ``--l2-rule``): 'one-se', the strongest
    ridge whose validation error is within one standard error of the lowest, or 'lowest', the
    lowest validation error (what fits stored before this setting did: a stored config without
    it reads as 'lowest')."""
