"""bullet's binary training data (bulletformat's 32-byte ChessBoard records): written as
bulletformat writes them, read as the same positions, round trips, and bad files refused.

tests/data/bullet/sample.bin is what bulletformat 1.8.0's own ``convert_from_text::<ChessBoard>``
(Rust, built from jw1912/bulletformat at cb6a360) wrote from tests/data/bullet/sample.txt: 64
positions of random games and edge cases, 31 with Black to move, scores +-32000, 0, +-1.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evotune.errors import EvotuneError
from evotune.learn.labels import DataError
from evotune.learn.nn import bulletdata
from evotune.learn.nn.bulletdata import DTYPE, RECORD, bullet_bytes, convert, load_positions, read_bullet
from evotune.learn.nn.data import NO_SCORE, load_data
from evotune.learn.nn.kernels import expand, target_of
from evotune.learn.nn.trainer import train

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "bullet"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def sample(tmp_path) -> tuple[Path, Path]:
    """Copies of sample.txt and sample.bin in a folder of the test's own (caches go there)."""
    for name in ("sample.txt", "sample.bin"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    return tmp_path / "sample.txt", tmp_path / "sample.bin"


def seen(data, i: int, wdl: float = 0.3) -> tuple[set, set, float]:
    """What the trainer sees of position i: the side to move's and the other's features, the
    target."""
    fs, fn = np.zeros(32, np.int16), np.zeros(32, np.int16)
    n = expand(data.occ[i], data.pcs[i], data.stm[i], fs, fn)
    t = target_of(data.score[i], data.result[i], data.stm[i], np.float32(wdl))
    return set(fs[:n].tolist()), set(fn[:n].tolist()), float(t)


def test_the_records_are_the_bytes_bulletformat_writes(sample, tmp_path):
    text, reference = sample
    data, out = convert([text], tmp_path / "mine.bin")
    assert len(data) == 64 and int(np.count_nonzero(data.stm)) == 31
    assert out.read_bytes() == reference.read_bytes()
    assert DTYPE.itemsize == RECORD == 32


def test_read_records_are_the_text_positions_seen_from_the_side_to_move(sample):
    text, reference = sample
    from_text = load_data([text])
    from_bin, clipped = read_bullet(reference)
    assert clipped == 0 and len(from_bin) == len(from_text) == 64
    assert from_bin.stm.tolist() == [0] * 64  # the records keep no side to move
    for i in range(64):
        assert seen(from_bin, i) == seen(from_text, i), i
        if from_text.stm[i] == 0:  # White to move: the very same packed position
            assert (int(from_bin.occ[i]), from_bin.pcs[i].tobytes(), int(from_bin.score[i]),
                    int(from_bin.result[i])) == (int(from_text.occ[i]),
                                                 from_text.pcs[i].tobytes(),
                                                 int(from_text.score[i]),
                                                 int(from_text.result[i]))
        else:  # Black to move: mirrored, colours swapped, score and result for Black
            assert int(from_bin.occ[i]) == int.from_bytes(
                int(from_text.occ[i]).to_bytes(8, "little"), "big")
            assert int(from_bin.score[i]) == -int(from_text.score[i])
            assert int(from_bin.result[i]) == 2 - int(from_text.result[i])
    # scores at the edges, in the records' side-to-move view
    assert sorted(np.abs(from_bin.score[:2]).tolist()) == [32000, 32000]


def test_round_trips_keep_every_position(sample, tmp_path):
    text, reference = sample
    # bullet -> text -> bullet: the same bytes; the text holds the records' positions
    convert([reference], tmp_path / "back.txt")
    lines = (tmp_path / "back.txt").read_text().splitlines()
    assert len(lines) == 64 and all(" w - - 0 1 | " in line for line in lines)
    convert([tmp_path / "back.txt"], tmp_path / "again.data")
    assert (tmp_path / "again.data").read_bytes() == reference.read_bytes()
    # text -> bullet -> packed -> bullet: the same bytes again
    got, _ = read_bullet(tmp_path / "again.data")
    assert bullet_bytes(got).tobytes() == reference.read_bytes()
    # the text read back is the positions the trainer sees in the original text
    original, back = load_data([text]), load_data([tmp_path / "back.txt"])
    assert [seen(back, i) for i in range(64)] == [seen(original, i) for i in range(64)]


def test_training_on_the_records_is_training_on_the_text(sample):
    text, reference = sample
    kw = dict(hidden=16, epochs=2, batch=16, lr=0.01, wdl=0.3, val_share=0.25, val_block=4)
    a, b = train([text], **kw), train([reference], **kw)
    # the same positions, targets and split; the rows are summed in another order (the
    # records' squares are mirrored), so float32 sums differ in their last bits
    for ra, rb in zip(a.records, b.records):
        assert rb.positions == ra.positions == 48
        assert rb.train_loss == pytest.approx(ra.train_loss, rel=1e-4)
        assert rb.val_loss == pytest.approx(ra.val_loss, rel=1e-4)
    assert np.abs(a.net.flat - b.net.flat).max() < 1e-4


def _damaged(reference: Path, at: int, values: dict) -> bytes:
    rec = np.frombuffer(reference.read_bytes(), DTYPE).copy()
    for name, v in values.items():
        rec[at][name] = v
    return rec.tobytes()


@pytest.mark.parametrize("how, says", [
    ("size", "2047 bytes is not a whole number of 32-byte ChessBoard records"),
    ("code", "record 5 (byte 160) is not a ChessBoard: a piece code that is no piece"),
    ("pieces", "record 5 (byte 160) is not a ChessBoard: more than 32 pieces"),
    ("nibble", "record 5 (byte 160) is not a ChessBoard: a non-zero nibble after the last piece"),
    ("kings", "record 5 (byte 160) is not a ChessBoard: not one king a side"),
    ("ksq", "record 5 (byte 160) is not a ChessBoard: ksq or opp_ksq is not its king's square"),
    ("result", "record 5 (byte 160) is not a ChessBoard: a result that is not 0, 1 or 2"),
])
def test_a_bad_file_is_one_line_and_exit_2(sample, tmp_path, how, says):
    _, reference = sample
    raw = reference.read_bytes()
    rec = np.frombuffer(raw, DTYPE)[5]
    if how == "size":
        bad = raw[:-1]
    elif how == "code":
        bad = _damaged(reference, 5, {"pcs": np.bitwise_or(rec["pcs"], [6] + [0] * 15)})
    elif how == "pieces":
        bad = _damaged(reference, 5, {"occ": np.uint64(2**64 - 1)})
    elif how == "nibble":
        occ = int(rec["occ"])  # the last piece (a rook: not a king) taken off the board only
        bad = _damaged(reference, 5, {"occ": np.uint64(occ & ~(1 << (occ.bit_length() - 1)))})
    elif how == "kings":
        pcs = rec["pcs"].copy()
        pcs[:] = [(c & 0xF0) | (5 if (c & 15) == 13 else c & 15) for c in pcs]  # two White kings
        bad = _damaged(reference, 5, {"pcs": pcs})
    elif how == "ksq":
        bad = _damaged(reference, 5, {"ksq": (int(rec["ksq"]) + 1) % 64})
    else:
        bad = _damaged(reference, 5, {"result": 3})
    path = tmp_path / "bad.bin"
    path.write_bytes(bad)
    with pytest.raises(DataError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_bullet(path)
    if how not in ("size", "code"):
        return
    # the commands (one process each, so two of the cases): one line, exit 2, nothing written
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in (["nn", "convert", "bad.bin", "--out", "x.txt"],
                 ["nn", "train", "bad.bin", "--runs-dir", "runs", "--hidden", "8"]):
        got = cli(args, tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
        assert got.stderr.startswith("evotune: error: data file ") and says in got.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_other_refusals(sample, tmp_path):
    text, reference = sample
    with pytest.raises(DataError, match="mix bullet's binary data"):
        load_positions([text, reference])
    unscored = tmp_path / "u.txt"
    unscored.write_text("".join(f"{line.split(' | ')[0]} [0.5]\n"
                                for line in text.read_text().splitlines()[:3]))
    with pytest.raises(DataError, match="3 of the 3 positions have no score"):
        convert([unscored], tmp_path / "u.bin")
    assert not (tmp_path / "u.bin").exists()
    with pytest.raises(DataError, match="is one of the inputs"):
        convert([reference], reference)
    empty = tmp_path / "e.bin"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="no positions"):
        load_positions([empty])
    for missing in ("nosuch.bin", "nosuch.txt"):
        with pytest.raises(DataError, match="no such file"):
            convert([tmp_path / missing], tmp_path / "m.bin")
    (tmp_path / "adir").mkdir()
    with pytest.raises(EvotuneError, match="adir"):
        convert([reference], tmp_path / "adir")
    assert not (tmp_path / "m.bin").exists()
    got = cli(["nn", "convert", str(text), "--out", "o.bin", "--max-bad", "-1"], tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr


def test_scores_beyond_the_limit_are_clipped_as_text_scores(sample, tmp_path):
    _, reference = sample
    path = tmp_path / "wide.bin"
    path.write_bytes(_damaged(reference, 2, {"score": -32768}))
    data, clipped = read_bullet(path)
    assert clipped == 1 and int(data.score[2]) == -32000 != NO_SCORE
    assert bulletdata.load_bullet([path]).info["clipped_scores"] == 1


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_nn_train_and_convert_from_the_command_line(sample, tmp_path):
    text, reference = sample
    got = cli(["nn", "convert", "sample.txt", "--out", "c.bin"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == "c.bin: 64 positions as bullet records (2048 bytes)\n"
    assert (tmp_path / "c.bin").read_bytes() == reference.read_bytes()
    got = cli(["nn", "train", "c.bin", "--hidden", "8", "--epochs", "1", "--batch", "16",
               "--run-id", "b", "--runs-dir", "runs"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "runs" / "b" / "net.nnue").is_file()


def test_many_files_are_read_in_order_into_one_set(sample, tmp_path, monkeypatch):
    _, reference = sample
    raw = reference.read_bytes()
    (tmp_path / "a.bin").write_bytes(raw[:10 * RECORD])
    (tmp_path / "b.DATA").write_bytes(raw[10 * RECORD:])
    monkeypatch.setattr(bulletdata, "_BLOCK", 7)  # blocks that end inside a file
    data = load_positions([tmp_path / "a.bin", tmp_path / "b.DATA"])
    whole, _ = read_bullet(reference)
    assert len(data) == 64 and [f["positions"] for f in data.info["files"]] == [10, 54]
    for name in ("occ", "pcs", "score", "result", "stm"):
        assert np.array_equal(getattr(data, name), getattr(whole, name)), name
    assert bullet_bytes(data).tobytes() == raw
