"""The Polyglot opening book: the packaged gnuchess book, weighted draws, bad files."""
from __future__ import annotations

import chess
import numpy as np
import pytest

from evotune.engine.book import OpeningBook
from evotune.errors import ConfigError, OpeningsError
from evotune.paths import DEFAULT_BOOK
from evotune.seeding import generator


@pytest.fixture(scope="module")
def book():
    with OpeningBook() as b:
        yield b


def test_default_book_answers_start_position(book):
    assert book.path == DEFAULT_BOOK
    assert len(book) == DEFAULT_BOOK.stat().st_size // 16
    entries = book.entries(chess.Board())
    moves = {e.move.uci() for e in entries}
    assert {"e2e4", "d2d4", "g1f3", "c2c4"} <= moves
    assert all(e.weight >= 1 for e in entries)
    move = book.choose(chess.Board(), generator(1, 0))
    assert move.uci() in moves


def test_choose_follows_the_weights(book):
    rng = generator(3, 0)
    board = chess.Board()
    entries = book.entries(board)
    weights = np.array([e.weight for e in entries], dtype=float)
    counts = {e.move: 0 for e in entries}
    n = 4000
    for _ in range(n):
        counts[book.choose(board, rng)] += 1
    # e4 and d4 carry most of the weight; their frequency is within 4 sigma of it.
    for e, w in zip(entries, weights / weights.sum()):
        sigma = (w * (1 - w) / n) ** 0.5
        assert abs(counts[e.move] / n - w) <= 4 * sigma + 1e-9, (e.move.uci(), counts[e.move], w)


def test_same_seed_same_line_different_seeds_differ(book):
    lines = []
    for seed in range(8):
        a, b = chess.Board(), chess.Board()
        line_a = book.play(a, generator(seed, 1))
        line_b = book.play(b, generator(seed, 1))
        assert line_a == line_b
        assert a.fen() == b.fen()
        assert 1 <= len(line_a) <= book.max_plies
        lines.append(tuple(m.uci() for m in line_a))
    assert len(set(lines)) >= 6, lines


def test_play_stops_at_the_ply_limit_and_out_of_book(book):
    board = chess.Board()
    assert len(book.play(board, generator(0, 0), max_plies=3)) == 3
    assert board.ply() == 3
    assert book.play(chess.Board(), generator(0, 0), max_plies=0) == []
    # A bare-kings position is in no book: nothing is played, nothing is drawn.
    rng = generator(0, 0)
    state = rng.bit_generator.state
    assert book.play(chess.Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1"), rng) == []
    assert rng.bit_generator.state == state
    with pytest.raises(ConfigError):
        OpeningBook(max_plies=-1)


def test_missing_or_corrupt_book(tmp_path):
    with pytest.raises(OpeningsError, match="does not exist"):
        OpeningBook(tmp_path / "nope.bin")
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(DEFAULT_BOOK.read_bytes()[:1000])  # 1000 is not a multiple of 16
    with pytest.raises(OpeningsError, match="not a Polyglot book"):
        OpeningBook(truncated)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(OpeningsError):
        OpeningBook(empty)
    raw = DEFAULT_BOOK.read_bytes()
    unsorted = tmp_path / "unsorted.bin"
    unsorted.write_bytes(raw[-16:] + raw[16:-16] + raw[:16])  # last entry first
    with pytest.raises(OpeningsError, match="not sorted"):
        OpeningBook(unsorted)
