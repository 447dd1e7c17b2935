"""WeightSpace: the names, bounds, reference values and fixed weights of an evaluation.

A weight vector is a float64 numpy array in engine units with one entry per name, fixed weights
included (pawn fixed at 100 by default). Strategies work on the full vector and call
:meth:`WeightSpace.repair` and :meth:`WeightSpace.round` so that every candidate they propose is
inside the bounds, has its fixed weights set, and is integral when the space is. A vector that
leaves the strategies for a player and the engine becomes a :class:`Weights` value, validated
once when it is made (:meth:`WeightSpace.weights`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import ConfigError, WeightsError

SHANNON_NAMES = ("pawn", "knight", "bishop", "rook", "queen", "mobility")
SHANNON_REFERENCE = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)

BOUND_RULES = ("clip", "reflect", "random", "midpoint")

FINETUNE_DIVISOR = 10
"""A fine-tuning's scale of a weight is its magnitude over this (Stockfish's TUNE macro: range
(0, 2v), c_end = (max - min) / 20 = |v| / 10)."""
FINETUNE_FLOOR = 1 / 200
"""The least fine-tuning scale, as a share of the weight's bound width (a weight whose start is
near 0 still moves)."""


def finetune_scale(reference, lower, upper) -> np.ndarray:
    """Each weight's scale when fine-tuning a good start: max(|v| / 10, width / 200), v the
    start value (fishtest's c_end of Stockfish's TUNE macro, with a floor for weights near 0).
    SPSA perturbs by it (its c_end), DE, jDE and the EA draw their first population within it,
    CMA-ES and nevergrad's optimisers start with it as each weight's step size (``finetune``,
    set by a run from earlier weights)."""
    v = np.abs(np.asarray(reference, dtype=np.float64))
    width = np.asarray(upper, dtype=np.float64) - np.asarray(lower, dtype=np.float64)
    return np.maximum(v / FINETUNE_DIVISOR, FINETUNE_FLOOR * width)


MAX_ABS_WEIGHT = 2000
"""|weight| above this is refused: the evaluation (weights x features, at most ~500 per weight in
any legal position) must stay below the engine's mate scores."""


@dataclass(frozen=True)
class WeightSpace:
    """The searchable space of evaluation weights."""

    names: tuple[str, ...] = SHANNON_NAMES
    """Weight names, in engine order."""
    lower: tuple[float, ...] = (100.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    """Lower bound of each weight (inclusive)."""
    upper: tuple[float, ...] = (100.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0)
    """Upper bound of each weight (inclusive)."""
    reference: tuple[float, ...] = SHANNON_REFERENCE
    """Reference (hand-tuned) values: the paper's 100, 300, 330, 500, 900, 10."""
    fixed: tuple[bool, ...] = (True, False, False, False, False, False)
    """Which weights never change (they stay at their reference value)."""
    init_low: float = 0.0
    """Lower end of the uniform initial distribution of every free weight."""
    init_high: float = 1000.0
    """Upper end of the uniform initial distribution of every free weight."""
    integer: bool = True
    """Round candidates to whole engine units (the engine scores in integers)."""
    max_abs: float = MAX_ABS_WEIGHT
    """|weight| above this is refused (:data:`MAX_ABS_WEIGHT` for a linear evaluation; a net's
    output layer is held in int16 and its scale up to 100000)."""
    _check: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        for label, seq in (("lower", self.lower), ("upper", self.upper),
                           ("reference", self.reference), ("fixed", self.fixed)):
            if len(seq) != n:
                raise ConfigError(f"weight space: '{label}' has {len(seq)} entries but there are "
                                  f"{n} weights {list(self.names)}; give one per weight")
        if len(set(self.names)) != n:
            raise ConfigError(f"weight space: duplicate weight names in {list(self.names)}")
        for i, name in enumerate(self.names):
            lo, hi, ref = self.lower[i], self.upper[i], self.reference[i]
            if not all(math.isfinite(v) for v in (lo, hi, ref)):
                raise ConfigError(f"weight '{name}': bounds and reference must be finite numbers")
            if lo > hi:
                raise ConfigError(f"weight '{name}': lower bound {lo:g} is above upper bound "
                                  f"{hi:g}; swap them")
            if self.fixed[i] and not (lo <= ref <= hi):
                raise ConfigError(f"weight '{name}' is fixed at {ref:g}, outside its bounds "
                                  f"[{lo:g}, {hi:g}]; widen the bounds or change the value")
        if not self.init_low <= self.init_high:
            raise ConfigError(f"initial range [{self.init_low:g}, {self.init_high:g}] is empty; "
                              "give init_low <= init_high")

    def require_free(self, what: str = "tuning") -> None:
        """ConfigError unless some weight is free (a spec whose weights are all fixed can play,
        label positions and be an opponent, but there is nothing to tune)."""
        if not any(not f for f in self.fixed):
            raise ConfigError(f"{what}: the engine spec has no free weight to tune; free at least "
                              "one (fixed = false, lower < upper)")

    # -- shape ---------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of weights, fixed included."""
        return len(self.names)

    @property
    def free(self) -> np.ndarray:
        """Indices of the free (tuned) weights."""
        return np.array([i for i, f in enumerate(self.fixed) if not f], dtype=np.int64)

    @property
    def free_names(self) -> tuple[str, ...]:
        return tuple(self.names[i] for i in self.free)

    @property
    def lower_array(self) -> np.ndarray:
        return np.array(self.lower, dtype=np.float64)

    @property
    def upper_array(self) -> np.ndarray:
        return np.array(self.upper, dtype=np.float64)

    @property
    def reference_array(self) -> np.ndarray:
        return np.array(self.reference, dtype=np.float64)

    # -- candidates ------------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` vectors, each free weight uniform in its own bounds cut to [init_low, init_high]
        (where the two do not meet, at the bound nearest the initial range). The shannon
        space's bounds are the initial range, so its draws are those of a plain uniform."""
        pop = np.tile(self.reference_array, (n, 1))
        free = self.free
        lo, hi = self.lower_array[free], self.upper_array[free]
        low = np.clip(self.init_low, lo, hi)
        high = np.maximum(np.minimum(hi, self.init_high), low)
        pop[:, free] = rng.uniform(low, high, size=(n, free.size))
        return self.round(np.clip(pop, self.lower_array, self.upper_array))

    def sample_around(self, rng: np.random.Generator, n: int, spread: float, *,
                      finetune: bool = False) -> np.ndarray:
        """``n`` vectors around the reference: row 0 is the reference itself, the others add to
        each free weight a uniform draw in +-``spread`` times its bound width (clipped to the
        bounds); with ``finetune`` within +-min(spread x width, :func:`finetune_scale`), each
        weight's own scale. A population that starts from a known evaluation (fine-tuning, or a
        many-weight space whose bounds differ per weight) instead of a uniform range. A weight
        near a bound draws from the part of the interval within its bounds, so no draws pile
        up on the bound."""
        ref = self.reference_array
        pop = np.tile(ref, (n, 1))
        free = self.free
        lo, hi = self.lower_array[free], self.upper_array[free]
        half = spread * (hi - lo)
        if finetune:
            half = np.minimum(half, finetune_scale(ref[free], lo, hi))
        if n > 1:
            pop[1:, free] = rng.uniform(np.maximum(ref[free] - half, lo),
                                        np.minimum(ref[free] + half, hi), size=(n - 1, free.size))
        return self.round(np.clip(pop, self.lower_array, self.upper_array))

    def round(self, x: np.ndarray) -> np.ndarray:
        """Set fixed weights and round to whole units when the space is integral."""
        x = np.array(x, dtype=np.float64, copy=True)
        fixed = np.array(self.fixed, dtype=bool)
        x[..., fixed] = self.reference_array[fixed]
        if self.integer:
            x = np.rint(x)
        return x

    def repair(self, x: np.ndarray, *, rule: str, rng: np.random.Generator,
               base: np.ndarray | None = None) -> np.ndarray:
        """Bring ``x`` back inside the bounds by a named rule, then :meth:`round`.

        clip: to the nearest bound; reflect: mirror at the bound (then clip);
        random: redraw the offending weight uniformly in its bounds;
        midpoint: halfway between ``base`` (e.g. the DE target) and the violated bound.
        """
        if rule not in BOUND_RULES:
            raise ConfigError(f"unknown bound rule '{rule}'; use one of {', '.join(BOUND_RULES)}")
        lo, hi = self.lower_array, self.upper_array
        x = np.array(x, dtype=np.float64, copy=True)
        below, above = x < lo, x > hi
        if rule == "reflect":
            x = np.where(below, 2 * lo - x, x)
            x = np.where(above, 2 * hi - x, x)
        elif rule == "random":
            bad = below | above
            if bad.any():
                x[bad] = rng.uniform(lo[bad], hi[bad])
        elif rule == "midpoint":
            b = x if base is None else np.asarray(base, dtype=np.float64)
            x = np.where(below, (lo + b) / 2, x)
            x = np.where(above, (hi + b) / 2, x)
        x = np.clip(x, lo, hi)
        return self.round(x)

    def validate(self, w, *, what: str = "weights") -> np.ndarray:
        """Check a full weight vector (length, finite, bounds); return it as float64."""
        return check_weights(w, size=self.size, names=self.names, what=what,
                             lower=self.lower_array, upper=self.upper_array, limit=self.max_abs)

    def weights(self, w, *, what: str = "weights") -> Weights:
        """``w`` as a :class:`Weights` of this space: checked once (length, finite, bounds)."""
        if isinstance(w, Weights) and w.names == self.names and w.within(self):
            return w
        return Weights(w, self.names, what=what, lower=self.lower_array, upper=self.upper_array,
                       limit=self.max_abs)

    def reference_weights(self) -> Weights:
        """The reference values as a :class:`Weights` (not checked against the bounds: a free
        weight's reference may lie outside them)."""
        return Weights(self.reference, self.names, what="reference weights", limit=self.max_abs)

    def as_dict(self, w) -> dict[str, float]:
        """``{name: value}`` for a full vector."""
        w = self.validate(w)
        return {n: float(v) for n, v in zip(self.names, w)}

    def from_dict(self, d: dict) -> np.ndarray:
        """A full vector from ``{name: value}``; missing fixed weights take their reference."""
        unknown = sorted(set(d) - set(self.names))
        if unknown:
            raise WeightsError(f"unknown weight name(s) {unknown}; known: {list(self.names)}")
        out = []
        for i, n in enumerate(self.names):
            if n in d:
                out.append(d[n])
            elif self.fixed[i]:
                out.append(self.reference[i])
            else:
                raise WeightsError(f"weight '{n}' is missing; give all of {list(self.names)}")
        return self.validate(out)


def check_weights(w, *, size: int = 6, names=SHANNON_NAMES, what: str = "weights",
                  lower=None, upper=None, limit: float = MAX_ABS_WEIGHT,
                  bounded=None) -> np.ndarray:
    """Validate a weight vector: numeric, right length, finite, within +-``limit`` (and within
    bounds if given). ``names``: what a message lists for the vector; ``bounded``: the name of
    each weight, for the ones outside their bounds (default ``names``)."""
    try:
        if isinstance(w, (list, tuple)) and not all(
                isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_))
                for x in w):
            raise ValueError  # "300" or true is not a weight, even where numpy would take it
        arr = np.asarray(w, dtype=np.float64)
        if arr.ndim != 1:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise WeightsError(f"{what}: not a list of numbers (a flat one); give {size} numbers "
                           f"({', '.join(names)})") from None
    if arr.size != size:
        raise WeightsError(f"{what}: got {arr.size} values, need {size} ({', '.join(names)})")
    if not np.all(np.isfinite(arr)):
        raise WeightsError(f"{what}: values must be finite, got {arr.tolist()}")
    if np.any(np.abs(arr) > limit):
        raise WeightsError(f"{what}: values must lie within +-{limit:g} (the engine's "
                           f"integer evaluation and its mate scores must stay apart), got "
                           f"{arr.tolist()}")
    if lower is not None and upper is not None:
        every = tuple(names if bounded is None else bounded)
        out = np.flatnonzero(~((np.asarray(lower) <= arr) & (arr <= np.asarray(upper))))
        if out.size:
            bad = [every[i] if len(every) == size else f"weight #{i + 1}" for i in out[:5]]
            more = f" and {out.size - 5} more" if out.size > 5 else ""
            raise WeightsError(f"{what}: {', '.join(bad)}{more} outside the bounds of the "
                               "weight space")
    return arr



class Weights(tuple):
    """A full weight vector (evotune units, fixed weights included) that knows its names,
    validated once, when it is made: numbers, one per name, finite, within +-MAX_ABS_WEIGHT or
    the ``limit`` given (and within a space's bounds when made by :meth:`WeightSpace.weights`).
    It is a tuple of floats, so it is plain data wherever a weight tuple was (a player's
    weights, a game record's); the players and the engine take it without checking it again.
    ``array`` is its float64 view and ``engine`` the rounded int64 vector the core evaluates
    with (both read-only).

    ``Weights(values, names, what=..., lower=..., upper=..., limit=...)``; ``label``: the names an error
    message lists (default: all of them, or their count beyond 8).
    """

    names: tuple[str, ...]
    array: np.ndarray

    def __new__(cls, values, names, *, what: str = "weights", lower=None, upper=None,
                label=None, limit: float = MAX_ABS_WEIGHT) -> Weights:
        names = tuple(names)
        if label is None:
            label = names if len(names) <= 8 else (f"the {len(names)} weights",)
        arr = check_weights(values, size=len(names), names=label, what=what, lower=lower,
                            upper=upper, limit=limit, bounded=names)
        return cls._made(arr, names)

    @classmethod
    def _made(cls, arr: np.ndarray, names: tuple[str, ...]) -> Weights:
        """A Weights of values already checked (construction and unpickling)."""
        self = tuple.__new__(cls, arr.tolist())
        arr = np.array(arr, dtype=np.float64)
        arr.flags.writeable = False
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "array", arr)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Weights are immutable")

    def __reduce__(self):
        return (_restore_weights, (tuple(self), self.names))

    def __repr__(self) -> str:
        return f"Weights({tuple.__repr__(self)}, {len(self.names)} names)"

    @cached_property
    def engine(self) -> np.ndarray:
        """The vector the core evaluates with: rounded to whole units, int64, read-only."""
        out = np.rint(self.array).astype(np.int64)
        out.flags.writeable = False
        return out

    def head(self, n: int) -> Weights:
        """The first ``n`` weights with their names (checked already, as part of this one): an
        engine spec's evaluation weights ahead of its search's."""
        return self if n == len(self) else Weights._made(self.array[:n], self.names[:n])

    def within(self, space: WeightSpace) -> bool:
        """Inside ``space``'s bounds."""
        return bool(np.all((space.lower_array <= self.array) & (self.array <= space.upper_array)))


def _restore_weights(values: tuple, names: tuple) -> Weights:
    """Unpickling: the values were checked when the Weights was made."""
    return Weights._made(np.array(values, dtype=np.float64), names)
