"""How the built-in engine searches: alpha-beta (the default), UCT or probability-limited search.

An engine spec's ``[search]`` table gives the algorithm and its switches; the numeric parameters
(UCT's exploration constant and logistic K, the prior's temperature, the threshold factor) are
weights of the spec, appended after the evaluation's (:data:`SEARCH_WEIGHTS`), so every strategy
tunes them like evaluation weights. Weights are whole numbers in their units (:attr:`SearchWeight.per`:
``uct_c = 141`` is c = 1.41). docs/engine.md describes the searches. Plain Python: configuration
and the players read it without the engine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ConfigError

ALGORITHMS = ("alphabeta", "uct", "probability")
"""The searches, in the order of their codes in the core."""
POLICIES = ("random", "eval", "qsearch", "alphabeta")
"""UCT's simulation policies, in the order of their codes in the core."""
MAX_POLICY_DEPTH = 8
MAX_PLY_CAP = 800
MAX_TREE = 1 << 24
MIN_TREE = 1024
DEFAULT_BUDGET = {"uct": 1000, "probability": 20000, "nodes": 20000}
"""Simulations (uct) or nodes (probability; uct with ``budget = "nodes"``) per move when neither
the limits' nodes nor a time budget is given and the spec's ``[search] nodes`` is not set."""


@dataclass(frozen=True)
class SearchWeight:
    """A numeric search parameter as a weight of the spec."""

    name: str
    """Weight name."""
    field: str
    """The SearchSettings field it sets."""
    per: float
    """Parameter = weight / per (the weight is in 1/per units)."""
    reference: float
    """Default reference value (weight units)."""
    lower: float
    """Default lower bound (weight units)."""
    upper: float
    """Default upper bound (weight units)."""
    option: str
    """UCI option name of ``evotune uci``."""


SEARCH_WEIGHTS = {w.name: w for w in (
    SearchWeight("uct_c", "c", 100, 141, 5, 1000, "UctC"),
    SearchWeight("uct_k", "k", 100, 100, 5, 1000, "UctK"),
    SearchWeight("prior_temperature", "temperature", 1, 100, 1, 2000, "PriorTemperature"),
    SearchWeight("probability_factor", "factor", 1000, 125, 5, 900, "ProbabilityFactor"),
)}
"""Every numeric search parameter; which of them a spec has depends on its algorithm
(:meth:`SearchSettings.weight_names`)."""

_KEYS = ("algorithm", "policy", "prior", "solver", "reuse", "unvisited", "ply_cap", "nodes", "tree",
         "seed", "budget", "reduce")
MAX_REDUCE_GAP = 100_000
"""The largest gap of ``reduce = "model:GAP"`` (model-score units; scores are clamped inside)."""
MAX_REDUCE_LATE = 200
"""The largest K of ``reduce = "late:K"`` (more than a position's quiet moves: none reduced)."""
BUDGET_UNITS = ("simulations", "nodes")
"""What a UCT budget (``--nodes``) counts: simulations, or nodes (positions made or searched,
the unit of alpha-beta's node limit; checked between simulations)."""


@dataclass(frozen=True)
class SearchSettings:
    """The search of a built-in player (plain data: it crosses process boundaries)."""

    algorithm: str = "alphabeta"
    """'alphabeta' (depth-limited, iterative deepening), 'uct' or 'probability'."""
    policy: str = "qsearch"
    """UCT's simulation policy: 'random', 'eval', 'qsearch' or 'alphabeta'."""
    policy_depth: int = 0
    """Depth of the 'alphabeta' policy (written ``alphabeta:D``)."""
    prior: bool = False
    """UCT: PUCT with the move prior; probability: split by the prior instead of uniformly."""
    model: str = ""
    """The prior's move model (``prior = "model:FILE"``, an absolute path; '': the prior is the
    softmax of the move ordering's score); alpha-beta: quiet moves ordered by it."""
    reduce_late: int = 0
    """Alpha-beta (``reduce = "late:K"``): a node's quiet moves after its first K, in the
    order's sequence, are searched a ply shallower first (0: none)."""
    reduce_gap: int = 0
    """Alpha-beta with a move model (``reduce = "model:GAP"``): a quiet move whose model score
    is more than GAP below the node's first quiet move's is searched a ply shallower first."""
    solver: bool = True
    """UCT: the solver rule for proven wins and losses."""
    reuse: bool = True
    """UCT: keep the subtree of the position reached between moves of a game."""
    unvisited: float = 1.0
    """UCT: the value of an unvisited child (the seed's 1; ``inf``: every child once first)."""
    ply_cap: int = 200
    """'random' policy: plies per simulation before the evaluation decides."""
    nodes: int = 0
    """Default budget per move (0: :data:`DEFAULT_BUDGET`) when the limits give none."""
    budget_unit: str = "simulations"
    """UCT: what ``--nodes`` counts, 'simulations' or 'nodes' (as alpha-beta's node limit)."""
    tree: int = 1 << 20
    """UCT: tree rows (nodes) per player; a full tree stops growing, the search goes on."""
    seed: int = 0
    """UCT: seed of the tie-breaking and playout generator (with the position's hash)."""
    c: float = 1.41
    """UCT's exploration constant."""
    k: float = 1.0
    """K of the logistic curve that turns scores into win probabilities (Texel's)."""
    temperature: float = 100.0
    """Softmax temperature of the move prior (prior-score units, centipawn-like)."""
    factor: float = 0.125
    """Probability: the threshold's factor per iteration."""

    @property
    def is_alphabeta(self) -> bool:
        return self.algorithm == "alphabeta"

    @property
    def policy_text(self) -> str:
        return f"alphabeta:{self.policy_depth}" if self.policy == "alphabeta" else self.policy

    @property
    def reductions(self) -> str:
        """', reduce late:K' / ', reduce model:GAP' for :meth:`describe` ('' without; both, as
        the core applies them, when the Python API sets both)."""
        kinds = [f"late:{self.reduce_late}"] if self.reduce_late else []
        kinds += [f"model:{self.reduce_gap}"] if self.reduce_gap else []
        return f", reduce {' or '.join(kinds)}" if kinds else ""

    def weight_names(self) -> tuple[str, ...]:
        """The search weights of this algorithm, in spec order."""
        if self.algorithm == "uct":
            names = ["uct_c", "uct_k"]
        elif self.algorithm == "probability":
            names = ["probability_factor"]
        else:
            return ()
        if self.prior:
            names.append("prior_temperature")
        return tuple(names)

    def with_weights(self, values, where: str = "search") -> SearchSettings:
        """These settings with the parameters of :meth:`weight_names` set from ``values``
        (weight units, in that order); ``where`` prefixes an error."""
        names = self.weight_names()
        values = [float(v) for v in values]
        if len(values) != len(names):
            raise ConfigError(f"{where}: expected {len(names)} values for "
                              f"{', '.join(names) or 'none'}, got {len(values)}")
        changes = {}
        for name, v in zip(names, values):
            w = SEARCH_WEIGHTS[name]
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{where}: weight {name} must be a positive number, got {v:g}")
            changes[w.field] = v / w.per
        out = replace(self, **changes)
        if out.factor >= 1:
            raise ConfigError(f"{where}: weight probability_factor must be below 1000 (a "
                              f"factor < 1), got {out.factor * 1000:g}")
        return out

    def budget(self, nodes: int) -> int:
        """Simulations (uct) or nodes (probability) per move: ``nodes`` when > 0, else the
        spec's default."""
        if nodes > 0:
            return nodes
        unit = "nodes" if self.budget_unit == "nodes" else self.algorithm
        return self.nodes or DEFAULT_BUDGET.get(unit, 0)

    def describe(self) -> str:
        """One line: the algorithm and its settings."""
        if self.is_alphabeta:
            if not self.model:
                return "alphabeta" + self.reductions
            return f"alphabeta, quiet moves by model {Path(self.model).name}{self.reductions}"
        parts = [self.algorithm]
        if self.algorithm == "uct":
            parts += [f"policy {self.policy_text}", f"c {self.c:g}", f"K {self.k:g}"]
            parts += [f"unvisited {self.unvisited:g}", "solver" if self.solver else "no solver"]
            parts += ["budget in nodes"] if self.budget_unit == "nodes" else []
            parts += ["reuse"] if self.reuse else []
        else:
            parts += [f"factor {self.factor:g}"]
        if self.prior:
            what = f"model {Path(self.model).name}" if self.model else "ordering"
            parts.append(f"prior {what} T {self.temperature:g}")
        return ", ".join(parts)


def _flag(table: dict, key: str, where: str, default: bool) -> bool:
    v = table.get(key, default)
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: [search] {key} must be true or false, not {v!r}")
    return v


def _int(table: dict, key: str, where: str, default: int, low: int, high: int) -> int:
    v = table.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise ConfigError(f"{where}: [search] {key} must be an integer from {low} to {high}, "
                          f"not {v!r}")
    return v


MODEL_PREFIX = "model:"


def _prior(table: dict, where: str) -> tuple[bool, str]:
    """(prior on, the move model's absolute path or '') of ``prior``: true, false or
    "model:FILE" (beside the spec, else as given)."""
    v = table.get("prior", False)
    if isinstance(v, bool):
        return v, ""
    if isinstance(v, str) and v.startswith(MODEL_PREFIX) and v[len(MODEL_PREFIX):].strip():
        name = v[len(MODEL_PREFIX):].strip()
        for cand in (Path(where).parent / name, Path(name)):
            if cand.is_file():
                return True, str(cand.resolve())
            if cand.exists():
                raise ConfigError(f"{where}: [search] prior {v!r}: {cand} is not a regular "
                                  "file (a folder, FIFO or device); give a move-model file")
        raise ConfigError(f"{where}: [search] prior {v!r}: move model '{name}' not found "
                          "beside the spec or in the current folder")
    raise ConfigError(f"{where}: [search] prior must be true, false or \"model:FILE\" (a move "
                      f"model, evotune nn train-moves), not {v!r}")


def _reduce(text, out: SearchSettings, where: str) -> SearchSettings:
    """``out`` with the reductions of ``reduce = "late:K"`` or ``"model:GAP"`` (alpha-beta only;
    "model:" with a move model)."""
    kind, _, value = text.partition(":") if isinstance(text, str) else ("", "", "")
    top = MAX_REDUCE_LATE if kind == "late" else MAX_REDUCE_GAP
    if (kind not in ("late", "model") or not (value.isascii() and value.isdigit())
            or not 1 <= int(value) <= top):
        raise ConfigError(f"{where}: [search] reduce must be \"late:K\" (K from 1 to "
                          f"{MAX_REDUCE_LATE}: the quiet moves after a node's first K) or "
                          f"\"model:GAP\" (GAP from 1 to {MAX_REDUCE_GAP}: those the move model "
                          f"scores more than GAP below the first), not {text!r}")
    if out.algorithm != "alphabeta":
        raise ConfigError(f"{where}: [search] reduce belongs to algorithm 'alphabeta', not "
                          f"{out.algorithm!r}")
    if kind == "model" and not out.model:
        raise ConfigError(f"{where}: [search] reduce = {text!r} needs a move model (prior = "
                          "\"model:FILE\"): its scores decide what is reduced")
    if kind == "late":
        return replace(out, reduce_late=int(value))
    return replace(out, reduce_gap=int(value))


def _choice(table: dict, key: str, where: str, choices: tuple[str, ...]) -> str:
    v = table.get(key, choices[0])
    if v not in choices:
        raise ConfigError(f"{where}: [search] {key} must be one of {', '.join(choices)}, not {v!r}")
    return v


def _unvisited(v, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v < 0:
        raise ConfigError(f"{where}: [search] unvisited must be a number >= 0 (the seed's 1) or "
                          f"inf (every child once first), not {v!r}")
    return float(v)


def parse_policy(text, where: str) -> tuple[str, int]:
    """('alphabeta', D) from 'alphabeta:D', (name, 0) for the other policies."""
    if isinstance(text, str):
        name, _, depth = text.partition(":")
        if name in POLICIES and name != "alphabeta" and not _:
            return name, 0
        if name == "alphabeta" and depth.isdigit() and 1 <= int(depth) <= MAX_POLICY_DEPTH:
            return name, int(depth)
    raise ConfigError(f"{where}: [search] policy {text!r} is unknown; use random, eval, qsearch "
                      f"or alphabeta:D (D from 1 to {MAX_POLICY_DEPTH})")


def search_settings(table, where: str = "engine spec") -> SearchSettings:
    """The settings of a ``[search]`` table (numeric parameters at their defaults; the spec
    sets them from its weights). One ConfigError line naming the key for anything invalid."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [search] must be a table (algorithm = \"uct\", ...)")
    extra = sorted(set(table) - set(_KEYS))
    if extra:
        raise ConfigError(f"{where}: [search] has unknown key(s) {', '.join(map(repr, extra))}; "
                          f"allowed: {', '.join(_KEYS)} (the numeric parameters are weights: "
                          f"{', '.join(SEARCH_WEIGHTS)})")
    algorithm = table.get("algorithm", "alphabeta")
    if algorithm not in ALGORITHMS:
        raise ConfigError(f"{where}: [search] algorithm {algorithm!r} is unknown; use "
                          f"{', '.join(ALGORITHMS)}")
    policy, depth = parse_policy(table.get("policy", "qsearch"), where)
    prior, model = _prior(table, where)
    out = SearchSettings(
        algorithm=algorithm, policy=policy, policy_depth=depth,
        prior=prior, model=model, solver=_flag(table, "solver", where, True),
        reuse=_flag(table, "reuse", where, True),
        unvisited=_unvisited(table.get("unvisited", 1.0), where),
        ply_cap=_int(table, "ply_cap", where, 200, 1, MAX_PLY_CAP),
        nodes=_int(table, "nodes", where, 0, 0, 10**12),
        budget_unit=_choice(table, "budget", where, BUDGET_UNITS),
        tree=_int(table, "tree", where, 1 << 20, MIN_TREE, MAX_TREE),
        seed=_int(table, "seed", where, 0, 0, 2**63 - 1))
    if algorithm != "uct":
        only = [k for k in ("policy", "solver", "reuse", "unvisited", "ply_cap", "tree", "seed",
                            "budget") if k in table]
        if only:
            raise ConfigError(f"{where}: [search] {', '.join(only)} belong(s) to algorithm "
                              f"'uct', not {algorithm!r}")
    if algorithm == "alphabeta" and table.get("prior") is True:  # false is the default
        raise ConfigError(f"{where}: [search] prior = true belongs to algorithm 'uct' or "
                          "'probability'; alpha-beta takes a move model for its quiet moves "
                          "(prior = \"model:FILE\")")
    if "reduce" in table:
        out = _reduce(table["reduce"], out, where)
    if algorithm == "alphabeta" and out.model:
        out = replace(out, prior=False)  # no softmax, no temperature: the model orders
    return out
