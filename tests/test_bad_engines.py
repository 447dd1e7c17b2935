"""Faulty external engines lose games; they never abort a match or lose a played game."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

ENGINE = r'''
import os, sys, chess
mode, marker = sys.argv[1], sys.argv[2]
if mode == "crash-then-dead" and os.path.exists(marker):
    sys.exit(3)  # cannot be started again after its crash
board, gos = chess.Board(), 0
for line in sys.stdin:
    t = line.split()
    if not t:
        continue
    if t[0] == "uci":
        print("id name fake\noption name KnightValue type spin default 300 min 0 max 1000\nuciok")
    elif t[0] == "isready":
        print("readyok")
    elif t[0] == "position":
        board = chess.Board() if t[1] == "startpos" else chess.Board(" ".join(t[2:8]))
        if "moves" in t:
            for m in t[t.index("moves") + 1:]:
                board.push_uci(m)
    elif t[0] == "go":
        gos += 1
        if mode == "crash-then-dead" and gos == 3:
            open(marker, "w").close()
            os._exit(1)
        mv = next(iter(board.legal_moves)).uci()
        if mode == "huge-score":
            print("info depth 1 score cp 99999999999999999999999999 pv " + mv)
        print("bestmove " + mv)
    elif t[0] == "quit":
        break
    sys.stdout.flush()
'''


def _spec(tmp_path, mode):
    script = tmp_path / "fake.py"
    script.write_text(ENGINE)
    spec = tmp_path / f"{mode}.toml"
    spec.write_text(f'name = "fake"\nkind = "uci"\ncommand = ["{sys.executable}", "{script}", '
                    f'"{mode}", "{tmp_path / "marker"}"]\n[[weight]]\nname = "knight"\n'
                    'reference = 300\noption = "KnightValue"\n')
    return spec


def _match(tmp_path, spec, games=4):
    pgn = tmp_path / "games.pgn"
    res = subprocess.run([sys.executable, "-m", "evotune.cli", "match", str(spec), "reference",
                          "--games", str(games), "--depth", "1", "--workers", "1", "--pgn",
                          str(pgn), "--json"], capture_output=True, text=True, timeout=600)
    return res, pgn.read_text() if pgn.exists() else ""


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_a_huge_score_is_clamped_and_the_match_completes(tmp_path):
    res, pgn = _match(tmp_path, _spec(tmp_path, "huge-score"), games=2)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert pgn.count("[Event ") == 2


def test_an_engine_that_cannot_restart_after_a_crash_forfeits_and_the_match_goes_on(tmp_path):
    res, pgn = _match(tmp_path, _spec(tmp_path, "crash-then-dead"), games=4)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert pgn.count("[Event ") == 4  # every game written, the crashed one included
    assert '[Termination "forfeit-crash"]' in pgn
    assert '[Termination "forfeit-start"]' in pgn


SLOW_START = r'''
import sys, time
for line in sys.stdin:
    t = line.split()
    if t and t[0] == "uci":
        print("id name slow-start\nuciok", flush=True)
    elif t and t[0] == "isready":
        time.sleep(12)  # its heavy start-up: past the 10 s of uciok, within the 60 of readyok
        print("readyok", flush=True)
    elif t and t[0] == "quit":
        break
'''


@pytest.mark.slow
def test_an_engine_slow_to_get_ready_starts(tmp_path):
    """`evotune uci` loads its compiled core before its first readyok: 12 to 25 s under load,
    past the 10 s that uciok gets; the first isready gets 60 s."""
    from evotune.players import PlayerSpec
    from evotune.players.external import ExternalEngine

    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START)
    t0 = time.monotonic()
    eng = ExternalEngine(PlayerSpec(name="s", kind="uci", command=(sys.executable, str(script))))
    try:
        assert eng.alive and 12 <= time.monotonic() - t0 < 40
    finally:
        eng.close()
