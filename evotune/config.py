"""Configuration: frozen dataclasses, defaults < TOML file < flags given, validation with fix hints.

Only this module knows file formats for configuration (run configs and engine specs).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError, WeightsError
from .featuresets import feature_names
from .space import WeightSpace
from .textfile import read_text

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"
ENGINES_DIR = Path(str(importlib.resources.files("evotune") / "engines"))
"""The shipped engine specs: package data (in a checkout, evotune/engines links to engines/)."""

DEFAULT_BOOK = DATA_DIR / "gnuchess-book.bin"
DEFAULT_OPENINGS = DATA_DIR / "2moves_v1.epd"
HELD_OUT_OPENINGS = DATA_DIR / "8moves_v3.pgn.zip"


# ---- engine specs (engines/*.toml) --------------------------------------------------------------

@dataclass(frozen=True)
class WeightParam:
    """One weight an engine exposes."""

    name: str
    """Weight name (evotune's vocabulary, e.g. 'knight')."""
    reference: float
    """Reference value in evotune units (pawn = 100)."""
    lower: float
    """Lower bound in evotune units."""
    upper: float
    """Upper bound in evotune units."""
    fixed: bool = False
    """True when the weight is never tuned."""
    option: str = ""
    """The engine's parameter / UCI option name for this weight ('' = same as name)."""
    scale: float = 1.0
    """Engine value = round(evotune value * scale)."""

    @property
    def option_name(self) -> str:
        return self.option or self.name


@dataclass(frozen=True)
class EngineSpec:
    """An engine: the weights it exposes, how to start it and how names and scales map."""

    name: str
    """Short name, used in PGN headers and exports."""
    kind: str
    """'builtin' (evotune's own engine) or 'uci' (an external engine started by command)."""
    weights: tuple[WeightParam, ...]
    """The weights, in order."""
    command: tuple[str, ...] = ()
    """The command line that starts a 'uci' engine."""
    options: tuple[tuple[str, object], ...] = ()
    """Fixed UCI options sent at start (name, value)."""
    description: str = ""
    """One line about the engine."""
    path: str = ""
    """The file the spec was read from."""
    features: str = "shannon"
    """Feature set of a 'builtin' engine: shannon, pst or extended (evotune/featuresets.py)."""
    reference_file: str = ""
    """A JSON file of reference values the spec names (part of a run's identity), or ''."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(w.name for w in self.weights)

    def space(self, **overrides) -> WeightSpace:
        """The WeightSpace of this engine (overrides: init_low, init_high, integer)."""
        return WeightSpace(
            names=self.names,
            lower=tuple(float(w.lower) for w in self.weights),
            upper=tuple(float(w.upper) for w in self.weights),
            reference=tuple(float(w.reference) for w in self.weights),
            fixed=tuple(bool(w.fixed) for w in self.weights),
            **overrides,
        )

    def engine_values(self, weights) -> dict[str, int]:
        """``{option name: engine value}`` for a full weight vector in evotune units."""
        return {w.option_name: int(round(float(v) * w.scale)) for w, v in zip(self.weights, weights)}


_WEIGHT_KEYS = {"name", "reference", "lower", "upper", "fixed", "option", "scale"}
_GROUP_KEYS = {"match", "reference", "lower", "upper", "fixed", "scale"}
_SPEC_KEYS = {"name", "kind", "weight", "command", "options", "description", "features", "group",
              "reference_file"}


def _unknown(keys, allowed, where: str) -> None:
    extra = sorted(set(keys) - set(allowed))
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(repr(k) for k in extra)}; "
                          f"allowed: {', '.join(sorted(allowed))}")


def resolve_engine_spec_path(name_or_path: str | Path) -> Path:
    """A spec given as a path, or as a name under engines/ ('shannon' -> engines/shannon.toml)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    for cand in (ENGINES_DIR / f"{name_or_path}.toml", ENGINES_DIR / str(name_or_path)):
        if cand.is_file():
            return cand
    known = sorted(q.stem for q in ENGINES_DIR.glob("*.toml")) if ENGINES_DIR.is_dir() else []
    raise ConfigError(f"engine spec '{name_or_path}' not found; give a .toml path or one of "
                      f"{', '.join(known) or '(none in engines/)'}")


def load_engine_spec(name_or_path: str | Path = "shannon") -> EngineSpec:
    """Read and validate an engine spec TOML file."""
    path = resolve_engine_spec_path(name_or_path)
    try:
        data = tomllib.loads(read_text(path, "engine spec"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"engine spec {path}: not valid TOML ({exc})") from None
    return engine_spec_from_dict(data, where=str(path))


NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:+-]{0,99}")
"""Names of engines, weights and UCI options: no control characters, quotes, brackets or markup,
so that a name can never break a PGN tag, a UCI command line or a report."""


def check_name(name, what: str) -> str:
    """``name`` when it is a valid name (see :data:`NAME_RE`); one ConfigError line otherwise."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name != name.strip():
        raise ConfigError(f"{what} {name!r} is not a valid name; use letters, digits, spaces and "
                          "'_.:+-' (at most 100 characters, starting with a letter or digit)")
    return name


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{what} must be a finite number, not {value!r}")
    return float(value)


def _typed(value, typ, what: str):
    if not isinstance(value, typ) or (typ is not bool and isinstance(value, bool)):
        raise ConfigError(f"{what} must be a {typ.__name__}, not {value!r}")
    return value


def engine_spec_from_dict(data: dict, *, where: str = "engine spec") -> EngineSpec:
    """Validate a parsed engine spec: every field of its type, names that are names."""
    _unknown(data, _SPEC_KEYS, where)
    kind = data.get("kind", "builtin")
    if kind not in ("builtin", "uci"):
        raise ConfigError(f"{where}: kind must be 'builtin' or 'uci', not {kind!r}")
    features = str(data.get("features", "shannon"))
    try:
        # a spec that names its feature set has that set's weights; one that does not declares
        # its weights in its [[weight]] tables (as before feature sets existed)
        names = feature_names(features) if kind == "builtin" and "features" in data else None
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    raw = data.get("weight", [])
    if not isinstance(raw, list) or not isinstance(data.get("group", []), list):
        raise ConfigError(f"{where}: 'weight' and 'group' must be [[weight]] / [[group]] tables")
    if not raw and not data.get("group") and kind == "builtin" and "features" not in data:
        raise ConfigError(f"{where}: no [[weight]] tables; declare the weights the engine exposes")
    ref_path, ref_values = _reference_file(data, where)
    params = [_weight_param(name, settings, where)
              for name, settings in _weight_settings(data, names, ref_values, where)]
    command = data.get("command", [])
    if isinstance(command, str):
        command = [command]
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        raise ConfigError(f"{where}: command must be a list of strings")
    if kind == "uci" and not command:
        raise ConfigError(f"{where}: a 'uci' engine needs command = [\"/path/to/engine\", ...]")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ConfigError(f"{where}: [options] must be a table of UCI option names and values")
    for k, v in options.items():
        check_name(k, f"{where}: option")
        if isinstance(v, str) and not (v.isprintable() and len(v) <= 1000):
            raise ConfigError(f"{where}: option '{k}' has a value with control characters")
        if not isinstance(v, (str, int, float, bool)):
            raise ConfigError(f"{where}: option '{k}' must be a string, number or boolean")
    description = _typed(data.get("description", ""), str, f"{where}: description")
    default_name = re.sub(r"[^A-Za-z0-9_.:+-]", "-", Path(where).stem).lstrip("_.:+-") or "engine"
    spec = EngineSpec(name=check_name(data.get("name", default_name[:100]), f"{where}: name"),
                      kind=kind, weights=tuple(params), command=tuple(command),
                      options=tuple(options.items()), description=description, path=where,
                      features=features, reference_file=ref_path)
    spec.space()  # validates bounds vs fixed values
    return spec


def _reference_file(data: dict, where: str) -> tuple[str, dict]:
    """(path, {name: value}) of the spec's ``reference_file`` (a JSON object of reference values,
    looked up beside the spec, then in evotune/data), or ('', {})."""
    name = data.get("reference_file")
    if name is None:
        return "", {}
    cands = [Path(where).parent / str(name), DATA_DIR / str(name)]
    path = next((c for c in cands if c.is_file()), None)
    if path is None:
        raise ConfigError(f"{where}: reference_file '{name}' not found beside the spec or in "
                          f"{DATA_DIR}")
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{where}: reference_file {path}: not a readable JSON file ({exc})") \
            from None
    if not isinstance(values, dict) or not all(isinstance(v, (int, float))
                                               and not isinstance(v, bool)
                                               for v in values.values()):
        raise ConfigError(f"{where}: reference_file {path} must be a JSON object "
                          "{\"weight name\": number, ...}")
    return str(path), values


def _weight_settings(data: dict, names, ref_values: dict, where: str):
    """(name, settings) of every weight, in engine order. A builtin engine's names come from its
    feature set; [[group]] tables give settings to every weight whose name matches their glob
    ``match`` (later groups win), then the reference file, then a [[weight]] table by name."""
    from fnmatch import fnmatchcase

    tables = data.get("weight", [])
    for i, w in enumerate(tables):
        if not isinstance(w, dict):
            raise ConfigError(f"{where}: weight #{i + 1} must be a table")
        _unknown(w, _WEIGHT_KEYS, f"{where}: weight #{i + 1}")
        if not isinstance(w.get("name"), str):
            raise ConfigError(f"{where}: weight #{i + 1} needs a 'name' (a string)")
    by_name = {str(w["name"]): w for w in tables}
    if len(by_name) != len(tables):
        raise ConfigError(f"{where}: a weight is declared twice in the [[weight]] tables")
    if names is None:  # an external engine: the [[weight]] tables declare its weights in order
        names = tuple(by_name)
    unknown = sorted((set(by_name) | set(ref_values)) - set(names))
    if unknown:
        raise ConfigError(f"{where}: unknown weight name(s) {unknown[:5]}; the names are those "
                          f"of the feature set (evotune features --names SET lists them)")
    groups = data.get("group", [])
    for i, g in enumerate(groups):
        if not isinstance(g, dict) or "match" not in g:
            raise ConfigError(f"{where}: group #{i + 1} needs match = \"glob of weight names\"")
        _unknown(g, _GROUP_KEYS, f"{where}: group #{i + 1}")
    out = []
    for name in names:
        settings: dict = {}
        for g in groups:
            if fnmatchcase(name, str(g["match"])):
                settings.update({k: v for k, v in g.items() if k != "match"})
        if name in ref_values:
            settings["reference"] = ref_values[name]
        settings.update(by_name.get(name, {}))
        out.append((name, settings))
    return out


def _weight_param(name: str, w: dict, where: str) -> WeightParam:
    if "reference" not in w:
        raise ConfigError(f"{where}: weight '{name}' has no reference value; give it in a "
                          "[[weight]] or [[group]] table or the reference_file")
    at = f"{where}: weight '{check_name(name, f'{where}: weight name')}'"
    ref = _number(w["reference"], f"{at}: reference")
    fixed = _typed(w.get("fixed", False), bool, f"{at}: fixed")
    lo = _number(w.get("lower", ref if fixed else 0.0), f"{at}: lower")
    hi = _number(w.get("upper", ref if fixed else 1000.0), f"{at}: upper")
    scale = _number(w.get("scale", 1.0), f"{at}: scale")
    if scale <= 0:
        raise ConfigError(f"{where}: weight '{name}' scale must be a positive number")
    option = w.get("option", "")
    if option != "":
        check_name(option, f"{at}: option")
    return WeightParam(name=name, reference=ref, lower=lo, upper=hi, fixed=fixed,
                       option=option, scale=scale)


# ---- run configuration --------------------------------------------------------------------------

STRATEGY_NAMES = ("de", "jde", "ea", "td", "spsa", "cmaes")
NG_PREFIX = "ng:"


def known_strategy(name: str) -> bool:
    """A registered strategy name, or ``ng:NAME`` (a nevergrad optimiser, checked when built)."""
    return name in STRATEGY_NAMES or (name.startswith(NG_PREFIX) and len(name) > len(NG_PREFIX))
BACKENDS = ("local", "dask")


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run. Defaults are the differential-evolution paper's set-up."""

    strategy: str = "de"
    """Strategy name: de, jde, ea, td, spsa, cmaes or ng:NAME."""
    np: int = 20
    """Population size (DE/jDE/EA) or number of learners (TD)."""
    generations: int = 50
    """Stop after this many generations (0 = no generation limit)."""
    games: int = 4
    """Games per mini-match (even; colour-balanced pairs)."""
    depth: int = 3
    """Search depth per move (plies)."""
    nodes: int = 0
    """Node limit per move (0 = none; the depth still applies)."""
    max_plies: int = 400
    """Ply cap per game (reaching it is a draw)."""
    seed: int = 1
    """The run's seed; every random draw is addressed by position under it."""
    engine: str = "shannon"
    """Engine spec (a name under engines/ or a .toml path) declaring the weight space."""
    openings: str = "book"
    """'book' (the packaged Polyglot book), 'startpos', or an EPD/PGN/.bin file."""
    book_plies: int = 8
    """Plies drawn from a Polyglot book per opening."""
    init_low: float = 0.0
    """Lower end of the uniform initial distribution of free weights."""
    init_high: float = 1000.0
    """Upper end of the uniform initial distribution of free weights."""
    max_games: int = 0
    """Stop when this many games have been played (0 = no limit); checked after each generation."""
    max_seconds: float = 0.0
    """Stop after this much wall time (0 = no limit); checked after each generation."""
    params: tuple[tuple[str, object], ...] = ()
    """Strategy parameters (e.g. F, CR, bounds rule), as (name, value) pairs."""
    workers: int = 0
    """Worker processes (0 = one per core). Does not change results."""
    backend: str = "local"
    """'local' (loky processes) or 'dask' (a dask.distributed cluster). Does not change results."""
    scheduler: str = ""
    """Dask scheduler address, e.g. tcp://host:8786 (backend 'dask')."""
    movetime: float = 0.0
    """Seconds per move for external engines (0 = use depth / nodes)."""
    tc: str = ""
    """Time control 'BASE+INC' in seconds for external engines ('' = none; built-in players keep
    depth / nodes)."""
    time_margin: float = 0.1
    """Seconds a side may overrun its clock before it loses on time (with ``tc``)."""
    resign_score: int = 0
    """Resign adjudication: score (> 0 enables it) ..."""
    resign_moves: int = 0
    """... held for this many own moves (the opponent agreeing) loses."""
    draw_score: int = 0
    """Draw adjudication: |score| <= draw_score (> 0 enables it) ..."""
    draw_moves: int = 0
    """... for this many moves of each side ..."""
    draw_start_ply: int = 0
    """... counted from this ply, is a draw."""
    opponents: str = ""
    """Gauntlet fitness: comma-separated players 'SPEC[:WEIGHTS]' every candidate plays
    colour-balanced games against ('' = the default trial-vs-target mini-matches)."""

    # fields that never change results: excluded from the run's identity
    NON_IDENTITY = ("workers", "backend", "scheduler", "generations", "max_games", "max_seconds")
    # fields added after runs were stored: left out of the identity while at their default, so
    # runs stored before them keep their identity (and can be resumed)
    LATER_FIELDS = ("movetime", "tc", "time_margin", "resign_score", "resign_moves",
                    "draw_score", "draw_moves", "draw_start_ply", "opponents")

    def params_dict(self) -> dict:
        return dict(self.params)

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["params"] = self.params_dict()
        return d

    def identity_dict(self) -> dict:
        d = {k: v for k, v in self.to_dict().items() if k not in self.NON_IDENTITY}
        for k in self.LATER_FIELDS:
            if d[k] == RunConfig.__dataclass_fields__[k].default:
                del d[k]
        if not self.tc and "time_margin" in d:
            del d["time_margin"]  # the margin matters only with a time control
        return d

    def adjudication(self):
        """The run's ``evotune.engine.Adjudication`` (all zero: none)."""
        from .engine import Adjudication

        return Adjudication(resign_score=self.resign_score, resign_moves=self.resign_moves,
                            draw_score=self.draw_score, draw_moves=self.draw_moves,
                            draw_start_ply=self.draw_start_ply)


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


# The scalar fields of RunConfig and their types, taken from the dataclass (annotations are
# strings under `from __future__ import annotations`); `params` is handled on its own.
_TYPES = {f.name: {"int": int, "float": float, "str": str}[f.type]
          for f in dataclasses.fields(RunConfig) if f.name != "params"}


def load_config_file(path: str | Path) -> dict:
    """Read a run config TOML file into a flat dict of known keys (unknown keys are an error).

    Layout: top-level keys are RunConfig fields; a ``[params]`` table holds strategy parameters;
    a ``[cluster]`` table may hold ``backend`` and ``scheduler``.
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
        elif key in _TYPES:
            flat[key] = value
        else:
            raise ConfigError(f"config file {p}: unknown key '{key}'; known keys: "
                              f"{', '.join(sorted(set(_TYPES) | {'params', 'cluster'}))}")
    return flat


def build_run_config(*, file: str | Path | None = None, base: RunConfig | None = None,
                     **flags) -> RunConfig:
    """Defaults < config file < flags given (flags whose value is None are 'not given')."""
    values = (base or RunConfig()).to_dict()
    if file is not None:
        values.update(load_config_file(file))
    for key, value in flags.items():
        if value is None:
            continue
        if key == "params":
            merged = dict(values.get("params") or {})
            merged.update(value)
            values["params"] = merged
        elif key not in _TYPES:
            raise ConfigError(f"unknown option '{key}'")
        else:
            values[key] = value
    for key, typ in _TYPES.items():
        values[key] = _coerce(key, values[key], typ)
    params = values.pop("params") or {}
    cfg = RunConfig(**values, params=tuple(sorted(params.items())))
    validate_run_config(cfg)
    return cfg


FIT_NAMES = ("texel",)
"""Runs that fit weights to positions instead of playing matches (evotune.learn.fitrun); their
settings are the config's params."""


def validate_run_config(cfg: RunConfig) -> None:
    """Raise ConfigError with a fix hint for any invalid value."""
    if cfg.strategy in FIT_NAMES:
        return
    if not known_strategy(cfg.strategy):
        raise ConfigError(f"unknown strategy '{cfg.strategy}'; use one of "
                          f"{', '.join(STRATEGY_NAMES)} or {NG_PREFIX}NAME (a nevergrad "
                          "optimiser, e.g. ng:NGOpt)")
    if cfg.strategy in ("de", "jde") and cfg.np < 4:
        raise ConfigError(f"--np {cfg.np} is too small for {cfg.strategy}: DE/rand/1 needs "
                          "NP >= 4 (three distinct partners besides the target)")
    if cfg.np < 1:
        raise ConfigError(f"--np must be at least 1, got {cfg.np}")
    if cfg.games < 2 or cfg.games % 2:
        raise ConfigError(f"--games {cfg.games}: a colour-balanced match needs an even number "
                          "of games >= 2 (each opening is played twice, colours swapped)")
    if cfg.depth < 1:
        raise ConfigError(f"--depth must be at least 1, got {cfg.depth}")
    if cfg.nodes < 0 or cfg.max_plies < 1 or cfg.book_plies < 0:
        raise ConfigError("nodes and book_plies must be >= 0 and max_plies >= 1")
    if cfg.generations < 0 or cfg.max_games < 0 or cfg.max_seconds < 0:
        raise ConfigError("generations, max_games and max_seconds must be >= 0 (0 = no limit)")
    if cfg.generations == 0 and cfg.max_games == 0 and cfg.max_seconds == 0:
        raise ConfigError("the run has no end: give --generations, max_games or max_seconds")
    if cfg.workers < 0:
        raise ConfigError(f"--workers must be >= 0 (0 = one per core), got {cfg.workers}")
    if cfg.backend not in BACKENDS:
        raise ConfigError(f"unknown backend '{cfg.backend}'; use one of {', '.join(BACKENDS)}")
    if cfg.backend == "dask" and not cfg.scheduler:
        raise ConfigError("backend 'dask' needs --scheduler tcp://HOST:PORT")
    if cfg.init_low > cfg.init_high:
        raise ConfigError(f"init_low {cfg.init_low:g} > init_high {cfg.init_high:g}")
    if not cfg.movetime >= 0 or not cfg.time_margin >= 0:
        raise ConfigError("--movetime and --time-margin must be >= 0 seconds")
    from .players.clock import parse_tc

    if parse_tc(cfg.tc) is not None and (cfg.movetime > 0):
        raise ConfigError("give either --tc or --movetime, not both")
    if min(cfg.resign_score, cfg.resign_moves, cfg.draw_score, cfg.draw_moves,
           cfg.draw_start_ply) < 0 or bool(cfg.resign_score) != bool(cfg.resign_moves) \
            or bool(cfg.draw_score) != bool(cfg.draw_moves):
        raise ConfigError("--resign SCORE MOVES and --draw SCORE MOVES FROM_PLY take positive "
                          "scores and move counts (FROM_PLY >= 0), e.g. --resign 1000 3")
    _check_bounds(cfg)


# Upper bounds of the run settings (an int the engine's int64 counters hold, a depth its
# search stack holds = evotune.engine.api.MAX_DEPTH, a worker count a machine can start).
LIMITS = {"np": 10_000, "games": 10_000, "depth": 64, "nodes": 10**12, "max_plies": 100_000,
          "book_plies": 1_000, "seed": 2**63 - 1, "generations": 10**9, "max_games": 10**12,
          "workers": 1_024}


_TIMES = ("movetime", "max_seconds", "time_margin")


def check_limits(**values) -> None:
    """Settings named as in :data:`LIMITS` (commands other than run share them): whole numbers
    within their range; ``movetime``/``max_seconds``/``init_*``: finite (times >= 0)."""
    for key, value in values.items():
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if key in LIMITS:
            high = LIMITS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
                raise ConfigError(f"{flag} {value} is out of range; give an integer from 0 to "
                                  f"{high}")
        elif not math.isfinite(value) or (key in _TIMES and value < 0):
            raise ConfigError(f"{flag} must be a finite number"
                              + (" >= 0" if key in _TIMES else "")
                              + f", got {value}")


def _check_bounds(cfg: RunConfig) -> None:
    """Every number finite and within what the engine, numpy and the OS can hold."""
    check_limits(**{k: getattr(cfg, k) for k in LIMITS},
                 **{k: getattr(cfg, k) for k in ("init_low", "init_high", "max_seconds",
                                                 "movetime", "time_margin")})
    for key in cfg.params_dict():
        if key in _TYPES:
            raise ConfigError(f"--param {key}: '{key}' is a run setting; give it as --{key.replace('_', '-')} "
                              f"(or '{key} = ...' in the config file), never as a strategy parameter")


def resolve_openings_path(openings: str) -> Path | None:
    """'book' -> the packaged Polyglot book; 'startpos' -> None; otherwise an existing file."""
    if openings == "book":
        return DEFAULT_BOOK
    if openings == "startpos":
        return None
    if openings in ("2moves", "2moves_v1"):
        return DEFAULT_OPENINGS
    p = Path(openings)
    if not p.is_file():
        raise ConfigError(f"openings '{openings}': no such file; give an EPD/PGN/Polyglot .bin "
                          "file, 'book' or 'startpos'")
    return p


def _file_digest(path: Path | None) -> str:
    if path is None:
        return "none"
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _spec_digest(engine: str) -> str:
    """Digest of an engine spec file, and of its reference_file when it names one."""
    path = resolve_engine_spec_path(engine)
    digest = _file_digest(path)
    ref = load_engine_spec(path).reference_file
    if ref:
        digest = hashlib.sha256((digest + _file_digest(Path(ref))).encode()).hexdigest()
    return digest


def run_identity(cfg: RunConfig) -> dict:
    """The identity of a run: hashes of its result-relevant config, engine spec and openings.

    Two runs with the same identity and seed produce the same generations; resume refuses a run
    whose identity differs from the stored one.
    """
    config_json = json.dumps(cfg.identity_dict(), sort_keys=True, default=str)
    parts = {
        "config": hashlib.sha256(config_json.encode()).hexdigest(),
        "engine_spec": _spec_digest(cfg.engine),
        "openings": _file_digest(resolve_openings_path(cfg.openings)),
    }
    parts["hash"] = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    return parts


def config_differences(old: dict, new: dict) -> list[str]:
    """Human-readable 'key: old -> new' lines for the result-relevant keys that differ."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key in RunConfig.NON_IDENTITY:
            continue
        if old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key)!r} -> {new.get(key)!r}")
    return out


def run_config_from_dict(d: dict) -> RunConfig:
    """Rebuild a RunConfig from its to_dict() form (as stored in a manifest)."""
    d = dict(d)
    params = d.pop("params", {}) or {}
    unknown = sorted(set(d) - set(_TYPES))
    if unknown:
        raise ConfigError(f"stored config has unknown key(s) {unknown}")
    return build_run_config(params=params, **d)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def dump_config_toml(cfg: RunConfig) -> str:
    """The resolved config as a TOML file that ``--config`` reads back to the same config."""
    lines = ["# evotune run configuration (evotune run --config FILE)"]
    for key in _TYPES:
        if key in ("backend", "scheduler"):
            continue
        lines.append(f"{key} = {_toml_value(getattr(cfg, key))}")
    lines.append("")
    lines.append("[params]")
    for k, v in cfg.params:
        lines.append(f"{k} = {_toml_value(v)}")
    lines.append("")
    lines.append("[cluster]")
    lines.append(f"backend = {_toml_value(cfg.backend)}")
    lines.append(f"scheduler = {_toml_value(cfg.scheduler)}")
    return "\n".join(lines) + "\n"


def load_weights_file(path: str | Path, spec: EngineSpec | None = None):
    """A full weight vector (float64 array) from a JSON file: a list with one number per weight,
    or an object ``{name: value}``, flat or nested by the dots of the names (fixed weights may
    be left out). Validated against the
    engine spec's weight space (default: the built-in Shannon engine)."""
    spec = spec or load_engine_spec("shannon")
    p = Path(path)
    try:
        data = json.loads(read_text(p, "weights file"))
    except RecursionError:
        raise WeightsError(f"weights file {p}: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise WeightsError(f"weights file {p}: not valid JSON ({exc.msg} at line {exc.lineno}); "
                           "give a list like [100, 300, 330, 500, 900, 10] or an object "
                           '{"knight": 300, ...}') from None
    space = spec.space()
    if isinstance(data, dict):
        from .reporting.tables import flatten  # nested per table, as `export --format json`

        return space.from_dict(dict(flatten(data)))
    if isinstance(data, list):
        return space.validate(data, what=f"weights file {p}")
    raise WeightsError(f"weights file {p}: expected a list of {space.size} numbers or an "
                       f"object {{name: value}}, got {type(data).__name__}")


def read_spsa_params(path: str | Path, engine: str | Path = "shannon") -> str:
    """An SPSA parameter file (fishtest or OpenBench lines, names and units of the engine spec's
    options) as the SPSA strategy's table: OpenBench lines in evotune names and units (value /
    scale). A fishtest line's kind is 'int' when the engine spec's weights are integral."""
    from .strategies.spsa import SpsaLine, openbench_line, parse_spsa_lines

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--spsa-params {p}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--spsa-params {p}: not a text file") from None
    spec = load_engine_spec(engine)
    table = {}
    for w in spec.weights:
        table.setdefault(w.option_name, w)
        table.setdefault(w.name, w)
    lines = []
    for ln in parse_spsa_lines(text, where=f"--spsa-params {p}"):
        w = table.get(ln.name)
        if w is None:
            raise ConfigError(f"--spsa-params {p}: '{ln.name}' is not a parameter of engine "
                              f"spec {spec.name}; known: "
                              f"{', '.join(x.option_name for x in spec.weights)}")
        s = w.scale
        lines.append(openbench_line(SpsaLine(w.name, ln.kind, ln.start / s, ln.min / s,
                                             ln.max / s, ln.c_end / s, ln.r_end)))
    if not lines:
        raise ConfigError(f"--spsa-params {p}: no parameter lines")
    return "\n".join(lines) + "\n"
