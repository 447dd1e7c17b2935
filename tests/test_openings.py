"""Openings: EPD/PGN(.zip) suites, Polyglot books, seeded draws, errors."""
from __future__ import annotations

import os
import re
import time
import zipfile
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.errors import ConfigError, OpeningsError
from evotune.match.openings import START, Opening, detect_kind, draw_opening, load_suite, opening_generator
from evotune.paths import DEFAULT_BOOK, DEFAULT_OPENINGS, HELD_OUT_OPENINGS, resolve_openings_path

PGN = """[Event "?"]
[White "a"]
[Black "b"]
[Result "*"]

1. e4 e5 2. Nf3 *

[Event "?"]
[FEN "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"]
[SetUp "1"]
[Result "*"]

2. Nf3 Nc6 *
"""


def test_default_suite_loads_fast_and_has_full_fens():
    t0 = time.perf_counter()
    suite = load_suite(DEFAULT_OPENINGS)
    assert len(suite) == 40457
    assert time.perf_counter() - t0 < 5.0  # generous: the machine is shared
    assert suite[0].fen == "rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3"
    assert suite[0].moves == () and suite[0].label == "2moves_v1.epd:1"
    assert load_suite(DEFAULT_OPENINGS) is suite  # cached in-process


def test_epd_four_fields_and_opcodes(tmp_path):
    p = tmp_path / "s.epd"
    p.write_text("# comment\n"
                 "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - bm Bb5; id \"x\";\n"
                 "\n"
                 "8/8/8/8/8/8/8/K1k5 b - - 12 40\r\n")
    suite = load_suite(p)
    assert len(suite) == 2
    assert suite[0].fen.endswith(" w KQkq - 0 1")
    chess.Board(suite[0].fen)  # valid
    assert suite[1].fen == "8/8/8/8/8/8/8/K1k5 b - - 12 40"


def test_pgn_suite_keeps_start_fen_and_moves(tmp_path):
    p = tmp_path / "s.pgn"
    p.write_text(PGN)
    suite = load_suite(p)
    assert len(suite) == 2
    assert suite[0] == Opening(fen=chess.STARTING_FEN, moves=("e2e4", "e7e5", "g1f3"),
                               label="s.pgn:1")
    assert suite[1].fen.startswith("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w")
    assert suite[1].moves == ("g1f3", "b8c6")
    b = suite[1].board()
    assert b.fen().startswith("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/") and len(b.move_stack) == 2
    z = tmp_path / "s.pgn.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("s.pgn", PGN)
    assert [load_suite(z)[i].moves for i in range(2)] == [suite[0].moves, suite[1].moves]


def test_packaged_zipped_pgn_suite():
    suite = load_suite(HELD_OUT_OPENINGS)
    assert len(suite) == 34700
    first = suite[0]  # 1. Nf3 d5 2. g3 c6 ... 8. Qd2 Qxd2+
    assert first.moves[:4] == ("g1f3", "d7d5", "g2g3", "c7c6") and len(first.moves) == 16
    assert first.moves[-1] == "a5d2"


def test_draws_are_addressed_by_position():
    a = draw_opening(str(DEFAULT_OPENINGS), opening_generator(7, 1, 2, 3))
    b = draw_opening(str(DEFAULT_OPENINGS), opening_generator(7, 1, 2, 3))
    assert a == b
    others = {draw_opening(str(DEFAULT_OPENINGS), opening_generator(7, 1, 2, p)) for p in range(8)}
    assert len(others) == 8  # 40k openings: 8 pairs collide with probability ~7e-4
    assert draw_opening(None, np.random.default_rng(0)) == START


def test_book_lines_follow_the_seed():
    line = lambda s: draw_opening(DEFAULT_BOOK, opening_generator(s, 0, 0, 0), book_plies=6)
    a, b = line(1), line(1)
    assert a == b and a.fen == chess.STARTING_FEN and 1 <= len(a.moves) <= 6
    assert a.board().is_valid()
    assert len({line(s).moves for s in range(10)}) > 1


def test_errors(tmp_path):
    with pytest.raises(OpeningsError, match="cannot be read"):
        load_suite(tmp_path / "missing.epd")
    empty = tmp_path / "empty.epd"
    empty.write_text("\n# nothing\n")
    with pytest.raises(OpeningsError, match="no opening"):
        load_suite(empty)
    with pytest.raises(OpeningsError, match="kind"):
        detect_kind(tmp_path / "x.txt")
    bad = tmp_path / "bad.epd"
    bad.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRX w KQkq -\n")
    with pytest.raises(OpeningsError, match="bad FEN"):
        load_suite(bad)[0]
    with pytest.raises(OpeningsError):
        draw_opening(tmp_path / "missing.bin", np.random.default_rng(0))
    notzip = tmp_path / "x.pgn.zip"
    notzip.write_text("not a zip")
    with pytest.raises(OpeningsError, match="cannot be read"):
        load_suite(notzip)


def test_openings_that_are_not_a_file_say_what_they_are(tmp_path):
    """Second adversarial pass of issue 60: a FIFO, a device or a folder given as openings (to
    --openings, --final-check-openings) was reported as 'no such file'; it is named for what it
    is, and a missing file is still 'no such file'."""
    os.mkfifo(tmp_path / "f.epd")
    (tmp_path / "d").mkdir()
    for path, words in ((tmp_path / "f.epd", "is not a regular file (a FIFO, socket or device)"),
                        (Path("/dev/zero"), "is not a regular file (a FIFO, socket or device)"),
                        (tmp_path / "d", "is a folder"),
                        (tmp_path / "nope.epd", "no such file")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            resolve_openings_path(str(path))
