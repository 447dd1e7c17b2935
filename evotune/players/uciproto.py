"""The text of the UCI protocol: option declarations, info lines and position commands.

Pure parsing and formatting, no processes: :class:`~evotune.players.external.ExternalEngine`
speaks the protocol with these, and tests check them on lines real engines print.
"""
from __future__ import annotations

from dataclasses import dataclass

import chess

from ..errors import EngineError
from ..rules import MATE


@dataclass(frozen=True)
class UciOption:
    """One option an engine declared in its ``uci`` answer."""

    name: str
    """The option's name as the engine spells it."""
    type: str
    """'spin', 'check', 'combo', 'button' or 'string'."""
    default: str | None = None
    """Default value as declared (text)."""
    min: int | None = None
    """Smallest value of a spin option."""
    max: int | None = None
    """Largest value of a spin option."""
    choices: tuple[str, ...] = ()
    """The values of a combo option."""

    def parse(self, value) -> str:
        """``value`` as the text sent to the engine; EngineError when the engine cannot take it."""
        if self.type == "spin":
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise EngineError(f"option '{self.name}' takes an integer, not {value!r}") from None
            if self.min is not None and number < self.min:
                raise EngineError(f"option '{self.name}' = {number}: must be at least {self.min} "
                                  f"(the engine declares {self.min}..{self.max})")
            if self.max is not None and number > self.max:
                raise EngineError(f"option '{self.name}' = {number}: must be at most {self.max} "
                                  f"(the engine declares {self.min}..{self.max})")
            return str(number)
        if self.type == "check":
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower()
            return "true" if bool(value) else "false"
        if self.type == "combo":
            text = str(value)
            match = [c for c in self.choices if c.lower() == text.lower()]
            if not match:
                raise EngineError(f"option '{self.name}' = {text!r}: choose one of "
                                  f"{', '.join(self.choices)}")
            return match[0]
        return str(value)


def parse_option(line: str) -> UciOption | None:
    """The option of an ``option name <name> type <t> [default d] [min a] [max b] [var v]...``
    line (names may hold spaces, e.g. 'Skill Level'); None when malformed."""
    tokens = line.split()[1:]
    fields: dict[str, list[str]] = {}
    choices: list[str] = []
    key = None
    for tok in tokens:
        # inside the name only 'type' ends it; afterwards every keyword starts a new field
        if (tok == "type" and key == "name") or (
                key not in (None, "name") and tok in ("default", "min", "max", "var")) \
                or (key is None and tok == "name"):
            if key == "var":
                choices.append(" ".join(fields.pop("var")))
            key = tok
            fields[key] = []
        elif key is not None:
            fields[key].append(tok)
    if key == "var":
        choices.append(" ".join(fields.pop("var")))
    name = " ".join(fields.get("name", []))
    typ = " ".join(fields.get("type", []))
    if not name or not typ:
        return None

    def number(k):
        try:
            return int(" ".join(fields[k])) if k in fields else None
        except ValueError:
            return None

    default = " ".join(fields["default"]) if "default" in fields else None
    return UciOption(name=name, type=typ, default=default, min=number("min"), max=number("max"),
                     choices=tuple(choices))


def parse_info_score(line: str) -> int | None:
    """The score of an ``info`` line in centipawns, mover's view (mate in n -> MATE - (2n - 1))."""
    tokens = line.split()
    try:
        i = tokens.index("score")
        kind, value = tokens[i + 1], int(tokens[i + 2])
    except (ValueError, IndexError):
        return None
    if kind == "cp":  # clamped: an absurd score is still a score, never an overflow
        return max(-MATE, min(MATE, value))
    if kind == "mate":
        value = max(-MATE // 2, min(MATE // 2, value))
        return MATE - (2 * value - 1) if value > 0 else -(MATE - 2 * (-value))
    return None


def info_depth(line: str) -> int:
    """The ``depth`` of an ``info`` line (0 when it has none or it is not a number)."""
    tokens = line.split()
    try:
        return max(0, int(tokens[tokens.index("depth") + 1]))
    except (ValueError, IndexError):
        return 0


def info_nodes_pv(line: str) -> tuple[int, tuple[str, ...]]:
    """The ``nodes`` (0 when none) and the ``pv`` of an ``info`` line."""
    tokens = line.split()
    nodes = 0
    if "nodes" in tokens:
        try:
            nodes = int(tokens[tokens.index("nodes") + 1])
        except (ValueError, IndexError):
            nodes = 0
    pv: tuple[str, ...] = ()
    if "pv" in tokens:
        pv = tuple(tokens[tokens.index("pv") + 1:])
    return nodes, pv


def position_command(board: chess.Board) -> str:
    """``position startpos|fen <root> moves ...`` for ``board`` with its move history."""
    stack = board.move_stack
    root = board.root() if stack else board
    fen = root.fen()
    head = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
    return head + (" moves " + " ".join(m.uci() for m in stack) if stack else "")
