"""The results block every N games of a long match (fastchess's ``-ratinginterval``), on stderr
beside the progress bar, and the option that sets N."""
from __future__ import annotations

from collections.abc import Callable

import click

from ..match.gamerecord import GameRecord
from ..match.resultsblock import block_lines, result_figures
from ..match.scoring import SprtParams, match_result
from .progress import Progress

RATING_INTERVAL = 100
"""Games between two interim blocks by default."""

rating_interval_option = click.option(
    "--rating-interval", "rating_interval", type=click.IntRange(min=0),
    default=RATING_INTERVAL, show_default=True, metavar="N",
    help="Print the results block so far every N finished games of a match (on stderr, "
         "with the progress; 0: only at the end), as fastchess's -ratinginterval.")
"""--rating-interval N: the interim results block every N games (0: none)."""


def names(rec: GameRecord) -> tuple[str, str]:
    """(A, B) of the game's fixture: A has White in even games."""
    return (rec.white_name, rec.black_name) if rec.a_white else (rec.black_name, rec.white_name)


class IntervalBlocks:
    """A progress callback that passes each finished game on to ``step`` and every ``every``
    games of a match prints the block of its games so far through ``bar.line`` (nothing with
    --quiet). A match is the games of one fixture in one library call; the count of a call
    starting again (verify plays its matches one after another) starts a new match."""

    def __init__(self, bar: Progress, step: Callable, *, every: int, where: str = "",
                 sprt: SprtParams | None = None) -> None:
        self.bar, self.step, self.every, self.where, self.sprt = bar, step, every, where, sprt
        self.records: dict[tuple[int, int], list[GameRecord]] = {}
        self.last_done = 0

    def __call__(self, event) -> None:
        self.step(event)
        if self.every <= 0:
            return
        if event.done <= self.last_done:
            self.records.clear()  # the next match of the command
        self.last_done = event.done
        recs = self.records.setdefault(event.fixture, [])
        recs.append(event.record)
        if len(recs) % self.every == 0 and event.done < event.planned:  # the end has its own
            first, second = names(recs[0])
            fig = result_figures(match_result(recs, sprt_params=self.sprt))
            for line in block_lines(fig, first, second, where=self.where):
                self.bar.line(line)
