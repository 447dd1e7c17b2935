"""An engine spec made from what a UCI engine says about itself (``evotune spec``).

The engine is started once (:class:`~evotune.players.external.ExternalEngine`, the one UCI
implementation) and its ``uci`` answer decides each option's fate (:func:`choose`): a spin
option becomes a weight (its default the reference, its min..max the bounds), a check, combo or
string option a fixed setting written as a comment (the engine's default stands), and an option
that is not a tunable (a resource, a path, a search limit, an analysis or time-management
option, UCI's own) is left out with a comment that says why. An engine's own opening book is
switched off: a book hides the evaluation being tuned, and plays evotune's openings its own way.

Instead of the option list, the weights may come from OpenBench/fishtest SPSA lines
(:func:`~evotune.strategies.spsa.parse_spsa_lines`) or Stockfish's ``TUNE()`` output (its
fishtest lines among the engine's other output, :func:`tune_lines`); their C_end and R_end go
into an SPSA table in the spec's names and units (``--spsa-params``). :func:`spec_text` writes
the commented TOML that :mod:`evotune.spec.file` reads.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..errors import ConfigError, EngineError
from ..space import MAX_ABS_WEIGHT
from ..spec.file import NAME_RE, check_option_name, engine_spec_from_text
from ..weightsio import SpsaLine, openbench_line, parse_spsa_lines
from . import PlayerSpec
from .external import ExternalEngine
from .spec import check_engine_spec
from .uciproto import UciOption

LEFT_OUT = (
    (r"^uci_", "UCI's own option (set by GUIs, not a tunable)"),
    (r"hash|threads|\bcores\b|\bcpus?\b|cache|memory", "a resource, not a tunable"),
    (r"multi ?pv", "analysis output, not a tunable"),
    (r"ponder", "evotune's games do not ponder"),
    (r"book", "the engine's own opening book: evotune plays its openings"),
    (r"path|file|\bdir(ectory)?\b|syzygy|tablebase|bitbase|egbb|egtb|evalfile|network",
     "a file or table base, not a tunable"),
    (r"overhead|slow ?mover|thinking ?time|nodestime|latency|^(search |move )?time$",
     "time management: evotune sets the clock"),
    (r"^(search |max(imum)? )?(depth|nodes|ply)$|(depth|nodes) ?limit",
     "a search limit: evotune sets the limit per move"),
    (r"contempt|draw ?score|skill|strength|\belo\b|personality",
     "a handicap or a bias against an opponent, not a strength tunable"),
    (r"\blog\b|debug|verbose|clear", "output or a command, not a tunable"),
)
"""(pattern on the lower-case option name, why it is left out): options that are clearly not
tunables."""

BOOK = re.compile(r"^own ?book$|^use ?book$|^book$")
"""A check option that switches the engine's own book: written as ``false`` in [options]."""


@dataclass(frozen=True)
class Choice:
    """What the spec does with one option the engine declares."""

    option: UciOption
    """The option as the engine declared it."""
    role: str
    """'weight', 'setting' (a fixed setting, commented), 'off' (the book, set to false) or
    'out' (left out)."""
    reason: str = ""
    """Why ('out', 'off'); '' for a weight or a setting."""


@dataclass(frozen=True)
class MadeSpec:
    """An engine spec made from an engine: its TOML text and what went into it."""

    text: str
    """The spec file's text (commented TOML)."""
    choices: tuple[Choice, ...]
    """Each declared option's fate."""
    weights: tuple[str, ...]
    """The weights' names, in order."""
    spsa_table: str = ""
    """OpenBench SPSA lines in the spec's names and units (from --spsa/--tune input), or ''."""


def engine_options(command: tuple[str, ...]) -> tuple[str, tuple[UciOption, ...]]:
    """(the engine's ``id name``, its declared options in order): the engine started once with
    nothing set, then quit."""
    eng = ExternalEngine(PlayerSpec(name="engine", kind="uci", command=tuple(command)))
    try:
        return eng.name, tuple(eng.options.values())
    finally:
        eng.close()


def _matches(name: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name.lower(), g.lower()) for g in globs)


def choose(opt: UciOption, *, include: tuple[str, ...] = (),
           exclude: tuple[str, ...] = ()) -> Choice:
    """The fate of ``opt``: ``include`` (globs, case-insensitive) limits the weights to the spin
    options they match; ``exclude`` leaves out the options it matches."""
    low = opt.name.lower()
    if opt.type == "check" and BOOK.search(low):
        return Choice(opt, "off", "a book hides the evaluation being tuned (and plays "
                                  "evotune's openings its own way)")
    try:
        check_option_name(opt.name, "option")
    except ConfigError:
        return Choice(opt, "out", "UCI cannot set it (its name holds 'name', 'value' or 'type')")
    if _matches(opt.name, exclude):
        return Choice(opt, "out", "left out by --exclude")
    if opt.type == "button":
        return Choice(opt, "out", "a button (a command, not a value)")
    for pattern, why in LEFT_OUT:
        if re.search(pattern, low):
            return Choice(opt, "out", why)
    if opt.type != "spin":
        return Choice(opt, "setting")
    if include and not _matches(opt.name, include):
        return Choice(opt, "out", "not matched by --include")
    if opt.min is None or opt.max is None or opt.default is None:
        return Choice(opt, "out", "a spin option without a default, min and max")
    try:
        default = int(opt.default)
    except ValueError:
        return Choice(opt, "out", f"its default {opt.default!r} is not an integer")
    if opt.min >= opt.max:
        return Choice(opt, "out", "min = max: nothing to tune")
    if not opt.min <= default <= opt.max:
        return Choice(opt, "out", f"its default {default} lies outside {opt.min}..{opt.max}")
    return Choice(opt, "weight")


def tune_lines(text: str) -> str:
    """The fishtest lines of Stockfish's ``TUNE()`` output (``name,value,min,max,c_end,r_end``,
    printed when the engine starts), every other line of the engine's output (its banner, ``id``,
    ``option``, ``info`` and ``uciok`` lines: a line with no comma, or a UCI answer) blanked so
    that line numbers stay those of the file."""
    out = []
    for raw in str(text).splitlines():
        line = raw.strip()
        chatter = "," not in line or line.split(" ", 1)[0] in ("id", "option", "info", "uciok",
                                                             "readyok", "bestmove")
        out.append("" if chatter else raw)
    return "\n".join(out)


def spsa_weights(lines: list[SpsaLine], options: dict[str, UciOption],
                 where: str) -> list[tuple[str, UciOption, SpsaLine]]:
    """(weight name, the engine's option, line) of each SPSA line: a line names a spin option
    the engine declares (case-insensitive; the engine's spelling is kept); EngineError else."""
    out = []
    for ln in lines:
        opt = options.get(ln.name.lower())
        if opt is None:
            raise EngineError(f"{where}: '{ln.name}' is not an option of the engine; it offers "
                              f"{', '.join(sorted(o.name for o in options.values())) or '(none)'}")
        if opt.type != "spin":
            raise EngineError(f"{where}: '{ln.name}' is a {opt.type} option; an SPSA line "
                              "tunes a spin (integer) option")
        check_option_name(opt.name, f"{where}: option")
        out.append((opt.name, opt, ln))
    return out


def _q(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _q(name)


def _value(opt: UciOption) -> str:
    if opt.type == "check":
        return "true" if (opt.default or "").lower() == "true" else "false"
    if opt.type == "spin" and opt.default is not None and re.fullmatch(r"-?\d+", opt.default):
        return opt.default
    return _q(opt.default or "")


def spec_name(engine_name: str, fallback: str) -> str:
    """A valid spec name from the engine's ``id name`` (characters a name cannot hold become
    '-'), else ``fallback``."""
    for cand in (engine_name, fallback):
        name = re.sub(r"[^A-Za-z0-9 _.:+-]", "-", cand).strip(" _.:+-")[:100].strip()
        if name and NAME_RE.fullmatch(name):
            return name
    return "engine"


def make_spec(*, command: tuple[str, ...], engine_name: str, options: tuple[UciOption, ...],
              name: str, source: str, lines: list[SpsaLine] | None = None,
              include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> MadeSpec:
    """The spec of the engine started by ``command`` that declared ``options``. ``lines``
    (SPSA or TUNE input, named by ``source``): the weights are those lines' options, with their
    start, min and max; else every spin option :func:`choose` keeps."""
    by_name = {o.name.lower(): o for o in options}
    chosen = {o.name: choose(o, include=include, exclude=exclude) for o in options}
    rows: list[tuple[str, UciOption, float, float, float]] = []
    table = ""
    if lines is not None:
        made = spsa_weights(lines, by_name, source)
        tuned = {opt.name for _, opt, _ in made}
        rows = [(n, opt, ln.start, ln.min, ln.max) for n, opt, ln in made]
        table = "\n".join(openbench_line(SpsaLine(n, ln.kind, ln.start, ln.min, ln.max,
                                                   ln.c_end, ln.r_end))
                          for n, _, ln in made) + "\n"
        for n in tuned:
            chosen[n] = Choice(chosen[n].option, "weight")
        for n, c in chosen.items():
            if c.role == "weight" and n not in tuned:
                chosen[n] = Choice(c.option, "setting", f"not in {source}")
    else:
        rows = [(c.option.name, c.option, float(int(c.option.default or 0)),
                 float(c.option.min or 0), float(c.option.max or 0))
                for c in chosen.values() if c.role == "weight"]
    if not rows:
        raise ConfigError(f"engine '{engine_name}' ({' '.join(command)}): no option left to "
                          "tune (no spin option, or --include/--exclude left none); nothing "
                          "written")
    text = _text(command=command, engine_name=engine_name, name=name, source=source,
                 choices=tuple(chosen.values()), rows=rows, spsa=lines is not None)
    return MadeSpec(text=text, choices=tuple(chosen.values()),
                    weights=tuple(r[0] for r in rows), spsa_table=table)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _text(*, command, engine_name, name, source, choices, rows, spsa) -> str:
    off = [c for c in choices if c.role == "off"]
    settings = [c for c in choices if c.role == "setting"]
    out = [c for c in choices if c.role == "out"]
    head = [
        f"# Engine spec of {engine_name}, made by `evotune spec` from {source}.",
        "# Each [[weight]] is a UCI spin option evotune tunes: reference = the "
        + ("start of its SPSA line" if spsa else "engine's default") + ",",
        "# lower/upper = the search range (in the engine's units: scale 1). Narrow a range, "
        "set `fixed = true`",
        "# or delete a table to tune less; the [options] comments list the engine's other "
        "options.",
        f"name = {_q(name)}",
        'kind = "uci"',
        f"command = [{', '.join(_q(c) for c in command)}]",
        "",
        "[options]",
        "# Fixed options, sent once when the engine starts. Uncomment a line to set it "
        "(engine default shown).",
    ]
    for c in off:
        head.append(f"{_key(c.option.name)} = false  # {c.reason}")
    for c in settings:
        kind = c.option.type + (f" ({' / '.join(c.option.choices)})" if c.option.choices else "")
        spin = f" {c.option.min}..{c.option.max}" if c.option.type == "spin" else ""
        why = f"; {c.reason}" if c.reason else ""
        head.append(f"# {_key(c.option.name)} = {_value(c.option)}  # {kind}{spin}{why}")
    if out:
        head.append("# Left out (not tunables):")
        for c in out:
            head.append(f"#   {c.option.name} ({c.option.type}): {c.reason}")
    for weight, opt, ref, lo, hi in rows:
        scale = weight_scale(lo, hi)
        head += ["", "[[weight]]"]
        if scale != 1:
            head.append(f"# the engine's {_num(lo)}..{_num(hi)} pass evotune's +-"
                        f"{MAX_ABS_WEIGHT:g}: evotune units of {scale:g} engine units")
        head += [f"name = {_q(weight)}", f"reference = {_num(ref / scale)}",
                 f"lower = {_num(lo / scale)}", f"upper = {_num(hi / scale)}",
                 f"option = {_q(opt.name)}", f"scale = {scale:g}"]
    return "\n".join(head) + "\n"


def weight_scale(lo: float, hi: float) -> float:
    """Engine units per evotune unit of an option ranging ``lo..hi``: 1, or the smallest of 2, 5,
    10, 20, 50, ... that brings the range within evotune's +-:data:`MAX_ABS_WEIGHT` (the limit of
    every weight value)."""
    need = max(abs(lo), abs(hi)) / MAX_ABS_WEIGHT
    scale = 1.0
    while scale < need:
        scale *= 2.5 if str(int(scale)).startswith("2") else 2.0
    return scale


def spec_from_engine(command: tuple[str, ...], *, name: str = "", fallback_name: str = "engine",
                     table_text: str | None = None, table_kind: str = "", where: str = "",
                     include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> MadeSpec:
    """The spec of the engine ``command`` starts, checked as a run checks its engine before
    anything is written. ``table_text``: the text of an SPSA file (``table_kind`` 'spsa') or of
    Stockfish's TUNE() output ('tune'), named ``where`` in messages; its lines are read (a bad
    one is a ConfigError naming its line) before the engine is started."""
    lines = None
    source = "its UCI options"
    if table_text is not None:
        text = tune_lines(table_text) if table_kind == "tune" else table_text
        lines = parse_spsa_lines(text, where=where)
        if not lines:
            raise ConfigError(f"{where}: no parameter lines (name,start,min,max,c_end,r_end "
                              "or name, int, start, min, max, c_end, r_end)")
        source = where
    engine_name, options = engine_options(command)
    made = make_spec(command=command, engine_name=engine_name, options=options,
                     name=name or spec_name(engine_name, fallback_name), source=source,
                     lines=lines, include=include, exclude=exclude)
    check_engine_spec(engine_spec_from_text(made.text, where=fallback_name,
                                            digest=hashlib.sha256(made.text.encode())
                                            .hexdigest()))
    return made
