"""Openings: EPD and PGN suites and Polyglot books, drawn by position-addressed generators.

An :class:`Opening` is plain data: a start FEN and a tuple of UCI moves played from it before
the engines take over (PGN suites keep their moves, EPD suites have none, a book line is a list
of book moves from the standard start). The game's PGN shows those moves and the core gets the
board with its history (so repetitions across the opening are seen).

Seeding: the opening of pair ``p`` of fixture ``f`` in generation ``g`` comes from
``evotune.seeding.generator(seed, STREAM_OPENINGS, g, f, p)``: one generator per pair, tagged
with the openings stream so it never shares draws with the strategy. A suite opening is
``suite[rng.integers(len(suite))]`` (drawn with replacement); a book opening is a line of book
moves drawn by weight with the same generator, up to ``book_plies`` plies.

Suites are parsed once per process (cached by path, size and mtime). Loading is lazy where it
matters: a PGN suite is only split into games at load time; a game's SAN moves are converted to
UCI when that game is drawn, so the 34,700-game 8moves_v3 suite loads in a fraction of a second.
"""
from __future__ import annotations

import functools
import io
import logging
import os
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import numpy as np

from ..engine.book import OpeningBook
from ..errors import OpeningsError
from ..fileio import read_text
from ..seeding import STREAM_OPENINGS, generator

log = logging.getLogger(__name__)

KINDS = ("auto", "epd", "pgn", "book")


@dataclass(frozen=True)
class Opening:
    """A game's start: a position and the moves played from it before the engines take over."""

    fen: str = chess.STARTING_FEN
    """Start position (full FEN)."""
    moves: tuple[str, ...] = ()
    """Opening moves in UCI, played from ``fen`` before the engines' first move."""
    label: str = ""
    """Where it came from, e.g. '2moves_v1.epd:123' or 'book' ('' for the start position)."""

    def board(self) -> chess.Board:
        """A python-chess board at the end of the opening, with the opening moves as history."""
        board = chess.Board(self.fen)
        for uci in self.moves:
            board.push_uci(uci)
        return board

    def to_dict(self) -> dict:
        """JSON-safe form."""
        return {"fen": self.fen, "moves": list(self.moves), "label": self.label}

    @classmethod
    def from_dict(cls, d: dict) -> Opening:
        """Inverse of :meth:`to_dict`."""
        return cls(fen=str(d["fen"]), moves=tuple(str(m) for m in d.get("moves", ())),
                   label=str(d.get("label", "")))


START = Opening()
"""The standard start position, no opening moves."""


def detect_kind(path: str | os.PathLike, kind: str = "auto") -> str:
    """'epd', 'pgn' or 'book' for ``path`` ('auto' looks at the file name)."""
    if kind not in KINDS:
        raise OpeningsError(f"openings kind {kind!r} is unknown; use one of {', '.join(KINDS)}")
    if kind != "auto":
        return kind
    name = str(path).lower()
    if name.endswith((".epd", ".fen")):
        return "epd"
    if name.endswith((".pgn", ".pgn.zip", ".zip")):
        return "pgn"
    if name.endswith(".bin"):
        return "book"
    raise OpeningsError(f"openings file {path}: cannot tell its kind from the name; use a .epd, "
                        ".pgn, .pgn.zip or .bin (Polyglot) file, or give the kind explicitly")


# ---- suites ---------------------------------------------------------------------------------

class OpeningSuite:
    """A parsed EPD or PGN suite: ``len(suite)`` openings, ``suite[i]`` an :class:`Opening`."""

    def __init__(self, path: str, kind: str, entries: list[str]) -> None:
        self.path = path
        self.kind = kind
        self._entries = entries
        self._parsed: dict[int, Opening] = {}
        self._name = Path(path).name

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, i: int) -> Opening:
        i = int(i)
        if not 0 <= i < len(self._entries):
            raise IndexError(i)
        op = self._parsed.get(i)
        if op is None:
            op = self._parse(i)
            self._parsed[i] = op
        return op

    def _parse(self, i: int) -> Opening:
        label = f"{self._name}:{i + 1}"
        entry = self._entries[i]
        if self.kind == "epd":
            try:
                chess.Board(entry)
            except ValueError as exc:
                raise OpeningsError(f"{self.path}: opening {i + 1} has a bad FEN {entry!r} "
                                    f"({exc}); fix or remove that line") from None
            return Opening(fen=entry, moves=(), label=label)
        game = chess.pgn.read_game(io.StringIO(entry))
        if game is None or game.errors:
            why = game.errors[0] if game is not None and game.errors else "no game"
            raise OpeningsError(f"{self.path}: game {i + 1} cannot be read ({why}); fix or "
                                "remove that game")
        board = game.board()
        moves = tuple(m.uci() for m in game.mainline_moves())
        if not moves and "FEN" not in game.headers:
            raise OpeningsError(f"{self.path}: game {i + 1} has neither moves nor a FEN tag (is "
                                "the file a PGN suite?); fix or remove that game")
        return Opening(fen=board.fen(), moves=moves, label=label)


_CACHE: dict[tuple, OpeningSuite] = {}
_LOCK = threading.Lock()


def load_suite(path: str | os.PathLike, *, kind: str = "auto") -> OpeningSuite:
    """The suite at ``path`` (EPD or PGN, PGN possibly zipped), parsed once per process."""
    kind = detect_kind(path, kind)
    if kind == "book":
        raise OpeningsError(f"{path} is a Polyglot book, not a suite; draw book openings with "
                            "draw_opening()")
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise OpeningsError(f"openings file {path} cannot be read ({exc.strerror}); check the "
                            "path") from None
    key = (str(p.resolve()), kind, st.st_size, st.st_mtime_ns)
    with _LOCK:
        suite = _CACHE.get(key)
    if suite is not None:
        return suite
    text = _read_text(p)
    entries = _split_epd(text) if kind == "epd" else _split_pgn(text)
    if not entries:
        raise OpeningsError(f"openings file {path} holds no opening; give an EPD file with one "
                            "FEN per line or a PGN file with games")
    suite = OpeningSuite(str(p), kind, entries)
    with _LOCK:
        _CACHE[key] = suite
    log.debug("loaded %d openings from %s", len(entries), path)
    return suite


def _read_text(p: Path) -> str:
    try:
        if p.suffix.lower() == ".zip":
            with zipfile.ZipFile(p) as z:
                members = [n for n in z.namelist() if n.lower().endswith((".pgn", ".epd"))]
                if not members:
                    raise OpeningsError(f"{p}: the zip holds no .pgn or .epd file")
                return "\n".join(z.read(n).decode("utf-8", errors="replace") for n in members)
        return read_text(p, "openings file", error=OpeningsError)
    except (OSError, zipfile.BadZipFile) as exc:
        raise OpeningsError(f"openings file {p} cannot be read ({exc}); check the path and "
                            "that the file is a valid suite") from None


def _split_epd(text: str) -> list[str]:
    """Full FENs, one per usable line (4-field EPD gets clocks '0 1'; opcodes are ignored)."""
    out = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[0].startswith(("#", ";")) or fields[0].count("/") != 7:
            continue
        if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
            out.append(" ".join(fields[:6]))
        else:
            out.append(" ".join(fields[:4]) + " 0 1")
    return out


def _split_pgn(text: str) -> list[str]:
    """The text of each game (tag section + movetext), split without parsing moves."""
    games: list[str] = []
    current: list[str] = []
    seen_moves = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and seen_moves:
            games.append("\n".join(current))
            current, seen_moves = [], False
        if s and not s.startswith("[") and not s.startswith("%"):
            seen_moves = True
        current.append(line)
    if seen_moves:
        games.append("\n".join(current))
    return games


# ---- books ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=8)
def _book(path: str):
    """One open OpeningBook per file and process (opening and checking it costs ~1 ms)."""
    return OpeningBook(path)


def book_line(path: str | os.PathLike, rng: np.random.Generator, *, max_plies: int) -> Opening:
    """A line of Polyglot book moves from the start position, drawn by weight with ``rng``."""
    board = chess.Board()
    moves = _book(str(Path(path).resolve())).play(board, rng, max_plies=max_plies)
    return Opening(moves=tuple(m.uci() for m in moves), label=f"book:{Path(path).name}")


def check_openings(path: str | os.PathLike | None, *, book_plies: int = 8,
                   sample: int = 64) -> None:
    """Refuse openings that cannot be played, before anything uses them: a file name with a
    control character, an unreadable or binary suite, its first ``sample`` entries not
    parsing or none of them a legal position with a move to play, a book that is not Polyglot
    or has no legal move for the start position (garbage or illegal entries would silently play
    from it)."""
    if path is None:
        return
    if not str(path).isprintable():  # it names the games' openings in their PGN headers
        raise OpeningsError(f"openings file {str(path)!r}: its name holds a line break or another "
                            "control character; rename the file")
    if detect_kind(path) != "book":
        suite = load_suite(path)
        playable = 0
        for i in range(min(sample, len(suite))):
            board = suite[i].board()
            playable += board.is_valid() and not board.is_game_over(claim_draw=False)
        if not playable:
            raise OpeningsError(f"openings file {path}: none of its first "
                                f"{min(sample, len(suite))} openings is a legal position with a "
                                "move to play (illegal, checkmate or stalemate); give openings "
                                "that can be played")
        return

    _book(str(Path(path).resolve()))  # size and order of the entries
    with chess.polyglot.open_reader(path) as reader:
        start = chess.Board()
        raw = [e for e in reader.find_all(chess.polyglot.zobrist_hash(start))]
        legal = [e for e in raw if start.is_legal(e.move)]
    if not legal or len(legal) != len(raw):
        raise OpeningsError(f"opening book {path} has {len(raw) - len(legal)} illegal and "
                            f"{len(legal)} legal moves for the start position; it is not a usable "
                            "Polyglot book")


# ---- drawing ----------------------------------------------------------------------------------

def opening_generator(seed: int, generation: int, fixture: int, pair: int) -> np.random.Generator:
    """The generator that draws the opening of one colour-swapped pair."""
    return generator(seed, STREAM_OPENINGS, generation, fixture, pair)


def draw_opening(path: str | os.PathLike | None, rng: np.random.Generator, *,
                 kind: str = "auto", book_plies: int = 8) -> Opening:
    """One opening from the suite or book at ``path`` (None: the standard start position)."""
    if path is None:
        return START
    kind = detect_kind(path, kind)
    if kind == "book":
        if not Path(path).is_file():
            raise OpeningsError(f"opening book {path} not found; check the path")
        return book_line(path, rng, max_plies=book_plies)
    suite = load_suite(path, kind=kind)
    return suite[int(rng.integers(len(suite)))]
