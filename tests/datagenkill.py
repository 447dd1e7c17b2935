"""A datagen command killed with SIGKILL inside its second chunk (the kill/rerun tests of
tests/test_datagen.py and tests/test_datagen_fast.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path


def kill_in_second_chunk(cmd: list[str], out: Path, env: dict, cwd: Path) -> dict:
    """Run ``cmd`` (6 games, chunks of 2, writing ``out``), SIGKILL it after the first chunk's
    progress line and return the progress record it left (at least one chunk, not all)."""
    proc = subprocess.Popen(cmd, env={**env, "EVOTUNE_PROGRESS_SECONDS": "0"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd)
    assert proc.stderr is not None
    for line in proc.stderr:  # a progress line per chunk: killed after the first, in the second
        if " 2/6 games" in line:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    state = json.loads(Path(str(out) + ".progress.json").read_text())
    assert 2 <= state["games"] < 6
    return state
