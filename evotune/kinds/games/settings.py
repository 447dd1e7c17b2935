"""The value records a games run's configuration (:class:`~evotune.kinds.games.config.RunConfig`) is
made of: how its games are played (:class:`PlaySettings`), how long it runs (:class:`Budget`),
where it runs (:class:`Cluster`), where its free weights start (:class:`StartRange`) and its
final check (:class:`FinalCheckSettings`).

The records are the config in memory only: its stored forms (the manifest's ``config``, the
TOML file, the identity) stay the flat keys runs have always stored, each setting of a record
under the flat name :data:`SETTINGS` gives it (``max_games``, ``init_low``,
``final_check_games``: its flag's name), so runs stored before read, resume and hash as then."""
from __future__ import annotations

from dataclasses import dataclass

from ...limits import Limits


@dataclass(frozen=True)
class PlaySettings:
    """How a run's games are played: the mini-matches, their limits, openings and opponents."""

    games: int = 4
    """Games per mini-match (even; colour-balanced pairs)."""
    limits: Limits = Limits()
    """The games' limits: depth, nodes, time per move or time control (external engines and
    built-in uct/probability specs; built-in alpha-beta players keep depth / nodes), ply cap and
    adjudication (stored as the flat :data:`~evotune.kinds.games.config.LIMIT_KEYS`)."""
    openings: str = "book"
    """'book' (the packaged Polyglot book), 'startpos', or an EPD/PGN/.bin file."""
    book_plies: int = 8
    """Plies drawn from a Polyglot book per opening."""
    opponents: str = ""
    """Gauntlet fitness: comma-separated players 'SPEC[:WEIGHTS]' every candidate plays
    colour-balanced games against ('' = the default trial-vs-target mini-matches)."""


@dataclass(frozen=True)
class Budget:
    """When a run stops: the first of its limits reached (0 = no such limit). Never part of the
    run's identity: a resume may raise them (:mod:`evotune.kinds.games.budget`)."""

    generations: int = 50
    """Stop after this many generations (0 = no generation limit)."""
    max_games: int = 0
    """Stop when this many games have been played (0 = no limit); checked after each generation."""
    max_seconds: float = 0.0
    """Stop after this much wall time (0 = no limit); checked after each generation."""


@dataclass(frozen=True)
class Cluster:
    """Where a run's games are played. Does not change results (never part of the identity)."""

    workers: int = 0
    """Worker processes (0 = one per core). Does not change results."""
    backend: str = "local"
    """'local' (loky processes) or 'dask' (a dask.distributed cluster). Does not change results."""
    scheduler: str = ""
    """Dask scheduler address, e.g. tcp://host:8786 (backend 'dask')."""


@dataclass(frozen=True)
class StartRange:
    """The uniform initial distribution of a run's free weights (stored as ``init_low`` and
    ``init_high``)."""

    low: float = 0.0
    """Lower end of the uniform initial distribution of free weights."""
    high: float = 1000.0
    """Upper end of the uniform initial distribution of free weights."""


@dataclass(frozen=True)
class FinalCheckSettings:
    """The final check of a run that starts from given weights (the check itself:
    :class:`~evotune.runs.finalcheck.FinalCheck`); stored as ``guard_games`` and
    ``guard_openings``, never part of the identity."""

    games: int = -1
    """Games of the final check of a run that starts from given weights: its recommendation
    against that start (a GSPRT [0, 5] capped at this many games), taken from the games budget;
    -1 = auto (10% of the planned games within [200, 4000], 0 for a run from random weights),
    resolved when the run is created; 0 = no check."""
    openings: str = "held-out"
    """Openings of the final check: 'held-out' (openings the run does not tune on: the packaged
    8moves_v3 suite, or 2moves_v1 for a run that tunes on 8moves_v3), 'run' (the run's own
    openings: what runs stored before this setting checked on), or an openings value as
    ``openings`` ('2moves', 'book', a file)."""


GROUPS: dict[str, type] = {"play": PlaySettings, "budget": Budget, "cluster": Cluster,
                           "start": StartRange, "final_check": FinalCheckSettings}
"""RunConfig's records, by field."""

SETTINGS: dict[str, tuple[str, str]] = {
    "generations": ("budget", "generations"), "games": ("play", "games"),
    "openings": ("play", "openings"), "book_plies": ("play", "book_plies"),
    "init_low": ("start", "low"), "init_high": ("start", "high"),
    "max_games": ("budget", "max_games"), "max_seconds": ("budget", "max_seconds"),
    "workers": ("cluster", "workers"), "backend": ("cluster", "backend"),
    "scheduler": ("cluster", "scheduler"), "opponents": ("play", "opponents"),
    "final_check_games": ("final_check", "games"),
    "final_check_openings": ("final_check", "openings")}
"""The flat name of each setting of a record (its flag's and, but for
:data:`~evotune.kinds.games.config.STORED_NAMES`, its stored key's) and where it is: (RunConfig's field,
the record's field). The limits (``play.limits``) are flat as
:data:`~evotune.kinds.games.config.LIMIT_KEYS`."""
