"""Files evotune writes get the mode ``open`` would give them (issue 37, item 6): 0666 less the
umask for a new file, the replaced file's own mode otherwise; not mkstemp's 0600."""
from __future__ import annotations

import os
import stat

import pytest

from evotune.cli import main
from evotune.fileio import atomic_write_bytes


@pytest.fixture
def umask():
    """Set the umask for a test; the old one is restored after it."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_writes_follow_the_umask_and_keep_a_replaced_file_s_mode(tmp_path, umask):
    umask(0o022)
    atomic_write_bytes(tmp_path / "a", b"x")
    assert _mode(tmp_path / "a") == 0o644
    umask(0o027)
    atomic_write_bytes(tmp_path / "b", b"x")
    assert _mode(tmp_path / "b") == 0o640
    os.chmod(tmp_path / "a", 0o600)
    atomic_write_bytes(tmp_path / "a", b"y")  # replaced: its mode stays
    assert _mode(tmp_path / "a") == 0o600 and (tmp_path / "a").read_bytes() == b"y"


def test_nets_written_by_nn_init_and_nn_export_are_readable_by_others(tmp_path, umask, capsys):
    umask(0o022)
    for args in (["nn", "init", "--hidden", "8", "--out", str(tmp_path / "n.nnue")],
                 ["nn", "export", str(tmp_path / "n.nnue"), "--format", "bullet", "--out",
                  str(tmp_path / "n.bin")]):
        try:
            main(args)
        except SystemExit as exc:
            assert exc.code == 0, capsys.readouterr()
    assert _mode(tmp_path / "n.nnue") == 0o644 and _mode(tmp_path / "n.bin") == 0o644
