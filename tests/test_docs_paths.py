"""The docs name no folder of a developer's machine (issue 37, item 7): commands on the results
pages use paths relative to the repository or placeholders, so a reader can run them."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MACHINE = re.compile(r"(?<![\w.])/(work|root|home|Users|tmp)/\w")


def test_no_page_names_a_machine_s_folders():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "docs").rglob("*.patch")), *sorted((ROOT / "docs").rglob("*.py"))]
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in pages
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if MACHINE.search(line)]
    assert len(pages) > 20 and found == []


CITED = (re.compile(r"\bcommits? `?([0-9a-f]{7,40})\b"), re.compile(r"\bat ([0-9a-f]{7})\b"),
         re.compile(r"^#+ \d{4}-\d{2}-\d{2}, ([0-9a-f]{7,40})\b", re.M))
"""How a page cites an evotune commit: 'commit abc1234', 'at abc1234', a part titled 'DATE, abc1234'."""
ELSEWHERE = {"cb6a360": "bulletformat's commit (github.com/jw1912/bulletformat), docs/formats.md"}
"""Commits cited that are another repository's."""


def test_every_commit_a_page_cites_is_in_the_history():
    """A figure's replay names the commit it was measured at: a hash rewritten away (a rebase,
    a squashed branch) leaves the reader nothing to check out."""
    if not (ROOT / ".git").exists():
        pytest.skip("this checkout has no git history to look the commits up in")
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT,
                             capture_output=True, text=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("a shallow or unreadable git history cannot say which commits exist")
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    cited: dict[str, str] = {}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for pattern in CITED:
            for m in pattern.finditer(text):
                cited.setdefault(m.group(1), str(page.relative_to(ROOT)))
    hashes = sorted(set(cited) - set(ELSEWHERE))
    out = subprocess.run(["git", "cat-file", "--batch-check"], cwd=ROOT, capture_output=True,
                         text=True, input="".join(f"{h}^{{commit}}\n" for h in hashes)).stdout
    missing = [f"{h} ({cited[h]})" for h, line in zip(hashes, out.splitlines())
               if line.endswith("missing")]
    assert len(hashes) > 50 and missing == []


DATED = re.compile(r"^## (\d{4}-\d{2}-\d{2}), [0-9a-f]{7,40}( and [0-9a-f]{7,40})?: \S")
"""A history part's title: its date, the commit (or two) that recorded it, what it measured."""


def test_every_results_page_says_what_is_true_now_then_its_history_newest_first():
    """docs/results/: each page opens with 'Now'; the sections that say how things stand (its
    set-up, how it is measured) follow it; then the history, every part titled by its date and
    commit, newest first, so a reader finds the current figures without reading the history."""
    pages = sorted(p for p in (ROOT / "docs" / "results").glob("*.md") if p.name != "index.md")
    wrong = []
    for page in pages:
        titles = [line for line in page.read_text(encoding="utf-8").splitlines()
                  if line.startswith("## ")]
        dates = [m.group(1) for m in map(DATED.match, titles) if m]
        first_dated = next(i for i, t in enumerate(titles) if DATED.match(t)) if dates else None
        if titles[:1] != ["## Now"] or not dates or dates != sorted(dates, reverse=True) \
                or any(not DATED.match(t) for t in titles[first_dated:]):
            wrong.append(f"{page.name}: {titles}")
    assert len(pages) > 20 and wrong == []
