"""Engine spec files (``engines/*.toml``): finding, reading and validating them into an
:class:`~evotune.spec.model.EngineSpec`, with the checks of the names they hold. This module is
the only reader of engine spec files."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

from ..errors import ConfigError, NetError
from ..fileio import file_digest, read_text
from ..paths import DATA_DIR, ENGINES_DIR
from .features import feature_names, is_net
from .model import EngineSpec, NetWeights, WeightParam
from .searchsettings import SEARCH_WEIGHTS, SearchSettings, search_settings
from .start import with_start_values

_WEIGHT_KEYS = {"name", "reference", "lower", "upper", "fixed", "option", "scale"}
_GROUP_KEYS = {"match", "reference", "lower", "upper", "fixed", "scale"}
_SPEC_KEYS = {"name", "kind", "weight", "command", "options", "description", "features", "group",
              "reference_file", "search", "net"}


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


def load_engine_spec(name_or_path: str | Path = "shannon", *,
                     net_weights: NetWeights | None = None) -> EngineSpec:
    """Read and validate an engine spec TOML file (``net_weights``: see :data:`NetWeights`)."""
    path = resolve_engine_spec_path(name_or_path)
    return _spec_from_text(read_text(path, "engine spec"), where=str(path),
                           digest=file_digest(path), net_weights=net_weights)


def engine_spec_with_net(name_or_path: str | Path, net: str | Path, *,
                         net_weights: NetWeights | None = None) -> EngineSpec:
    """The 'nnue' spec ``name_or_path`` playing the net file ``net`` (``nnue:FILE``): as if the
    spec's file said ``net = "FILE"`` (the file's absolute path, written at the top of the
    spec's text, which is what the spec keeps as its text and digest). ConfigError when the spec
    is not an 'nnue' spec or names a net of its own."""
    path = resolve_engine_spec_path(name_or_path)
    text = read_text(path, "engine spec").removeprefix("\ufeff")
    data = _toml(text, str(path))
    if data.get("kind", "builtin") != "builtin" or not is_net(str(data.get("features"))):
        raise ConfigError(f"engine spec {path} does not evaluate with a net (features = "
                          f"\"nnue\"); a net file goes with an nnue spec, e.g. nnue:{net}")
    if "net" in data:
        raise ConfigError(f"engine spec {path} names its own net ({data['net']!r}); give the "
                          "spec alone, or a spec that names none with :FILE")
    absolute = str(Path(net).resolve())
    data["net"] = absolute
    text = f"net = {json.dumps(absolute)}\n{text}"
    digest = hashlib.sha256(text.encode()).hexdigest()
    spec = engine_spec_from_dict(data, where=str(path), net_weights=net_weights)
    return _with_text(spec, text, digest)


def engine_spec_from_text(text: str, *, where: str, digest: str, reference_text: str | None = None,
                          command: tuple[str, ...] | None = None, start_values: str = "",
                          start_source: str = "",
                          net_weights: NetWeights | None = None) -> EngineSpec:
    """An engine spec from the text of its file (a copy a run stored): ``digest`` is the sha256
    of the file it was read from, ``reference_text`` the text of the reference file it names and
    ``command`` the command resolved when it was stored (both replace what ``where`` would
    find); ``start_values`` (a run's start, :func:`~evotune.spec.start.with_start_values`)
    replace its reference values; ``net_weights`` reads an 'nnue' spec's net as weights
    (:func:`load_engine_spec`). The same checks as :func:`load_engine_spec`, and the same
    digest."""
    spec = _spec_from_text(text, where=where, digest=digest, reference_text=reference_text,
                           net_weights=net_weights)
    if command is not None:
        spec = dataclasses.replace(spec, command=tuple(command))
    if start_values:
        try:
            values = json.loads(start_values)
        except json.JSONDecodeError:
            values = None
        if not isinstance(values, dict) or list(values) != list(spec.names):
            raise ConfigError(f"engine spec {where}: its start values are not an object with "
                              f"one number per weight of {spec.name}")
        spec = with_start_values(spec, [values[n] for n in spec.names], source=start_source)
        if spec.start_values != start_values:
            raise ConfigError(f"engine spec {where}: its start values are not in the form "
                              "evotune writes them")
    return spec


def _toml(text: str, where: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"engine spec {where}: not valid TOML ({exc})") from None


def _spec_from_text(text: str, *, where: str, digest: str, reference_text: str | None = None,
                    net_weights: NetWeights | None = None) -> EngineSpec:
    spec = engine_spec_from_dict(_toml(text, where), where=where, reference_text=reference_text,
                                 net_weights=net_weights)
    return _with_text(spec, text, digest)


def _with_text(spec: EngineSpec, text: str, digest: str) -> EngineSpec:
    """``spec`` with the text it was read from, that text's ``digest`` and the spec's digest
    (the text's, combined with its net file's or its reference file's, and its move model's)."""
    combined = digest
    if spec.net:  # the net is part of the engine
        combined = hashlib.sha256((digest + file_digest(Path(spec.net))).encode()).hexdigest()
    if spec.reference_file:
        ref_digest = hashlib.sha256(spec.reference_text.encode()).hexdigest()  # its bytes'
        combined = hashlib.sha256((digest + ref_digest).encode()).hexdigest()
    if spec.search.model:  # the move model too
        combined = hashlib.sha256((combined + file_digest(Path(spec.search.model))).encode()
                                  ).hexdigest()
    return dataclasses.replace(spec, digest=combined, text=text, file_digest=digest)


def resolve_command(command) -> tuple[str, ...]:
    """``command`` with its program and every argument that names an existing file made
    absolute (the program looked up on PATH when it is a bare name), so that it starts the same
    engine from any working directory."""
    out = []
    for i, arg in enumerate(command):
        if i == 0 and os.sep not in arg:
            out.append(shutil.which(arg) or arg)
        elif not os.path.isabs(arg) and (i == 0 or os.path.exists(arg)):
            out.append(os.path.abspath(arg))
        else:
            out.append(arg)
    return tuple(out)


NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:+-]{0,99}")
"""Names of engines, weights and UCI options: no control characters, quotes, brackets or markup,
so that a name can never break a PGN tag, a UCI command line or a report."""


UCI_RESERVED = ("name", "value", "type")
"""Words a UCI option name cannot hold: ``setoption name N value V`` and ``option name N type T``
are split at them."""


def check_option_name(name, what: str) -> str:
    """``name`` when a UCI engine can declare it and take it in ``setoption``: any printable
    text without line breaks, the words of :data:`UCI_RESERVED` or whitespace at its ends or
    doubled (UCI splits at whitespace); one ConfigError line otherwise."""
    ok = (isinstance(name, str) and 0 < len(name) <= 1000 and name.isprintable()
          and " ".join(name.split()) == name)
    if ok and not set(name.split()) & set(UCI_RESERVED):
        return name
    raise ConfigError(f"{what} {name!r} is not a valid UCI option name; it must be printable "
                      "text on one line, single-spaced, without the words "
                      f"{', '.join(UCI_RESERVED)}")


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


def engine_spec_from_dict(data: dict, *, where: str = "engine spec",
                          reference_text: str | None = None,
                          net_weights: NetWeights | None = None) -> EngineSpec:
    """Validate a parsed engine spec: every field of its type, names that are names
    (``reference_text``: the text of its reference file, instead of reading it). An 'nnue' spec
    naming its net, read with ``net_weights`` (:data:`NetWeights`), has its net's output layer
    as weights: the file's values are their reference, [[group]] and [[weight]] tables may set
    their lower, upper and fixed (never the reference, nor a bound the file cannot hold)."""
    _unknown(data, _SPEC_KEYS, where)
    kind = data.get("kind", "builtin")
    if kind not in ("builtin", "uci"):
        raise ConfigError(f"{where}: kind must be 'builtin' or 'uci', not {kind!r}")
    features = str(data.get("features", "shannon"))
    try:
        # a spec that names its feature set has that set's weights; one that does not declares
        # its weights in its [[weight]] tables (as before feature sets existed)
        names = ((() if is_net(features) else feature_names(features))
                 if kind == "builtin" and "features" in data else None)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    net = _net_file(data, where, features if kind == "builtin" else "")
    base: dict = {}
    if kind == "builtin" and is_net(features):
        if "reference_file" in data:
            raise ConfigError(f"{where}: reference_file sets weights of a feature set; a net's "
                              "output layer has its own values as reference")
        if net and net_weights is not None:
            base = {n: (ref, lo, hi, least, most)
                    for n, ref, lo, hi, least, most in net_weights(net)}
            names = tuple(base)
    raw = data.get("weight", [])
    if not isinstance(raw, list) or not isinstance(data.get("group", []), list):
        raise ConfigError(f"{where}: 'weight' and 'group' must be [[weight]] / [[group]] tables")
    if not raw and not data.get("group") and kind == "builtin" and "features" not in data:
        raise ConfigError(f"{where}: no [[weight]] tables; declare the weights the engine exposes")
    ref_path, ref_values, ref_text = _reference_file(data, where, reference_text)
    search = SearchSettings()
    if "search" in data:
        if kind != "builtin":
            raise ConfigError(f"{where}: [search] sets the search of a builtin engine; a "
                              f"'{kind}' engine searches its own way")
        search = search_settings(data["search"], where)
    params = [_weight_param(name, settings, where)
              for name, settings in _weight_settings(
                  data, names, ref_values, where, search.weight_names(), base=base,
                  unnamed=is_net(features) and kind == "builtin" and not base)]
    for p in params[:len(base)]:
        _check_net_weight(p, base[p.name], where)
    if search.weight_names():
        tail = params[-len(search.weight_names()):]
        for bound in ("lower", "upper"):  # every candidate within the bounds is a valid search
            search.with_weights([getattr(p, bound) for p in tail], where=where)
        search = search.with_weights([p.reference for p in tail], where=where)
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
        check_option_name(k, f"{where}: option")
        if isinstance(v, str) and not (v.isprintable() and len(v) <= 1000):
            raise ConfigError(f"{where}: option '{k}' has a value with control characters")
        if not isinstance(v, (str, int, float, bool)):
            raise ConfigError(f"{where}: option '{k}' must be a string, number or boolean")
    description = _typed(data.get("description", ""), str, f"{where}: description")
    default_name = re.sub(r"[^A-Za-z0-9_.:+-]", "-", Path(where).stem).lstrip("_.:+-") or "engine"
    spec = EngineSpec(name=check_name(data.get("name", default_name[:100]), f"{where}: name"),
                      kind=kind, weights=tuple(params), command=tuple(command),
                      options=tuple(options.items()), description=description, path=where,
                      features=features, reference_file=ref_path, reference_text=ref_text,
                      search=search, net=net)
    spec.space()  # validates bounds vs fixed values
    return spec


def _net_file(data: dict, where: str, features: str) -> str:
    """The absolute path of the spec's ``net`` (beside the spec, else as given), or ''. Only a
    builtin 'nnue' spec names one; the file is read when a player is made of the spec."""
    if "net" not in data:
        return ""
    name = _typed(data["net"], str, f"{where}: net")
    if not is_net(features):
        raise ConfigError(f"{where}: net is for a builtin engine with features = \"nnue\"")
    for cand in (Path(where).parent / name, Path(name)):
        if cand.is_file():
            return str(cand.resolve())
    raise NetError(f"{where}: net '{name}' not found beside the spec or in the current folder")


def _reference_file(data: dict, where: str, text: str | None = None) -> tuple[str, dict, str]:
    """(path, {name: value}, text) of the spec's ``reference_file`` (a JSON object of reference
    values, looked up beside the spec, then in evotune/data, unless its ``text`` is given), or
    ('', {}, '')."""
    name = data.get("reference_file")
    if name is None:
        return "", {}, ""
    cands = [Path(where).parent / str(name), DATA_DIR / str(name)]
    path = next((c for c in cands if c.is_file()), None) if text is None else cands[0]
    if path is None:
        raise ConfigError(f"{where}: reference_file '{name}' not found beside the spec or in "
                          f"{DATA_DIR}")
    try:
        text = path.read_bytes().decode("utf-8") if text is None else text
        values = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{where}: reference_file {path}: not a readable JSON file ({exc})") \
            from None
    if not isinstance(values, dict) or not all(isinstance(v, (int, float))
                                               and not isinstance(v, bool)
                                               for v in values.values()):
        raise ConfigError(f"{where}: reference_file {path} must be a JSON object "
                          "{\"weight name\": number, ...}")
    return str(path), values, text


def _check_net_weight(p: WeightParam, base: tuple, where: str) -> None:
    """A net's output weight keeps the file's value as reference and bounds the file can hold."""
    ref, _, _, least, most = base
    at = f"{where}: weight '{p.name}'"
    if p.reference != ref:
        raise ConfigError(f"{at}: a net's output weight has the file's value ({ref:g}) as its "
                          "reference; a table may set its lower, upper and fixed only")
    if p.lower < least or p.upper > most:
        raise ConfigError(f"{at}: bounds [{p.lower:g}, {p.upper:g}] leave [{least:g}, "
                          f"{most:g}], what the net file can hold (int16 weights and bias; a "
                          "scale of 1..100000)")
    if not (float(p.lower).is_integer() and float(p.upper).is_integer()):
        raise ConfigError(f"{at}: bounds [{p.lower:g}, {p.upper:g}] must be whole numbers (the "
                          "net file's integer units)")


def _weight_settings(data: dict, names, ref_values: dict, where: str, search_names=(), *,
                     base: dict | None = None, unnamed: bool = False):
    """(name, settings) of every weight, in engine order. A builtin engine's names come from its
    feature set; [[group]] tables give settings to every weight whose name matches their glob
    ``match`` (later groups win), then the reference file, then a [[weight]] table by name. The
    search's weights ``search_names`` follow, with the defaults of
    :data:`~evotune.spec.searchsettings.SEARCH_WEIGHTS` that a [[weight]] table overrides. ``base``:
    ``{name: (reference, lower, upper, ...)}`` of a net's output weights, the settings the
    tables start from; ``unnamed``: an 'nnue' spec read without its output weights (a table
    naming one is kept for the run that reads them, not checked here)."""
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
        names = tuple(n for n in by_name if n not in search_names)
    unknown = sorted((set(by_name) | set(ref_values)) - set(names) - set(search_names))
    if unknown and not unnamed:
        raise ConfigError(f"{where}: unknown weight name(s) {unknown[:5]}; the names are those "
                          f"of the feature set (evotune features FEN --engine SPEC --all lists them)")
    groups = data.get("group", [])
    for i, g in enumerate(groups):
        if not isinstance(g, dict) or "match" not in g:
            raise ConfigError(f"{where}: group #{i + 1} needs match = \"glob of weight names\"")
        _unknown(g, _GROUP_KEYS, f"{where}: group #{i + 1}")
    out = []
    for name in names:
        settings: dict = {}
        if base and name in base:
            settings.update(zip(("reference", "lower", "upper"), base[name][:3]))
        for g in groups:
            if fnmatchcase(name, str(g["match"])):
                settings.update({k: v for k, v in g.items() if k != "match"})
        if name in ref_values:
            settings["reference"] = ref_values[name]
        settings.update(by_name.get(name, {}))
        out.append((name, settings))
    for name in search_names:
        w = SEARCH_WEIGHTS[name]
        settings = {"reference": w.reference, "lower": w.lower, "upper": w.upper,
                    "option": w.option}
        settings.update(by_name.get(name, {}))
        out.append((name, settings))
    return out


def _weight_param(name: str, w: dict, where: str) -> WeightParam:
    if "reference" not in w:
        raise ConfigError(f"{where}: weight '{name}' has no reference value; give it in a "
                          "[[weight]] or [[group]] table or the reference_file")
    at = f"{where}: weight '{check_option_name(name, f'{where}: weight name')}'"
    ref = _number(w["reference"], f"{at}: reference")
    fixed = _typed(w.get("fixed", False), bool, f"{at}: fixed")
    lo = _number(w.get("lower", ref if fixed else 0.0), f"{at}: lower")
    hi = _number(w.get("upper", ref if fixed else 1000.0), f"{at}: upper")
    scale = _number(w.get("scale", 1.0), f"{at}: scale")
    if scale <= 0:
        raise ConfigError(f"{where}: weight '{name}' scale must be a positive number")
    option = w.get("option", "")
    if option != "":
        check_option_name(option, f"{at}: option")
    return WeightParam(name=name, reference=ref, lower=lo, upper=hi, fixed=fixed,
                       option=option, scale=scale)
