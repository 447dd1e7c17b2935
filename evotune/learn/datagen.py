"""``evotune datagen``: labelled quiet positions from self-play games.

Game ``g`` (0-based) starts from an opening drawn with ``generator(seed, STREAM_DATAGEN, g)``
(a suite line or a book line, then ``random_plies`` uniformly random legal moves from the same
generator); the engine plays both sides. Built-in engines play the whole game inside the numba
core, UCI engine specs through the external runner (:func:`evotune.match.runner.map_games`, the
single parallel path). From the positions before each engine move (opening and random plies are
skipped) up to ``per_game`` that pass the ``filter`` are sampled with the same generator (0:
every one, no sampling; :mod:`evotune.learn.gamepositions`) and labelled with the game's result,
White's view (:mod:`evotune.learn.labels` formats; ``fen`` = ``FEN [1.0]`` by default; ``text``
= ``FEN | score | 1.0``, the networks' trainers' data, with the search score the engine gave the
position in its game, White's view: positions scored beyond +-32000, mates included, are not
candidates in that format; ``bullet``: the same as bullet's 32-byte records, side to move's view,
to a file ending ``.bin`` or ``.data``; ``target`` = ``td`` writes instead the position's
TD(lambda) target, see :func:`td_column`). The ``qsearch`` filter (the default): not in check
and static evaluation == quiescence score, judged with the engine's own evaluation (weights or
net; the ``shannon`` reference weights for an external engine); ``bestmove`` (bullet-style): not
in check, the move played not a capture or promotion, the score within +-32000, from what the
core recorded while playing the game.

Output is written in chunks of ``chunk`` games: each chunk (lines or records) is appended to the
output file with one ``write`` call, then ``OUT.progress.json`` (atomic) records the chunks
done, the file's length and the SHA-256 of those bytes (a new output's record, of no chunk, is
written before its first chunk, so that a first chunk cut by a full disk or a kill is this
writer's to continue, not a foreign file). The file is the games' lines in game
order, so it depends on the settings and the number of games only (not on the chunk boundaries,
the workers or a resume); ``positions`` > 0 stops it after exactly that many lines (records).

One writer per output: ``OUT.lock`` holds the writer's PID (:class:`evotune.runs.lock.RunLock`,
the lock runs use); a second datagen to the same ``--out`` is refused. Everything (settings,
output path, engine, openings, the progress record against the file) is checked before the lock
is taken or anything is written. A rerun with the same settings continues after the last
recorded chunk. The progress record never disagrees with the file: a rerun refuses a file whose
recorded bytes do not match their SHA-256, and repairs only what is exact: bytes after the
recorded length (a chunk appended but not recorded when datagen was killed) are dropped only
when they are the start of the next chunk as these settings play it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.evaluation import SHANNON, Evaluation
from ..errors import ConfigError, EvotuneError, FieldError, StoreError
from ..fileio import atomic_write_json, check_writable
from ..limits import LIMITS, Limits, check_workers, resolve_workers
from ..match.fixtures import GameTask, MatchSettings, limits_record
from ..match.openings import Opening, check_openings, draw_opening
from ..match.resolve import REFERENCE_ALIAS, close_external_players, resolve_player, split_player
from ..match.runner import map_games
from ..paths import resolve_openings_path
from ..players import PlayerSpec
from ..players.nets import evaluation
from ..players.spec import check_engine_spec
from ..runs.lock import RunLock
from ..seeding import STREAM_DATAGEN, generator
from ..space import SHANNON_REFERENCE
from ..spec.file import load_engine_spec
from ..spec.model import EngineSpec
from .gamepositions import FILTERS, SCORED_FORMATS, game_output, td_column
from .labels import FORMATS, file_record
from .nn.bulletdata import SUFFIXES, is_bullet
from .nn.tdtargets import LAMBDA

log = logging.getLogger(__name__)

PROGRESS_SUFFIX = ".progress.json"
LOCK_SUFFIX = ".lock"
LINE_BYTES = 128
"""Bytes of one output line at most (a FEN with its label): bounds an unrecorded chunk."""
TARGETS = ("score", "td")
"""What the text format's score column holds (:attr:`DatagenSettings.target`)."""
DATAGEN_FORMATS = (*FORMATS, "bullet")
"""Formats datagen writes: the label lines, and bullet's 32-byte records."""
__all__ = ["DATAGEN_FORMATS", "FILTERS", "DatagenSettings", "DatagenSummary", "datagen",
           "td_column"]


@dataclass(frozen=True)
class DatagenSettings:
    """What ``evotune datagen`` plays and writes (everything here decides the output)."""

    games: int
    """Games to play."""
    engine: str = "shannon"
    """Engine spec (name or .toml), optionally ``SPEC:WEIGHTS.json``."""
    limits: Limits = Limits()
    """Depth, nodes and ply cap of every game (and time per move, time control and
    adjudication for UCI engine specs)."""
    openings: str = "2moves"
    """Opening suite or book ('2moves', 'book', 'startpos' or an EPD/PGN/.bin file)."""
    book_plies: int = 8
    """Plies drawn from a Polyglot book."""
    random_plies: int = 2
    """Uniformly random legal moves after the opening (more distinct games)."""
    per_game: int = 10
    """Positions sampled per game at most (K); 0: every candidate that passes the filter."""
    seed: int = 1
    """Seed; game g's draws come from generator(seed, STREAM_DATAGEN, g)."""
    fmt: str = "fen"
    """Label format written: 'fen' (FEN [1.0]), 'epd' (c9 "1-0";) or 'text' (FEN | score |
    1.0)."""
    chunk: int = 32
    """Games per chunk (the unit of atomic progress; part of the output's identity)."""

    positions: int = 0
    """Stop after exactly this many positions (0 = every sampled position of the games)."""
    target: str = "score"
    """The score column of the text format: 'score' (the position's own search score) or 'td'
    (its TD(lambda) target from the whole game, :func:`td_column`)."""
    td_lambda: float = LAMBDA
    """lambda of the TD target (target 'td' only)."""
    filter: str = "qsearch"
    """Which candidates are kept: 'qsearch' (quiet by a quiescence search) or 'bestmove' (not
    in check, the move played not a capture or promotion; :mod:`evotune.learn.gamepositions`)."""

    def __post_init__(self) -> None:
        # (field, lowest, highest): games as compare caps a budget, seeds as every command does
        for name, low, high in (("games", 1, LIMITS["max_games"]), ("per_game", 0, 10_000),
                                ("chunk", 1, LIMITS["games"]), ("seed", 0, LIMITS["seed"]),
                                ("book_plies", 0, LIMITS["book_plies"]),
                                ("random_plies", 0, LIMITS["book_plies"]),
                                ("positions", 0, LIMITS["max_games"])):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise FieldError(name, f"must be an integer from {low} to {high}, got {v!r}")
        if not isinstance(self.limits, Limits):
            raise FieldError("limits", f"must be a Limits, got {self.limits!r}")
        if self.fmt not in DATAGEN_FORMATS:
            raise FieldError("fmt", f"{self.fmt!r} is unknown: use one of "
                                    f"{', '.join(DATAGEN_FORMATS)} ('fen' writes 'FEN [1.0]', "
                                    "'epd' writes 'FEN c9 \"1-0\";', 'text' writes 'FEN | score "
                                    "| 1.0', 'bullet' bullet's 32-byte records)")
        if self.filter not in FILTERS:
            raise FieldError("filter", f"{self.filter!r} is unknown: use one of "
                                       f"{', '.join(FILTERS)}")
        if self.target not in TARGETS:
            raise FieldError("target", f"{self.target!r} is unknown: use one of "
                                       f"{', '.join(TARGETS)}")
        if self.target == "td" and self.fmt not in SCORED_FORMATS:
            raise FieldError("target", "td needs the text format (--format text) or bullet's "
                                       "(--format bullet): only they have a score column")
        lam = self.td_lambda
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0.0 <= lam <= 1.0:
            raise FieldError("td_lambda", f"must be a number from 0 to 1, got {lam!r}")
        if self.target != "td" and lam != LAMBDA:
            raise FieldError("td_lambda", "applies to the td target only (--target td)")


@dataclass(frozen=True)
class DatagenSummary:
    """What a call of :func:`datagen` did."""

    out: str
    """The output file."""
    games: int
    """Games in the file (all sessions)."""
    positions: int
    """Positions in the file (all sessions)."""
    resumed_from: int
    """Games already in the file when this call started."""
    fmt: str
    """Label format written."""
    forfeits: int = 0
    """Games an external engine forfeited (crash, timeout, illegal move): no positions."""


def resolve_engine(arg: str) -> tuple[EngineSpec, PlayerSpec, Any, Evaluation]:
    """``SPEC[:WEIGHTS]`` (:mod:`evotune.match.resolve`; ``nnue:FILE`` for a net) -> (spec,
    player, the weights of the quiet test and its evaluation)."""
    token, _ = split_player(arg)
    spec = load_engine_spec("shannon" if token == REFERENCE_ALIAS else token)
    player = resolve_player(arg, name=spec.name)
    if player.is_builtin:
        return spec, player, evaluation(player), player.evaluation
    return spec, player, np.asarray(SHANNON_REFERENCE, dtype=float), SHANNON


def game_opening(settings: DatagenSettings, game: int):
    """(opening, generator) of game ``game``: the drawn opening plus the random plies."""
    rng = generator(settings.seed, STREAM_DATAGEN, game)
    path = resolve_openings_path(settings.openings)
    op = draw_opening(None if path is None else str(path), rng, book_plies=settings.book_plies)
    board = op.board()
    extra = []
    for _ in range(settings.random_plies):
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        if not legal or board.is_game_over(claim_draw=False):
            break
        m = legal[int(rng.integers(len(legal)))]
        board.push(m)
        extra.append(m.uci())
    return Opening(fen=op.fen, moves=op.moves + tuple(extra), label=op.label), rng


def _progress_path(out: Path) -> Path:
    return out.with_name(out.name + PROGRESS_SUFFIX)


def _identity(settings: DatagenSettings, spec: EngineSpec) -> dict:
    d = {f.name: getattr(settings, f.name) for f in fields(settings)
         if f.name not in ("games", "limits")}
    if not settings.positions:
        d.pop("positions")  # outputs started before --positions existed keep their identity
    if settings.target == "score":  # nor do those started before --target existed
        d.pop("target")
        d.pop("td_lambda")
    if settings.filter == "qsearch":  # nor those started before --filter existed
        d.pop("filter")
    d.update(limits_record(settings.limits))  # the keys stored before limits were one record
    d.update(engine_identity(settings.engine, spec))
    return d


def engine_identity(engine: str, spec: EngineSpec) -> dict:
    """The SHA-256 of the engine's spec file and weights file ('' for none), and of the net the
    spec names and its move model (only when it has them, so the identity of an output made
    without them stays): an output made by an engine stays tied to the files that defined
    it."""
    weights = split_player(engine)[1]
    out = {"engine_spec_sha256": file_record(Path(spec.path))["sha256"] if spec.path else "",
           "weights_sha256": file_record(Path(weights))["sha256"] if weights else ""}
    if spec.net and not weights:
        out["net_sha256"] = file_record(Path(spec.net))["sha256"]
    if spec.search.model:
        out["move_model_sha256"] = file_record(Path(spec.search.model))["sha256"]
    return out


@dataclass
class _Resume:
    """Where an output stands: its progress record, the hash of its recorded bytes, and bytes
    after them (a chunk appended but not recorded)."""

    state: dict
    hasher: Any
    tail: bytes


def _fresh(ident: dict) -> dict:
    return {"identity": ident, "chunks": 0, "games": 0, "positions": 0, "bytes": 0,
            "sha256": hashlib.sha256().hexdigest(), "forfeits": 0, "done": False}


def check_output(settings: DatagenSettings, out: Path, ident: dict) -> _Resume:
    """The output's progress checked against the file, before anything is written: a new
    output, or one these settings continue whose recorded bytes are exactly what the progress
    file says. Raises ConfigError (one line naming the file) otherwise."""
    if (settings.fmt == "bullet") != is_bullet(out):
        raise ConfigError(f"{out}: bullet's records go to a file ending {' or '.join(SUFFIXES)}, "
                          "and only they do (the trainers read a file by its extension)")
    per_game = settings.per_game or max(1, settings.limits.max_plies)
    return check_progress(out, ident, total=settings.games,
                          tail_bound=settings.chunk * per_game * LINE_BYTES,
                          writer="evotune datagen")


def check_progress(out: Path, ident: dict, *, total: int, tail_bound: int,
                   writer: str) -> _Resume:
    """:func:`check_output` for any output written in chunks by :func:`write_chunks`: ``total``
    units (games, or positions for ``evotune label``) make the whole output, and one chunk's
    lines are at most ``tail_bound`` bytes."""
    prog_path = _progress_path(out)
    check_writable(out, "output file", parents=False)
    check_writable(prog_path, "progress file")
    check_writable(out.with_name(out.name + LOCK_SUFFIX), "lock file")
    if not prog_path.exists():
        if out.exists() and out.stat().st_size > 0:
            raise ConfigError(f"{out} exists and was not written by {writer}; choose "
                              "another --out or remove it")
        return _Resume(_fresh(ident), hashlib.sha256(), b"")
    try:
        state = json.loads(prog_path.read_text(encoding="utf-8"))
        for key in ("chunks", "games", "positions", "bytes"):
            if isinstance(state[key], bool) or not isinstance(state[key], int) \
                    or state[key] < 0:
                raise ValueError(f"'{key}' is not a count")
        state.setdefault("forfeits", 0)
        state.setdefault("done", False)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{prog_path}: unreadable ({exc}); remove it and {out} to start "
                          "again") from None
    if state.get("identity") != ident:
        diff = sorted(k for k in set(ident) | set(state.get("identity", {}))
                      if ident.get(k) != state.get("identity", {}).get(k))
        raise ConfigError(f"{out} was started with other settings ({', '.join(diff)} "
                          "differ); rerun with the same settings to continue it, or choose "
                          "another --out")
    recorded = int(state["bytes"])
    if not out.exists() and recorded == 0 and not state["games"]:
        # recorded before the first chunk, which never reached the file: start it
        return _Resume(_fresh(ident), hashlib.sha256(), b"")
    if not out.is_file():
        raise ConfigError(f"{out} is missing but {prog_path} records {state['games']} games; "
                          f"remove {prog_path} to start again")
    if out.stat().st_size < recorded:
        raise ConfigError(f"{out} is shorter than its progress file says ({recorded} bytes); "
                          f"remove {out} and {prog_path} to start again")
    hasher = hashlib.sha256()
    lines = 0
    with open(out, "rb") as fh:
        left = recorded
        while left:
            block = fh.read(min(left, 1 << 20))
            hasher.update(block)
            lines += block.count(b"\n")
            left -= len(block)
        tail = fh.read(tail_bound + 1)
    exact = (hasher.hexdigest() == state["sha256"] if "sha256" in state
             else lines == state["positions"])  # records written before the hash was kept
    if not exact:
        raise ConfigError(f"{out}: its first {recorded} bytes are not the {state['positions']} "
                          f"positions {prog_path} records (the file was changed); remove both "
                          "files to start again, or choose another --out")
    state["sha256"] = hasher.hexdigest()
    if tail and (len(tail) > tail_bound or state["done"] or state["games"] >= total):
        raise ConfigError(f"{out} has {out.stat().st_size - recorded} bytes after what "
                          f"{prog_path} records, which are not one "
                          "unrecorded chunk this rerun can check; remove both files to start "
                          "again, or choose another --out")
    return _Resume(state, hasher, tail)


def _append(out: Path, size: int, data: bytes) -> None:
    """Cut ``out`` to ``size`` bytes and append ``data`` with one write, then fsync."""
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size != size:
            os.ftruncate(fd, size)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        raise StoreError(f"could not write {out} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _chunk_lines(settings, player, quiet_w, quiet_ev, first: int, last: int,
                 workers: int) -> tuple[list, int]:
    """The output of games ``first`` .. ``last - 1`` in game order (lines, or bullet's
    records), and the forfeits."""
    match = MatchSettings(limits=settings.limits, openings=None)
    openings = [game_opening(settings, g) for g in range(first, last)]
    scored = settings.fmt in SCORED_FORMATS or settings.filter == "bestmove"
    tasks = [GameTask(key=(0, 0, g, g), white=player, black=player, opening=op,
                      settings=match, record_leaves=scored, record_boards=player.is_builtin)
             for g, (op, _) in zip(range(first, last), openings)]
    try:
        records = map_games(tasks, workers=max(1, workers))
    finally:
        if not player.is_builtin:
            close_external_players()
    lines: list = []
    forfeits = 0
    td_lambda = settings.td_lambda if settings.target == "td" else None
    for rec, (op, rng) in zip(records, openings):
        if rec.termination.startswith("forfeit"):
            forfeits += 1  # its result says who misbehaved, not who stood better
            continue
        lines += game_output(op, rec, rng, per_game=settings.per_game,
                             position_filter=settings.filter, fmt=settings.fmt,
                             td_lambda=td_lambda, weights=quiet_w, evaluation=quiet_ev)
    return lines, forfeits


def datagen(settings: DatagenSettings, out: str | Path, *, workers: int = 1,
            progress: Callable[[int, int, int], None] | None = None) -> DatagenSummary:
    """Play ``settings.games`` games and write their labelled quiet positions to ``out``.

    ``workers``: processes playing the games (0 = one per core); the output does not depend on
    it. ``progress(games_done, games_total, positions)`` is called after each chunk (and once
    before the first, after every check passed).
    """
    out = Path(out)
    check_workers(workers)
    workers = resolve_workers(workers)
    spec, player, quiet_w, quiet_ev = resolve_engine(settings.engine)
    ident = _identity(settings, spec)
    check_output(settings, out, ident)
    path = resolve_openings_path(settings.openings)
    check_openings(None if path is None else str(path), book_plies=settings.book_plies)
    try:
        check_engine_spec(spec)  # a 'uci' engine is started once and its options checked
    finally:
        if not player.is_builtin:
            close_external_players()
    lock = output_lock(out, "evotune datagen")
    try:
        return _generate(settings, out, ident, player, quiet_w, quiet_ev, workers, progress)
    finally:
        lock.release()


def output_lock(out: Path, writer: str) -> RunLock:
    """The output's folder made and its one-writer lock (``OUT.lock``) taken."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"could not create the folder of {out} ({exc.strerror})") from None
    lock = RunLock(out.with_name(out.name + LOCK_SUFFIX),
                   busy=f"{out} is being written by another {writer} (PID {{pid}}); wait "
                        "for it to finish or choose another --out")
    lock.acquire()
    return lock


def _generate(settings, out, ident, player, quiet_w, quiet_ev, workers,
              progress) -> DatagenSummary:
    at = check_output(settings, out, ident)  # again, as the only writer
    resumed_from = int(at.state["games"])
    state = write_chunks(out, ident, at, total=settings.games, chunk=settings.chunk,
                         positions=settings.positions, progress=progress,
                         lines_of=lambda first, last: _chunk_lines(
                             settings, player, quiet_w, quiet_ev, first, last, workers))
    return DatagenSummary(out=str(out), games=int(state["games"]),
                          positions=int(state["positions"]), resumed_from=resumed_from,
                          fmt=settings.fmt, forfeits=int(state["forfeits"]))


def write_chunks(out: Path, ident: dict, at: _Resume, *, total: int, chunk: int, positions: int,
                 lines_of: Callable[[int, int], tuple[list[str], int]],
                 progress: Callable[[int, int, int], None] | None, unit: str = "games",
                 verb: str = "play") -> dict:
    """Append the lines of units ``first`` .. ``last - 1`` (``lines_of``: the lines and the
    forfeits) chunk by chunk from where ``at`` (checked by :func:`check_progress` under the
    writer's lock) stands, recording each chunk in ``OUT.progress.json`` after its one write;
    ``positions`` > 0 stops after exactly that many lines. Returns the last progress record
    (its ``games`` counts the units done; ``unit`` and ``verb`` word the refusal of a foreign
    tail)."""
    prog_path = _progress_path(out)
    state, hasher, tail = at.state, at.hasher, at.tail
    if progress is not None and not tail:  # an unrecorded tail is checked first: a refusal of
        progress(state["games"], total, state["positions"])  # it is then the only line
    while state["games"] < total and not state["done"]:
        first = int(state["games"])
        last = min(first + chunk, total)
        lines, forfeits = lines_of(first, last)
        done = False
        if positions and state["positions"] + len(lines) >= positions:
            lines, done = lines[:positions - state["positions"]], True
        data = b"".join(x if isinstance(x, bytes) else x.encode("utf-8") for x in lines)
        if tail and not data.startswith(tail):
            raise EvotuneError(f"{out}: the {len(tail)} bytes after what {prog_path} records "
                               f"are not the start of {unit} {first}-{last - 1} as these "
                               f"settings {verb} them (the file was changed); remove both files "
                               "to start again, or choose another --out")
        tail = b""
        if not prog_path.exists():  # recorded first, so that bytes a fault or a kill leaves
            atomic_write_json(prog_path, state)  # in the file are this writer's to check
        _append(out, int(state["bytes"]), data)
        hasher.update(data)
        state = {"identity": ident, "chunks": state["chunks"] + 1, "games": last,
                 "positions": state["positions"] + len(lines),
                 "bytes": state["bytes"] + len(data), "sha256": hasher.hexdigest(),
                 "forfeits": state["forfeits"] + forfeits, "done": done}
        atomic_write_json(prog_path, state)
        if progress is not None:
            progress(last, total, state["positions"])
    return state
