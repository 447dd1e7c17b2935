"""The settings of a Texel fit (:class:`TexelConfig`): what ``evotune texel`` fits, on which
data, and how; validated when made. A fit is stored as a run (:mod:`evotune.learn.fitrun`)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, StoreError
from ..limits import LIMITS, Limits
from ..match.fixtures import limits_record
from .config import RunConfig

STRATEGY = "texel"
OPTIMIZERS = ("lbfgs", "adam")
"""scipy's L-BFGS-B and full-batch Adam (:func:`evotune.learn.texel.epochs`)."""


@dataclass(frozen=True)
class TexelConfig:
    """Everything that defines a Texel fit (stored as the run's config)."""

    data: tuple[str, ...]
    """Files of labelled positions."""
    engine: str = "shannon"
    """Engine spec whose weights (feature set, bounds, fixed weights) are fitted."""
    init: str = "reference"
    """Initial weights: 'reference' (the spec's reference values) or a weights JSON file."""
    max_positions: int = 0
    """Read at most this many positions (0 = all)."""
    k: str = "auto"
    """'auto' (fit K with the initial weights) or a fixed value."""
    epochs: int = 30
    """Epochs at most (the fit stops earlier when an epoch improves the error by < tol)."""
    optimizer: str = "lbfgs"
    """'lbfgs' (scipy L-BFGS-B) or 'adam' (full batch)."""
    iters: int = 20
    """Optimizer iterations per epoch."""
    lr: float = 2.0
    """Adam step size in engine units."""
    tol: float = 1e-10
    """Stop when an epoch changes the training error by less than this."""
    qsearch: bool = False
    """Fit on each position's quiescence leaf instead of rejecting non-quiet positions."""
    val_share: float = 0.1
    """Share of positions held out for validation."""
    val_block: int = 64
    """The validation share is drawn in blocks of this many consecutive positions: datagen
    writes a game's positions together, so the positions of one game (which share its result)
    rarely fall on both sides and overfitting shows in the validation error. 1 = position by
    position (fits stored before this setting existed)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""
    seed: int = 1
    """Seed of the validation split."""
    l2: float | str = "auto"
    """Ridge strength toward the initial weights (0 = none; see :class:`texel.Problem`), or
    'auto': the value of :data:`evotune.learn.texel.L2_GRID` whose fit has the lowest validation error."""
    # what the report, plot and verify commands read from any run's config
    strategy: str = STRATEGY
    """Always 'texel' (tells the commands what kind of run this is)."""
    np: int = 1
    """A fit is a 'population' of one weight vector."""
    generations: int = 0
    """Mirrors epochs (the generation axis of plots)."""
    limits: Limits = Limits()
    """Limits of 'evotune verify' matches (depth, nodes, ply cap)."""
    openings: str = "2moves"
    """Openings a run 'tuned on' (verification uses the held-out 8moves_v3 suite)."""

    NON_IDENTITY = ("epochs", "generations")

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        object.__setattr__(self, "generations", int(self.epochs))
        if not self.data:
            raise ConfigError("texel: give at least one data file of labelled positions")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"--optimizer {self.optimizer}: use one of "
                              f"{', '.join(OPTIMIZERS)}")
        if self.epochs < 1 or self.iters < 1:
            raise ConfigError("--epochs and --iters must be >= 1")
        if self.max_positions < 0 or self.max_bad < 0:
            raise ConfigError("--max-positions and --max-bad must be >= 0")
        if self.val_block < 1:
            raise ConfigError(f"--val-block {self.val_block}: give a number of positions >= 1")
        if not 0.0 <= self.val_share < 1.0:
            raise ConfigError(f"--val-share {self.val_share:g}: give a share in [0, 1)")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"--lr must be a finite number > 0, got {self.lr!r}")
        if not (self.tol >= 0 and math.isfinite(self.tol)):
            raise ConfigError(f"--tol must be a finite number >= 0, got {self.tol!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed <= LIMITS["seed"]:
            raise ConfigError(f"--seed {self.seed!r} is out of range; give an integer from 0 to "
                              f"{LIMITS['seed']}")
        if self.k != "auto":
            try:
                k = float(self.k)
            except ValueError:
                k = float("nan")
            if not k > 0 or not np.isfinite(k):
                raise ConfigError(f"--k {self.k}: give 'auto' or a positive number")
        if self.l2 == "auto":
            if self.val_share == 0:
                raise ConfigError("--l2 auto chooses the ridge by validation error and "
                                  "--val-share 0 holds out no positions; give --l2 (0 = no "
                                  "ridge) or a --val-share > 0")
        else:
            try:
                l2 = float(self.l2)
            except (TypeError, ValueError):
                l2 = float("nan")
            if isinstance(self.l2, bool) or not (l2 >= 0 and math.isfinite(l2)):
                raise ConfigError(f"--l2 {self.l2}: give 'auto' or a number >= 0 (0 = no ridge)")
            object.__setattr__(self, "l2", l2)

    def to_dict(self) -> dict:
        """The stored form: every field, the limits as their ``depth``, ``nodes`` and
        ``max_plies`` keys (the form fits were stored in before limits were one record)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "limits"}
        d["data"] = list(self.data)
        d.update(limits_record(self.limits))
        return d

    def to_run_config(self, data_files: list[dict]):
        """The RunConfig stored in the manifest: the texel settings are its params."""
        d = self.to_dict()
        params = {k: d.pop(k) for k in _PARAMS}
        params["data_files"] = data_files
        lim = self.limits
        adj = lim.adjudication
        return RunConfig(strategy=STRATEGY, np=1, generations=self.epochs, depth=lim.depth,
                         nodes=lim.nodes, max_plies=lim.max_plies, movetime=lim.movetime,
                         tc=str(lim.tc or ""), time_margin=lim.time_margin,
                         resign_score=adj.resign_score, resign_moves=adj.resign_moves,
                         draw_score=adj.draw_score, draw_moves=adj.draw_moves,
                         draw_start_ply=adj.draw_start_ply, seed=self.seed,
                         engine=self.engine, openings=self.openings,
                         params=tuple(sorted(params.items())))

    @classmethod
    def from_run_config(cls, cfg) -> "TexelConfig":
        params = cfg.params_dict()
        unknown = sorted(set(params) - set(_PARAMS) - {"data_files"})
        if unknown:
            raise StoreError(f"stored texel config has unknown key(s) {unknown}")
        params.setdefault("val_block", 1)  # fits stored before blocks split by position
        return cls(**{k: params[k] for k in _PARAMS if k in params},
                   epochs=cfg.generations, limits=cfg.limits, seed=cfg.seed,
                   engine=cfg.engine, openings=cfg.openings)


_PARAMS = ("data", "init", "max_positions", "k", "optimizer", "iters", "lr", "tol", "qsearch",
           "val_share", "max_bad", "l2", "val_block")
