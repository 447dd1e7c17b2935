"""Time controls: ``BASE+INC`` in seconds (``10+0.1``), and the clocks of one game.

A game under a time control gives each external side a real clock: ``go wtime btime winc
binc``, the time from sending ``go`` to reading ``bestmove`` is taken off the mover's clock, then
the increment is added (Fischer). A side whose clock falls below ``-margin`` loses on time
('time-forfeit'), unless its opponent has no mating material (then it is a draw, as in
cutechess-cli). An overrun inside the margin stays on the clock, so repeated overruns flag.
Built-in alpha-beta sides keep their depth / node limits: they have no clock (built-in UCT and
probability sides have one, charged with their search time).
"""
from __future__ import annotations

import chess

from ..limits import DEFAULT_MARGIN, TimeControl


class Clocks:
    """Both sides' clocks during one game."""

    def __init__(self, tc: TimeControl, margin: float = DEFAULT_MARGIN) -> None:
        self.tc = tc
        self.margin = float(margin)
        self.left = {chess.WHITE: tc.base, chess.BLACK: tc.base}

    def spend(self, colour: bool, seconds: float) -> bool:
        """Take ``seconds`` off ``colour``'s clock; False when it ran out (beyond the margin),
        else add the increment and return True."""
        self.left[colour] -= seconds
        if self.left[colour] < -self.margin:
            return False
        # an overrun inside the margin is not forgiven: it stays on the clock (the engine is
        # told 0 ms left while its clock is negative), so repeated overruns do flag
        self.left[colour] += self.tc.inc
        return True

    def flag_result(self, board: chess.Board, colour: bool) -> tuple[str, str]:
        """(result, termination) when ``colour`` lost on time in ``board``."""
        if board.has_insufficient_material(not colour):
            return "1/2-1/2", "time-forfeit"
        return ("0-1" if colour == chess.WHITE else "1-0"), "time-forfeit"
