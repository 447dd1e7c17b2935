"""benchmarks/cutnode_positions.py: each position after random legal moves of its side to move,
the same file for the same seed (the data of the move model's page, "Captures that lose after
the killers")."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "cutnode_positions.py"
FENS = [chess.STARTING_FEN + " [0.5]",
        "4k3/8/4p3/n2p4/8/8/4n3/R2QK3 w - - 0 1 [1.0]",
        "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1 [1.0]"]  # Qg7 mates: that move is left out


def _run(tmp_path, name, *args):
    src = tmp_path / "pos.txt"
    src.write_text("\n".join(FENS) + "\n")
    out = tmp_path / name
    r = subprocess.run([sys.executable, str(SCRIPT), str(src), "--out", str(out), *args],
                       capture_output=True, text=True)
    return r, out


def test_each_line_is_one_legal_move_from_its_position_and_keeps_the_result(tmp_path):
    r, out = _run(tmp_path, "a.txt", "--per-position", "3", "--seed", "4")
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert 7 <= len(lines) <= 9
    starts = [chess.Board(" ".join(f.split()[:6])) for f in FENS]
    for line in lines:
        fen, result = line.rsplit(" ", 1)
        after = chess.Board(fen)
        parents = [b for b in starts if any(_after(b, m) == after.fen() for m in b.legal_moves)]
        assert len(parents) == 1 and not after.is_game_over()
        assert result == FENS[starts.index(parents[0])].split()[-1]
    again, out2 = _run(tmp_path, "b.txt", "--per-position", "3", "--seed", "4")
    assert out2.read_text() == out.read_text()
    _, out3 = _run(tmp_path, "c.txt", "--per-position", "3", "--seed", "5")
    assert out3.read_text() != out.read_text()


def _after(board: chess.Board, move: chess.Move) -> str:
    b = board.copy()
    b.push(move)
    return b.fen()


def test_a_bad_line_or_setting_is_one_line_and_exit_2(tmp_path):
    r, _ = _run(tmp_path, "a.txt", "--per-position", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    src = tmp_path / "bad.txt"
    src.write_text("not a fen at all here ok\n")
    r = subprocess.run([sys.executable, str(SCRIPT), str(src), "--out", str(tmp_path / "o.txt")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "bad.txt:1" in r.stderr
    assert not (tmp_path / "o.txt").exists()
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.txt"), "--out",
                        str(tmp_path / "o.txt")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "none.txt" in r.stderr
    assert not (tmp_path / "o.txt").exists()
