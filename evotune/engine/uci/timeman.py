"""Time allocation under a clock: how long the UCI front end (``evotune uci``) thinks per move.

:func:`allot` turns the side's clock, increment and moves to go of a ``go`` command into a plan
(seconds). The rule keeps what a move costs beyond the plan off it (a fixed overhead, and the
lag the engine measures: what the GUI charges beyond the engine's own time), keeps a reserve
that the increment-only phase of a long game does not eat into, and never plans more than half
of what is left after the overhead.
"""
from __future__ import annotations

MOVE_OVERHEAD = 0.03
"""Seconds a move costs beyond the search (pipes, parsing, the GUI's own reading): never planned."""
MOVES_TO_GO = 30
"""Moves the clock is shared over when ``go`` gives no ``movestogo``."""
INC_SHARE = 0.75
"""Share of the increment spent on top of the clock's share while the clock is above its reserve."""
RESERVE = 0.3
"""Seconds (at least; :func:`clock_reserve`) of its clock a side keeps for the increment phase."""
RESERVE_INCS = 10
"""... or this many increments, whichever is more."""
MIN_THINK = 0.001
"""The plan when the clock has nothing to spare: the first iteration only."""
LAG_WEIGHT = 0.25
"""Weight of the newest sample in the moving average of the lag
(:meth:`evotune.engine.uci.frontend.UciEngine.lag`)."""


def clock_reserve(inc: float) -> float:
    """Seconds of its clock a side keeps in reserve: ``max(RESERVE, RESERVE_INCS * inc)``."""
    return max(RESERVE, RESERVE_INCS * inc)


def allot(clock: float, inc: float = 0.0, movestogo: int | None = None, *,
          lag: float = 0.0) -> float:
    """Seconds to think with ``clock`` seconds left and ``inc`` seconds of increment per move.

    A move costs its plan plus a lag the engine does not see (pipes, the GUI's reading,
    scheduling): ``lag`` as measured (:meth:`evotune.engine.uci.frontend.UciEngine.lag`), at least
    :data:`MOVE_OVERHEAD` when nothing is left. The side keeps a reserve
    (:func:`clock_reserve`). Above it the plan is the clock's share over the moves to go
    (``movestogo``, default :data:`MOVES_TO_GO`) plus :data:`INC_SHARE` of what the increment
    leaves after the lag; below it that share shrinks in proportion to the clock. So in the
    increment-only phase of a long game the clock settles at or above the reserve while the lag
    is below the increment, instead of draining (a plan of the whole increment loses the lag on
    every move). The plan never exceeds half of what is left after the overhead, and with
    nothing left it is :data:`MIN_THINK` (the first iteration only).
    """
    left = clock - max(MOVE_OVERHEAD, lag)
    if left <= 0:
        return MIN_THINK
    togo = max(1, movestogo) if movestogo else MOVES_TO_GO
    reserve = clock_reserve(inc)
    spare_inc = max(0.0, inc - lag)
    if clock > reserve:
        plan = (clock - reserve) / togo + INC_SHARE * spare_inc
    else:
        plan = INC_SHARE * spare_inc * clock / reserve
    return max(MIN_THINK, min(plan, 0.5 * left))
