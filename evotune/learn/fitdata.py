"""The data of a Texel fit and its ridge: the positions read, turned into feature rows and split
into training and validation (:func:`fit_data`), and the ridge chosen by validation error
(:func:`choose_l2`). Writes nothing and reads no engine spec: the fit's plan
(:mod:`evotune.kinds.fit.plan`) gives the spec, feature set and start; the fit as a run is
:mod:`evotune.kinds.fit`."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..engine.evaluation import Evaluation
from ..errors import ConfigError
from ..limits import resolve_workers
from ..seeding import STREAM_TEXEL, generator
from ..spec.model import EngineSpec
from ..weightsio import load_weights_file
from . import texel as tx
from .fitsettings import FitOptimiser, FitPositions, FitRidge, FitValidation
from .labels import Positions, read_positions
from .phirows import Extracted, extract


class FitSettings(Protocol):
    """What the data and the ridge read of a fit's settings (a
    :class:`~evotune.kinds.fit.config.TexelConfig`)."""

    @property
    def data(self) -> tuple[str, ...]: ...

    @property
    def seed(self) -> int: ...

    @property
    def positions(self) -> FitPositions: ...

    @property
    def optimiser(self) -> FitOptimiser: ...

    @property
    def validation(self) -> FitValidation: ...

    @property
    def ridge(self) -> FitRidge: ...

    @property
    def epochs(self) -> int: ...


def initial_weights(spec: EngineSpec, init: str) -> np.ndarray:
    """The fit's start: ``spec``'s reference values (``init`` 'reference') or the weights of the
    file ``init``, clipped into the bounds."""
    space = spec.space()
    if init == "reference":
        w = space.reference_array
    else:
        w = load_weights_file(init, spec)
    return np.clip(w, space.lower_array, space.upper_array)


def split_indices(n: int, share: float, seed: int, block: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) indices: a seeded draw of ``share`` of the blocks of ``block``
    consecutive positions (block 1: of the positions)."""
    if block <= 1:
        perm = generator(seed, STREAM_TEXEL).permutation(n)
        n_val = int(round(share * n))
        return np.sort(perm[n_val:]), np.sort(perm[:n_val])
    perm = generator(seed, STREAM_TEXEL).permutation(-(-n // block))
    order = np.concatenate([np.arange(b * block, min(n, (b + 1) * block)) for b in perm])
    n_val = int(round(share * n))  # the first n_val positions of the drawn blocks
    in_val = np.zeros(n, dtype=bool)
    in_val[order[:n_val]] = True
    idx = np.arange(n)
    return idx[~in_val], idx[in_val]


@dataclass
class FitData:
    """The positions of a fit, read and turned into feature rows, with their split."""

    positions: Positions
    extracted: Extracted
    y: np.ndarray
    """Results of the kept positions."""
    train_idx: np.ndarray
    val_idx: np.ndarray
    seconds_extract: float
    messages: list[str]
    """What reading and extraction found (said when the fit starts)."""


def fit_data(cfg: FitSettings, *, evaluation: Evaluation, w0: np.ndarray,
             positions: Positions | None = None, workers: int = 0) -> FitData:
    """Read the data files (unless given), extract feature rows of the linear
    ``evaluation`` under the start ``w0`` and split them; ConfigError when the usable positions
    cannot make a fit (fewer than 2, or a split leaving a side empty). Writes nothing."""
    if positions is None:
        positions = read_positions(cfg.data, max_bad=cfg.positions.max_bad,
                                   max_positions=cfg.positions.max_positions)
    messages = [f"read {len(positions)} positions from {len(cfg.data)} file(s)"
                + (f", {positions.bad} bad lines skipped" if positions.bad else "")]
    t0 = time.perf_counter()
    ex = extract(positions.fens, w0, features=evaluation, use_qsearch=cfg.positions.qsearch,
                 workers=resolve_workers(workers))
    seconds = time.perf_counter() - t0
    messages.append(f"features of {ex.kept.size} positions in {seconds:.1f} s"
                    + (f" ({ex.not_quiet} not quiet, rejected)" if not cfg.positions.qsearch else
                       f" (quiescence leaves; {ex.mate} ending in mate rejected)"))
    n = int(ex.kept.size)
    if n < 2:
        raise ConfigError(f"only {n} usable positions in {', '.join(cfg.data)} ({len(positions)} "
                          f"read, {ex.not_quiet + ex.mate} rejected); a fit needs at least 2: "
                          "give more data")
    train_idx, val_idx = split_indices(n, cfg.validation.share, cfg.seed, cfg.validation.block)
    if train_idx.size == 0:
        raise ConfigError(f"--val-share {cfg.validation.share:g} of {n} usable positions leaves none "
                          "for training; give more data or a smaller share")
    if val_idx.size == 0 and cfg.validation.share > 0:
        raise ConfigError(f"--val-share {cfg.validation.share:g} of {n} usable positions holds out "
                          "none for validation; give more data or a larger share (--val-share 0 "
                          "fits on every position without validation)")
    return FitData(positions=positions, extracted=ex, y=positions.result_array()[ex.kept],
                   train_idx=train_idx, val_idx=val_idx, seconds_extract=seconds,
                   messages=messages)


def choose_l2(train: tx.Problem, val: tx.Problem, w0: np.ndarray, K: float, cfg: FitSettings,
              say: Callable[[str], None], *, groups: np.ndarray) -> tuple[float, list[dict]]:
    """The ridge for ``--l2 auto``: each candidate's whole fit (from ``w0``, as the fit itself
    runs) measured on the validation positions, one line each, then by ``cfg.ridge.rule``:

    - ``one-se`` (:data:`texel.L2_GRID_ONE_SE`): the strongest ridge whose validation error is
      above the lowest by at most one standard error of that difference (paired, position by
      position, with the positions of one validation block, ``groups``, taken together): on
      small data the errors of weak and strong ridges cannot be told apart and the fit stays
      near its start; on large data the standard error shrinks and the rule keeps the lowest;
    - ``lowest`` (:data:`texel.L2_GRID`): the lowest validation error (the smallest ridge on a
      tie).

    Returns the ridge and what was tried (l2, validation error, epochs; ``one-se`` adds each
    one's difference to the lowest and its standard error)."""
    grid = tx.L2_GRID_ONE_SE if cfg.ridge.rule == "one-se" else tx.L2_GRID
    start = val.error(w0, K)
    tried: list[dict] = []
    fitted = []
    for l2 in grid:
        problem = dataclasses.replace(train, l2=l2)
        w, n = w0, 0
        for step in tx.epochs(problem, w0, K, optimizer=cfg.optimiser.name, iters=cfg.optimiser.iters,
                              lr=cfg.optimiser.lr, tol=cfg.optimiser.tol, adam=tx.AdamState.zeros(w0.size),
                              start=0, stop=cfg.epochs, last=problem.error(w0, K)):
            n, w = step[0], step[1]  # the last epoch's
        fitted.append(w)
        tried.append({"l2": l2, "validation": val.error(w, K), "epochs": n})
        say(f"ridge --l2 {l2:g}: validation error {tried[-1]['validation']:.6f} after {n} "
            f"epochs (start {start:.6f})")
    best = min(range(len(tried)), key=lambda i: tried[i]["validation"])
    if cfg.ridge.rule == "lowest":
        say(f"ridge --l2 {tried[best]['l2']:g} chosen: the lowest validation error of "
            f"{len(tried)} (give --l2 to set it)")
        return float(tried[best]["l2"]), tried
    lowest = val.squared_errors(fitted[best], K)
    chosen = best
    for i, t in enumerate(tried):
        diff = val.squared_errors(fitted[i], K) - lowest
        t["above_lowest"] = float(diff.mean()) if diff.size else 0.0
        t["se"] = tx.difference_se(diff, groups)
        if t["above_lowest"] <= t["se"]:
            chosen = i  # the grid increases: the last one within is the strongest
    if chosen == best:
        why = (f"the lowest validation error of {len(tried)}; no stronger ridge is within one "
               "standard error of it")
    else:
        why = (f"the strongest of {len(tried)} whose validation error is within one standard "
               f"error of the lowest ({tried[best]['validation']:.6f}, --l2 "
               f"{tried[best]['l2']:g}): +{tried[chosen]['above_lowest']:.6f}, standard error "
               f"{tried[chosen]['se']:.6f}")
    say(f"ridge --l2 {tried[chosen]['l2']:g} chosen: {why} (give --l2 to set it)")
    return float(tried[chosen]["l2"]), tried
