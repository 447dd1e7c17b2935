"""tests/slow_tests.txt names tests that exist: a renamed test would otherwise drop out of the
slow list silently and run in the fast set again (or, renamed back, never be looked at)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import slow_test_ids

ROOT = Path(__file__).resolve().parent.parent


def test_every_listed_slow_test_names_a_test_function_in_its_file():
    ids = slow_test_ids()
    assert len(ids) > 50
    missing = []
    for nodeid in ids:
        path, _, rest = nodeid.partition("::")
        name = re.split(r"[\[:]", rest)[0]
        source = ROOT / path
        if not source.is_file() or not re.search(rf"^\s*def {re.escape(name)}\(",
                                                   source.read_text(), re.M):
            missing.append(nodeid)
    assert not missing, missing


def test_a_listed_test_is_left_out_of_the_fast_set():
    nodeid = next(iter(slow_test_ids()))
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
                          nodeid], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "1 deselected" in out.stdout, out.stdout
