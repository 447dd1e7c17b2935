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


def test_every_listed_test_is_collected_and_marked_slow():
    # a parametrised id changes with its parameters, which the function check above cannot see:
    # collect the listed files with -m slow and find every listed id among the items selected
    ids = slow_test_ids()
    files = sorted({nodeid.partition("::")[0] for nodeid in ids})
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow",
                          "-p", "no:cacheprovider", *files], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:]
    selected = set(out.stdout.splitlines())
    assert [nodeid for nodeid in ids if nodeid not in selected] == []
