"""The positions of a game as the core recorded them (``play_game(..., boards=True)``).

Each row of :attr:`~evotune.engine.api.GameOutcome.boards` is the position before one engine
move: the mailbox (64 squares, piece = python-chess type + 6 * colour, 0 empty), then the side to
move, castling rights, the en passant square (only when a legal en passant capture exists, as
python-chess writes FENs), the halfmove clock and the fullmove number, and the flags of the
position and of the move played from it (in check, capture, promotion). This module turns rows
into what datagen writes, without replaying the game in python-chess: FENs equal to
``chess.Board.fen()`` of the same positions, and the packed columns of
:class:`~evotune.learn.nn.data.PackedData` (bullet's records are written from those).
"""
from __future__ import annotations

import chess
import numpy as np

from .core.layout import B_CAPTURE, B_CASTLE, B_CHECK, B_EP, B_FLAGS, B_FULL, B_HALF, B_PROMO, B_SIDE, B_WIDTH

__all__ = ["B_CAPTURE", "B_CHECK", "B_PROMO", "B_SIDE", "B_WIDTH", "board_fens", "board_rows", "flags",
           "packed_boards"]

_LETTERS = np.frombuffer(b"1PNBRQKpnbrqk", dtype=np.uint8)
_RUNS = {"1" * k: str(k) for k in range(8, 0, -1)}
_RANKS: dict[bytes, str] = {}
_CASTLE = tuple("".join(ch for bit, ch in zip((1, 2, 4, 8), "KQkq") if rights & bit) or "-"
                for rights in range(16))


def _rank(row: bytes) -> str:
    """A FEN rank from its 8 letters ('1' for an empty square), cached."""
    text = _RANKS.get(row)
    if text is None:
        text = row.decode("ascii")
        for run, digits in _RUNS.items():
            text = text.replace(run, digits)
        _RANKS[row] = text
    return text


def board_rows(board: chess.Board, moves) -> np.ndarray:
    """The rows of the game ``moves`` (UCI) played from ``board`` (not changed), made by
    python-chess: what the core records, for games played outside it (UCI engines)."""
    board = board.copy(stack=False)
    out = np.zeros((len(moves), B_WIDTH), dtype=np.int64)
    for i, uci in enumerate(moves):
        row = out[i]
        for sq, piece in board.piece_map().items():
            row[sq] = piece.piece_type + (0 if piece.color == chess.WHITE else 6)
        row[B_SIDE] = 0 if board.turn == chess.WHITE else 1
        rights = board.clean_castling_rights()
        row[B_CASTLE] = sum(bit for bit, sq in zip((1, 2, 4, 8), (chess.H1, chess.A1, chess.H8,
                                                                  chess.A8))
                            if rights & chess.BB_SQUARES[sq])
        ep = board.ep_square if board.has_legal_en_passant() else None
        row[B_EP] = -1 if ep is None else ep
        row[B_HALF] = board.halfmove_clock
        row[B_FULL] = board.fullmove_number
        move = chess.Move.from_uci(uci)
        row[B_FLAGS] = ((B_CHECK if board.is_check() else 0)
                        | (B_CAPTURE if board.is_capture(move) else 0)
                        | (B_PROMO if move.promotion else 0))
        board.push(move)
    return out


def flags(boards: np.ndarray) -> np.ndarray:
    """int64 (plies,): each row's B_CHECK | B_CAPTURE | B_PROMO."""
    return boards[:, B_FLAGS]


def board_fens(boards: np.ndarray) -> list[str]:
    """The FEN of each row, as python-chess writes it (``Board.fen()``)."""
    letters = _LETTERS[boards[:, :64]]
    out = []
    for i in range(boards.shape[0]):
        squares = letters[i].tobytes()
        placement = "/".join(_rank(squares[8 * r:8 * r + 8]) for r in range(7, -1, -1))
        b = boards[i]
        ep = int(b[B_EP])
        ep_text = "-" if ep < 0 else "abcdefgh"[ep & 7] + str((ep >> 3) + 1)
        out.append(f"{placement} {'b' if b[B_SIDE] else 'w'} {_CASTLE[int(b[B_CASTLE]) & 15]} "
                   f"{ep_text} {int(b[B_HALF])} {int(b[B_FULL])}")
    return out


def packed_boards(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(occ uint64, pcs uint8 (n, 16), stm uint8) of each row, the columns of
    :class:`~evotune.learn.nn.data.PackedData` (piece code 8 * colour + type - 1, in ascending
    square order, the first of a byte in its low nibble)."""
    mb = boards[:, :64]
    n = mb.shape[0]
    occupied = mb != 0
    occ = (occupied.astype(np.uint64) << np.arange(64, dtype=np.uint64)).sum(axis=1,
                                                                             dtype=np.uint64)
    codes = np.where(mb > 6, mb + 1, mb - 1)  # white 1..6 -> 0..5, black 7..12 -> 8..13
    pcs = np.zeros((n, 16), dtype=np.uint8)
    rank = np.cumsum(occupied, axis=1) - 1  # the index of each occupied square among them
    rows, squares = np.nonzero(occupied)
    k = rank[rows, squares]
    np.bitwise_or.at(pcs, (rows, k >> 1),
                     (codes[rows, squares] << (4 * (k & 1))).astype(np.uint8))
    return occ, pcs, boards[:, B_SIDE].astype(np.uint8)
