"""Weight files: every format evotune writes (:func:`render`) and reads back (:func:`parse`).

:data:`FORMATS`: ``json`` (an object ``{name: value}``, dotted names nested one object per table,
a piece-square table laid out as a board; a list with one number per weight is read too),
``python`` (a dict literal), ``csv`` (``name,value`` rows), ``uci`` (``setoption`` lines),
``cutechess`` (``option.X=Y`` arguments), ``spsa`` / ``spsa-fishtest`` (OpenBench / fishtest SPSA
lines, read back by ``--spsa-params``) and ``header`` (C++ ``constexpr int`` tables and scalars).
Values are engine values, ``round(evotune value * scale)``, keyed by the target spec's option
names (engine formats) or evotune's names. :func:`weights_for` reads a WEIGHTS file of any format
by its extension into a full, validated vector of a spec; a round trip gives the written weights
within the rounding the scale implies (0.5 / scale). The formats are described in docs/formats.md.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError, WeightsError
from .fileio import read_text
from .space import check_weights
from .spec.features import PHASES, PIECES, SQUARES, pst_cell
from .spec.file import load_engine_spec
from .spec.model import EngineSpec, WeightParam
from .strategies.spsa import SpsaLine, fishtest_line, openbench_line, parse_spsa_lines

FORMATS = ("json", "csv", "uci", "cutechess", "spsa", "spsa-fishtest", "header", "python")
ENGINE_FORMATS = ("uci", "cutechess", "spsa", "spsa-fishtest", "header")
SPSA_R_END = 0.002


@dataclass(frozen=True)
class ExportParam:
    """One exported weight."""

    name: str
    """evotune's weight name (e.g. 'knight')."""
    key: str
    """The name written in the export (the engine's option name or evotune's name)."""
    value: int
    """Engine value: round(evotune value * scale)."""
    scale: float
    """Engine units per evotune unit."""
    lower: int
    """Lower bound in engine units (from the target spec)."""
    upper: int
    """Upper bound in engine units (from the target spec)."""
    fixed: bool
    """True when the target never tunes this weight (left out of spsa)."""
    c_end: float = 0.0
    """SPSA c_end in engine units (the run's); 0: 1/20 of the bound width, at least 1."""
    r_end: float = 0.0
    """SPSA r_end (the run's); 0: :data:`SPSA_R_END`."""


@dataclass(frozen=True)
class Export:
    """An export: the text and what went into it."""

    fmt: str
    """The format (one of FORMATS)."""
    text: str
    """The exported text (ends with a newline)."""
    params: tuple[ExportParam, ...]
    """The weights written (spsa: only the tunable ones)."""
    omitted: tuple[str, ...]
    """Weights of the run the target engine does not have (left out)."""
    notes: tuple[str, ...]
    """Human-readable notes for stderr (omitted weights, values outside the target's bounds)."""


def check_format(fmt: str) -> str:
    """``fmt`` if known, otherwise ConfigError listing the formats."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format '{fmt}'; use one of {', '.join(FORMATS)}")
    return fmt


def keys_are_options(fmt: str, mapped: bool) -> bool:
    return mapped or fmt in ENGINE_FORMATS


def export_params(names, weights, spec: EngineSpec, *, option_keys: bool,
                  spsa_ends: Mapping[str, tuple[float, float]] | None = None
                  ) -> tuple[tuple[ExportParam, ...], tuple[str, ...], tuple[str, ...]]:
    """Map a weight vector (evotune names and units) onto ``spec``: (params, omitted, notes).
    ``spsa_ends``: ``{name: (c_end, r_end)}`` in evotune units, the SPSA schedule a run used
    (weights it does not name get the default ends)."""
    ends = spsa_ends or {}
    values = dict(zip(names, (float(v) for v in weights)))
    params, notes, untuned = [], [], []
    for w in spec.weights:
        if w.name not in values:
            untuned.append(w.name if w.option_name == w.name else f"'{w.option_name}' ({w.name})")
            continue
        v = values[w.name]
        if not w.lower <= v <= w.upper:
            notes.append(f"{w.name} = {v:g} is outside {spec.name}'s bounds "
                         f"[{w.lower:g}, {w.upper:g}]")
        params.append(ExportParam(
            name=w.name, key=w.option_name if option_keys else w.name,
            value=int(round(v * w.scale)), scale=w.scale,
            lower=int(round(w.lower * w.scale)), upper=int(round(w.upper * w.scale)),
            fixed=bool(w.fixed or w.lower == w.upper),
            c_end=float(ends[w.name][0]) * w.scale if w.name in ends else 0.0,
            r_end=float(ends[w.name][1]) if w.name in ends else 0.0))
    if untuned:  # one note, not one per parameter (a spec may have hundreds)
        notes.insert(0, f"{spec.name}: the run does not tune {names_line(untuned)}; the engine "
                        "keeps its defaults")
    omitted = tuple(n for n in names if n not in spec.names)
    if omitted:
        notes.insert(0, f"{spec.name} has no parameter for {names_line(omitted)}; left out")
    return tuple(params), omitted, tuple(notes)


_CPP_KEYWORDS = frozenset("""
    alignas alignof and asm auto bitand bitor bool break case catch char class compl concept const
    consteval constexpr constinit const_cast continue decltype default delete do double
    dynamic_cast else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not nullptr operator or private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned using
    virtual void volatile wchar_t while xor""".split())


def c_identifier(key: str) -> str:
    """The C++ identifier a header gives the name ``key``: every run of characters other than
    ASCII letters, digits and '_' becomes one '_' ('Mobility (Middle Game)' ->
    'Mobility_Middle_Game'), '_' in front of a leading digit, '_' after a keyword."""
    ident = re.sub(r"[^A-Za-z0-9_]+", "_", key).strip("_") or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if ident in _CPP_KEYWORDS else ident


def _check_keys(fmt: str, params) -> None:
    """One ConfigError line when a name cannot be written in ``fmt`` so that it reads back."""
    spsa = fmt in ("spsa", "spsa-fishtest")
    for p in params:
        if spsa and not p.fixed and ("," in p.key or p.key.startswith("#")):
            raise ConfigError(f"{fmt}: the name {p.key!r} holds a comma or starts with '#', "
                              "which SPSA lines cannot carry; export another format")
        if fmt == "cutechess" and "=" in p.key:
            raise ConfigError(f"cutechess: the option name {p.key!r} holds '=', which "
                              "cutechess-cli's option.NAME=VALUE cannot carry; export 'uci'")
    if fmt == "header":
        seen: dict[str, str] = {}
        for p in params:
            other = seen.setdefault(c_identifier(p.key), p.key)
            if other != p.key:
                raise ConfigError(f"header: the names {other!r} and {p.key!r} both become the C++ "
                                  f"identifier {c_identifier(p.key)}; export another format")


def render(fmt: str, params: tuple[ExportParam, ...], *, comment: str = "") -> str:
    """The text of ``params`` in format ``fmt`` (``comment`` only where the format allows it).
    Names are written as they are but in a header, where each is its :func:`c_identifier`; a name
    a format cannot carry (a comma in an SPSA line, '=' in a cutechess option) is refused."""
    check_format(fmt)
    _check_keys(fmt, params)
    if fmt == "json":
        return _json_text({p.key: p.value for p in params})
    if fmt == "python":
        head = "".join(f"# {line}\n" for line in comment.splitlines())
        return head + "{" + ", ".join(f"{p.key!r}: {p.value}" for p in params) + "}\n"
    if fmt == "csv":
        return "name,value\n" + "".join(f"{_csv_cell(p.key)},{p.value}\n" for p in params)
    if fmt == "uci":
        return "".join(f"setoption name {p.key} value {p.value}\n" for p in params)
    if fmt == "cutechess":
        return " ".join(shlex.quote(f"option.{p.key}={p.value}") for p in params) + "\n"
    if fmt in ("spsa", "spsa-fishtest"):
        line = openbench_line if fmt == "spsa" else fishtest_line
        return "".join(line(SpsaLine(p.key, "int", p.value, p.lower, p.upper,
                                     p.c_end or max((p.upper - p.lower) / 20.0, 1.0),
                                     p.r_end or SPSA_R_END)) + "\n"
                       for p in params if not p.fixed)
    # header
    lines = ["// Generated by evotune.", *(f"// {line}" for line in comment.splitlines()),
             "#pragma once", ""]
    tables = _full_tables(params)
    in_tables = {id(p) for cells in tables.values() for p in cells}
    for phase, cells in tables.items():
        lines += _c_table(phase, cells)
    lines += [f"constexpr int {c_identifier(p.key)} = {p.value};" for p in params
              if id(p) not in in_tables]
    return "\n".join(lines) + "\n"


def _json_text(flat: dict) -> str:
    """Flat names as one object (as before); dotted names as nested objects per table."""
    nested = nest(flat)
    if nested is None or all(not isinstance(v, dict) for v in nested.values()):
        return json.dumps(flat, indent=1) + "\n"
    return _json_value(nested, 0) + "\n"


def _json_value(obj, depth: int) -> str:
    if not isinstance(obj, dict):
        return json.dumps(obj)
    pad, inner = " " * depth, " " * (depth + 1)
    items = [f"{json.dumps(k)}: {_json_value(v, depth + 1)}" for k, v in obj.items()]
    if any(isinstance(v, dict) for v in obj.values()):
        return "{\n" + ",\n".join(inner + it for it in items) + "\n" + pad + "}"
    if set(obj) == set(SQUARES):  # a piece-square table, drawn as a board (rank 8 first)
        rows = [", ".join(f'"{sq}": {json.dumps(obj[sq])}' for sq in SQUARES[8 * r:8 * r + 8])
                for r in range(7, -1, -1)]
        return "{\n" + ",\n".join(inner + row for row in rows) + "\n" + pad + "}"
    return "{" + ", ".join(items) + "}"


def _full_tables(params) -> dict[str, list[ExportParam]]:
    """{phase: 384 params in [piece][square] order} for each phase whose 6 x 64 squares are all
    among ``params`` (identified by evotune name, whatever the export's keys)."""
    cells: dict[tuple[str, str, int], ExportParam] = {}
    for p in params:
        cell = pst_cell(p.name)
        if cell is not None:
            cells[cell] = p
    out = {}
    for phase in PHASES:
        keys = [(phase, piece, sq) for piece in PIECES for sq in range(64)]
        if all(k in cells for k in keys):
            out[phase] = [cells[k] for k in keys]
    return out


def _c_table(phase: str, cells: list[ExportParam]) -> list[str]:
    lines = [f"// pst_{phase}[piece][square]: pieces {', '.join(PIECES)};",
             "// square a1 = 0, b1 = 1, ..., h8 = 63 from White's view (black: square ^ 56).",
             f"constexpr int pst_{phase}[6][64] = {{"]
    for k, piece in enumerate(PIECES):
        lines.append(f"  {{ // {piece}")
        for r in range(8):
            row = cells[64 * k + 8 * r:64 * k + 8 * r + 8]
            lines.append("    " + ", ".join(f"{p.value:4d}" for p in row) + ","
                         + f"  // rank {r + 1}")
        lines.append("  },")
    return lines + ["};", ""]


def _csv_cell(key: str) -> str:
    return '"' + key.replace('"', '""') + '"' if any(c in key for c in ',"\n') else key


def _lookup(spec: EngineSpec) -> dict[str, WeightParam]:
    """Accepted key -> WeightParam: option names, evotune names, and their C identifiers."""
    table: dict[str, WeightParam] = {}
    for w in spec.weights:
        for k in (w.option_name, w.name):
            table.setdefault(k, w)
            table.setdefault(c_identifier(k), w)
    return table


def _pairs(fmt: str, text: str) -> Sequence[tuple[object, Any]]:
    """The export's (key, raw value) pairs as written; :func:`parse` checks and converts them."""
    def bad(what: str) -> ConfigError:
        return ConfigError(f"cannot read this {fmt} export: {what}")

    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise bad("expected an object {name: value}")
        return flatten(data)
    if fmt == "python":
        body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
        try:
            data = ast.literal_eval(body.strip())
        except (ValueError, SyntaxError) as exc:
            raise bad(f"not a dict literal ({exc})") from None
        if not isinstance(data, dict):
            raise bad("expected a dict literal")
        return list(data.items())
    if fmt == "csv":
        rows = [r for r in csv.reader(io.StringIO(text)) if r]
        if not rows or [c.strip() for c in rows[0][:2]] != ["name", "value"]:
            raise bad("the first row must be 'name,value'")
        return [(r[0], r[1]) for r in rows[1:]]
    if fmt == "uci":
        out: list[tuple[str, str]] = []
        for ln in text.splitlines():
            m = re.fullmatch(r"\s*setoption\s+name\s+(.+?)\s+value\s+(\S+)\s*", ln)
            if m:
                out.append((m.group(1), m.group(2)))
            elif ln.strip():
                raise bad(f"unexpected line {ln!r}")
        return out
    if fmt == "cutechess":
        out = []
        for arg in shlex.split(text):
            m = re.fullmatch(r"option\.(.+?)=(.*)", arg)
            if not m:
                raise bad(f"unexpected argument {arg!r}")
            out.append((m.group(1), m.group(2)))
        return out
    if fmt in ("spsa", "spsa-fishtest"):
        return [(p.name, p.start) for p in parse_spsa_lines(text, where=f"{fmt} export")]
    # header
    text = re.sub(r"//[^\n]*", "", text)
    out = []
    for phase, body in re.findall(r"constexpr\s+int\s+pst_(mg|eg)\s*\[\s*6\s*\]\s*\[\s*64\s*\]"
                                  r"\s*=\s*\{(.*?)\}\s*;", text, flags=re.S):
        values = re.findall(r"-?\d+", body)
        if len(values) != 6 * 64:
            raise bad(f"pst_{phase}[6][64] has {len(values)} values, need 384")
        out += [(f"pst.{phase}.{PIECES[k // 64]}.{SQUARES[k % 64]}", v)
                for k, v in enumerate(values)]
    return out + re.findall(r"constexpr\s+int\s+(\w+)\s*=\s*(-?\d+)\s*;", text)


def parse(fmt: str, text: str, spec: EngineSpec) -> dict[str, float]:
    """Read an export back: ``{evotune weight name: value in evotune units}`` (value / scale)."""
    check_format(fmt)
    table = _lookup(spec)
    out: dict[str, float] = {}
    for key, raw in _pairs(fmt, text):
        w = table.get(str(key))
        if w is None:
            raise ConfigError(f"{fmt} export names '{key}', which engine spec {spec.name} does "
                              f"not have; known: {names_line([w.option_name for w in spec.weights], 8)}")
        try:
            out[w.name] = float(raw) / w.scale
        except (TypeError, ValueError):
            raise ConfigError(f"{fmt} export: value {raw!r} of '{key}' is not a number") from None
    return out


# ---- nested objects -------------------------------------------------------------------------------

def nest(pairs: Mapping[str, object]) -> dict | None:
    """``{'a.b.c': v}`` -> ``{'a': {'b': {'c': v}}}``; None when the keys do not nest
    reversibly (an empty part, or a name that is both a value and a prefix of another name)."""
    root: dict = {}
    for key, value in pairs.items():
        parts = key.split(".")
        if not all(parts):
            return None
        node = root
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                return None
        if parts[-1] in node:
            return None
        node[parts[-1]] = value
    return root


def flatten(obj: Mapping, prefix: str = "") -> list[tuple[str, object]]:
    """The inverse of :func:`nest`: ``[(dotted name, leaf value)]`` in document order."""
    out: list[tuple[str, object]] = []
    for key, value in obj.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            out += flatten(value, name)
        else:
            out.append((name, value))
    return out


# ---- weight vectors of a spec ---------------------------------------------------------------------

WEIGHTS_FORMATS = {".json": "json", ".csv": "csv", ".h": "header", ".hpp": "header",
                   ".py": "python"}


def names_line(names, limit: int = 6) -> str:
    """Names for an error line: all of a few, the first ``limit`` of many."""
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def weights_for(spec: EngineSpec, path: str | Path) -> np.ndarray:
    """A full weight vector of ``spec`` (evotune units) from a WEIGHTS file (see the module
    docstring); WeightsError/ConfigError with one line when it does not fit the spec."""
    p = Path(path)
    fmt = WEIGHTS_FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise ConfigError(f"weights file {p}: unknown kind '{p.suffix}'; give a "
                          f"{', '.join(WEIGHTS_FORMATS)} file")
    text = read_text(p, "weights file")
    space = spec.space()
    if fmt == "json":
        try:
            data = json.loads(text)
        except RecursionError:
            raise WeightsError(f"weights file {p}: nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise WeightsError(f"weights file {p}: not valid JSON ({exc.msg} at line "
                               f"{exc.lineno})") from None
        if isinstance(data, list):
            if len(data) != space.size:
                raise WeightsError(f"weights file {p}: a list of {len(data)} values, but "
                                   f"{spec.name} has {space.size} weights "
                                   f"({names_line(space.names)})")
            try:
                listed = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                          else float("x") for v in data]
            except (TypeError, ValueError):
                raise WeightsError(f"weights file {p}: the list holds a value that is not a "
                                   "number") from None
            return full_vector(spec, dict(zip(space.names, listed)), where=f"weights file {p}")
        if not isinstance(data, dict):
            raise WeightsError(f"weights file {p}: expected a list of {space.size} numbers or "
                               f"an object {{name: value}}, got {type(data).__name__}")
    try:
        values = parse(fmt, text, spec)
    except ConfigError as exc:
        raise WeightsError(f"weights file {p}: {exc}") from None
    return full_vector(spec, values, where=f"weights file {p}")


def full_vector(spec: EngineSpec, values: dict, *, where: str) -> np.ndarray:
    """``{name: value}`` -> the spec's full vector; fixed weights left out take their reference.
    Errors name at most a few weights, so a line stays a line for 800-weight specs."""
    space = spec.space()
    missing = [n for n, fixed in zip(space.names, space.fixed) if n not in values and not fixed]
    if missing:
        raise WeightsError(f"{where}: {len(missing)} weight(s) of {spec.name} missing "
                           f"({names_line(missing)}); give every free weight")
    w = np.array([values.get(n, ref) for n, ref in zip(space.names, space.reference)],
                 dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise WeightsError(f"{where}: values must be finite numbers")
    out = [n for n, v, lo, hi in zip(space.names, w, space.lower, space.upper)
           if not lo <= v <= hi]
    if out:
        raise WeightsError(f"{where}: {len(out)} value(s) outside the bounds of {spec.name} "
                           f"({names_line(out)})")
    return w


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
        return space.from_dict(dict(flatten(data)))
    if isinstance(data, list):
        return space.validate(data, what=f"weights file {p}")
    raise WeightsError(f"weights file {p}: expected a list of {space.size} numbers or an "
                       f"object {{name: value}}, got {type(data).__name__}")


def read_spsa_params(path: str | Path, spec: EngineSpec) -> str:
    """An SPSA parameter file (fishtest or OpenBench lines, names and units of the engine spec's
    options) as the SPSA strategy's table: OpenBench lines in evotune names and units (value /
    scale). A fishtest line's kind is 'int' when the engine spec's weights are integral."""
    p = Path(path)
    text = read_text(p, "--spsa-params")
    table = _lookup(spec)  # option names, evotune names (and their C identifiers)
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


def parse_weights_text(text: str) -> np.ndarray:
    """``"100,300,330,500,900,10"`` -> vector (as the CLI's --weights takes it)."""
    try:
        vals = [float(t) for t in text.replace(" ", "").split(",") if t != ""]
    except ValueError:
        raise WeightsError(f"--weights '{text}': expected six comma-separated numbers "
                           "P,N,B,R,Q,M, e.g. 100,300,330,500,900,10") from None
    return check_weights(vals)
