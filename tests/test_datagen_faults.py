"""An output of ``evotune datagen`` or ``evotune label`` cut by a fault is continued by the rerun,
exactly (issue 60): a write cut by the file size limit (as a full disk cuts it) in the first
chunk, in every format, and a kill between a chunk's write and its record (the first chunk's
and a later one's). The rerun never refuses such an output as a foreign file; its bytes are
those of an output written without the fault."""
from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from evotune.learn import datagen as dg
from evotune.learn.relabel import LabelSettings, label
from evotune.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SIZE_LIMIT = 1024  # bytes: less than the first chunk of every output below
SETTINGS = dg.DatagenSettings(games=8, limits=Limits(depth=1), chunk=4, fmt="text", seed=3)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (SIZE_LIMIT, SIZE_LIMIT))


def _cut_by_the_size_limit(args: list[str], cwd: Path, out: Path) -> None:
    """``evotune ARGS`` under a file size limit: refused in one line, part of ``out`` written,
    its progress record of no chunk left beside it (Python ignores SIGXFSZ: the write fails)."""
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600, preexec_fn=_limited)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("evotune: error: could not write")
    assert 0 < out.stat().st_size <= SIZE_LIMIT
    record = json.loads(Path(str(out) + ".progress.json").read_text())
    assert record["chunks"] == 0 and record["bytes"] == 0


@pytest.mark.parametrize("fmt, name", [("text", "d.txt"), ("bullet", "d.bin")])
def test_datagen_cut_by_a_full_disk_is_continued_exactly(tmp_path, fmt, name):
    settings = SETTINGS if fmt == "text" else dg.DatagenSettings(
        **{**vars(SETTINGS), "fmt": "bullet"})
    dg.datagen(settings, tmp_path / f"ref-{name}", workers=1)
    reference = (tmp_path / f"ref-{name}").read_bytes()
    assert len(reference) > SIZE_LIMIT
    _cut_by_the_size_limit(["datagen", "--games", "8", "--depth", "1", "--chunk", "4", "--seed",
                            "3", "--format", fmt, "--workers", "1", "--out", name], tmp_path,
                           tmp_path / name)
    summary = dg.datagen(settings, tmp_path / name, workers=1)  # the rerun
    assert (tmp_path / name).read_bytes() == reference
    assert summary.games == 8 and summary.resumed_from == 0


def test_label_cut_by_a_full_disk_is_continued_exactly(tmp_path):
    dg.datagen(SETTINGS, tmp_path / "pos.txt", workers=1)
    settings = LabelSettings(engine="shannon", limits=Limits(depth=1), chunk=40)
    label(settings, [tmp_path / "pos.txt"], tmp_path / "ref.txt")
    reference = (tmp_path / "ref.txt").read_bytes()
    assert len(reference) > SIZE_LIMIT
    _cut_by_the_size_limit(["label", "pos.txt", "--engine", "shannon", "--depth", "1",
                            "--chunk", "40", "--workers", "1", "--out", "out.txt"], tmp_path,
                           tmp_path / "out.txt")
    label(settings, [tmp_path / "pos.txt"], tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == reference


def test_a_kill_between_a_chunks_write_and_its_record_is_continued_exactly(tmp_path):
    """The file holds a chunk its progress record does not: the first chunk (a record of no
    chunk, as a new output's is written first) or the second (the record of the first)."""
    full, half = tmp_path / "full.txt", tmp_path / "half.txt"
    dg.datagen(SETTINGS, full, workers=1)
    dg.datagen(dg.DatagenSettings(**{**vars(SETTINGS), "games": 4}), half, workers=1)
    # games are not part of an output's settings: the 4-game record is the 8-game output's
    # record after its first chunk
    after_first = json.loads(Path(f"{half}.progress.json").read_text())
    assert after_first["chunks"] == 1 and after_first["games"] == 4
    before_first = {**after_first, "chunks": 0, "games": 0, "positions": 0, "bytes": 0,
                    "sha256": hashlib.sha256().hexdigest()}
    for name, record, data in (("first.txt", before_first, half.read_bytes()),
                               ("second.txt", after_first, full.read_bytes())):
        out = tmp_path / name
        out.write_bytes(data)
        Path(f"{out}.progress.json").write_text(json.dumps(record))
        summary = dg.datagen(SETTINGS, out, workers=1)
        assert out.read_bytes() == full.read_bytes(), name
        assert summary.resumed_from == record["games"]
    # killed after the first record but before any byte reached the file: started afresh
    out = tmp_path / "none.txt"
    Path(f"{out}.progress.json").write_text(json.dumps(before_first))
    dg.datagen(SETTINGS, out, workers=1)
    assert out.read_bytes() == full.read_bytes()
