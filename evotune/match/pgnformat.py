"""A game's PGN the way cutechess and fastchess write it: the ``TimeControl`` tag of the limits
and each move's comment ``{+0.35/12 0.21s}`` (score, depth, time).

- Score (cutechess's ``MoveEvaluation::scoreText``): pawns from the mover's view with two
  decimals, a '+' before a positive one ('+0.35', '0.00', '-1.20'); a mate score is 'M' and the
  plies to mate, signed: '+M5' (the mover mates in 5 plies), '-M4' (it is mated in 4).
- Depth: '/12' after the score, the depth the search reached (no score and no depth when an
  external engine sent no ``info`` with a score, as cutechess leaves them out).
- Time (cutechess's precision): '0.021s' under 0.1 s, '0.21s' under 1 s, '2.1s' under 10 s,
  '21s' above; '0s' for no time. A move whose time was not measured (a game played whole inside
  the numba core) has none: '{+0.35/3}'.
- Book moves (the opening's): '{book}'.
- TimeControl (the PGN standard's, as fastchess writes it): a clock 'BASE+INC' in seconds
  ('10+0.1'), a fixed time per move '0.1/move', and without either '-' (no time control); a
  depth or node limit is named by the tags ``Depth`` and ``Nodes``, which neither cutechess nor
  fastchess write (fastchess's results block says '3 plies', '1000 nodes').
"""
from __future__ import annotations

from ..limits import Limits
from ..rules import MATE, MATE_BOUND

BOOK = "book"
"""The comment of an opening move."""


def score_text(score: int) -> str:
    """'+0.35', '0.00', '-1.20', '+M5', '-M4' (see the module docstring)."""
    if abs(score) > MATE_BOUND:
        return f"{'+' if score > 0 else '-'}M{MATE - abs(score)}"
    return f"{'+' if score > 0 else ''}{score / 100.0:.2f}"


def time_text(ms: int) -> str:
    """A move's time as cutechess writes it ('0s', '0.021s', '0.21s', '2.1s', '21s')."""
    if ms <= 0:
        return "0s"
    digits = 3 if ms < 100 else 2 if ms < 1000 else 1 if ms < 10000 else 0
    return f"{ms / 1000.0:.{digits}f}s"


def move_comment(score: int, depth: int, ms: int | None) -> str:
    """'+0.35/12 0.21s' (``ms`` None: not measured, '+0.35/12'; ``depth`` 0: no evaluation,
    '0.21s'; neither: '')."""
    parts = [f"{score_text(score)}/{depth}"] if depth > 0 else []
    if ms is not None:
        parts.append(time_text(ms))
    return " ".join(parts)


def time_control_tags(limits: Limits) -> dict[str, str]:
    """The tags of the limits: ``TimeControl`` and, without a clock or a time per move, the
    ``Depth`` and ``Nodes`` limits; with a time per move its node limit."""
    if limits.tc is not None:
        return {"TimeControl": limits.tc.pgn()}
    tags = {"TimeControl": f"{limits.movetime:.8g}/move" if limits.movetime > 0 else "-"}
    if limits.movetime <= 0 and limits.depth:
        tags["Depth"] = str(limits.depth)
    if limits.nodes:
        tags["Nodes"] = str(limits.nodes)
    return tags
