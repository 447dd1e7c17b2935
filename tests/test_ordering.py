"""Alpha-beta's move ordering in the core: the hash move, winning and equal captures by MVV/LVA,
the killers, losing captures, then quiet moves by history (docs/internals.md, "Search")."""
from __future__ import annotations

import chess
import numpy as np

from evotune.engine.api import board_arrays, decode_move
from evotune.engine.core import layout as T
from evotune.engine.core.movegen import gen_legal
from evotune.engine.core.search import KILLER, LOSING, _score_moves

# White to move: Rxa5 takes an undefended knight (a rook for a knight, nothing to lose), Qxd5 a
# pawn the e6 pawn defends (the queen for a pawn), Kxe2 a knight (a king's capture is legal only
# when safe), and quiet moves.
FEN = "4k3/8/4p3/n2p4/8/8/4n3/R2QK3 w - - 0 1"


def _scores(killer: str) -> dict[str, int]:
    board = chess.Board(FEN)
    U, S = board_arrays(board, 10)
    n = int(gen_legal(U, S, np.int64(0), False))
    moves = {decode_move(int(m)).uci(): int(m) for m in S[T.S_MOVES:T.S_MOVES + n]}
    S[T.S_KILL] = moves[killer]
    S[T.S_HISTORY + moves["d1d2"] % 4096] = 0  # history: none yet
    _score_moves(U, S, np.int64(T.S_MOVES), np.int64(n), np.int64(0), np.int64(0))
    off = T.S_SCORES - T.S_MOVES
    return {decode_move(int(S[T.S_MOVES + i])).uci(): int(S[T.S_MOVES + i + off])
            for i in range(n)}


def test_a_losing_capture_waits_for_the_killers_but_not_for_the_quiet_moves():
    sc = _scores("d1d2")
    quiet = [u for u in sc if u not in ("a1a5", "d1d5", "e1e2", "d1e2", "d1d2")]
    assert quiet and chess.Board(FEN).is_capture(chess.Move.from_uci("e1e2"))
    assert sc["a1a5"] >= 1 << 36  # a winning capture first
    assert sc["e1e2"] >= 1 << 36  # the king's capture is safe, so it stays with them
    assert KILLER <= sc["d1d2"] < 1 << 36
    assert LOSING <= sc["d1d5"] < KILLER
    assert max(sc[u] for u in quiet) < LOSING
