"""The configuration of a run (:class:`RunConfig`): defaults < TOML file < flags given, validated
with fix hints, dumped back as TOML (``evotune run --print-config``).

The config groups its settings in value records (:mod:`evotune.kinds.games.settings`: ``play``,
``budget``, ``cluster``, ``start``, ``final_check``) and its game limits as one
:class:`~evotune.limits.Limits` (``play.limits``); its stored forms (the manifest's ``config``,
the TOML file, the identity) keep them as the flat keys runs have always stored (each record's
settings under the flat names of :data:`~evotune.kinds.games.settings.SETTINGS`, ``init_low``,
``max_games``, ...; the limits as :data:`LIMIT_KEYS`: ``depth``, ``nodes``, ..., ``tc`` as given,
the adjudication as ``resign_score`` ... ``draw_start_ply``), so runs stored before read, resume
and hash as then. Three settings are stored under the names runs have always had
(:data:`STORED_NAMES`: the population as ``np``, the final check's games and openings as
``guard_*``); the stored forms are made and read here, at the record's boundary, and nothing
else sees those names."""
from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ...errors import ConfigError, FieldError
from ...fileio import read_text
from ...limits import LIMITS, LimitChanges, Limits, check_limits, tc_text
from ...match.fixtures import check_games
from ...rules import Adjudication
from ...spec.file import _unknown
from ...strategies import keeps_population, known_strategy, strategy_class
from ...strategies import strategy_params as strategy_params_for
from .settings import GROUPS, SETTINGS, Budget, Cluster, FinalCheckSettings, PlaySettings, StartRange

BACKENDS = ("local", "dask")
FINAL_CHECK_HELD_OUT = "held-out"
"""``final_check_openings``: the final check plays openings the run does not tune on (the
default)."""
FINAL_CHECK_OWN_OPENINGS = "run"
"""``final_check_openings``: the final check plays the run's own openings."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run. Defaults are the differential-evolution paper's set-up.

    The strategy, population, parameters, seed and engine are its own fields; the rest are
    grouped in value records (:mod:`evotune.kinds.games.settings`): how the games are played
    (``play``), how long it runs (``budget``), where (``cluster``), where its free weights
    start (``start``) and its final check (``final_check``). Its stored forms are flat
    (:data:`STORED_KEYS`), as runs have always stored them."""

    kind: ClassVar[str] = "games"
    """The run kind a manifest names (fits to positions: 'fit', :class:`TexelConfig`)."""

    strategy: str = "de"
    """Strategy name: one of :data:`~evotune.strategies.STRATEGIES` or ng:NAME."""
    population: int = 20
    """Population size NP (DE/jDE/EA) or number of learners (TD): the ``--np`` flag, stored as
    ``np``."""
    params: tuple[tuple[str, object], ...] = ()
    """Strategy parameters (e.g. F, CR, bounds rule), as (name, value) pairs."""
    seed: int = 1
    """The run's seed; every random draw is addressed by position under it."""
    engine: str = "shannon"
    """Engine spec (a name under engines/ or a .toml path) declaring the weight space."""
    play: PlaySettings = PlaySettings()
    """How the games are played: games per mini-match, limits, openings, book plies, opponents."""
    budget: Budget = Budget()
    """When the run stops: generations, games, wall time (not part of the identity)."""
    cluster: Cluster = Cluster()
    """Where the games are played: workers, backend, scheduler (not part of the identity)."""
    start: StartRange = StartRange()
    """The uniform initial range of the free weights (stored as ``init_low``/``init_high``)."""
    final_check: FinalCheckSettings = FinalCheckSettings()
    """The final check's games and openings (stored as ``guard_*``; not part of the identity)."""

    # settings (flat names, :data:`SETTINGS`) that never change results: their stored keys are
    # excluded from the run's identity
    NON_IDENTITY = ("workers", "backend", "scheduler", "generations", "max_games", "max_seconds",
                    "final_check_games", "final_check_openings")
    # stored keys added after runs were stored: left out of the identity while at their default,
    # so runs stored before them keep their identity (and can be resumed)
    LATER_FIELDS = ("movetime", "tc", "time_margin", "resign_score", "resign_moves",
                    "draw_score", "draw_moves", "draw_start_ply", "opponents")

    def params_dict(self) -> dict:
        """The ``[params]`` as given (the strategy's defaults are not filled in)."""
        return dict(self.params)

    def strategy_params(self) -> dict:
        """The parameters the run gives its strategy: ``[params]`` plus its population
        (``np``), games and the budget where the strategy has them."""
        return strategy_params_for(self.strategy, population=self.population,
                                   games=self.play.games, budget=self.budget.max_games,
                                   params=self.params_dict())

    def to_dict(self) -> dict:
        """The stored form (the manifest's ``config``): every setting as a flat key (a field of
        :data:`STORED_NAMES` under its stored name), the limits as :data:`LIMIT_KEYS`, in the
        order of :data:`STORED_KEYS`."""
        flat = {stored_key(name): getattr(self, name) for name in TOP_LEVEL}
        flat.update({stored_key(name): getattr(getattr(self, group), field)
                     for name, (group, field) in SETTINGS.items()})
        flat.update(flat_limits(self.play.limits), params=self.params_dict())
        return {k: flat[k] for k in STORED_KEYS}

    def identity_dict(self) -> dict:
        left_out = {stored_key(k) for k in self.NON_IDENTITY}
        d = {k: v for k, v in self.to_dict().items() if k not in left_out}
        defaults = _stored_defaults()
        for k in self.LATER_FIELDS:
            if d[k] == defaults[k]:
                del d[k]
        if self.play.limits.tc is None and "time_margin" in d:
            del d["time_margin"]  # the margin matters only with a time control
        return d

    # -- what the readers of any run take from its config (every kind's) ------------------------
    @property
    def method(self) -> str:
        """The strategy (what ``evotune runs`` and ``status`` name the method)."""
        return self.strategy

    @property
    def steps(self) -> int:
        """The planned generations (0 = no generation limit)."""
        return self.budget.generations

    @property
    def max_games(self) -> int:
        """The games budget (0 = none)."""
        return self.budget.max_games

    @property
    def keeps_population(self) -> bool:
        """Whether its strategy keeps a population (:func:`evotune.strategies.keeps_population`;
        a name this version does not know reads as the population its runs stored)."""
        return keeps_population(self.strategy)

    @property
    def vector_name(self) -> str:
        """What its strategy's one vector is called ("SPSA's theta"; the population mean for a
        strategy that states none or a name this version does not know)."""
        try:
            named = strategy_class(self.strategy).RECOMMENDS.split(" (")[0]
        except ConfigError:  # a name this version cannot build (nevergrad missing, a later one)
            named = ""
        return named or "the population mean"

    @property
    def starts_from_given(self) -> bool:
        """True when the run starts from given weights (the spec's reference values: a run from
        earlier weights, a net's output layer, a UCI engine's defaults, ``--param
        init=reference``, or an SPSA table), which its final check plays against; a run from
        random weights has no start worth returning to."""
        params = self.strategy_params()
        return params.get("init") == "reference" or bool(params.get("table"))

    def with_budget(self, **changes) -> RunConfig:
        """This config with some of its :class:`Budget`'s limits changed."""
        return dataclasses.replace(self, budget=dataclasses.replace(self.budget, **changes))

    def with_cluster(self, **changes) -> RunConfig:
        """This config with some of its :class:`Cluster` settings changed."""
        return dataclasses.replace(self, cluster=dataclasses.replace(self.cluster, **changes))

    def summary_items(self) -> list[tuple[str, str]]:
        """(label, value) lines that describe the run (the report's configuration)."""
        params = self.params_dict()
        population = known_strategy(self.strategy) and strategy_class(self.strategy).keeps_population()
        items = [("strategy", self.strategy)]
        items += [("population (NP)", str(self.population))] if population else []
        play, budget = self.play, self.budget
        items += [("games per match", str(play.games)), ("depth", str(play.limits.depth)),
                  ("node limit", str(play.limits.nodes or "none")), ("seed", str(self.seed)),
                  ("engine", self.engine), ("openings", play.openings),
                  ("generation limit", str(budget.generations or "none"))]
        if budget.max_games:
            items.append(("games budget", f"{budget.max_games:,}"))
        if population and params.get("init", "sample") == "sample":  # drawn from the range
            items.append(("initial range", f"[{self.start.low}, {self.start.high}]"))
        if params:
            items.append(("strategy parameters", ", ".join(f"{k}={v}" for k, v in
                                                           sorted(params.items()))))
        return items


STORED_NAMES = {"population": "np",
                # the final check's, stored under its old name (runs made before read as then)
                "final_check_games": "guard_games", "final_check_openings": "guard_openings"}
"""RunConfig settings (flat names: a field, or a record's field as :data:`SETTINGS` names it)
whose stored key (in the manifest's ``config`` and the identity) is spelled
otherwise: the population as ``np`` (DE's NP, as the flag ``--np``), the final check's settings
under the names runs have stored them since before the check had its name. Kept, not versioned,
so that every run stored before reads, resumes and hashes as then."""
FIELD_NAMES = {v: k for k, v in STORED_NAMES.items()}
"""The setting (flat name) of each stored key of :data:`STORED_NAMES`."""
TOP_LEVEL = ("strategy", "population", "seed", "engine")
"""RunConfig's scalar settings that are its own fields (the others are its records', by the flat
names of :data:`SETTINGS`; ``params`` is stored on its own)."""


def stored_key(field: str) -> str:
    """A RunConfig setting's key (its flat name's) in the stored forms (:data:`STORED_NAMES`)."""
    return STORED_NAMES.get(field, field)


ADJUDICATION_KEYS = ("resign_score", "resign_moves", "draw_score", "draw_moves",
                     "draw_start_ply")
"""The stored keys of the adjudication's rules, in :meth:`Adjudication.as_tuple` order."""
LIMIT_KEYS = ("depth", "nodes", "max_plies", "movetime", "tc", "time_margin") + ADJUDICATION_KEYS
"""The stored keys of a config's :class:`Limits` (a time control as the text given, '' = none)."""
STORED_KEYS = tuple(stored_key(k) for k in (
    "strategy", "population", "generations", "games", "depth", "nodes", "max_plies", "seed",
    "engine", "openings", "book_plies", "init_low", "init_high", "max_games", "max_seconds",
    "params", "workers", "backend", "scheduler", "movetime", "tc", "time_margin",
    *ADJUDICATION_KEYS, "opponents", "final_check_games", "final_check_openings"))
"""A stored config's keys, in the order runs have always stored them and ``--print-config``
writes them."""
_LIMIT_TYPES: dict[str, type] = {"depth": int, "nodes": int, "max_plies": int, "movetime": float,
                                 "tc": str, "time_margin": float,
                                 **{k: int for k in ADJUDICATION_KEYS}}


def flat_limits(limits: Limits | LimitChanges) -> dict:
    """``limits`` as :data:`LIMIT_KEYS` (a :class:`LimitChanges`: the keys of the fields given)."""
    given = limits.given() if isinstance(limits, LimitChanges) else {
        f.name: getattr(limits, f.name) for f in dataclasses.fields(limits)}
    flat = {k: v for k, v in given.items() if k not in ("tc", "adjudication")}
    if "tc" in given:
        tc = given["tc"]
        flat["tc"] = tc if isinstance(tc, str) else tc_text(tc)
    if "adjudication" in given:
        flat.update(zip(ADJUDICATION_KEYS, given["adjudication"].as_tuple()))
    return flat


def limits_from_flat(flat: dict) -> Limits:
    """The :class:`Limits` of :data:`LIMIT_KEYS` (each key absent: its default); validated."""
    values = {k: flat[k] for k in LIMIT_KEYS if k in flat and k not in ADJUDICATION_KEYS}
    if any(k in flat for k in ADJUDICATION_KEYS):
        values["adjudication"] = Adjudication(**{k: flat.get(k, 0) for k in ADJUDICATION_KEYS})
    return Limits(**values)


def _stored_defaults() -> dict:
    return RunConfig().to_dict()


def _coerce(name: str, value, typ):
    """``value`` as ``typ``: ints from ints or whole finite floats, floats from numbers, strings
    from strings only (a bool, a list or a table is never silently turned into a setting)."""
    ok = not isinstance(value, bool) and (
        (typ is int and (isinstance(value, int) or (isinstance(value, float)
                                                     and math.isfinite(value)
                                                     and value.is_integer())))
        or (typ is float and isinstance(value, (int, float)))
        or (typ is str and isinstance(value, str)))
    if not ok:
        raise ConfigError(f"'{name}' must be {'a whole number' if typ is int else typ.__name__}, "
                          f"got {value!r}")
    return typ(value)


# The scalar stored keys of RunConfig and their types, in STORED_KEYS order: the dataclass's
# own scalar fields and its records' (annotations are strings under `from __future__ import
# annotations`) and the limits'; `params` is handled on its own.
def _field_type(cls: type, name: str) -> type:
    typ = {f.name: str(f.type) for f in dataclasses.fields(cls)}[name]
    return {"int": int, "float": float, "str": str}[typ]


_SCALAR_TYPES: dict[str, type] = {
    **{stored_key(name): _field_type(RunConfig, name) for name in TOP_LEVEL},
    **{stored_key(name): _field_type(GROUPS[group], field)
       for name, (group, field) in SETTINGS.items()},
    **_LIMIT_TYPES}
_TYPES: dict[str, type] = {k: _SCALAR_TYPES[k] for k in STORED_KEYS if k != "params"}


FILE_KEYS = {k: STORED_NAMES[k] for k in ("final_check_games", "final_check_openings")}
"""A config file's names of stored keys that are spelled otherwise in the manifest (the final
check's, :data:`STORED_NAMES`); files may still use the stored (deprecated) spelling. The
population stays ``np`` in a file, as its flag ``--np``."""
_FILE_NAMES = {v: k for k, v in FILE_KEYS.items()}


def load_config_file(path: str | Path) -> dict:
    """Read a run config TOML file into a flat dict of stored keys (unknown keys are an error).

    Layout: top-level keys are the stored keys (``np``, ``depth``, ...; the final check's as
    ``final_check_games`` and ``final_check_openings``, :data:`FILE_KEYS`); a ``[params]`` table
    holds strategy parameters; a ``[cluster]`` table may hold ``backend`` and ``scheduler``.
    """
    p = Path(path)
    try:
        data = tomllib.loads(read_text(p, "config file"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {p}: not valid TOML ({exc})") from None
    flat: dict = {}
    for key, value in data.items():
        if key == "params":
            if not isinstance(value, dict):
                raise ConfigError(f"config file {p}: [params] must be a table")
            flat["params"] = dict(value)
        elif key == "cluster":
            if not isinstance(value, dict):
                raise ConfigError(f"config file {p}: [cluster] must be a table")
            _unknown(value, ("backend", "scheduler"), f"config file {p}: [cluster]")
            flat.update(value)
        elif key in _TYPES or key in FILE_KEYS:
            stored = FILE_KEYS.get(key, key)
            if stored in flat:
                raise ConfigError(f"config file {p}: '{key}' is given twice (as "
                                  f"'{_FILE_NAMES.get(stored, stored)}' and '{stored}')")
            flat[stored] = value
        else:
            known = {_FILE_NAMES.get(k, k) for k in _TYPES} | {"params", "cluster"}
            raise ConfigError(f"config file {p}: unknown key '{key}'; known keys: "
                              f"{', '.join(sorted(known))}")
    return flat


def build_run_config(*, file: str | Path | None = None, base: RunConfig | None = None,
                     limits: LimitChanges | None = None, **flags) -> RunConfig:
    """Defaults < config file < flags given (flags whose value is None are 'not given'), the
    flags as RunConfig's flat settings (``population``, ``max_games``, ``final_check_games``:
    :data:`TOP_LEVEL` and :data:`~evotune.kinds.games.settings.SETTINGS`; the limits as
    :data:`LIMIT_KEYS`); ``limits``: the limit flags given, each over the file's key (a flag's
    time control with the file's time per move is refused, as both in one file are)."""
    values = (base or RunConfig()).to_dict()
    if file is not None:
        values.update(load_config_file(file))
    if limits is not None:
        flags = {**flat_limits(limits), **flags}
    for key, value in flags.items():
        if value is None:
            continue
        if key == "params":
            merged = dict(values.get("params") or {})
            merged.update(value)
            values["params"] = merged
        elif key in FIELD_NAMES or stored_key(key) not in _TYPES:  # a stored name is no flag
            raise ConfigError(f"unknown option '{key}'")
        else:
            values[stored_key(key)] = value
    for key, typ in _TYPES.items():
        values[key] = _coerce(key, values[key], typ)
    params = values.pop("params") or {}
    cfg = _from_stored(values, tuple(sorted(params.items())))
    validate_run_config(cfg)
    return cfg


def _from_stored(values: dict, params: tuple[tuple[str, object], ...]) -> RunConfig:
    """The RunConfig of every scalar stored key's value (coerced): the flat settings put in
    their records (:data:`SETTINGS`), the limits made from :data:`LIMIT_KEYS`."""
    fields: dict[str, dict] = {group: {} for group in GROUPS}
    fields["play"]["limits"] = limits_from_flat(values)
    top = {}
    for key, value in values.items():
        name = FIELD_NAMES.get(key, key)
        if name in SETTINGS:
            group, field = SETTINGS[name]
            fields[group][field] = value
        elif key not in LIMIT_KEYS:
            top[name] = value
    return RunConfig(**top, params=params,
                     **{group: cls(**fields[group]) for group, cls in GROUPS.items()})


def validate_run_config(cfg: RunConfig) -> None:
    """Raise ConfigError with a fix hint for any invalid value."""
    np_param = strategy_class(cfg.strategy).PARAMS.get("np")  # unknown: ConfigError
    if np_param is not None and np_param.low is not None and cfg.population < np_param.low:
        raise ConfigError(f"--np {cfg.population} is too small for {cfg.strategy}: it needs NP >= "
                          f"{np_param.low:g} ({np_param.doc})")
    if cfg.population < 1:
        raise ConfigError(f"--np must be at least 1, got {cfg.population}")
    check_games(cfg.play.games)
    # depth, nodes, clocks, ply cap, adjudication: the Limits checked them when made
    if cfg.play.book_plies < 0:
        raise FieldError("book_plies", f"must be >= 0, got {cfg.play.book_plies}")
    budget = cfg.budget
    if budget.generations < 0 or budget.max_games < 0 or budget.max_seconds < 0:
        raise ConfigError("generations, max_games and max_seconds must be >= 0 (0 = no limit)")
    if budget.generations == 0 and budget.max_games == 0 and budget.max_seconds == 0:
        raise ConfigError("the run has no end: give --generations, max_games or max_seconds")
    games = cfg.final_check.games
    if (games < -1 or games % 2 or games > LIMITS["games"]) and games != -1:
        raise FieldError("final_check_games", f"must be 0 (no final check) or an even number of "
                                              f"games up to {LIMITS['games']} (-1: 10% of the "
                                              f"budget), got {games}")
    if not cfg.final_check.openings:
        raise FieldError("final_check_openings",
                         f"must be '{FINAL_CHECK_HELD_OUT}', '{FINAL_CHECK_OWN_OPENINGS}' "
                         "or openings ('2moves', 'book', a file), not empty")
    cluster = cfg.cluster
    if cluster.workers < 0:
        raise ConfigError(f"--workers must be >= 0 (0 = one per core), got {cluster.workers}")
    if cluster.backend not in BACKENDS:
        raise ConfigError(f"unknown backend '{cluster.backend}'; use one of "
                          f"{', '.join(BACKENDS)}")
    if cluster.backend == "dask" and not cluster.scheduler:
        raise ConfigError("backend 'dask' needs --scheduler tcp://HOST:PORT")
    if cfg.start.low > cfg.start.high:
        raise ConfigError(f"init_low {cfg.start.low:g} > init_high {cfg.start.high:g}")
    _check_bounds(cfg)


def _check_bounds(cfg: RunConfig) -> None:
    """Every number finite and within what the engine, numpy and the OS can hold."""
    # LIMITS names the settings as their flags (--np), which are their stored keys
    stored = cfg.to_dict()
    check_limits(**{k: stored[k] for k in LIMITS if k not in LIMIT_KEYS},
                 **{k: stored[k] for k in ("init_low", "init_high", "max_seconds")})
    for key in cfg.params_dict():
        if key in _TYPES or key in FILE_KEYS:
            name = _FILE_NAMES.get(key, key)
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"--param {key}: '{key}' is a run setting; give it as {flag} "
                              f"(or '{name} = ...' in the config file), never as a strategy "
                              "parameter")


def run_config_from_dict(d: dict) -> RunConfig:
    """Rebuild a RunConfig from its to_dict() form (as stored in a manifest: the stored keys of
    :data:`STORED_NAMES` read as their fields)."""
    d = dict(d)
    # runs stored before final checks existed have none
    d.setdefault(stored_key("final_check_games"), 0)
    # runs stored before the check's openings were a setting checked on their own openings
    d.setdefault(stored_key("final_check_openings"), FINAL_CHECK_OWN_OPENINGS)
    params = d.pop("params", {}) or {}
    unknown = sorted(set(d) - set(_TYPES))
    if unknown:
        raise ConfigError(f"stored config has unknown key(s) {unknown}")
    return build_run_config(params=params, **{FIELD_NAMES.get(k, k): v for k, v in d.items()})


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def dump_config_toml(cfg: RunConfig) -> str:
    """The resolved config as a TOML file that ``--config`` reads back to the same config."""
    lines = ["# evotune run configuration (evotune run --config FILE)"]
    stored = cfg.to_dict()
    for key in _TYPES:
        if key in ("backend", "scheduler"):
            continue
        lines.append(f"{_FILE_NAMES.get(key, key)} = {_toml_value(stored[key])}")
    lines.append("")
    lines.append("[params]")
    for k, v in cfg.params:
        lines.append(f"{k} = {_toml_value(v)}")
    lines.append("")
    lines.append("[cluster]")
    lines.append(f"backend = {_toml_value(cfg.cluster.backend)}")
    lines.append(f"scheduler = {_toml_value(cfg.cluster.scheduler)}")
    return "\n".join(lines) + "\n"
