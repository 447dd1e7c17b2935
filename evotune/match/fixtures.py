"""Fixtures (scheduled mini-matches), match settings, game tasks and the stop rules.

A :class:`Fixture` is plain data: two players, an even number of games, a stop rule. Game ``i``
of a fixture belongs to pair ``p = i // 2`` and is played from that pair's opening; A has White
in even games and Black in odd ones. Stop rules (applied in game order, so a fixture's result
depends only on its own games):

- 'none': every game is played.
- 'decisive' (DE selection): A must score strictly more points than B; the match stops as soon
  as the games left cannot change that verdict.
- 'sprt': after each complete pair, the SPRT on the pentanomial counts; the match stops when the
  LLR reaches a bound (``games`` is then the maximum).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

from ..errors import ConfigError, FieldError
from ..limits import LIMITS, Limits
from ..paths import DEFAULT_OPENINGS
from ..players import PlayerSpec
from .openings import KINDS, Opening
from .scoring import SprtParams

STOPS = ("none", "decisive", "sprt")


def check_games(games, field: str = "games") -> int:
    """``games`` as an int when it is a colour-balanced number of games: positive, even and at
    most ``LIMITS['games']`` (numpy integers are fine); a :class:`FieldError` naming ``field``
    otherwise. The one place this rule lives (fixtures, matches, verification)."""
    try:
        value = operator.index(games) if not isinstance(games, bool) else None
    except TypeError:
        value = None
    high = LIMITS["games"]
    if value is None or value <= 0 or value % 2 or value > high:
        hint = f"; use e.g. {value + 1}" if value is not None and 0 < value < high else ""
        raise FieldError(field, f"must be a positive even number up to {high} (each opening is "
                                f"played twice with colours swapped), got {games!r}{hint}")
    return int(value)


@dataclass(frozen=True)
class Fixture:
    """One scheduled mini-match between A and B (colour-swapped pairs of games)."""

    key: tuple[int, int]
    """(generation, fixture index): addresses the seeds of its openings."""
    a: PlayerSpec
    """Player A (the trial in DE): White in even games."""
    b: PlayerSpec
    """Player B (the target in DE): White in odd games."""
    games: int = 2
    """Number of games (even; the maximum for the 'decisive' and 'sprt' stop rules)."""
    stop: str = "none"
    """Stop rule: 'none', 'decisive' or 'sprt'."""
    sprt: SprtParams | None = None
    """SPRT hypotheses (required for stop='sprt'; with another rule only reported)."""
    record_leaves: bool = False
    """Keep per-move scores, PV-leaf phi and PV predictions in the records (TD learning)."""
    openings_key: tuple[int, int] | None = None
    """Key that addresses the openings' seeds instead of ``key`` (gauntlets: every candidate
    meets an opponent on the same openings); None: ``key``."""

    def __post_init__(self) -> None:
        if self.openings_key is not None:
            object.__setattr__(self, "openings_key", tuple(int(k) for k in self.openings_key))
        try:
            key = tuple(int(k) for k in self.key)
        except (TypeError, ValueError):
            key = ()
        if len(key) != 2 or min(key) < 0:
            raise ConfigError(f"fixture key {self.key!r}: give (generation, fixture index), "
                              "two non-negative integers")
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "games", check_games(self.games))
        if self.stop not in STOPS:
            raise ConfigError(f"fixture {self.key}: stop rule {self.stop!r} is unknown; use one "
                              f"of {', '.join(STOPS)}")
        if self.stop == "sprt" and self.sprt is None:
            raise ConfigError(f"fixture {self.key}: stop='sprt' needs SprtParams(elo0, elo1, "
                              "alpha, beta)")


@dataclass(frozen=True)
class MatchSettings:
    """How the games of a match are played (the same for every fixture of a call): the games'
    :class:`~evotune.limits.Limits` and where their openings come from (``depth``, ``nodes``,
    ... read the limits)."""

    limits: Limits = Limits()
    """Depth, nodes, time per move or time control, ply cap and adjudication of every game
    (built-in players always keep depth and nodes)."""
    openings: str | None = str(DEFAULT_OPENINGS)
    """EPD/PGN suite or Polyglot book path; None: every game from the start position."""
    openings_kind: str = "auto"
    """'auto' (by file name), 'epd', 'pgn' or 'book'."""
    book_plies: int = 8
    """Plies of book moves for book openings."""

    def __post_init__(self) -> None:
        limits, openings = self.limits, self.openings
        openings_kind, book_plies = self.openings_kind, self.book_plies
        if not isinstance(limits, Limits):
            raise FieldError("limits", f"must be a Limits, got {limits!r}")
        if openings_kind not in KINDS:
            raise ConfigError(f"openings kind {openings_kind!r} is unknown; use one of "
                              f"{', '.join(KINDS)}")
        try:  # numpy integers are fine; bools and floats are not
            plies = operator.index(book_plies) if not isinstance(book_plies, bool) else None
        except TypeError:
            plies = None
        if plies is None or not 0 <= plies <= LIMITS["book_plies"]:
            raise FieldError("book_plies", f"must be an integer from 0 to {LIMITS['book_plies']}, "
                                           f"got {book_plies!r}")
        set_ = object.__setattr__
        set_(self, "limits", limits)
        set_(self, "openings", None if openings is None else str(openings))
        set_(self, "openings_kind", openings_kind)
        set_(self, "book_plies", int(plies))

    @property
    def depth(self) -> int:
        """Search depth of the built-in engine (and of external engines without movetime/tc)."""
        return self.limits.depth

    @property
    def nodes(self) -> int:
        """Node limit per move (0 = none)."""
        return self.limits.nodes

    @property
    def movetime(self) -> float:
        """Seconds per move for external engines (0 = use depth / nodes)."""
        return self.limits.movetime

    @property
    def tc(self):
        """The time control of external engines (None: depth / nodes / movetime)."""
        return self.limits.tc

    @property
    def time_margin(self) -> float:
        """Seconds a side may overrun its clock before it loses on time (with ``tc``)."""
        return self.limits.time_margin

    @property
    def max_plies(self) -> int:
        """Ply cap (plies after the opening); reaching it is a draw."""
        return self.limits.max_plies

    @property
    def adjudication(self):
        """The adjudication rules (all zero: none)."""
        return self.limits.adjudication


def limits_record(limits: Limits) -> dict:
    """The stored form of ``limits`` in records that predate :class:`Limits` (datagen progress
    files, Texel fit configs): ``depth``, ``nodes`` and ``max_plies`` always, the other fields
    only when they differ from their defaults, so what was stored before keeps its form."""
    out: dict[str, object] = {"depth": limits.depth, "nodes": limits.nodes,
                              "max_plies": limits.max_plies}
    default = Limits()
    if limits.movetime != default.movetime:
        out["movetime"] = limits.movetime
    if limits.tc is not None:
        out["tc"] = str(limits.tc)
        out["time_margin"] = limits.time_margin
    if limits.adjudication != default.adjudication:
        out["adjudication"] = list(limits.adjudication.as_tuple())
    return out


@dataclass(frozen=True)
class GameTask:
    """Everything a worker needs to play one game (plain data)."""

    key: tuple[int, int, int, int]
    """(generation, fixture, pair, game index)."""
    white: PlayerSpec
    """White player."""
    black: PlayerSpec
    """Black player."""
    opening: Opening
    """Start position and opening moves."""
    settings: MatchSettings
    """Limits and adjudication."""
    record_leaves: bool = False
    """Keep per-move scores, leaf phi and predictions."""
    record_boards: bool = False
    """Keep the core's record of each position (built-in engines; datagen)."""


def game_task(fixture: Fixture, index: int, opening: Opening, settings: MatchSettings) -> GameTask:
    """The task of game ``index`` of ``fixture`` (A White on even indices)."""
    g, f = fixture.key
    white, black = (fixture.a, fixture.b) if index % 2 == 0 else (fixture.b, fixture.a)
    return GameTask(key=(int(g), int(f), index // 2, index), white=white, black=black,
                    opening=opening, settings=settings, record_leaves=fixture.record_leaves)


# ---- the 'decisive' rule ------------------------------------------------------------------------

def decisive_settled(points_a: int, points_b: int, remaining: int) -> bool:
    """True when ``remaining`` games (2 points each) cannot change whether A scores more than B."""
    return points_a > points_b + 2 * remaining or points_a + 2 * remaining <= points_b


def games_before_verdict(points_a: int, points_b: int, remaining: int) -> int:
    """The fewest further games after which the 'decisive' verdict could be settled.

    Every one of those games will be played whatever their results, so they can run in
    parallel without wasting any. At least 1 (when ``remaining`` > 0).
    """
    for m in range(1, remaining + 1):
        left = remaining - m
        if (decisive_settled(points_a + 2 * m, points_b, left)
                or decisive_settled(points_a, points_b + 2 * m, left)):
            return m
    return remaining
