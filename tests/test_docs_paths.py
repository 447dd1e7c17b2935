"""The docs name no folder of a developer's machine (issue 37, item 7): commands on the results
pages use paths relative to the repository or placeholders, so a reader can run them."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MACHINE = re.compile(r"(?<![\w.])/(work|root|home|Users|tmp)/\w")


def test_no_page_names_a_machine_s_folders():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "docs").rglob("*.patch")), *sorted((ROOT / "docs").rglob("*.py"))]
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in pages
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if MACHINE.search(line)]
    assert len(pages) > 20 and found == []
