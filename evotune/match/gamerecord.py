"""Game records: the plain-data result of one game, its JSON form and its PGN form.

A :class:`GameRecord` is what crosses back from a worker process. Its ``seconds`` and
``move_ms`` fields are wall time and are left out of equality, so records of the same game
played by 1 or N workers compare equal. Its PGN is the way cutechess and fastchess write it
(:mod:`evotune.match.pgnformat`): a ``TimeControl`` tag and a comment per move.
"""
from __future__ import annotations

import io
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

import chess
import chess.pgn
import numpy as np

from ..limits import Limits
from .openings import Opening
from .pgnformat import BOOK, move_comment, time_control_tags

RESULTS = ("1-0", "0-1", "1/2-1/2")


def _ints(xs) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _key(xs) -> tuple[int, int, int, int]:
    generation, fixture, pair, game = _ints(xs)
    return generation, fixture, pair, game


def leaf_array(rows) -> np.ndarray:
    """Per-ply phi rows as one read-only int64 (plies, width) array (the form TD learning keeps
    from the engine's core to the strategy)."""
    arr = np.array(rows, dtype=np.int64)
    arr = arr.reshape(len(arr), -1) if arr.size else np.zeros((len(arr), 0), dtype=np.int64)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True)
class GameRecord:
    """One played game, plain data (JSON-safe through :meth:`to_dict`)."""

    key: tuple[int, int, int, int]
    """(generation, fixture, pair, game index in the fixture); game 2p has A white, 2p+1 B white."""
    white_name: str
    """White player's name."""
    black_name: str
    """Black player's name."""
    white_weights: tuple[float, ...]
    """White's weight vector (evotune units)."""
    black_weights: tuple[float, ...]
    """Black's weight vector (evotune units)."""
    opening: Opening
    """Start position and opening moves (played before the engines' first move)."""
    moves: tuple[str, ...]
    """UCI moves played by the engines after the opening."""
    result: str
    """'1-0', '0-1' or '1/2-1/2'."""
    termination: str
    """Why the game ended ('checkmate', 'ply-cap', 'forfeit-timeout', ...)."""
    nodes: int = 0
    """Nodes searched by the built-in engine in this game (both sides)."""
    seconds: float = field(default=0.0, compare=False)
    """Wall time of the game (not part of equality: it differs between runs)."""
    white_engine: str = ""
    """External engine command of White ('' for the built-in engine)."""
    black_engine: str = ""
    """External engine command of Black ('' for the built-in engine)."""
    scores: tuple[int, ...] | None = None
    """Per move: the mover's root score (centipawns; mates as +-(MATE - plies)); None in
    records stored before evotune kept it for every game."""
    leaf_phi: np.ndarray | None = field(default=None, compare=False, repr=False)
    """int64 (plies, width), read-only: per move the phi_int of the PV leaf, mover's view (only
    when the fixture records leaves). Left out of equality: it follows from the moves and the
    weights, and arrays do not compare to one truth value."""
    predicted: tuple[bool, ...] | None = None
    """Per move: the next move was the reply the PV predicted (only when recording leaves)."""
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What the receiving process reports about the game (an engine's forfeit); not stored."""
    boards: np.ndarray | None = field(default=None, compare=False, repr=False)
    """int64 (plies, width): the core's record of the position before each move
    (:mod:`evotune.engine.gameboards`), only when the task asked for it (built-in engines);
    not stored."""
    last_visits: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)
    """The root's moves and visits of the last move's search when a built-in UCT side made it in
    an untimed game (``evotune label --visits``); () otherwise; not stored."""
    depths: tuple[int, ...] | None = None
    """Per move: the depth the mover's search reached (an external engine's last ``info
    depth`` with a score, 0 when it sent none); None in records stored before evotune kept it."""
    move_ms: tuple[int, ...] | None = field(default=None, compare=False)
    """Per move: the mover's thinking time in milliseconds where moves are searched one by one
    (an external engine or a clock is in the game); None where it is not measured (a game
    played whole inside the core) and in older records. Wall time: not part of equality."""

    @property
    def plies(self) -> int:
        """Number of plies played by the engines (opening moves excluded)."""
        return len(self.moves)

    @property
    def opening_fen(self) -> str:
        """Start FEN of the game (before the opening moves)."""
        return self.opening.fen

    @property
    def opening_moves(self) -> tuple[str, ...]:
        """Opening moves (UCI) played before the engines' first move."""
        return self.opening.moves

    @property
    def a_white(self) -> bool:
        """True when player A of the fixture had White (even game index)."""
        return self.key[3] % 2 == 0

    def points_a(self) -> int:
        """Points of player A: win 2, draw 1, loss 0."""
        if self.result == "1/2-1/2":
            return 1
        white_won = self.result == "1-0"
        return 2 if white_won == self.a_white else 0

    def to_dict(self) -> dict:
        """JSON-safe form (for the store's game log)."""
        d = {
            "key": list(self.key), "white": self.white_name, "black": self.black_name,
            "white_weights": list(self.white_weights), "black_weights": list(self.black_weights),
            "opening": self.opening.to_dict(), "moves": list(self.moves), "result": self.result,
            "termination": self.termination, "plies": self.plies, "nodes": self.nodes,
            "seconds": self.seconds, "white_engine": self.white_engine,
            "black_engine": self.black_engine,
        }
        if self.scores is not None:
            d["scores"] = list(self.scores)
        if self.leaf_phi is not None:
            d["leaf_phi"] = self.leaf_phi.tolist()
        if self.predicted is not None:
            d["predicted"] = list(self.predicted)
        if self.depths is not None:
            d["depths"] = list(self.depths)
        if self.move_ms is not None:
            d["move_ms"] = list(self.move_ms)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> GameRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(
            key=_key(d["key"]), white_name=str(d["white"]), black_name=str(d["black"]),
            white_weights=tuple(float(x) for x in d["white_weights"]),
            black_weights=tuple(float(x) for x in d["black_weights"]),
            opening=Opening.from_dict(d["opening"]), moves=tuple(str(m) for m in d["moves"]),
            result=str(d["result"]), termination=str(d["termination"]),
            nodes=int(d.get("nodes", 0)), seconds=float(d.get("seconds", 0.0)),
            white_engine=str(d.get("white_engine", "")),
            black_engine=str(d.get("black_engine", "")),
            scores=_ints(d["scores"]) if "scores" in d else None,
            leaf_phi=leaf_array(d["leaf_phi"]) if "leaf_phi" in d else None,
            predicted=tuple(bool(x) for x in d["predicted"]) if "predicted" in d else None,
            depths=_ints(d["depths"]) if "depths" in d else None,
            move_ms=_ints(d["move_ms"]) if "move_ms" in d else None,
        )

    def comments(self) -> tuple[str, ...]:
        """Per move, its PGN comment as cutechess writes it ('+0.35/12 0.21s'; '' when the record
        holds no evaluation of it: an older record)."""
        if self.depths is None or self.scores is None:
            return ("",) * self.plies
        ms = self.move_ms if self.move_ms is not None else (None,) * self.plies
        return tuple(move_comment(s, d, t) for s, d, t in zip(self.scores, self.depths, ms))


# ---- PGN --------------------------------------------------------------------------------------

def weights_text(weights: Iterable[float]) -> str:
    """'100,300,330,500,900,10' (integers shown without a decimal point)."""
    return ",".join(f"{w:g}" if float(w) != int(w) else str(int(w)) for w in weights)


def pgn_tag_value(value) -> str:
    """A PGN tag value escaped as the PGN standard asks: backslash and quote escaped, control
    characters (a newline would start a forged tag, and python-chess refuses it) replaced by
    spaces."""
    text = "".join(c if c.isprintable() else " " for c in str(value))
    return text.replace("\\", "\\\\").replace('"', '\\"')


class _EscapedHeaders(chess.pgn.Headers):
    """Headers that escape every value as it is set (:func:`pgn_tag_value`): a name from a file,
    an engine command or an openings path can never stop the games from being written."""

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, pgn_tag_value(value))


def record_to_pgn_game(rec: GameRecord, *, event: str = "evotune match", site: str = "evotune",
                       date: str | None = None, limits: Limits | None = None) -> chess.pgn.Game:
    """The game as a python-chess PGN game (opening moves included, so replay is exact, each
    commented 'book'; the engines' moves with their evaluation, depth and time; ``limits``: the
    TimeControl tag and the Depth and Nodes ones, :func:`~.pgnformat.time_control_tags`)."""
    game = chess.pgn.Game()
    game.headers = _EscapedHeaders()
    g, f, p, i = rec.key
    game.headers["Event"] = event
    game.headers["Site"] = site
    game.headers["Date"] = date or "????.??.??"  # unknown by default: PGN stays reproducible
    game.headers["Round"] = f"{g}.{f}.{i + 1}"
    game.headers["White"] = rec.white_name
    game.headers["Black"] = rec.black_name
    game.headers["Result"] = rec.result
    start = chess.Board(rec.opening.fen)
    if rec.opening.fen != chess.STARTING_FEN:
        game.setup(start)  # sets FEN and SetUp "1"
    game.headers["Termination"] = rec.termination
    for tag, value in (time_control_tags(limits) if limits is not None else {}).items():
        game.headers[tag] = value
    if rec.white_weights:  # an external engine without mapped weights has none
        game.headers["WhiteWeights"] = weights_text(rec.white_weights)
    if rec.black_weights:
        game.headers["BlackWeights"] = weights_text(rec.black_weights)
    if rec.white_engine:
        game.headers["WhiteEngine"] = rec.white_engine
    if rec.black_engine:
        game.headers["BlackEngine"] = rec.black_engine
    if rec.opening.label:
        game.headers["OpeningSource"] = rec.opening.label  # suite:line, or book:file
    game.headers["PlyCount"] = str(len(rec.opening.moves) + rec.plies)
    node: chess.pgn.GameNode = game
    comments = (BOOK,) * len(rec.opening.moves) + rec.comments()
    for uci, comment in zip(rec.opening.moves + rec.moves, comments):
        node = node.add_variation(chess.Move.from_uci(uci))
        if comment:
            node.comment = comment
    return game


def write_pgn_text(records: Iterable[GameRecord], *, event: str = "evotune match",
                   date: str | None = None, limits: Limits | None = None) -> str:
    """The records as PGN text (one game after another, each followed by a blank line)."""
    text = io.StringIO()
    for rec in records:
        exporter = chess.pgn.StringExporter(headers=True, variations=True, comments=True)
        text.write(record_to_pgn_game(rec, event=event, date=date, limits=limits)
                   .accept(exporter))
        text.write("\n\n")
    return text.getvalue()


def write_pgn(records: Iterable[GameRecord], path_or_file: str | os.PathLike | IO[str], *,
              append: bool = True, event: str = "evotune match", date: str | None = None,
              limits: Limits | None = None) -> None:
    """Write the records as PGN to a path (appending by default) or an open text file."""
    text = write_pgn_text(records, event=event, date=date, limits=limits)
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
    else:
        with open(path_or_file, "a" if append else "w", encoding="utf-8") as fh:
            fh.write(text)
