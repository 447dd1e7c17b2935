"""Nothing a run starts outlives it: SIGKILL of `evotune run` at several moments leaves no
process behind after 5 s (workers, joblib/loky's resource tracker, the PGN writer)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest


def _table() -> dict[int, tuple[int, bytes]]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                data = open(f"/proc/{d}/stat", "rb").read()
            except OSError:
                continue
            rest = data[data.rindex(b")") + 2:].split()
            out[int(d)] = (int(rest[1]), rest[19])
    return out


def _descendants(pid: int) -> dict[int, bytes]:
    table, out, todo = _table(), {}, [pid]
    while todo:
        p = todo.pop()
        for c, (ppid, start) in table.items():
            if ppid == p and c not in out:
                out[c] = start
                todo.append(c)
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
@pytest.mark.parametrize("moment", [0, pytest.param(1, marks=pytest.mark.slow),
                                    pytest.param(2, marks=pytest.mark.slow)])  # 15 s each
def test_sigkill_of_a_run_leaves_no_process_after_5_seconds(tmp_path, moment):
    proc = subprocess.Popen(
        [sys.executable, "-m", "evotune.cli", "run", "--np", "6", "--generations", "50",
         "--games", "2", "--depth", "2", "--workers", "2", "--runs-dir", str(tmp_path),
         "--run-id", "k"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = tmp_path / "k" / "state.json"
    seen: dict[int, bytes] = {}
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        seen.update(_descendants(proc.pid))
        try:
            g = json.loads(state.read_text())["generation"]
        except (OSError, ValueError, KeyError):
            g = -1
        if g >= moment and len(seen) >= 3:  # workers and the PGN writer are up
            break
        time.sleep(0.02)
    seen.update(_descendants(proc.pid))
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(5)
    table = _table()
    alive = {p: open(f"/proc/{p}/cmdline", "rb").read()[:80] for p, s in seen.items()
             if p in table and table[p][1] == s}
    assert len(seen) >= 3 and alive == {}, (len(seen), alive)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_label_leaves_no_worker_or_resource_tracker(tmp_path, sig):
    """Issue 38 item 1: label was the one process-starting command without the reaper."""
    data = tmp_path / "k.txt"
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    data.write_text(f"{fen} | 1-0\n" * 4000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "evotune.cli", "label", str(data), "--engine", "shannon",
         "--depth", "3", "--workers", "2", "--chunk", "64", "--out", str(tmp_path / "o.txt")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, bytes] = {}
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        seen.update(_descendants(proc.pid))
        if len(seen) >= 4:  # two workers and the resource tracker(s) are up
            break
        time.sleep(0.02)
    seen.update(_descendants(proc.pid))
    assert proc.poll() is None, "label ended before it could be killed"
    os.kill(proc.pid, sig)
    proc.wait()
    time.sleep(5)
    table = _table()
    alive = {p: open(f"/proc/{p}/cmdline", "rb").read()[:80] for p, s in seen.items()
             if p in table and table[p][1] == s}
    assert len(seen) >= 3 and alive == {}, (len(seen), alive)
