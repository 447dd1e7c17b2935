"""Configuration: frozen dataclasses, defaults < TOML file < flags given, validation with fix hints.

Only this module knows file formats for configuration (run configs and engine specs).
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .space import WeightSpace

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"
ENGINES_DIR = PROJECT_DIR / "engines"

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
_SPEC_KEYS = {"name", "kind", "weight", "command", "options", "description"}


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"engine spec {path}: cannot read it ({exc})") from None
    return engine_spec_from_dict(data, where=str(path))


def engine_spec_from_dict(data: dict, *, where: str = "engine spec") -> EngineSpec:
    """Validate a parsed engine spec."""
    _unknown(data, _SPEC_KEYS, where)
    kind = data.get("kind", "builtin")
    if kind not in ("builtin", "uci"):
        raise ConfigError(f"{where}: kind must be 'builtin' or 'uci', not {kind!r}")
    raw = data.get("weight", [])
    if not raw:
        raise ConfigError(f"{where}: no [[weight]] tables; declare the weights the engine exposes")
    params = []
    for i, w in enumerate(raw):
        _unknown(w, _WEIGHT_KEYS, f"{where}: weight #{i + 1}")
        if "name" not in w or "reference" not in w:
            raise ConfigError(f"{where}: weight #{i + 1} needs at least 'name' and 'reference'")
        ref = float(w["reference"])
        fixed = bool(w.get("fixed", False))
        lo = float(w.get("lower", ref if fixed else 0.0))
        hi = float(w.get("upper", ref if fixed else 1000.0))
        scale = float(w.get("scale", 1.0))
        if not math.isfinite(scale) or scale <= 0:
            raise ConfigError(f"{where}: weight '{w['name']}' scale must be a positive number")
        params.append(WeightParam(name=str(w["name"]), reference=ref, lower=lo, upper=hi,
                                  fixed=fixed, option=str(w.get("option", "")), scale=scale))
    command = data.get("command", [])
    if isinstance(command, str):
        command = [command]
    if kind == "uci" and not command:
        raise ConfigError(f"{where}: a 'uci' engine needs command = [\"/path/to/engine\", ...]")
    spec = EngineSpec(name=str(data.get("name", Path(where).stem)), kind=kind,
                      weights=tuple(params), command=tuple(str(c) for c in command),
                      options=tuple((str(k), v) for k, v in dict(data.get("options", {})).items()),
                      description=str(data.get("description", "")), path=where)
    spec.space()  # validates bounds vs fixed values
    return spec
