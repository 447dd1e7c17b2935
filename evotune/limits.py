"""How a game is limited: search depth, nodes, time per move, a time control, a ply cap and
adjudication. :class:`Limits` is one value object validated in its constructor (as python-chess's
``chess.engine.Limit`` is a value); every settings record (runs, matches, datagen, fits, verify)
embeds one instead of repeating the fields; :class:`LimitChanges` is the limits a command line
gives over another layer's (a config file, a run's own). :data:`LIMITS` bounds every integer
setting."""
from __future__ import annotations

import dataclasses
import math
import operator
import os
import re
from dataclasses import dataclass, field, fields

from .errors import ConfigError, FieldError
from .rules import Adjudication

DEFAULT_MARGIN = 0.1
"""Seconds a side may overrun its clock before it loses on time (cutechess-cli and fastchess call
this 'timemargin'; their default 0 ms suits C++ drivers, evotune reads the pipes from Python)."""


@dataclass(frozen=True)
class TimeControl:
    """``base`` seconds for the game plus ``inc`` seconds per move."""

    base: float
    """Seconds on each clock at the start."""
    inc: float = 0.0
    """Seconds added after each own move."""
    text: str = field(default="", compare=False, repr=False)
    """The text it was read from, as given ('': made from numbers); a run's stored config keeps
    it, so '60' stays '60' (equality and the PGN tag go by base and inc)."""

    def __str__(self) -> str:
        return f"{self.base:g}+{self.inc:g}"

    def given(self) -> str:
        """The text it was read from, else 'BASE+INC'."""
        return self.text or str(self)

    def pgn(self) -> str:
        """The PGN ``TimeControl`` tag value (seconds): '10+0.1'."""
        return str(self)


def tc_text(tc: TimeControl | None) -> str:
    """A time control's text as given ('' for none): what stored configs and records hold."""
    return "" if tc is None else tc.given()


MAX_SECONDS = 86_400.0
"""The longest time per move, clock, increment or margin a game takes (a day): more is a typo
that would make a game wait forever."""


_TC = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(?:\+(\d+(?:\.\d*)?|\.\d+))?")


def parse_tc(text: str | None) -> TimeControl | None:
    """``'BASE+INC'`` or ``'BASE'`` in seconds -> TimeControl; '' or None -> None."""
    if text is None or str(text).strip() == "":
        return None
    raw = str(text).strip()
    m = _TC.fullmatch(raw)  # plain decimals only: '10+' or '1e3' is a typo, not a clock
    base, inc = (float(m[1]), float(m[2] or 0.0)) if m else (math.nan, math.nan)
    if not (0 < base <= MAX_SECONDS and 0 <= inc <= MAX_SECONDS):  # nan fails too
        raise ConfigError(f"--tc {raw!r}: give BASE+INC in seconds with 0 < BASE <= "
                          f"{MAX_SECONDS:g} and 0 <= INC <= {MAX_SECONDS:g}, e.g. --tc 10+0.1 or "
                          "--tc 60")
    return TimeControl(base=base, inc=inc, text=str(text))


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


def check_workers(workers: int) -> None:
    """Local worker processes: 0 (one per core) up to 4 per core of this machine."""
    cores = os.cpu_count() or 1
    if not 0 <= workers <= 4 * cores:
        raise ConfigError(f"--workers {workers}: give 0 (one per core) up to {4 * cores} (4 per "
                          f"core on this machine)")


def resolve_workers(workers: int) -> int:
    """The worker processes ``workers`` asks for: itself, or one per core for 0."""
    return workers if workers > 0 else max(1, os.cpu_count() or 1)


def _whole(name: str, value, low: int) -> int:
    high = LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        try:  # numpy integers are whole numbers too
            value = operator.index(value)
        except TypeError:
            value = None
        if isinstance(value, bool) or value is None or not low <= value <= high:
            raise FieldError(name, f"must be an integer from {low} to {high}")
    return int(value)


def _seconds(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= MAX_SECONDS:
        raise FieldError(name, f"must be a number of seconds from 0 to {MAX_SECONDS:g}, got "
                               f"{value!r}")
    return float(value)


@dataclass(frozen=True)
class Limits:
    """How long each side may think and how long a game may last; validated when made.

    Built-in alpha-beta players search to ``depth`` (and ``nodes`` when > 0); external engines
    and built-in UCT / probability-limited players (evotune/spec/searchsettings.py) get ``movetime``
    seconds per move, or real clocks under ``tc``, or else depth / nodes (UCT: ``nodes``
    simulations; 0: the spec's default budget).
    """

    depth: int = 3
    """Search depth per move in plies (1..64)."""
    nodes: int = 0
    """Node limit per move (0 = none; the depth still applies)."""
    movetime: float = 0.0
    """Seconds per move for external engines and built-in UCT / probability players (0 = use
    depth / nodes)."""
    tc: TimeControl | None = None
    """A time control for external engines and built-in UCT / probability players (None: depth /
    nodes / movetime); 'BASE+INC' text is parsed."""
    time_margin: float = DEFAULT_MARGIN
    """Seconds a side may overrun its clock before it loses on time (with ``tc``)."""
    max_plies: int = 400
    """Ply cap per game (plies after the opening); reaching it is a draw."""
    adjudication: Adjudication = Adjudication()
    """When a game is stopped early (all zero: never)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "depth", _whole("depth", self.depth, 1))
        set_(self, "nodes", _whole("nodes", self.nodes, 0))
        set_(self, "max_plies", _whole("max_plies", self.max_plies, 1))
        set_(self, "movetime", _seconds("movetime", self.movetime))
        set_(self, "time_margin", _seconds("time_margin", self.time_margin))
        if isinstance(self.tc, str) or self.tc is None:
            set_(self, "tc", parse_tc(self.tc))
        elif not isinstance(self.tc, TimeControl):
            raise FieldError("tc", f"must be a time control 'BASE+INC', got {self.tc!r}")
        if self.tc is not None and self.movetime > 0:
            raise ConfigError("give either --tc or --movetime (a time control or a time per move), "
                              "not both")
        a = self.adjudication
        if not isinstance(a, Adjudication):
            raise FieldError("adjudication", f"must be an Adjudication, got {a!r}")
        values = a.as_tuple()
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values) \
                or min(values) < 0 or bool(a.resign_score) != bool(a.resign_moves) \
                or bool(a.draw_score) != bool(a.draw_moves):
            raise FieldError("adjudication", "takes positive scores and move counts (the draw's "
                             "start ply >= 0), e.g. resign 1000 3; 0 turns a rule off")


@dataclass(frozen=True)
class LimitChanges:
    """Limits given over a lower layer's (``evotune run``: flags over its config file;
    ``evotune verify``: over the run's own limits): each field None when not given. The fields
    given are a valid :class:`Limits` on their own (checked when made), so a bad flag is named
    before anything below it is read."""

    depth: int | None = None
    """Search depth per move in plies."""
    nodes: int | None = None
    """Node limit per move (0 = none)."""
    movetime: float | None = None
    """Seconds per move (0 = use depth / nodes)."""
    tc: str | None = None
    """A time control 'BASE+INC' as given ('' = none)."""
    time_margin: float | None = None
    """Seconds a side may overrun its clock before it loses on time."""
    max_plies: int | None = None
    """Ply cap per game."""
    adjudication: Adjudication | None = None
    """When a game is stopped early."""

    def __post_init__(self) -> None:
        Limits(**self.given())  # validates every field given

    def given(self) -> dict:
        """The fields given, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}

    def over(self, base: Limits) -> Limits:
        """``base`` with the fields given; a clock given replaces the base's other clock (a time
        control its time per move, a time per move > 0 its time control)."""
        changes = self.given()
        if self.movetime is not None and "tc" not in changes:
            changes["tc"] = None if self.movetime else base.tc
        if self.tc is not None and "movetime" not in changes:
            changes["movetime"] = 0.0 if parse_tc(self.tc) is not None else base.movetime
        return dataclasses.replace(base, **changes)
