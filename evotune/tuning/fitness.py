"""Fitness: how the candidates a strategy asks for are scored, one generation at a time.

A :class:`Fitness` turns a generation's requests (mini-matches of A against B) into the
strategy's outcomes and what the store records. Two implementations play games:
:class:`MatchFitness` (the paper's: each request is a colour-balanced mini-match of A against B)
and :class:`GauntletFitness` (every distinct candidate plays the same fixed opponents; A and B are
compared by their gauntlet scores). A fit on positions (Texel) is a run of its own kind and a
solver of its own (:mod:`evotune.learn.fitrun`), not a fitness: it minimises a loss with its
gradient instead of scoring a strategy's requests (docs/architecture.md, "A fit is its own
solver").
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..limits import Limits
from ..match import Fixture, MatchResult, MatchSettings, SprtParams, run_fixtures
from ..match.gauntlet import play_gauntlet
from ..paths import resolve_openings_path
from ..players import PlayerSpec
from ..runs.records import GauntletCandidate, GauntletTable, MatchSummary
from ..runs.registry import WeightsConfig
from ..strategies.base import GameLeaves, MatchOutcome, MatchRequest


@dataclass(frozen=True)
class Evaluation:
    """What a fitness made of one generation."""

    outcomes: list[MatchOutcome]
    """One outcome per request, in order (what the strategy is told)."""
    results: list[MatchResult]
    """Every match played (their games go to the store's game log)."""
    summaries: list[MatchSummary]
    """One summary per request (the generation file's 'matches')."""
    gauntlet: GauntletTable | None = None
    """A gauntlet fitness's table of every candidate against the opponents."""


class Fitness(Protocol):
    """Scores one generation's requests."""

    def evaluate(self, generation: int, requests: Sequence[MatchRequest], *, backend: str,
                 workers: int, progress: Callable | None) -> Evaluation:
        """Play (or otherwise score) ``requests`` of generation ``generation``."""
        ...


class MatchFitness:
    """The paper's fitness: each request is a mini-match of A against B."""

    def __init__(self, player: Callable[..., PlayerSpec], *, settings: MatchSettings, seed: int,
                 denominator: int = 1) -> None:
        self.player, self.settings, self.seed, self.denominator = player, settings, seed, denominator

    def evaluate(self, generation, requests, *, backend, workers, progress) -> Evaluation:
        g, player = generation, self.player
        fixtures = [Fixture(key=(g, i), a=player(req.a, f"g{g}-m{i}-A"),
                            b=player(req.b, f"g{g}-m{i}-B"), games=req.games,
                            stop=req.stop, record_leaves=req.record_leaves,
                            sprt=None if req.sprt is None else SprtParams(*req.sprt))
                    for i, req in enumerate(requests)]
        results = run_fixtures(fixtures, settings=self.settings, seed=self.seed, backend=backend,
                               workers=workers, progress=progress)
        outcomes = [_outcome(r, q, self.denominator) for r, q in zip(results, requests)]
        return Evaluation(outcomes, list(results),
                          [_match_summary(r, q) for r, q in zip(results, requests)])


class GauntletFitness:
    """Gauntlet fitness: every distinct weight vector of the requests plays the opponents (the
    same openings for all); a request's A and B are compared by their gauntlet scores (the
    generation's games are the gauntlet's; the requests' are not played)."""

    def __init__(self, player: Callable[..., PlayerSpec], opponents: Sequence[PlayerSpec], *,
                 games: int, settings: MatchSettings, seed: int) -> None:
        self.player, self.opponents, self.games = player, tuple(opponents), games
        self.settings, self.seed = settings, seed

    def evaluate(self, generation, requests, *, backend, workers, progress) -> Evaluation:
        g = generation
        vectors: dict[tuple, int] = {}
        for req in requests:
            for w in (req.a, req.b):
                vectors.setdefault(tuple(float(x) for x in w), len(vectors))
        candidates = [self.player(w, f"g{g}-c{k}") for w, k in vectors.items()]
        scores = play_gauntlet(candidates, self.opponents, games=self.games,
                               settings=self.settings, seed=self.seed, generation=g,
                               backend=backend, workers=workers, progress=progress)
        outcomes, summaries = [], []
        for req in requests:
            a = scores[vectors[tuple(float(x) for x in req.a)]]
            b = scores[vectors[tuple(float(x) for x in req.b)]]
            # the request's verdict is the gauntlet's: the side with the higher score takes
            # the request's points (equal scores split them), so DE replaces a target only
            # when the trial scored strictly more against the opponents
            pa = 2 * req.games if a.score > b.score else req.games if a.score == b.score else 0
            # scalar-fitness strategies (cmaes, ng:NAME) take A's own score against the gauntlet
            outcomes.append(MatchOutcome(points_a=pa, points_b=2 * req.games - pa,
                                         games=req.games, fitness=float(a.score)))
            summaries.append(MatchSummary(
                a=_floats(req.a), b=_floats(req.b), tag=tuple(int(t) for t in req.tag),
                points_a=pa, points_b=2 * req.games - pa, games=req.games,
                gauntlet_points_a=a.total_points, gauntlet_points_b=b.total_points,
                gauntlet_games=a.total_games))
        gauntlet = GauntletTable(
            opponents=tuple(p.name for p in self.opponents),
            candidates=tuple(GauntletCandidate(weights=w, **_per_opponent(scores[k]))
                             for w, k in vectors.items()))
        results = [r for sc in scores for r in sc.results]
        return Evaluation(outcomes, results, summaries, gauntlet)


def match_settings(cfg: WeightsConfig, *, limits: Limits | None = None,
                   **overrides) -> MatchSettings:
    """The MatchSettings of a run's games: the run's limits (``cfg.play.limits``: depth, nodes,
    time, ply cap, adjudication) and openings. ``limits`` replaces the run's limits and ``overrides``
    other MatchSettings fields (verify plays other openings, maybe at another depth; a fit's
    weights are verified under its config's limits)."""
    values = dict(openings=_openings_arg(cfg), book_plies=cfg.play.book_plies)
    values.update(overrides)
    return MatchSettings(limits=cfg.play.limits if limits is None else limits, **values)


def _openings_arg(cfg: WeightsConfig):
    path = resolve_openings_path(cfg.play.openings)
    return None if path is None else str(path)


def _outcome(result, request, denominator: int = 1):
    leaves = ()
    if request.record_leaves:
        leaves = tuple(_leaves(rec, request, denominator) for rec in result.records)
    verdict = result.sprt.verdict if request.stop == "sprt" and result.sprt else None
    return MatchOutcome(points_a=int(result.points_a), points_b=int(result.points_b),
                        games=int(result.games), leaves=leaves, verdict=verdict)


def _leaves(rec, request, denominator: int = 1):
    """The strategy's view of a game: the record's phi_int array and the set's denominator."""
    white_score = {"1-0": 1.0, "0-1": 0.0}.get(rec.result, 0.5)
    white_first = rec.opening.board().turn  # chess.WHITE is True
    movers = tuple(int((i % 2 == 0) == white_first) for i in range(len(rec.moves)))
    return GameLeaves(a_white=rec.a_white, result=white_score, movers=movers,
                      scores=tuple(int(s) for s in rec.scores or ()),
                      leaf_phi=rec.leaf_phi, denominator=denominator,
                      predicted=tuple(bool(p) for p in rec.predicted or ()))


def _floats(v) -> tuple[float, ...]:
    return tuple(float(x) for x in v)


def _per_opponent(score) -> dict:
    """A GauntletScore's columns, one entry per opponent."""
    return {k: tuple(int(x) for x in v) for k, v in score.to_dict().items()}


def _match_summary(result, request) -> MatchSummary:
    return MatchSummary(a=_floats(request.a), b=_floats(request.b),
                        tag=tuple(int(t) for t in request.tag),
                        points_a=int(result.points_a), points_b=int(result.points_b),
                        games=int(result.games), wins=int(result.wins), draws=int(result.draws),
                        losses=int(result.losses), stopped_early=bool(result.stopped_early))
