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

from ..paths import DEFAULT_OPENINGS
from ..errors import ConfigError
from ..players import PlayerSpec
from .openings import KINDS, Opening
from .scoring import SprtParams

STOPS = ("none", "decisive", "sprt")


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
        try:
            object.__setattr__(self, "games", operator.index(self.games))  # numpy ints too
        except TypeError:
            pass
        if not isinstance(self.games, int) or self.games <= 0 or self.games % 2:
            hint = self.games + 1 if isinstance(self.games, int) and self.games > 0 else 2
            raise ConfigError(f"fixture {self.key}: games must be a positive even number (each "
                              f"opening is played twice with colours swapped), got "
                              f"{self.games!r}; use e.g. {hint}")
        if self.stop not in STOPS:
            raise ConfigError(f"fixture {self.key}: stop rule {self.stop!r} is unknown; use one "
                              f"of {', '.join(STOPS)}")
        if self.stop == "sprt" and self.sprt is None:
            raise ConfigError(f"fixture {self.key}: stop='sprt' needs SprtParams(elo0, elo1, "
                              "alpha, beta)")


@dataclass(frozen=True)
class MatchSettings:
    """How the games of a match are played (the same for every fixture of a call)."""

    depth: int = 3
    """Search depth of the built-in engine (and of external engines when movetime is 0)."""
    nodes: int = 0
    """Node limit per move (0 = none)."""
    movetime: float = 0.0
    """Seconds per move for external engines (0 = use depth / nodes)."""
    max_plies: int = 400
    """Ply cap (plies after the opening); reaching it is a draw."""
    adjudication: object | None = None
    """An ``evotune.engine.Adjudication`` (None: the engine's default, no adjudication)."""
    openings: str | None = str(DEFAULT_OPENINGS)
    """EPD/PGN suite or Polyglot book path; None: every game from the start position."""
    openings_kind: str = "auto"
    """'auto' (by file name), 'epd', 'pgn' or 'book'."""
    book_plies: int = 8
    """Plies of book moves for book openings."""
    tc: object | None = None
    """A ``evotune.players.clock.TimeControl`` for external engines (None: depth/nodes/movetime;
    built-in players always keep depth and nodes)."""
    time_margin: float = 0.1
    """Seconds a side may overrun its clock before it loses on time (with ``tc``)."""

    def __post_init__(self) -> None:
        for name in ("depth", "nodes", "max_plies", "book_plies"):
            try:  # numpy integers are fine; bools and floats are not
                if not isinstance(getattr(self, name), bool):
                    object.__setattr__(self, name, operator.index(getattr(self, name)))
            except TypeError:
                pass
        if not isinstance(self.depth, int) or self.depth <= 0:
            raise ConfigError(f"depth must be a positive integer, got {self.depth!r}; "
                              "e.g. --depth 3")
        if not isinstance(self.nodes, int) or self.nodes < 0:
            raise ConfigError(f"nodes must be >= 0 (0 = no limit), got {self.nodes!r}")
        if not self.movetime >= 0:
            raise ConfigError(f"movetime must be >= 0 seconds, got {self.movetime!r}")
        if not isinstance(self.max_plies, int) or self.max_plies <= 0:
            raise ConfigError(f"max_plies must be a positive integer, got {self.max_plies!r}")
        if self.openings_kind not in KINDS:
            raise ConfigError(f"openings kind {self.openings_kind!r} is unknown; use one of "
                              f"{', '.join(KINDS)}")
        if not isinstance(self.book_plies, int) or self.book_plies < 0:
            raise ConfigError(f"book_plies must be >= 0, got {self.book_plies!r}")
        if not self.time_margin >= 0:
            raise ConfigError(f"time margin must be >= 0 seconds, got {self.time_margin!r}")
        if isinstance(self.tc, str):
            from ..limits import parse_tc

            object.__setattr__(self, "tc", parse_tc(self.tc))
        if self.openings is not None and not isinstance(self.openings, str):
            object.__setattr__(self, "openings", str(self.openings))


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
