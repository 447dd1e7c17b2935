"""Which positions of a ``datagen`` game are written, and as what (lines or bullet records).

A game's candidates are the positions before each engine move (opening and random plies are
skipped); in the ``text`` and ``bullet`` formats, and with the ``bestmove`` filter, only those the
engine scored within +-TEXT_SCORE_LIMIT (mate scores excluded). A candidate is kept when it
passes the filter:

- ``qsearch`` (the default): the side to move is not in check and the static evaluation equals
  the quiescence score, judged with the engine's own evaluation (one quiescence search per
  position visited, in Python);
- ``bestmove`` (bullet-style data generation): the side to move is not in check and the move the
  engine played from it is not a capture (en passant included) or a promotion; what the core
  recorded while playing the game (:mod:`evotune.engine.gameboards`), no search.

``per_game`` K > 0: the candidates are visited in the order of a permutation drawn from the
game's generator until K pass (today's sampling); 0: every candidate that passes, in ply order,
and the generator is not drawn from. The positions (the core's record of the game, or a
python-chess replay for a UCI engine's game) give the FENs (equal to python-chess's) and
bullet's records (:func:`evotune.learn.nn.bulletdata.bullet_bytes`, 32 bytes each).
"""
from __future__ import annotations

import chess
import numpy as np

from ..engine.evaluation import Evaluation
from ..engine.gameboards import (
    B_CAPTURE,
    B_CHECK,
    B_PROMO,
    B_SIDE,
    board_fens,
    board_rows,
    flags,
    packed_boards,
)
from ..engine.quiet import qsearch
from ..match.gamerecord import GameRecord
from ..match.openings import Opening
from .labels import TEXT_SCORE_LIMIT, format_line
from .nn.bulletdata import bullet_bytes
from .nn.data import SCORE_LIMIT, PackedData
from .nn.tdtargets import LAMBDA, td_scores

FILTERS = ("qsearch", "bestmove")
"""What makes a candidate position kept (:attr:`~evotune.learn.datagen.DatagenSettings.filter`)."""
SCORED_FORMATS = ("text", "bullet")
"""Formats with a score per position."""
_NOISY = B_CHECK | B_CAPTURE | B_PROMO


def td_column(opening: Opening, scores, result: str, lam: float = LAMBDA) -> np.ndarray:
    """The ``td`` target's score column: one White-view centipawn score per engine move of a
    game (ply 0 = the position after ``opening``).

    ``scores`` are the game's root scores, one per engine move, the mover's view (a record's
    ``scores``); they are turned to White's view and clipped to +-SCORE_LIMIT (32000), as the
    trainer clips the scores it reads, so a mate score counts as a certain result (its sigmoid is
    1 or 0 in double precision). Position t's target is the lambda-return of the following
    scores and the result (:func:`evotune.learn.nn.tdtargets.td_targets` over the WHOLE game, every
    engine-move ply, whichever positions are sampled), written as :func:`~evotune.learn.nn.tdtargets.
    td_scores` does: ``SCALE * logit(G_t)`` rounded to whole centipawns and clipped to
    +-SCORE_LIMIT (a certain result, e.g. the last position of a decisive game, is +-32000; of a
    drawn one, 0). A training with wdl 0 reads the column back as G_t.
    """
    white_first = opening.board().turn == chess.WHITE
    s = np.asarray(scores, dtype=np.int64)
    sign = np.where((np.arange(s.size) % 2 == 0) == white_first, 1, -1)
    white = np.clip(s * sign, -SCORE_LIMIT, SCORE_LIMIT)
    value = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    return td_scores(white, value, lam)


def choose_plies(boards: np.ndarray, scores, rng: np.random.Generator, *, per_game: int,
                 position_filter: str, weights, evaluation: Evaluation) -> list[int]:
    """The kept plies of one game, in ply order (see the module docstring); ``boards`` are the
    game's rows, ``scores`` each move's search score (None: not recorded)."""
    n = boards.shape[0]
    cheap = np.ones(n, dtype=bool)
    if scores is not None:
        cheap &= np.abs(np.asarray(scores, dtype=np.int64)) <= TEXT_SCORE_LIMIT
    if position_filter == "bestmove":
        cheap &= (flags(boards) & _NOISY) == 0
        if per_game == 0:
            return [int(p) for p in np.flatnonzero(cheap)]
        chosen = [int(p) for p in rng.permutation(n) if cheap[p]][:per_game]
        return sorted(chosen)
    fens = board_fens(boards)
    order = range(n) if per_game == 0 else rng.permutation(n)
    chosen = []
    for ply in order:
        if not cheap[ply]:
            continue
        static, score, check, _ = qsearch(fens[ply], weights, evaluation)
        if not check and static == score:
            chosen.append(int(ply))
            if len(chosen) == per_game:
                break
    return sorted(chosen)


def game_output(opening: Opening, record: GameRecord, rng: np.random.Generator, *,
                per_game: int, position_filter: str, fmt: str, td_lambda: float | None,
                weights, evaluation: Evaluation) -> list:
    """The output of one game: its kept positions as lines (``fen``, ``epd``, ``text``) or as
    32-byte bullet records (``bullet``), in ply order. ``td_lambda``: the score column is the
    TD(lambda) target (:func:`td_column`), None: the search score."""
    boards = record.boards if record.boards is not None \
        else board_rows(opening.board(), record.moves)
    scored = fmt in SCORED_FORMATS or position_filter == "bestmove"
    scores = record.scores if scored else None
    plies = choose_plies(boards, scores, rng, per_game=per_game,
                         position_filter=position_filter, weights=weights, evaluation=evaluation)
    value = {"1-0": 1.0, "0-1": 0.0}.get(record.result, 0.5)
    white = None
    if fmt in SCORED_FORMATS:
        if td_lambda is not None:  # the same positions as the score target, another column
            column = td_column(opening, record.scores, record.result, td_lambda)
        else:  # the mover's view -> White's
            s = np.asarray(record.scores, dtype=np.int64)
            column = np.where(boards[:, B_SIDE] == 0, s, -s) if s.size else s
        white = [int(column[p]) for p in plies]
    rows = boards[plies]
    if fmt == "bullet":
        occ, pcs, stm = packed_boards(rows)
        data = PackedData.from_columns([occ, pcs, np.asarray(white, dtype=np.int16),
                                        np.full(len(plies), int(2 * value), dtype=np.uint8),
                                        stm])
        raw = bullet_bytes(data).view(np.uint8).reshape(-1, 32)
        return [r.tobytes() for r in raw]
    return [format_line(fen, value, fmt, None if white is None else white[i]) + "\n"
            for i, fen in enumerate(board_fens(rows))]
