"""The strategy interface: ask for mini-matches, tell their outcomes, save and restore exactly.

A Strategy is pure numerics. It never plays a game and never touches disk: the run loop
(``evotune/kinds/games/solver.py``) turns each :class:`MatchRequest` into a colour-balanced mini-match, plays
it, and hands back one :class:`MatchOutcome` per request, in request order.

Determinism. All randomness comes from one generator,
``evotune.seeding.generator(seed, STREAM_STRATEGY)``, and is drawn in :meth:`Strategy.ask`.
:meth:`Strategy.state` saves the generator as it was at the start of the current generation, so a
strategy restored with :meth:`Strategy.from_state` asks exactly the same requests, and continuing
from a restored state is bit-identical to never having stopped.

Parameters. Every strategy declares its parameters as :class:`Param` entries in ``PARAMS``;
``params`` given to the constructor are checked against them (unknown names and values out of
range raise :class:`~evotune.errors.ConfigError` naming the parameter and its valid range).
"""
from __future__ import annotations

import abc
import copy
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import ConfigError
from ..seeding import STREAM_STRATEGY, generator, generator_state, restore_generator
from ..space import WeightSpace
from .ratingrequest import ModelRequest, ModelView

log = logging.getLogger(__name__)

RECOMMEND_RULES = ("mean", "better-half", "rated")
STATE_VERSION = 1


@dataclass(frozen=True)
class MatchRequest:
    """One mini-match the strategy needs played: A against B (colour-balanced, even games)."""

    a: tuple[float, ...]
    """Full weight vector of A (e.g. the DE trial)."""
    b: tuple[float, ...]
    """Full weight vector of B (e.g. the DE target)."""
    games: int
    """Number of games, even (each opening twice, colours swapped)."""
    stop: str = "none"
    """'none', 'decisive' (A must score strictly more points; stop when that cannot change) or
    'sprt' (game pairs until the sequential test ``sprt`` decides, at most ``games``)."""
    sprt: tuple[float, float, float, float] | None = None
    """stop='sprt': the GSPRT's (elo0, elo1, alpha, beta) on the pentanomial pairs of A against B
    (plain numbers: strategies do not import the match layer)."""
    record_leaves: bool = False
    """TD: keep per-move PV-leaf features (``MatchOutcome.leaves``)."""
    tag: tuple[int, ...] = ()
    """The strategy's own bookkeeping (e.g. ``(i,)`` or ``(i, j)``)."""


@dataclass(frozen=True)
class GameLeaves:
    """What TD learning needs of one played game."""

    a_white: bool
    """A had white."""
    result: float
    """White's score: 1, 0.5 or 0."""
    movers: tuple[int, ...]
    """Per ply: 1 if white moved, 0 if black."""
    scores: tuple[int, ...]
    """Per ply: root score, mover's view."""
    leaf_phi: np.ndarray = field(compare=False, repr=False)
    """int64 (plies, width): per ply the PV leaf's integer features phi_int, mover's view, as
    the engine's core computed them (phi = phi_int / denominator; w . phi is the score)."""
    predicted: tuple[bool, ...]
    """Per ply: the next move was the one the PV predicted (False on the last ply)."""
    denominator: int = 1
    """The feature set's fixed-point denominator (1 for untapered sets)."""


@dataclass(frozen=True)
class MatchOutcome:
    """The result of one MatchRequest, in request order."""

    points_a: int
    """A's points: win 2, draw 1, loss 0 per game."""
    points_b: int
    """B's points."""
    games: int
    """Games actually played (an early stop gives fewer than requested)."""
    leaves: tuple[GameLeaves, ...] = ()
    """Per game, only with ``record_leaves``."""
    fitness: float | None = None
    """A's score (0..1) against the run's gauntlet (--opponents), when the run has one; the
    scalar fitness of cmaes and ng:NAME (otherwise they use points_a / (2 games))."""
    verdict: str | None = None
    """stop='sprt': the sequential test's verdict, 'H1' (A is better), 'H0' or None (undecided
    when the cap was reached)."""
    rated: tuple[float, float, float] | None = None
    """selection='model': the rating model over every game of the run so far, this request's
    included (:mod:`evotune.match.rating`): (A's Elo, B's Elo, the standard error of A minus B),
    Elo against the run's anchor; None when the run does not select by the model."""


@dataclass(frozen=True)
class Param:
    """Declaration of one strategy parameter: its default and what values are valid."""

    default: Any
    """Value used when the parameter is not given."""
    kind: str
    """'int', 'float', 'bool', 'choice' or 'text' (any string, e.g. a table)."""
    low: float | None = None
    """Smallest valid value (inclusive unless ``low_open``), or None."""
    high: float | None = None
    """Largest valid value (inclusive), or None."""
    low_open: bool = False
    """True when ``low`` itself is not valid (e.g. a learning rate > 0)."""
    even: bool = False
    """Integers only: must be even (game counts)."""
    choices: tuple[str, ...] = ()
    """Valid values of a 'choice' parameter."""
    doc: str = ""
    """One line: what the parameter does."""

    def describe(self) -> str:
        """The valid range in words, for error messages."""
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "text":
            return "a text"
        if self.kind == "bool":
            return "true or false"
        what = {"int": "an even integer" if self.even else "an integer", "float": "a number"}[
            self.kind]
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return what + (" " + " and ".join(parts) if parts else "")

    def check(self, strategy: str, name: str, value: Any) -> Any:
        """``value`` converted to the parameter's type, or ConfigError naming it and its range."""
        bad = ConfigError(f"strategy '{strategy}': parameter '{name}' = {value!r} is invalid; "
                          f"give {self.describe()}")
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise bad
            return value
        if self.kind == "text":
            if not isinstance(value, str):
                raise bad
            return value
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            return bool(value)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise bad
        if self.kind == "int":
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise bad
            value = int(value)
            if self.even and value % 2:
                raise bad
        else:
            value = float(value)
            if not math.isfinite(value):
                raise bad
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            raise bad
        if self.high is not None and value > self.high:
            raise bad
        return value


POPULATION_INIT_PARAMS = {
    "init": Param("sample", "choice", choices=("sample", "reference"),
                  doc="initial population: uniform in the initial range, or around the "
                      "reference (the reference itself plus draws within +-init_spread)"),
    "init_spread": Param(0.1, "float", low=0.0, high=1.0,
                         doc="init=reference: half-width of the draws, as a fraction of each "
                             "weight's bound width"),
    "finetune": Param(False, "bool",
                      doc="init=reference: each weight's draws within its own scale, |v| / 10 "
                          "within 1/200 and init_spread of its width, as SPSA's finetune "
                          "perturbs (set by a run from earlier weights)"),
}
"""Parameters of the population strategies (de, jde, ea) that choose their starting population."""


class Strategy(abc.ABC):
    """Ask/tell interface of every strategy (one generation per ask/tell pair)."""

    name: ClassVar[str]
    """Registry name ('de', 'jde', 'ea', 'td')."""
    PARAMS: ClassVar[dict[str, Param]]
    """The parameters this strategy accepts."""
    NEEDS_FEATURES: ClassVar[bool] = False
    """True when it learns from the evaluation's feature vector (TD): it then needs the built-in
    engine, since a UCI engine does not expose phi."""
    GAUNTLET: ClassVar[bool] = True
    """True when its candidates can be scored by games against a gauntlet (``--opponents``)
    instead of the strategy's own mini-matches."""
    RECOMMENDS: ClassVar[str] = ""
    """What :meth:`recommended` returns whatever the rule, when it is one vector (SPSA's theta,
    a search distribution's mean); '' for a population, whose rule chooses."""
    CENTRE: ClassVar[str] = "mean"
    """What the readers call the vector a generation is summarised by: 'mean' (a population's,
    or a search distribution's), 'theta' (SPSA's)."""
    STEP: ClassVar[tuple[str, ...]] = ()
    """The generation statistics that say how far it searches around that vector (SPSA: c_k
    and R_k; CMA-ES: sigma), which status and report show in its own terms."""
    TITLE: ClassVar[str] = ""
    """Its name as a reader writes it ('SPSA', 'CMA-ES', 'jDE'; '': the registry name)."""
    ABOUT: ClassVar[str] = ""
    """What it is, in a few words ("fishtest's SPSA"), for the help's list of strategies."""
    RANKED_BY: ClassVar[str] = "the strategy's ranking"
    """What orders a population's individuals when the best is asked for (status, export)."""

    @classmethod
    def step_ends(cls, space: WeightSpace, params: Mapping[str, object]) -> dict[str, tuple[float, float]]:
        """``{weight: (c_end, r_end)}`` in evotune units as a run with ``params`` used them, for
        an engine's SPSA export (``export --format spsa``); {} for a strategy without such ends
        (the export's defaults apply)."""
        return {}

    @classmethod
    def keeps_population(cls) -> bool:
        """True for a strategy that keeps a population (DE, jDE, the EA, TD's learners): its
        size (NP) and deviations mean something; False for one vector and its step."""
        return not cls.RECOMMENDS

    generation: int
    """Generations completed (tell calls)."""
    population: np.ndarray
    """(NP, n) full weight vectors, current (rounded, inside the bounds)."""

    def __init__(self, space: WeightSpace, *, params: Mapping[str, object] | None = None,
                 seed: int = 0) -> None:
        self._setup(space, params, seed)
        self._initialize()
        self._mark()

    # -- construction ----------------------------------------------------------------------------
    def _setup(self, space: WeightSpace, params: Mapping[str, object] | None, seed: int) -> None:
        if not isinstance(space, WeightSpace):
            raise ConfigError(f"strategy '{self.name}': space must be a WeightSpace, "
                              f"not {type(space).__name__}")
        space.require_free(f"strategy '{self.name}'")
        self.space = space
        self.params = self.resolve_params(params)
        self.seed = int(seed)
        self.rng = generator(self.seed, STREAM_STRATEGY)
        self.generation = 0
        self._pending: tuple[list[MatchRequest], Any] | None = None
        self._rng_start: dict = {}
        self._free = space.free
        self.model: ModelView | None = None

    @classmethod
    def resolve_params(cls, params: Mapping[str, object] | None) -> dict:
        """Defaults overridden by ``params``, every value checked (ConfigError otherwise)."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(cls.PARAMS))
        if unknown:
            raise ConfigError(f"strategy '{cls.name}': unknown parameter(s) "
                              f"{', '.join(repr(u) for u in unknown)}; valid parameters: "
                              + "; ".join(f"{k} ({p.describe()})" for k, p in cls.PARAMS.items()))
        out = {}
        for key, spec in cls.PARAMS.items():
            out[key] = spec.check(cls.name, key, params.get(key, spec.default))
        cls._check_params(out)
        return out

    @classmethod  # noqa: B027 (an optional hook: the default checks nothing)
    def _check_params(cls, params: dict) -> None:
        """Cross-parameter checks (subclasses)."""

    @classmethod
    def default_params(cls) -> dict:
        """``{name: default}`` of every parameter."""
        return {k: p.default for k, p in cls.PARAMS.items()}

    @abc.abstractmethod
    def _initialize(self) -> None:
        """Draw the initial population (and per-individual parameters) from ``self.rng``."""

    def _initial_population(self, size: int) -> np.ndarray:
        """The first population of a strategy with :data:`POPULATION_INIT_PARAMS`."""
        if self.params.get("init", "sample") == "reference":
            return self.space.sample_around(self.rng, size, self.params["init_spread"],
                                            finetune=self.params["finetune"])
        return self.space.sample(self.rng, size)

    def _mark(self) -> None:
        """Start of a generation: remember the generator state, forget the pending requests."""
        self._rng_start = copy.deepcopy(generator_state(self.rng))
        self._pending = None

    # -- ask / tell ------------------------------------------------------------------------------
    @property
    def pending_plan(self) -> Any:
        """The strategy's own plan of the generation asked for and not yet told (DE's donors,
        SPSA's perturbations, ...); None before :meth:`ask`."""
        return None if self._pending is None else self._pending[1]

    def ask(self) -> list[MatchRequest]:
        """The requests of the next generation, all from the frozen population.

        Calling ask twice without tell returns the same requests.
        """
        if self._pending is None:
            self._pending = self._plan()
        return list(self._pending[0])

    def rating_model(self) -> ModelRequest | None:
        """The rating model this strategy selects or proposes by, fitted by the run loop over
        every game of the run (its verdicts in ``MatchOutcome.rated``, the fit itself as
        ``tell(model=)``); None: the strategy reads its games only."""
        return None

    def tell(self, outcomes: Sequence[MatchOutcome], *, model: ModelView | None = None) -> dict:
        """Update from one outcome per request (request order); returns JSON-safe stats.
        ``model``: the rating model of :meth:`rating_model` over every game so far, this
        generation's included (the run loop gives it to a strategy that asks for one)."""
        requests = self.ask()
        outcomes = list(outcomes)
        if len(outcomes) != len(requests):
            raise ValueError(f"strategy '{self.name}': tell() got {len(outcomes)} outcomes for "
                             f"{len(requests)} requests; give one MatchOutcome per request, "
                             "in request order")
        for req, out in zip(requests, outcomes):
            if not isinstance(out, MatchOutcome):
                raise ValueError(f"strategy '{self.name}': tell() needs MatchOutcome values, "
                                 f"got {type(out).__name__}")
            if out.games > req.games or out.points_a + out.points_b != 2 * out.games:
                raise ValueError(f"strategy '{self.name}': outcome {out} does not fit request "
                                 f"tag {req.tag} ({req.games} games, 2 points per game)")
        assert self._pending is not None  # ask() above set it
        self.model = model
        stats = self._update(requests, self._pending[1], outcomes)
        self.generation += 1
        self._mark()
        stats = {"generation": self.generation, **stats}
        log.debug("%s generation %d: %s", self.name, self.generation, stats)
        return stats

    @abc.abstractmethod
    def _plan(self) -> tuple[list[MatchRequest], Any]:
        """Draw the next generation's requests; returns (requests, private data for _update)."""

    @abc.abstractmethod
    def _update(self, requests: list[MatchRequest], plan: Any,
                outcomes: list[MatchOutcome]) -> dict:
        """Apply the outcomes; returns the per-generation stats (JSON-safe)."""

    # -- results ---------------------------------------------------------------------------------
    def _vectors(self) -> np.ndarray:
        """The vectors averaged by :meth:`recommended` (TD overrides with its float vectors)."""
        return self.population

    def ranking(self) -> np.ndarray:
        """Indices of the population, best first, by the strategy's own ranking."""
        return np.arange(len(self.population))

    def rated(self) -> np.ndarray | None:
        """The rating model's Elo of each individual as last told (selection='model'), or None
        when the strategy keeps none."""
        return None

    def recommended(self, rule: str = "mean") -> np.ndarray:
        """'mean' of the population, 'better-half' (mean of the better half by ranking()) or
        'rated' (the individual the rating model rates highest; selection='model' only).

        The result is rounded and inside the bounds.
        """
        vectors = self._vectors()
        if rule == "mean":
            chosen = vectors
        elif rule == "rated":
            elo = self.rated()
            if elo is None:
                raise ConfigError(f"strategy '{self.name}': the recommendation rule 'rated' needs "
                                  "the rating model (selection=model)")
            # never told yet (generation 0): every rating is nan, and the mean stands in
            chosen = vectors if np.all(np.isnan(elo)) else \
                vectors[[int(np.argmax(np.where(np.isnan(elo), -np.inf, elo)))]]
        elif rule == "better-half":
            order = self.ranking()
            chosen = vectors[order[:max(1, len(order) // 2)]]
        else:
            raise ConfigError(f"unknown recommendation rule '{rule}'; use one of "
                              f"{', '.join(RECOMMEND_RULES)}")
        mean = np.clip(chosen.mean(axis=0), self.space.lower_array, self.space.upper_array)
        return self.space.round(mean)

    # -- state -----------------------------------------------------------------------------------
    def state(self) -> dict:
        """JSON-safe state: population, generation, generator state, per-individual values."""
        return {
            "strategy": self.name,
            "version": STATE_VERSION,
            "generation": int(self.generation),
            "population": self.population.tolist(),
            "rng": copy.deepcopy(self._rng_start),
            **self._extra_state(),
        }

    def _extra_state(self) -> dict:
        """Per-individual values of the subclass (JSON-safe)."""
        return {}

    def _load_extra_state(self, state: dict) -> None:  # noqa: B027 (an optional hook)
        """Restore what :meth:`_extra_state` saved."""

    @classmethod
    def from_state(cls, space: WeightSpace, *, params: Mapping[str, object] | None, seed: int,
                   state: dict) -> Strategy:
        """Exact restore: ``from_state(s.state()).ask() == s.ask()``; continuing is bit-identical."""
        obj = cls.__new__(cls)
        obj._setup(space, params, seed)
        if not isinstance(state, Mapping) or state.get("strategy") != cls.name:
            got = state.get("strategy") if isinstance(state, Mapping) else type(state).__name__
            raise ConfigError(f"strategy state is for {got!r}, not '{cls.name}'; resume with the "
                              "strategy the run was started with")
        try:
            pop = np.array(state["population"], dtype=np.float64)
            if pop.ndim != 2 or pop.shape[1] != space.size:
                raise ConfigError(f"strategy '{cls.name}': saved population has shape "
                                  f"{pop.shape}, the weight space has {space.size} weights; "
                                  "resume with the engine spec the run was started with")
            if "np" in obj.params and pop.shape[0] != obj.params["np"]:
                raise ConfigError(f"strategy '{cls.name}': saved population has {pop.shape[0]} "
                                  f"individuals but np = {obj.params['np']}; resume with the "
                                  "parameters the run was started with")
            obj.population = pop
            obj.generation = int(state["generation"])
            obj._load_extra_state(state)
            obj.rng = restore_generator(copy.deepcopy(state["rng"]))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"strategy '{cls.name}': saved state is incomplete or corrupt "
                              f"({exc!r}); it cannot be resumed") from None
        obj._mark()
        return obj

    # -- helpers for subclasses ------------------------------------------------------------------
    def _repair_rows(self, x: np.ndarray, *, rule: str, base: np.ndarray | None = None
                     ) -> np.ndarray:
        """``space.repair`` row by row (the 'random' rule draws from ``self.rng``)."""
        out = np.empty_like(x, dtype=np.float64)
        for i in range(x.shape[0]):
            out[i] = self.space.repair(x[i], rule=rule, rng=self.rng,
                                       base=None if base is None else base[i])
        return out

    def _diversity(self) -> float:
        """Mean over the free weights of the population's standard deviation (engine units)."""
        return float(self.population[:, self._free].std(axis=0).mean())


def as_tuple(v: np.ndarray) -> tuple[float, ...]:
    """A weight vector as a tuple of Python floats (for MatchRequest)."""
    return tuple(float(x) for x in v)
