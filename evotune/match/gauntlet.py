"""Gauntlets: candidates scored by their points against a fixed set of opponents.

:func:`play_gauntlet` is the whole API: every candidate plays a colour-balanced match of
``games`` games against every opponent, and gets one :class:`GauntletScore` (points and games per
opponent, in opponent order). It is a plain function of (candidates, opponents, settings, seed,
generation), so any strategy can use it as its fitness: the evolutionary strategies of a run with
``--opponents`` (each MatchRequest then compares A's and B's gauntlet points), or a scalar
optimiser (CMA-ES, nevergrad, SPSA) that wants one number per candidate
(``GauntletScore.score``).

Fairness and determinism. The match of candidate ``i`` against opponent ``j`` is fixture
``(generation, i * len(opponents) + j)``, but its openings are drawn under the key
``(generation, j)``: every candidate of a generation meets opponent ``j`` on the same openings
with the same colours, so candidates are compared on equal terms (common random numbers), and
results are identical for any number of workers, on Dask, and across resume.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from ..players import PlayerSpec
from ..players.external import ExternalEngine
from .fixtures import Fixture, MatchSettings
from .resolve import resolve_player_list
from .runner import GameProgress, run_fixtures
from .scoring import MatchResult


@dataclass(frozen=True)
class GauntletScore:
    """One candidate's results against each opponent of a gauntlet (opponent order)."""

    points: tuple[int, ...]
    """Points against each opponent (win 2, draw 1, loss 0)."""
    games: tuple[int, ...]
    """Games played against each opponent."""
    results: tuple[MatchResult, ...] = ()
    """The matches themselves (W/D/L, pentanomial, records), one per opponent."""

    @property
    def total_points(self) -> int:
        return int(sum(self.points))

    @property
    def total_games(self) -> int:
        return int(sum(self.games))

    @property
    def score(self) -> float:
        """Fraction of the points available over the whole gauntlet (0..1)."""
        return self.total_points / (2.0 * self.total_games) if self.total_games else 0.5

    def to_dict(self) -> dict:
        """JSON-safe summary (no game records)."""
        return {"points": list(self.points), "games": list(self.games),
                "wins": [int(r.wins) for r in self.results],
                "draws": [int(r.draws) for r in self.results],
                "losses": [int(r.losses) for r in self.results]}


def gauntlet_fixtures(candidates: Sequence[PlayerSpec], opponents: Sequence[PlayerSpec], *,
                      games: int, generation: int = 0) -> list[Fixture]:
    """The fixtures of a gauntlet (candidate-major), openings shared per opponent."""
    if not opponents:
        raise ConfigError("a gauntlet needs at least one opponent; give --opponents "
                          "SPEC[:WEIGHTS],...")
    n = len(opponents)
    return [Fixture(key=(generation, i * n + j), a=cand, b=opp, games=games, stop="none",
                    openings_key=(generation, j))
            for i, cand in enumerate(candidates) for j, opp in enumerate(opponents)]


def play_gauntlet(candidates: Sequence[PlayerSpec], opponents: Sequence[PlayerSpec], *,
                  games: int, settings: MatchSettings, seed: int, generation: int = 0,
                  workers: int = 1, backend: str = "loky",
                  progress: Callable[[GameProgress], None] | None = None) -> list[GauntletScore]:
    """Play every candidate against every opponent (``games`` each, colour-balanced) and return
    one GauntletScore per candidate, in candidate order."""
    fixtures = gauntlet_fixtures(candidates, opponents, games=games, generation=generation)
    results = run_fixtures(fixtures, settings=settings, seed=seed, workers=workers,
                           backend=backend, progress=progress)
    n = len(opponents)
    out = []
    for i in range(len(candidates)):
        mine = results[i * n:(i + 1) * n]
        out.append(GauntletScore(points=tuple(int(r.points_a) for r in mine),
                                 games=tuple(int(r.games) for r in mine), results=tuple(mine)))
    return out


def opponent_players(text: str) -> tuple[PlayerSpec, ...]:
    """The players of ``--opponents SPEC[:WEIGHTS],...`` (ConfigError on a bad entry)."""
    return resolve_player_list(text)


def check_opponents(text: str) -> tuple[PlayerSpec, ...]:
    """Resolve the opponents and start each external one once, checking its options (before a
    run writes anything); returns the players."""
    players = opponent_players(text)
    for p in players:
        if not p.is_builtin:
            ExternalEngine(p).close()  # EngineError naming the command or the option
    return players
