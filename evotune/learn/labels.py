"""Labelled positions: the line formats the C++ Texel tuners read, one reader and one writer.

Every line is one position and the result of the game it comes from, from White's point of view
(1 = White won, 0.5 = draw, 0 = Black won). Formats read (blank lines and lines starting with
``#`` are skipped):

- ``fen``: ``FEN [1.0]`` / ``FEN [0.5]`` / ``FEN [0.0]`` (also ``[1]``, ``[0]``, ``[1-0]`` ...;
  anything after the bracket, e.g. a score, is ignored);
- ``epd``: ``FEN c9 "1-0";`` (4-field EPD with opcodes, as in zurichess's quiet-labeled.epd;
  other opcodes may precede or follow c9);
- ``pipe``: ``FEN | result`` with result ``1-0``, ``0-1``, ``1/2-1/2``, ``1``, ``0.5`` or ``0``,
  or the community's ``FEN | score | result`` (score: White's view, centipawns; the last field
  is the result, so a score is never read as one);
- ``text`` (written by :func:`format_line`, read as ``pipe``): ``FEN | score | result``, the
  text data of the network trainers (bullet's ``bullet-utils convert --from text``): score in
  centipawns and result ``1.0``/``0.5``/``0.0``, both White's view.

:func:`format_line` writes ``fen`` (the default of ``evotune datagen``), ``epd`` or ``text``.
A malformed line raises :class:`DataError` naming ``file:line`` once more than ``max_bad``
lines were bad.
"""
from __future__ import annotations

import hashlib
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import chess
import numpy as np

from ..datafiles import DataFile
from ..errors import ConfigError, EvotuneError
from ..fileio import check_input_file

log = logging.getLogger(__name__)

FORMATS = ("fen", "epd", "text")
"""Formats :func:`format_line` writes."""
TEXT_SCORE_LIMIT = 32000
"""``text`` scores are int16 for its readers (bullet parses them as i16): positions whose score
is beyond this (mate scores included) are not written in that format."""

_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "1": 1.0, "0": 0.0, "0.5": 0.5,
            "1.0": 1.0, "0.0": 0.0, "1/2": 0.5, ".5": 0.5}
_BRACKET = re.compile(r"^(.*?)\s*\[\s*([^\]]*?)\s*\](.*)$")
_C9 = re.compile(r"\bc9\s+\"?([^\";]+?)\"?\s*;")


class DataError(EvotuneError, ValueError):
    """A file of labelled positions cannot be read or has malformed lines."""


DATA_HINT = "; give files of labelled positions"
"""What a refusal of a missing data file adds."""


@dataclass
class Positions:
    """Labelled positions read from files (in file order)."""

    fens: list[str] = field(default_factory=list)
    """Full FENs (4-field EPD positions get clocks '0 1')."""
    results: list[float] = field(default_factory=list)
    """Game result of each position, White's view: 1, 0.5 or 0."""
    bad: int = 0
    """Malformed lines skipped (at most the limit given)."""
    files: list[dict] = field(default_factory=list)
    """One record per file read: name, path, size, sha256, positions."""

    def __len__(self) -> int:
        return len(self.fens)

    def result_array(self) -> np.ndarray:
        return np.asarray(self.results, dtype=np.float64)


def result_value(text: str) -> float | None:
    """1.0, 0.5 or 0.0 for a result token, None when it is not one."""
    return _RESULTS.get(text.strip().strip('"').strip())


def result_string(value: float) -> str:
    """'1-0', '1/2-1/2' or '0-1'."""
    return {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[float(value)]


def format_line(fen: str, result: float, fmt: str = "fen", score: int | None = None,
                move: str = "", visits: tuple[tuple[str, int], ...] = ()) -> str:
    """One output line (without the newline): ``FEN [1.0]``, EPD ``... c9 "1-0";`` or ``FEN |
    score | 1.0`` (``score``: White's view, centipawns), and `` | e2e4`` after it when ``move``
    (the text format's optional fourth field: the move a search chose), then `` | e2e4:312
    d2d4:200`` when ``visits`` (the optional fifth: a UCT search's root moves and their visits,
    most visited first)."""
    if fmt == "text":
        if score is None or abs(int(score)) > TEXT_SCORE_LIMIT:
            raise DataError(f"the text format needs a score within +-{TEXT_SCORE_LIMIT}, got "
                            f"{score!r}")
        if visits and not move:
            raise DataError("a line with visits needs the move too")
        return (f"{fen} | {int(score)} | {float(result):.1f}" + (f" | {move}" if move else "")
                + (" | " + " ".join(f"{m}:{int(n)}" for m, n in visits) if visits else ""))
    if fmt == "fen":
        return f"{fen} [{float(result):.1f}]"
    if fmt == "epd":
        return f"{' '.join(fen.split()[:4])} c9 \"{result_string(result)}\";"
    raise DataError(f"label format '{fmt}' is unknown; use one of {', '.join(FORMATS)}")


def _fen(text: str) -> str | None:
    """A full FEN from 4 or 6 FEN fields, or None when it is not a legal position."""
    fields = text.split()
    if len(fields) == 4:
        fields += ["0", "1"]
    if len(fields) != 6:
        return None
    fen = " ".join(fields)
    try:
        board = chess.Board(fen)
    except ValueError:
        return None
    if board.status() & ~chess.STATUS_IMPOSSIBLE_CHECK:
        return None
    return fen


_UCI = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?")
_VISIT = r"[a-h][1-8][a-h][1-8][nbrq]?:\d{1,12}"
_VISITS = re.compile(rf"{_VISIT}(\s+{_VISIT})*")


def parse_line(line: str) -> tuple[str, float] | str:
    """(fen, result) for a labelled line, or a short reason why it is not one."""
    got = parse_scored_line(line)
    return got if isinstance(got, str) else (got[0], got[1])


def parse_scored_line(line: str) -> tuple[str, float, float | None] | str:
    """(fen, result, score or None) for a labelled line, or a short reason why it is not one.
    Only ``FEN | score | result`` lines carry a score (White's view, centipawns); a fourth field
    (``| move``, :func:`parse_move_line`) is checked there and ignored here."""
    s = line.strip()
    if s.count("|") == 4:
        s, visits = s.rsplit("|", 1)
        if not _VISITS.fullmatch(visits.strip()):
            return ("more than 4 fields: expected 'FEN | score | result | move' (a fifth is a "
                    f"search's visits, such as 'e2e4:312 d2d4:200', not '{visits.strip()[:20]}')")
    if s.count("|") == 3:
        s, move = s.rsplit("|", 1)
        if not _UCI.fullmatch(move.strip()):
            return ("more than 3 fields: expected 'FEN | result' or 'FEN | score | result' "
                    f"(a fourth is a UCI move, such as e2e4, not '{move.strip()[:12]}')")
    score = None
    m = _BRACKET.match(s)
    if m:
        fen_text, res = m.group(1), result_value(m.group(2))
        if res is None:
            return f"result [{m.group(2)}] is not 1.0, 0.5 or 0.0"
    elif "|" in s:
        fen_text, *rest = s.split("|")
        if len(rest) > 2:
            return "more than 3 fields: expected 'FEN | result' or 'FEN | score | result'"
        res = result_value(rest[-1])
        if res is None:
            return (f"result '{rest[-1].strip()}' after '|' is not 1-0, 0-1, 1/2-1/2, 1, 0.5 "
                    "or 0")
        if len(rest) == 2:
            try:
                score = float(rest[0])
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                return f"score '{rest[0].strip()}' is not a number (centipawns, White's view)"
    else:
        m = _C9.search(s)
        if not m:
            return "no result: expected 'FEN [1.0]', 'FEN | 1-0' or EPD with c9 \"1-0\";"
        res = result_value(m.group(1))
        if res is None:
            return f"c9 result '{m.group(1)}' is not 1-0, 0-1 or 1/2-1/2"
        fields = s.split()
        fen_text = " ".join(fields[:6] if len(fields) >= 6 and fields[4].isdigit()
                            and fields[5].isdigit() else fields[:4])
    fen = _fen(fen_text)
    if fen is None:
        return f"'{fen_text.strip()[:80]}' is not a legal FEN"
    return fen, res, score


def parse_move_line(line: str) -> tuple[str, str] | str:
    """(fen, UCI move) for a ``FEN | score | result | move`` line (``evotune label --move``; a
    fifth field of visits is checked and ignored), or a short reason why it is not one (the
    move must be legal in the position)."""
    got = parse_visits_line(line)
    return got if isinstance(got, str) else (got[0], got[1])


def parse_visits_line(line: str) -> tuple[str, str, dict[str, int] | None] | str:
    """(fen, UCI move, visits or None) for a ``FEN | score | result | move [| visits]`` line
    (``evotune label --move``, ``--visits``: a UCT search's root moves, ``e2e4:312 d2d4:200``),
    or a short reason why it is not one: the move and every visited move must be legal in the
    position, a move listed once, the visits not all zero."""
    s = line.strip()
    visits = None
    if s.count("|") == 4:
        s, field_text = s.rsplit("|", 1)
        if not _VISITS.fullmatch(field_text.strip()):
            return ("visits: expected moves and counts such as 'e2e4:312 d2d4:200', not "
                    f"'{field_text.strip()[:20]}'")
        visits = {}
        for item in field_text.split():
            m, n = item.split(":")
            if m in visits:
                return f"visits: move {m} is listed twice"
            visits[m] = int(n)
        if not any(visits.values()):
            return "visits: every count is 0"
    if s.count("|") != 3:
        return "no move: expected 'FEN | score | result | move' (evotune label --move)"
    head, uci = s.rsplit("|", 1)
    got = parse_scored_line(head)
    if isinstance(got, str):
        return got
    board = chess.Board(got[0])
    try:
        move = chess.Move.from_uci(uci.strip())
    except ValueError:
        move = None
    if move is None or move not in board.legal_moves:
        return f"move '{uci.strip()[:12]}' is not a legal move of the position"
    if visits is not None:
        legal = {m.uci() for m in board.legal_moves}
        wrong = [m for m in visits if m not in legal]
        if wrong:
            return f"visits: move {wrong[0]} is not a legal move of the position"
    return got[0], move.uci(), visits


def file_record(path: Path) -> dict:
    """Name, path, size and SHA-256 of a data file (for a run's manifest)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return {"name": path.name, "path": str(path.resolve()), "size": path.stat().st_size,
            "sha256": h.hexdigest()}


def data_files(paths, what: str = "data file") -> tuple[DataFile, ...]:
    """Name, size and SHA-256 of each data file, as a run's manifest records them (a fit's, a
    training's, a move model's: resume refuses a changed one); ConfigError naming a file that
    cannot be read (``what`` names its kind in that line)."""
    out = []
    for p in paths:
        check_input_file(p, what)  # a FIFO or a device would hang the hash
        try:
            r = file_record(Path(p))
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read the {what} ({exc.strerror})") from None
        out.append(DataFile(name=r["name"], size=r["size"], sha256=r["sha256"]))
    return tuple(out)


@dataclass
class ReadStats:
    """What :func:`iter_labelled` met on its way: malformed lines and the files read."""

    bad: int = 0
    """Malformed lines skipped (at most the limit given)."""
    bad_lines: list[str] = field(default_factory=list)
    """``file:line: reason`` of the skipped lines (the first ``BAD_KEPT``)."""
    files: list[dict] = field(default_factory=list)
    """One record per file read: name, path, size, sha256, positions."""


BAD_KEPT = 1000
"""Skipped lines whose place :class:`ReadStats` keeps."""


def iter_labelled(paths, *, max_bad: int = 0, max_positions: int = 0,
                  stats: ReadStats | None = None, notices: list[str] | None = None):
    """Yield (fen, result, score or None) of every labelled line of ``paths`` in order
    (``max_positions`` > 0: stop there); ``stats`` (when given) collects the files read and
    the lines skipped.

    More than ``max_bad`` malformed lines raise DataError naming the first one beyond the limit
    as ``file:line``. The skipped lines are logged (warnings) once every file is read, so a
    refusal is not preceded by them; with ``notices`` they are added to it instead, for the
    caller to log (:func:`log_notices`) once its own checks passed.
    """
    stats = ReadStats() if stats is None else stats
    count = 0
    skipped: list[str] = []
    bad_before = stats.bad
    for p in paths:
        path = Path(p)
        check_input_file(path, "data file", error=DataError, hint=DATA_HINT)
        rec = file_record(path)
        start = count
        try:
            fh = open(path, encoding="utf-8")
            with fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip() or line.lstrip().startswith("#"):
                        continue
                    if max_positions and count >= max_positions:
                        break
                    got = parse_scored_line(line)
                    if isinstance(got, str):
                        stats.bad += 1
                        if stats.bad > max_bad:
                            raise DataError(f"{path}:{lineno}: {got} (bad lines allowed: "
                                            f"{max_bad}; raise --max-bad to skip such lines)")
                        if len(skipped) < BAD_KEPT:
                            skipped.append(f"{path}:{lineno}: skipped: {got}")
                        if len(stats.bad_lines) < BAD_KEPT:
                            stats.bad_lines.append(f"{path}:{lineno}: {got}")
                        continue
                    count += 1
                    yield got
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: not a UTF-8 text file ({exc.reason}); give a file of "
                            "labelled positions") from None
        except OSError as exc:
            raise DataError(f"data file {path}: cannot read it ({exc.strerror})") from None
        rec["positions"] = count - start
        stats.files.append(rec)
    if stats.bad - bad_before > len(skipped):
        skipped.append(f"... {stats.bad - bad_before - len(skipped)} more malformed lines "
                       "skipped (--max-bad)")
    if notices is None:
        log_notices(skipped)
    else:
        notices.extend(skipped)


def log_notices(notices: list[str]) -> None:
    """Log the skipped-line notices :func:`iter_labelled` collected (warnings)."""
    for notice in notices:
        log.warning("%s", notice)


def read_positions(paths, *, max_bad: int = 0, max_positions: int = 0,
                   notices: list[str] | None = None) -> Positions:
    """Read labelled positions from ``paths`` in order (``max_positions`` > 0: stop there).

    More than ``max_bad`` malformed lines raise DataError naming the first one beyond the limit
    as ``file:line``.
    """
    out = Positions()
    stats = ReadStats()
    for fen, result, _ in iter_labelled(paths, max_bad=max_bad, max_positions=max_positions,
                                        stats=stats, notices=notices):
        out.fens.append(fen)
        out.results.append(result)
    out.bad, out.files = stats.bad, stats.files
    return out
