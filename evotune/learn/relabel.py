"""``evotune label``: give labelled positions another engine's search scores.

The networks' trainers learn best from search scores (``nn train --wdl 0``), and the best scores
come from a stronger engine than the one whose games made the positions: the community's usual
recipe is positions from cheap self-play, scores from a strong engine at a small node count
(Debian's Stockfish here). ``label`` reads positions in any format the trainers read (``FEN |
score | result``, datagen's ``fen``/``epd``/``text`` lines, EPD with ``c9``) and writes
``FEN | score | result`` lines (:func:`evotune.learn.labels.format_line`, White's view): the
labelling engine's score, the input's game result kept; with ``move`` a fourth field, the move
the engine chose (``FEN | score | result | move``: the move model's data); with ``visits`` a
fifth, the root moves' visits of the engine's UCT search (``... | move | e2e4:312 d2d4:200``,
:attr:`~evotune.match.gamerecord.GameRecord.last_visits`: a visit-distribution target).

Position ``i`` is one game of a single engine move from that position (``Limits.max_plies`` 1)
played through :func:`evotune.match.runner.map_games`, the single parallel path; the other side
is an idle built-in player that never moves, so an external engine runs once per position, not
twice as in self-play. An external engine gets ``ucinewgame`` before every position, so a score
depends on the position, the engine and the limits only, never on the workers, the chunks or a
resume (for an external engine, as far as the engine itself is deterministic at a fixed depth or
node count on one thread). A position
the engine cannot score is left out and counted, never written with a made-up score: no legal
move (or a game already over), a mate score or one beyond +-32000 (as datagen's text format), or
an engine forfeit (crash, hang, illegal move).

The output is written as datagen writes (:func:`evotune.learn.datagen.write_chunks`): chunks of
``chunk`` positions, one ``write`` each, ``OUT.progress.json`` recording the positions done, the
bytes and their SHA-256; one writer (``OUT.lock``); a rerun with the same settings and the same
input files continues after the last recorded chunk; anything else is refused with one line.
Every input line is read and checked before anything is written.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ConfigError, FieldError
from ..limits import LIMITS, Limits, check_workers, resolve_workers
from ..match.fixtures import GameTask, MatchSettings, limits_record
from ..match.openings import Opening
from ..match.resolve import REFERENCE_ALIAS, close_external_players, resolve_player
from ..match.runner import map_games
from ..players.spec import check_engine_spec
from .datagen import LINE_BYTES, check_progress, engine_identity, output_lock, resolve_engine, write_chunks
from .labels import TEXT_SCORE_LIMIT, format_line, log_notices, read_positions

WRITER = "evotune label"


@dataclass(frozen=True)
class LabelSettings:
    """What ``evotune label`` searches and writes (everything here decides the output)."""

    engine: str
    """The labelling engine: spec (name or .toml, a 'uci' spec for an external engine),
    optionally ``SPEC:WEIGHTS.json``, or ``nnue:NET``."""
    limits: Limits = Limits()
    """Depth and nodes of each position's search (its ply cap is set to 1 here)."""
    chunk: int = 2048
    """Positions per atomic write (part of the output's identity; an external engine is
    restarted after each, ~0.25 s)."""
    max_bad: int = 0
    """Malformed input lines to skip before refusing the input."""
    move: bool = False
    """Write the move the engine chose as a fourth field (``FEN | score | result | move``: the
    move model's training data, ``evotune nn train-moves``)."""
    visits: bool = False
    """Also write the UCT search's root moves and visits as a fifth field (``... | move |
    e2e4:312 d2d4:200``; ``nn train-moves --target visits``); needs a built-in engine searching
    by UCT, and implies ``move``."""

    def __post_init__(self) -> None:
        for name, low, high in (("chunk", 1, LIMITS["max_games"]),
                                ("max_bad", 0, LIMITS["max_games"])):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise FieldError(name, f"must be an integer from {low} to {high}, got {v!r}")
        if not isinstance(self.limits, Limits):
            raise FieldError("limits", f"must be a Limits, got {self.limits!r}")
        if self.visits and not self.move:
            object.__setattr__(self, "move", True)


@dataclass(frozen=True)
class LabelSummary:
    """What a call of :func:`label` did (counts over all sessions of the output)."""

    out: str
    """The output file."""
    read: int
    """Positions read from the input files."""
    written: int
    """Positions written (scored)."""
    left_out: int
    """Positions the engine could not score (no move, mate or beyond +-32000, forfeit)."""
    resumed_from: int
    """Input positions already labelled when this call started."""
    bad: int = 0
    """Malformed input lines skipped (``max_bad``)."""


def label_lines(fens: list[str], results: list[float], player, limits: Limits, *,
                workers: int, move: bool = False,
                visits: bool = False) -> tuple[list[str], int]:
    """The output lines of ``fens`` (in order) labelled by ``player`` under ``limits``, and how
    many were left out; ``move``: with the move the engine chose as a fourth field; ``visits``:
    with its UCT search's root visits as a fifth (a position whose search visited nothing is
    left out)."""
    match = MatchSettings(limits=replace(limits, max_plies=1), openings=None)
    idle = resolve_player(REFERENCE_ALIAS, name="idle")  # the side not to move never moves
    tasks = []
    for i, fen in enumerate(fens):
        white_moves = fen.split()[1] == "w"
        tasks.append(GameTask(key=(0, 0, i, i), white=player if white_moves else idle,
                              black=idle if white_moves else player, opening=Opening(fen=fen),
                              settings=match, record_leaves=True))
    try:
        records = map_games(tasks, workers=max(1, workers))
    finally:
        if not player.is_builtin:
            close_external_players()
    lines, left = [], 0
    for fen, result, rec in zip(fens, results, records):
        scores = rec.scores or ()
        if rec.termination.startswith("forfeit") or not rec.moves or not scores \
                or abs(int(scores[0])) > TEXT_SCORE_LIMIT or (visits and not rec.last_visits):
            left += 1
            continue
        white = int(scores[0]) if fen.split()[1] == "w" else -int(scores[0])
        lines.append(format_line(fen, result, "text", white, rec.moves[0] if move else "",
                                 rec.last_visits if visits else ()) + "\n")
    return lines, left


def label(settings: LabelSettings, inputs, out: str | Path, *, workers: int = 1,
          progress: Callable[[int, int, int], None] | None = None) -> LabelSummary:
    """Label every position of ``inputs`` with ``settings.engine``'s search score into ``out``.

    ``workers``: processes searching (0 = one per core); the output does not depend on it.
    ``progress(positions_done, positions_total, written)`` is called after each chunk (and once
    before the first, after every check passed).
    """
    out = Path(out)
    check_workers(workers)
    workers = resolve_workers(workers)
    if not inputs:
        raise ConfigError("give at least one file of positions to label")
    paths = [Path(p) for p in inputs]
    if any(p.resolve() == out.resolve() for p in paths):
        raise ConfigError(f"{out} is both an input and the output; choose another --out")
    spec, player, _, _ = resolve_engine(settings.engine)
    if settings.visits and not (player.is_builtin and player.search.algorithm == "uct"):
        by = player.search.algorithm if player.is_builtin else "an external engine"
        raise ConfigError(f"--visits needs a built-in engine searching by UCT ([search] "
                          f"algorithm = \"uct\"); {settings.engine} searches by {by}")
    notices: list[str] = []  # skipped lines: said once every check passed
    pos = read_positions(paths, max_bad=settings.max_bad, notices=notices)
    if not len(pos):
        raise ConfigError(f"{', '.join(map(str, paths))}: no positions to label")
    ident = {"engine": settings.engine, **limits_record(settings.limits),
             "chunk": settings.chunk, "max_bad": settings.max_bad,
             **engine_identity(settings.engine, spec),
             **({"move": True} if settings.move else {}),
             **({"visits": True} if settings.visits else {}),
             "inputs": [{k: f[k] for k in ("name", "size", "sha256")} for f in pos.files]}
    tail_bound = settings.chunk * LINE_BYTES
    check_progress(out, ident, total=len(pos), tail_bound=tail_bound, writer=WRITER)
    try:
        check_engine_spec(spec)  # a 'uci' engine is started once and its options checked
    finally:
        if not player.is_builtin:
            close_external_players()
    lock = output_lock(out, WRITER)
    try:
        at = check_progress(out, ident, total=len(pos), tail_bound=tail_bound, writer=WRITER)
        log_notices(notices)
        resumed_from = int(at.state["games"])
        state = write_chunks(
            out, ident, at, total=len(pos), chunk=settings.chunk, positions=0,
            progress=progress, unit="positions", verb="label",
            lines_of=lambda first, last: label_lines(pos.fens[first:last],
                                                     pos.results[first:last], player,
                                                     settings.limits, workers=workers,
                                                     move=settings.move,
                                                     visits=settings.visits))
    finally:
        lock.release()
    return LabelSummary(out=str(out), read=len(pos), written=int(state["positions"]),
                        left_out=int(state["games"]) - int(state["positions"]),
                        resumed_from=resumed_from, bad=pos.bad)
