"""SPSA as fishtest and OpenBench run it (Spall's simultaneous perturbation, their schedule).

Per tuned weight i: start, min, max, ``c_end``, ``r_end`` (from a ``table`` of fishtest or
OpenBench lines, see :func:`parse_spsa_lines`; without one: the space's bounds, ``c_end`` =
``c_end_frac`` x (max - min), ``r_end``, a start drawn like DE's population or the reference;
with ``finetune``, the ends from each weight's scale, :func:`finetune_ends`).
N = planned iterations = ``budget`` // 2 game pairs, and

    A = A_ratio N (0.1 N),  alpha = 0.602,  gamma = 0.101
    c_i = c_end_i N^gamma,  a_i = r_end_i c_end_i^2 (A + N)^alpha
    c_k,i = c_i / k^gamma,  R_k,i = a_i / (A + k)^alpha / c_k,i^2

An iteration k (1-based, counted in game pairs) plays theta + c_k Delta against
theta - c_k Delta (Delta_i = +-1, both clipped to [min, max]) in colour-balanced game pairs and
sets theta_i += R_k,i c_k,i (W - L) Delta_i, clipped to [min, max] (W - L from the + side's view).
Integer weights play stochastically rounded values, floor(v + u) with u uniform in [0, 1), drawn
afresh for each perturbed value, so a perturbation smaller than one unit still moves them on
average; theta itself stays a float vector.

A generation is ``batch`` perturbations dispatched at the same k, each a mini-match of ``games``
games (fishtest's concurrent workers that fetched their flips at the same iteration); their
results are applied one after the other in request order, each with the schedule of that k, and
the iteration count advances by the pairs played. The budget is counted in games like every
strategy's: N = budget / 2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..space import finetune_scale
from .base import MatchOutcome, MatchRequest, Param, Strategy, as_tuple

KINDS = ("int", "float")
MAX_VALUE = 1e15
"""Largest magnitude of an SPSA line's bounds (engine options are integers; past it a schedule's
squares overflow)."""


@dataclass(frozen=True)
class SpsaLine:
    """One tuned parameter of an SPSA table (a fishtest or OpenBench line)."""

    name: str
    """Parameter name (the engine option or evotune weight name)."""
    kind: str
    """'int' (played stochastically rounded) or 'float'."""
    start: float
    """Start value."""
    min: float
    """Lower bound."""
    max: float
    """Upper bound."""
    c_end: float
    """Perturbation at the last planned iteration."""
    r_end: float
    """Learning rate at the last planned iteration (a_end = r_end c_end^2)."""


def number_text(x: float) -> str:
    """The shortest text that reads back as exactly ``x`` (integers without a point)."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def fishtest_line(p: SpsaLine) -> str:
    """``name,start,min,max,c_end,r_end`` (fishtest's SPSA box)."""
    return ",".join([p.name, *(number_text(v) for v in (p.start, p.min, p.max, p.c_end,
                                                         p.r_end))])


def openbench_line(p: SpsaLine) -> str:
    """``name, int|float, start, min, max, c_end, r_end`` (OpenBench's SPSA box)."""
    return ", ".join([p.name, p.kind, *(number_text(v) for v in (p.start, p.min, p.max,
                                                                 p.c_end, p.r_end))])


def parse_spsa_lines(text: str, *, where: str = "spsa parameters",
                     default_kind: str = "int") -> list[SpsaLine]:
    """Read fishtest lines (6 fields) and OpenBench lines (7 fields, the 2nd int or float).

    Blank lines and lines starting with '#' are skipped. A fishtest line has no kind; it gets
    ``default_kind``. Any other line is a ConfigError naming the line.
    """
    out: list[SpsaLine] = []
    seen: set[str] = set()
    for no, raw in enumerate(str(text).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split(",")]
        bad = (f"{where}, line {no}: {raw.strip()!r}: expected fishtest 'name,start,min,max,"
               "c_end,r_end' or OpenBench 'name, int|float, start, min, max, c_end, r_end'")
        if len(cells) == 7:
            name, kind, nums = cells[0], cells[1], cells[2:]
            if kind not in KINDS:
                raise ConfigError(bad)
        elif len(cells) == 6:
            name, kind, nums = cells[0], default_kind, cells[1:]
        else:
            raise ConfigError(bad)
        try:
            start, lo, hi, c_end, r_end = (float(v) for v in nums)
        except ValueError:
            raise ConfigError(bad) from None
        if not name or not all(math.isfinite(v) for v in (start, lo, hi, c_end, r_end)):
            raise ConfigError(bad)
        if not lo <= start <= hi:
            raise ConfigError(f"{where}, line {no}: start {number_text(start)} of '{name}' is "
                              f"outside [{number_text(lo)}, {number_text(hi)}]")
        if c_end <= 0 or r_end <= 0:
            raise ConfigError(f"{where}, line {no}: c_end and r_end of '{name}' must be > 0")
        if max(abs(lo), abs(hi)) > MAX_VALUE:
            raise ConfigError(f"{where}, line {no}: the bounds of '{name}' pass "
                              f"+-{MAX_VALUE:.0e}; give an engine's integer range")
        if lo == hi:
            raise ConfigError(f"{where}, line {no}: min = max = {number_text(lo)} leaves "
                              f"'{name}' nothing to tune; leave the line out to keep it fixed")
        if c_end > hi - lo or r_end * c_end > hi - lo:
            raise ConfigError(f"{where}, line {no}: c_end {number_text(c_end)} or r_end "
                              f"{number_text(r_end)} of '{name}' makes steps wider than its "
                              f"range {number_text(hi - lo)}; need c_end <= max - min and "
                              "r_end * c_end <= max - min")
        if name in seen:
            raise ConfigError(f"{where}, line {no}: '{name}' is given twice")
        seen.add(name)
        out.append(SpsaLine(name, kind, start, lo, hi, c_end, r_end))
    return out


@dataclass(frozen=True)
class Schedule:
    """fishtest's SPSA gain sequences for planned N iterations (vectors over tuned weights)."""

    N: int
    """Planned iterations (game pairs)."""
    A: float
    """Stability constant A = A_ratio N."""
    alpha: float
    """Decay exponent of a_k."""
    gamma: float
    """Decay exponent of c_k."""
    c: np.ndarray
    """c_i = c_end_i N^gamma."""
    a: np.ndarray
    """a_i = r_end_i c_end_i^2 (A + N)^alpha."""

    @classmethod
    def from_ends(cls, c_end, r_end, *, N: int, A_ratio: float = 0.1, alpha: float = 0.602,
                  gamma: float = 0.101) -> Schedule:
        c_end = np.asarray(c_end, dtype=np.float64)
        r_end = np.asarray(r_end, dtype=np.float64)
        A = A_ratio * N
        return cls(N=int(N), A=A, alpha=alpha, gamma=gamma, c=c_end * N ** gamma,
                   a=r_end * c_end ** 2 * (A + N) ** alpha)

    def c_k(self, k: int) -> np.ndarray:
        """Perturbation at iteration k (1-based)."""
        return self.c / k ** self.gamma

    def a_k(self, k: int) -> np.ndarray:
        return self.a / (self.A + k) ** self.alpha

    def R_k(self, k: int) -> np.ndarray:
        """Learning rate at iteration k: a_k / c_k^2 (theta += R_k c_k (W - L) Delta)."""
        return self.a_k(k) / self.c_k(k) ** 2


FINETUNE_R_END = 0.002
"""r_end of a fine-tuning (fishtest's customary value: Stockfish's TUNE prints 0.0020)."""


def finetune_ends(reference, lower, upper, c_end_frac: float) -> tuple[np.ndarray, np.ndarray]:
    """(c_end, r_end) per weight for fine-tuning a good start, from each weight's scale.

    Stockfish's TUNE macro, which writes the fishtest lines of most tuning sessions, gives a
    value v the range (0, 2v) (or (2v, 0) for v < 0) and prints c_end = (max - min) / 20 and
    r_end = 0.0020: c_end = |v| / 10, a tenth of the weight's own magnitude. Here

        c_end_i = min(c_end_frac (max_i - min_i), max(|v_i| / 10, (max_i - min_i) / 200))

    with v_i the reference value (the start of a run from earlier weights): fishtest's |v| / 10,
    at least 1/200 of the bound width (a weight at 0 would otherwise never be perturbed; TUNE
    skips such a weight) and at most the width rule of a run without ``finetune``; r_end =
    :data:`FINETUNE_R_END` for every weight."""
    width = np.asarray(upper, dtype=np.float64) - np.asarray(lower, dtype=np.float64)
    c_end = np.minimum(c_end_frac * width, finetune_scale(reference, lower, upper))
    return c_end, np.full(width.shape, FINETUNE_R_END)


def default_ends(space, tuned: np.ndarray, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """(c_end, r_end) of the weights ``tuned`` (indices into ``space``) of a run without a params
    table, from its resolved ``params``: with ``finetune`` c_end from each weight's scale
    (:func:`finetune_ends`), else ``c_end`` x the bound width; r_end the params' (0.002 with
    ``finetune`` unless given). The strategy and ``export --format spsa`` both use it."""
    lower, upper = space.lower_array[tuned], space.upper_array[tuned]
    if params["finetune"]:
        c_end, _ = finetune_ends(space.reference_array[tuned], lower, upper, params["c_end"])
    else:
        c_end = params["c_end"] * (upper - lower)
    return c_end, np.full(len(tuned), float(params["r_end"]))


def stochastic_round(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """floor(x + u), u uniform in [0, 1): rounds up with probability frac(x), mean exactly x."""
    return np.floor(x + rng.random(x.shape))


ROUNDINGS = ("shared", "independent")
"""How the two sides of a perturbation are rounded to integers: 'shared' (one u for theta +
c Delta and theta - c Delta, as OpenBench rounds since its fix: the + side is never below the -
side, and their difference is floor or ceil of 2c with mean exactly 2c) or 'independent' (one u
each, as evotune rounded before: with c under 1 both sides are often the same integer, a game
pair that says nothing, or reversed, a pair that says the opposite). A run's state records its
rounding; a state without one is a run made before, which keeps 'independent'."""


class SPSA(Strategy):
    """fishtest/OpenBench SPSA: theta +- c_k Delta in game pairs, theta += R_k c_k (W-L) Delta."""

    name = "spsa"
    TITLE = "SPSA"
    ABOUT = "fishtest's SPSA"
    RECOMMENDS = "SPSA's theta"
    CENTRE = "theta"
    STEP = ("c_k", "R_k")
    PARAMS = {
        "batch": Param(8, "int", low=1, high=10_000,  # as --np: a generation's candidates
                       doc="perturbations dispatched at the same iteration k per generation"),
        "games": Param(2, "int", low=2, even=True,
                       doc="games per perturbation (even: colour-balanced pairs)"),
        "budget": Param(3000, "int", low=2,
                        doc="planned games; N = budget / 2 iterations (set from --max-games)"),
        "A_ratio": Param(0.1, "float", low=0.0, doc="A = A_ratio N"),
        "alpha": Param(0.602, "float", low=0.0, low_open=True, doc="a_k decay exponent"),
        "gamma": Param(0.101, "float", low=0.0, low_open=True, doc="c_k decay exponent"),
        "c_end": Param(0.05, "float", low=0.0, high=1.0, low_open=True,
                       doc="c_end as a fraction of each weight's bound width (no table; with "
                           "finetune: the most c_end may be)"),
        "r_end": Param(0.02, "float", low=0.0, low_open=True,
                       doc="r_end (no table); fishtest's customary 0.002 is for fine-tuning "
                           "(the default with finetune)"),
        "finetune": Param(False, "bool",
                          doc="no table: c_end from each weight's reference (|v| / 10 within "
                              "1/200 and c_end of its width) and r_end 0.002, as fishtest "
                              "tunes a good start (set by a run from earlier weights)"),
        "init": Param("sample", "choice", choices=("sample", "reference"),
                      doc="start (no table): a uniform draw like DE's, or the reference"),
        "table": Param("", "text",
                       doc="fishtest/OpenBench lines in evotune names and units (--spsa-params)"),
    }

    @classmethod
    def resolve_params(cls, params) -> dict:
        """As every strategy's; with ``finetune`` the default r_end is fishtest's 0.002."""
        params = dict(params or {})
        if params.get("finetune") is True and "r_end" not in params:
            params["r_end"] = FINETUNE_R_END
        return super().resolve_params(params)

    @classmethod
    def step_ends(cls, space, params) -> dict[str, tuple[float, float]]:
        """The run's table lines' ends, or :func:`default_ends` of its resolved ``params``."""
        if params.get("table"):
            return {ln.name: (ln.c_end, ln.r_end)
                    for ln in parse_spsa_lines(str(params["table"]), where="strategy 'spsa' table")}
        resolved = cls.resolve_params(params)
        free = space.free
        c_end, r_end = default_ends(space, free, resolved)
        return {space.names[i]: (float(c), float(r)) for i, c, r in zip(free, c_end, r_end)}

    @classmethod
    def _check_params(cls, params: dict) -> None:
        if params["finetune"] and params["table"]:
            raise ConfigError("strategy 'spsa': finetune derives c_end and r_end from the "
                              "weights, a table gives them; give one of the two")

    def _initialize(self, *, draw: bool = True) -> None:
        """Tuned set, bounds, schedule and start; ``draw`` False: no random draw (a restore
        sets theta and the population from the saved state)."""
        space, p = self.space, self.params
        lines = parse_spsa_lines(p["table"], where="strategy 'spsa' table") if p["table"] else []
        free = set(int(i) for i in self._free)
        index = {n: i for i, n in enumerate(space.names)}
        lower, upper = space.lower_array.copy(), space.upper_array.copy()
        integer = np.full(space.size, bool(space.integer))
        c_end: list[float] | np.ndarray
        r_end: list[float] | np.ndarray
        if lines:
            theta = space.reference_array.copy()
            tuned, c_end, r_end = [], [], []
            for ln in lines:
                i = index.get(ln.name)
                if i is None or i not in free:
                    what = "is fixed" if i is not None else "is not a weight of the space"
                    raise ConfigError(f"strategy 'spsa' table: '{ln.name}' {what}; tune some "
                                      f"of {', '.join(space.free_names)}")
                if ln.min < lower[i] or ln.max > upper[i]:
                    raise ConfigError(f"strategy 'spsa' table: bounds of '{ln.name}' "
                                      f"[{number_text(ln.min)}, {number_text(ln.max)}] leave "
                                      f"the space's [{lower[i]:g}, {upper[i]:g}]")
                theta[i], lower[i], upper[i] = ln.start, ln.min, ln.max
                integer[i] = ln.kind == "int"
                tuned.append(i)
                c_end.append(ln.c_end)
                r_end.append(ln.r_end)
            self.tuned = np.array(tuned, dtype=np.int64)
        else:
            self.tuned = self._free.copy()
            if p["init"] == "sample" and draw:
                theta = space.sample(self.rng, 1)[0]
            else:
                theta = space.reference_array.copy()
            c_end, r_end = default_ends(space, self.tuned, p)
        self.lower, self.upper, self.integer = lower, upper, integer
        self.schedule = Schedule.from_ends(c_end, r_end, N=self.planned, A_ratio=p["A_ratio"],
                                           alpha=p["alpha"], gamma=p["gamma"])
        self.theta = np.clip(np.asarray(theta, dtype=np.float64), lower, upper)
        self.pairs = 0
        self.rounding = "shared"
        if draw:
            self.population = self._rounded()

    @property
    def planned(self) -> int:
        """N: planned iterations (game pairs)."""
        return max(1, self.params["budget"] // 2)

    def _rounded(self) -> np.ndarray:
        return self.space.round(np.clip(self.theta, self.lower, self.upper))[None, :]

    def _vectors(self) -> np.ndarray:
        return self.theta[None, :]

    def recommended(self, rule: str = "mean") -> np.ndarray:
        """theta, rounded (one vector: both rules give it)."""
        super().recommended(rule)  # checks the rule
        return self._rounded()[0]

    def perturbed(self, deltas: np.ndarray, ck: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(plus, minus) vectors of each perturbation: clipped, integers stochastically rounded
        (both sides with the same draw unless the run's rounding is 'independent':
        :data:`ROUNDINGS`)."""
        t = self.tuned
        ints = t[self.integer[t]]
        shared = self.rng.random((len(deltas), ints.size)) if self.rounding == "shared" else None
        out = []
        for sign in (1.0, -1.0):
            x = np.tile(self.theta, (len(deltas), 1))
            x[:, t] = np.clip(self.theta[t] + sign * ck * deltas, self.lower[t], self.upper[t])
            rounded = stochastic_round(x[:, ints], self.rng) if shared is None \
                else np.floor(x[:, ints] + shared)
            x[:, ints] = np.clip(rounded, self.lower[ints], self.upper[ints])
            rest = np.setdiff1d(np.arange(self.space.size), t)
            x[:, rest] = self._rounded()[0][rest]
            out.append(x)
        return out[0], out[1]

    def _plan(self) -> tuple[list[MatchRequest], dict]:
        k = self.pairs + 1
        ck = self.schedule.c_k(k)
        deltas = self.rng.integers(0, 2, size=(self.params["batch"], self.tuned.size)) * 2 - 1
        plus, minus = self.perturbed(deltas, ck)
        requests = [MatchRequest(a=as_tuple(a), b=as_tuple(b), games=self.params["games"],
                                 tag=(j,)) for j, (a, b) in enumerate(zip(plus, minus))]
        return requests, {"k": k, "deltas": deltas}

    def _update(self, requests: list[MatchRequest], plan: dict,
                outcomes: list[MatchOutcome]) -> dict:
        k, t = plan["k"], self.tuned
        ck, Rk = self.schedule.c_k(k), self.schedule.R_k(k)
        before = self.theta.copy()
        total = 0
        for delta, out in zip(plan["deltas"], outcomes):
            result = (out.points_a - out.points_b) // 2  # W - L of the + side
            total += result
            self.theta[t] = np.clip(self.theta[t] + Rk * ck * result * delta, self.lower[t],
                                    self.upper[t])
            self.pairs += out.games // 2
        self.population = self._rounded()
        return {"iteration": self.pairs, "k": k, "c_k": float(ck.mean()),
                "R_k": float(Rk.mean()), "w_minus_l": int(total),
                "step": float(np.linalg.norm(self.theta - before))}

    def _extra_state(self) -> dict:
        return {"theta": self.theta.tolist(), "pairs": int(self.pairs), "rounding": self.rounding}

    def _load_extra_state(self, state: dict) -> None:
        self._initialize(draw=False)
        theta = np.array(state["theta"], dtype=np.float64)
        if theta.shape != (self.space.size,):
            raise ConfigError(f"strategy '{self.name}': saved theta has shape {theta.shape}, "
                              f"the weight space has {self.space.size} weights")
        self.theta = theta
        self.pairs = int(state["pairs"])
        self.rounding = state.get("rounding", "independent")  # none: a run made before
        if self.rounding not in ROUNDINGS:
            raise ConfigError(f"strategy '{self.name}': saved rounding {self.rounding!r} is not "
                              f"one of {', '.join(ROUNDINGS)}")
        self.population = self._rounded()

