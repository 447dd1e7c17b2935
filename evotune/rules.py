"""The rules numba and Python share: the mate bound, results, terminations and adjudication.

The numba core (``evotune/engine/core``) reads the integer constants below as compile-time
globals; Python code (the engine API, the python-chess reference, the UCI front end, the
move-by-move game loop of ``players/``, TD learning) imports the same names. :func:`game_over`
and :class:`Adjudicator` are the Python form of the rules that ``engine/core/game.py`` applies
inside the core; ``tests/test_rules.py`` checks that both end the same games the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

WHITE = True
"""python-chess's colour of White (``chess.WHITE``): this module imports nothing heavy, so that
strategies may read the mate bound without importing python-chess."""

# ---- scores --------------------------------------------------------------------------------------
MATE = 1_000_000
"""Score of a side that mates at the root; a side mated at ply p scores -(MATE - p)."""
MATE_BOUND = MATE - 1000
"""A score with ``abs(score) > MATE_BOUND`` is a mate score."""
INF = MATE + 1
"""Larger than any score: the full window is (-INF, INF)."""

# ---- results (codes used by the core; index into RESULTS) ----------------------------------------
R_WHITE = 0
R_BLACK = 1
R_DRAW = 2
RESULTS = ("1-0", "0-1", "1/2-1/2")
"""PGN result of each result code."""

# ---- terminations (codes used by the core; index into TERMINATIONS) ------------------------------
T_NONE = 0
T_CHECKMATE = 1
T_STALEMATE = 2
T_REPETITION = 3
T_FIFTY = 4
T_MATERIAL = 5
T_PLYCAP = 6
T_RESIGN = 7
T_ADJ_DRAW = 8
TERMINATIONS = ("", "checkmate", "stalemate", "repetition", "fifty-move", "insufficient-material",
                "ply-cap", "adjudication-resign", "adjudication-draw")
"""Name of each termination code."""


@dataclass(frozen=True)
class Adjudication:
    """When a game is stopped early (0 disables a rule)."""

    resign_score: int = 0
    """> 0: a side whose score is <= -resign_score for resign_moves consecutive own moves, while
    the opponent's latest score is >= +resign_score, loses."""
    resign_moves: int = 0
    """Consecutive own moves for the resign rule."""
    draw_score: int = 0
    """> 0: |score| <= draw_score for draw_moves consecutive moves of both sides (2 * draw_moves
    plies), counted from ply draw_start_ply, is a draw."""
    draw_moves: int = 0
    """Consecutive moves of each side for the draw rule."""
    draw_start_ply: int = 0
    """First core ply (0-based) that counts towards the draw rule."""

    def as_tuple(self) -> tuple[int, int, int, int, int]:
        """The five settings in the order the core takes them."""
        return (self.resign_score, self.resign_moves, self.draw_score, self.draw_moves,
                self.draw_start_ply)


def game_over(board) -> tuple[str, str] | None:
    """(result, termination) when the game on ``board`` is over by the rules, else None.

    The order is the core's: no legal move (checkmate or stalemate), insufficient material,
    fifty-move rule (halfmove clock >= 100), threefold repetition (history included).
    ``board`` is a ``chess.Board`` (its move stack is the history for repetitions).
    """
    if not any(board.generate_legal_moves()):
        if board.is_check():
            return RESULTS[R_BLACK if board.turn == WHITE else R_WHITE], \
                TERMINATIONS[T_CHECKMATE]
        return RESULTS[R_DRAW], TERMINATIONS[T_STALEMATE]
    if board.is_insufficient_material():
        return RESULTS[R_DRAW], TERMINATIONS[T_MATERIAL]
    if board.halfmove_clock >= 100:
        return RESULTS[R_DRAW], TERMINATIONS[T_FIFTY]
    if board.halfmove_clock >= 8 and board.is_repetition(3):  # a third occurrence needs 8 plies
        return RESULTS[R_DRAW], TERMINATIONS[T_REPETITION]
    return None


class Adjudicator:
    """The adjudication rules of the core (engine/core/game.py), move by move.

    Resign: the mover's score <= -resign_score while the opponent's last score was
    >= +resign_score, for resign_moves consecutive own moves: the mover loses. Draw:
    |score| <= draw_score on 2 * draw_moves consecutive plies whose 0-based index is
    >= draw_start_ply. A score of None (an external engine sent none) never agrees.
    """

    def __init__(self, adj: Adjudication) -> None:
        self.adj = adj
        self.resign = {WHITE: 0, not WHITE: 0}   # consecutive own moves it is losing
        self.last: dict[bool, int | None] = {WHITE: None, not WHITE: None}
        self.drawn = 0                                    # consecutive drawish plies

    def update(self, colour: bool, score: int | None, plies: int) -> tuple[str, str] | None:
        """Record the mover's score of ply ``plies`` (1-based count); a verdict or None."""
        a = self.adj
        verdict = None
        if a.resign_score > 0 and a.resign_moves > 0:
            other = self.last[not colour]
            losing = (score is not None and score <= -a.resign_score
                      and other is not None and other >= a.resign_score)
            self.resign[colour] = self.resign[colour] + 1 if losing else 0
            if self.resign[colour] >= a.resign_moves:
                verdict = (RESULTS[R_BLACK if colour == WHITE else R_WHITE],
                           TERMINATIONS[T_RESIGN])
        self.last[colour] = score
        if verdict is None and a.draw_score > 0 and a.draw_moves > 0:
            if plies - 1 >= a.draw_start_ply and score is not None and abs(score) <= a.draw_score:
                self.drawn += 1
            else:
                self.drawn = 0
            if self.drawn >= 2 * a.draw_moves:
                verdict = RESULTS[R_DRAW], TERMINATIONS[T_ADJ_DRAW]
        return verdict
