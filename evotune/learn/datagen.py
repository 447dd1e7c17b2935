"""``evotune datagen``: labelled quiet positions from self-play games.

Game ``g`` (0-based) starts from an opening drawn with ``generator(seed, STREAM_DATAGEN, g)``
(a suite line or a book line, then ``random_plies`` uniformly random legal moves from the same
generator); the engine plays both sides. Built-in engines play the whole game inside the numba
core, UCI engine specs through the external runner (:func:`evotune.match.runner.map_games`, the
single parallel path). From the positions before each engine move (opening and random plies are
skipped) up to ``per_game`` quiet ones are sampled with the same generator and labelled with the
game's result, White's view (:mod:`evotune.learn.labels` formats; ``fen`` = ``FEN [1.0]`` by
default). Quiet means not in check and static evaluation == quiescence score, judged with the
engine's own weights (the ``shannon`` reference weights for an external engine).

Output is written in chunks of ``chunk`` games: each chunk is appended to the output file with
one ``write`` call, then ``OUT.progress.json`` (atomic) records the chunks done and the file's
length. A rerun with the same settings truncates the file to the recorded length (dropping a
chunk appended but not recorded) and continues with the next chunk, so a killed and restarted
datagen neither loses nor doubles positions, and the file equals an uninterrupted one, for any
number of workers.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable

import numpy as np

from ..engine.quiet import qsearch
from ..enginespec import EngineSpec, load_engine_spec
from ..errors import ConfigError, FieldError
from ..fileio import atomic_write_json
from ..limits import Limits
from ..match.fixtures import GameTask, MatchSettings, limits_record
from ..match.openings import Opening, draw_opening
from ..match.resolve import REFERENCE_ALIAS, close_external_players, resolve_player, split_player
from ..match.runner import map_games
from ..paths import resolve_openings_path
from ..players import PlayerSpec
from ..seeding import STREAM_DATAGEN, generator
from ..space import SHANNON_REFERENCE
from .labels import FORMATS, file_record, format_line

log = logging.getLogger(__name__)

PROGRESS_SUFFIX = ".progress.json"


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
    """Positions sampled per game at most (K)."""
    seed: int = 1
    """Seed; game g's draws come from generator(seed, STREAM_DATAGEN, g)."""
    fmt: str = "fen"
    """Label format written: 'fen' (FEN [1.0]) or 'epd' (c9 "1-0";)."""
    chunk: int = 32
    """Games per chunk (the unit of atomic progress; part of the output's identity)."""

    def __post_init__(self) -> None:
        for name in ("games", "per_game", "chunk"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise FieldError(name, f"must be a positive integer, got {v!r}")
        for name in ("book_plies", "random_plies"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise FieldError(name, f"must be >= 0, got {v!r}")
        if not isinstance(self.limits, Limits):
            raise FieldError("limits", f"must be a Limits, got {self.limits!r}")
        if self.fmt not in FORMATS:
            raise FieldError("fmt", f"{self.fmt!r} is unknown: use one of {', '.join(FORMATS)} "
                                    "('fen' writes 'FEN [1.0]', 'epd' writes 'FEN c9 \"1-0\";')")


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


def resolve_engine(arg: str) -> tuple[EngineSpec, PlayerSpec, np.ndarray, str]:
    """``SPEC[:WEIGHTS]`` (:mod:`evotune.match.resolve`) -> (spec, player, weights of the quiet
    test)."""
    token, _ = split_player(arg)
    spec = load_engine_spec("shannon" if token == REFERENCE_ALIAS else token)
    player = resolve_player(arg, name=spec.name)
    if player.is_builtin:
        return spec, player, np.asarray(player.weights, dtype=float), player.features
    return spec, player, np.asarray(SHANNON_REFERENCE, dtype=float), "shannon"


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


def sample_positions(opening, moves, result: str, rng: np.random.Generator, *,
                     per_game: int, weights,
                     features: str = "shannon") -> list[tuple[int, str, float]]:
    """Up to ``per_game`` quiet positions (ply, fen, White's result) of one game, in ply order.

    Candidates are the positions before each engine move; they are visited in the order of a
    permutation drawn from ``rng`` until ``per_game`` quiet ones are found.
    """
    board = opening.board()
    fens = []
    for uci in moves:
        fens.append(board.fen())
        board.push_uci(uci)
    value = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    chosen = []
    for ply in rng.permutation(len(fens)):
        static, score, check, _ = qsearch(fens[ply], weights, features)
        if not check and static == score:
            chosen.append(int(ply))
            if len(chosen) >= per_game:
                break
    return [(p, fens[p], value) for p in sorted(chosen)]


def _progress_path(out: Path) -> Path:
    return out.with_name(out.name + PROGRESS_SUFFIX)


def _identity(settings: DatagenSettings, spec: EngineSpec) -> dict:
    d = {f.name: getattr(settings, f.name) for f in fields(settings)
         if f.name not in ("games", "limits")}
    d.update(limits_record(settings.limits))  # the keys stored before limits were one record
    d["engine_spec_sha256"] = file_record(Path(spec.path))["sha256"] if spec.path else ""
    weights = split_player(settings.engine)[1]
    d["weights_sha256"] = file_record(Path(weights))["sha256"] if weights else ""
    return d


def datagen(settings: DatagenSettings, out: str | Path, *, workers: int = 1,
            progress: Callable[[int, int, int], None] | None = None) -> DatagenSummary:
    """Play ``settings.games`` games and write their labelled quiet positions to ``out``.

    ``progress(games_done, games_total, positions)`` is called after each chunk.
    """
    out = Path(out)
    spec, player, quiet_w, quiet_fs = resolve_engine(settings.engine)
    resolve_openings_path(settings.openings)  # bad openings: an error before anything is written
    ident = _identity(settings, spec)
    prog_path = _progress_path(out)
    state = {"identity": ident, "chunks": 0, "games": 0, "positions": 0, "bytes": 0}
    if prog_path.exists():
        try:
            state = json.loads(prog_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{prog_path}: unreadable ({exc}); remove it and {out} to start "
                              "again") from None
        if state.get("identity") != ident:
            diff = sorted(k for k in set(ident) | set(state.get("identity", {}))
                          if ident.get(k) != state.get("identity", {}).get(k))
            raise ConfigError(f"{out} was started with other settings ({', '.join(diff)} "
                              "differ); rerun with the same settings to continue it, or choose "
                              "another --out")
        if not out.exists() or out.stat().st_size < state["bytes"]:
            raise ConfigError(f"{out} is shorter than its progress file says ({state['bytes']} "
                              f"bytes); remove {out} and {prog_path} to start again")
    elif out.exists() and out.stat().st_size > 0:
        raise ConfigError(f"{out} exists and was not written by evotune datagen; choose another "
                          "--out or remove it")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "ab") as fh:
        fh.truncate(state["bytes"])  # drop a chunk appended but never recorded
    resumed_from = int(state["games"])
    match = MatchSettings(limits=settings.limits, openings=None)
    if progress is not None:
        progress(state["games"], settings.games, state["positions"])
    while state["games"] < settings.games:
        first = int(state["games"])
        last = min(first + settings.chunk, settings.games)
        openings = [game_opening(settings, g) for g in range(first, last)]
        tasks = [GameTask(key=(0, 0, g, g), white=player, black=player, opening=op,
                          settings=match) for g, (op, _) in zip(range(first, last), openings)]
        try:
            records = map_games(tasks, workers=max(1, workers))
        finally:
            if not player.is_builtin:
                close_external_players()
        lines = []
        for rec, (op, rng) in zip(records, openings):
            for _, fen, value in sample_positions(op, rec.moves, rec.result, rng,
                                                  per_game=settings.per_game, weights=quiet_w,
                                                  features=quiet_fs):
                lines.append(format_line(fen, value, settings.fmt) + "\n")
        data = "".join(lines).encode("utf-8")
        fd = os.open(out, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        state = {"identity": ident, "chunks": state["chunks"] + 1, "games": last,
                 "positions": state["positions"] + len(lines),
                 "bytes": state["bytes"] + len(data)}
        atomic_write_json(prog_path, state)
        if progress is not None:
            progress(last, settings.games, state["positions"])
    return DatagenSummary(out=str(out), games=int(state["games"]),
                          positions=int(state["positions"]), resumed_from=resumed_from,
                          fmt=settings.fmt)
