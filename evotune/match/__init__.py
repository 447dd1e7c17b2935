"""Matches: openings, fixtures (colour-swapped mini-matches), the parallel runner, game records
and match statistics.

Only plain data crosses a process boundary: a :class:`GameTask` in, a :class:`GameRecord` out.
"""
from __future__ import annotations

from .fixtures import STOPS, Fixture, GameTask, MatchSettings, decisive_settled
from .gamerecord import GameRecord, record_to_pgn_game, write_pgn, write_pgn_text
from .openings import Opening, OpeningSuite, draw_opening, load_suite, opening_generator
from .runner import GameProgress, map_games, play_match, play_task, run_fixtures, warm_up
from .scoring import MatchResult, SprtParams, SprtResult, match_result

__all__ = [
    "STOPS", "Fixture", "GameTask", "MatchSettings", "decisive_settled",
    "Opening", "OpeningSuite", "draw_opening", "load_suite", "opening_generator",
    "GameRecord", "record_to_pgn_game", "write_pgn", "write_pgn_text",
    "GameProgress", "map_games", "play_match", "play_task", "run_fixtures", "warm_up",
    "MatchResult", "SprtParams", "SprtResult", "match_result",
]
