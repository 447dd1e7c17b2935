"""Training data of networks: the line formats read, the packed boards, the cache beside the data."""
from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from evotune.engine.net.network import features
from evotune.learn import labels
from evotune.learn.labels import DataError, parse_line, parse_scored_line
from evotune.learn.nn import data as nndata
from evotune.learn.nn.data import BYTES_PER_POSITION, NO_SCORE, cache_path, load_data, unpack
from evotune.learn.nn.kernels import expand
from evotune.learn.nn.numpystep import PAD, expand_batch

START = chess.STARTING_FEN
KIWI = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
BLACK = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def chess768(board: chess.Board, perspective: bool) -> set[int]:
    """The active features of ``perspective``, straight from python-chess's piece map."""
    return {384 * (p.color != perspective) + 64 * (p.piece_type - 1)
            + (sq if perspective == chess.WHITE else sq ^ 56)
            for sq, p in board.piece_map().items()}


def test_score_lines_read_the_last_field_as_the_result():
    # '1' in the middle is a score of 1 cp, not a White win (read as the result before)
    assert parse_scored_line(f"{START} | 1 | 0.0") == (START, 0.0, 1.0)
    assert parse_line(f"{START} | 1 | 0.0") == (START, 0.0)
    assert parse_scored_line(f"{START} | -35 | 1/2-1/2") == (START, 0.5, -35.0)
    assert parse_scored_line(f"{START} | 1-0") == (START, 1.0, None)
    assert parse_scored_line(f"{START} [0.5]") == (START, 0.5, None)
    assert "score 'x'" in parse_scored_line(f"{START} | x | 1.0")
    assert "score 'nan'" in parse_scored_line(f"{START} | nan | 1.0")
    assert "more than 3 fields" in parse_scored_line(f"{START} | 1 | 2 | 1.0")
    assert "result '35'" in parse_scored_line(f"{START} | 1.0 | 35")


def test_packed_boards_hold_every_piece_and_the_side_to_move(random_positions, tmp_path):
    boards = random_positions(300, 5) + [chess.Board(KIWI), chess.Board(BLACK)]
    path = tmp_path / "d.txt"
    path.write_text("".join(f"{b.fen()} | {i} | 0.5\n" for i, b in enumerate(boards)))
    data = load_data([path])
    assert len(data) == len(boards) and data.nbytes == BYTES_PER_POSITION * len(boards)
    feats = expand_batch(data, np.arange(len(data)))
    fs = np.zeros(32, np.int16)
    fn = np.zeros(32, np.int16)
    for i, b in enumerate(boards):
        assert unpack(data, i) == [(sq, int(p.color == chess.BLACK), p.piece_type)
                                   for sq, p in sorted(b.piece_map().items())]
        assert data.stm[i] == (b.turn == chess.BLACK) and data.score[i] == i
        own, other = chess768(b, b.turn), chess768(b, not b.turn)
        engine_own, engine_other = features(b)  # the engine's Chess768 (net.network)
        assert set(engine_own.tolist()) == own and set(engine_other.tolist()) == other
        n = expand(data.occ[i], data.pcs[i], data.stm[i], fs, fn)
        assert n == len(b.piece_map())
        assert set(fs[:n].tolist()) == own and set(fn[:n].tolist()) == other
        assert set(feats[i, 0].tolist()) - {PAD} == own
        assert set(feats[i, 1].tolist()) - {PAD} == other


def test_formats_and_many_files_in_order(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text(f"{START} | 35 | 1.0\n# a comment\n\n{BLACK} | -40000 | 0.0\n")
    b = tmp_path / "b.fen"
    b.write_text(f"{KIWI} [0.5]\n")
    c = tmp_path / "c.epd"
    c.write_text(f"{' '.join(BLACK.split()[:4])} c9 \"0-1\";\n")
    data = load_data([a, b, c])
    assert data.score.tolist() == [35, -32000, NO_SCORE, NO_SCORE]  # clipped to +-32000
    assert data.result.tolist() == [2, 0, 1, 0] and data.stm.tolist() == [0, 1, 0, 1]
    assert data.scored == 2 and data.info["clipped_scores"] == 1
    assert [f["positions"] for f in data.info["files"]] == [2, 1, 1]
    assert cache_path([a, b, c], data.info["files"]).exists()
    assert cache_path([a, b, c], data.info["files"]).parent == tmp_path


def test_the_cache_is_read_instead_of_the_text(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text(f"{START} | 10 | 1.0\n{KIWI} | -20 | 0.5\n")
    first = load_data([path])
    caches = list(tmp_path.glob("*.nncache"))
    assert len(caches) == 1 and caches[0].name.startswith("d.txt.")

    def no_text(*a, **k):
        raise AssertionError("the text was read again")

    monkeypatch.setattr(nndata, "iter_labelled", no_text)
    again = load_data([path])
    for name in ("occ", "pcs", "score", "result", "stm"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    # other data (one byte changed) gets its own cache: the text is read
    path.write_text(f"{START} | 11 | 1.0\n{KIWI} | -20 | 0.5\n")
    with pytest.raises(AssertionError, match="read again"):
        load_data([path])


def test_a_bad_line_is_named_and_nothing_is_written(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text(f"{START} | 10 | 1.0\n{START} | 10 | 2.0\n{KIWI} | 5 | 0.5\n")
    with pytest.raises(DataError, match=rf"^{path}:2: result '2.0' .*--max-bad"):
        load_data([path])
    assert list(tmp_path.iterdir()) == [path]
    data = load_data([path], max_bad=1)
    assert len(data) == 2 and data.info["bad"] == 1
    # the cache remembers the bad line: a stricter load is refused naming it
    with pytest.raises(DataError, match=rf"^{path}:2: result '2.0' .*allowed: 0"):
        load_data([path])


def test_missing_files_damaged_caches_and_read_only_folders(tmp_path, read_only):
    with pytest.raises(DataError, match="no such file"):
        load_data([tmp_path / "none.txt"])
    with pytest.raises(DataError, match="no data files"):
        load_data([])
    path = tmp_path / "d.txt"
    path.write_text(f"{START} | 10 | 1.0\n")
    data = load_data([path])
    cache = cache_path([path], data.info["files"])
    cache.write_bytes(cache.read_bytes()[:-3])
    with pytest.raises(DataError, match=f"data cache {cache} is damaged"):
        nndata.read_cache(cache)
    assert load_data([path]).score.tolist() == [10]  # rebuilt from the text
    assert len(nndata.read_cache(cache)) == 1
    if read_only is None:
        pytest.skip("no read-only folder can be made here")
    with pytest.raises(DataError, match="not writable"):
        load_data([path], cache_dir=read_only)


def test_texel_reads_the_same_lines(tmp_path):
    # texel's reader and the nets' reader are one: scored lines give texel their results
    path = tmp_path / "d.txt"
    path.write_text(f"{START} | 1 | 0.0\n{KIWI} [1.0]\n")
    pos = labels.read_positions([path])
    assert pos.results == [0.0, 1.0] and pos.files[0]["positions"] == 2


def _columns(raw: bytes) -> int:
    return 20 + int.from_bytes(raw[12:20], "little")


def _rewrite(cache, raw: bytearray, *, digest: bool) -> None:
    """Write the edited cache back, with its header's digest made to match when ``digest``."""
    at = _columns(bytes(raw))
    info = json.loads(bytes(raw[20:at]))
    if digest:
        n = info["positions"]
        cols, k = [], at
        for _, dtype, shape in nndata._COLUMNS:
            size = n * int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            cols.append(np.frombuffer(bytes(raw[k:k + size]), dtype=dtype))
            k += size
        info["digest"] = nndata._columns_digest(cols)
    header = json.dumps(info, sort_keys=True).encode()
    cache.write_bytes(bytes(raw[:12]) + len(header).to_bytes(8, "little") + header
                      + bytes(raw[at:]))


@pytest.mark.parametrize("damage", ["score byte", "result byte", "piece code 0xF",
                                    "64 occupied squares", "result 7", "no digest"])
def test_a_damaged_cache_is_rebuilt_from_the_text_never_used(tmp_path, damage, caplog):
    """Issue 38 item 2: one flipped byte trained on altered data; piece code 0xF or 64 occupied
    squares killed the trainer with SIGSEGV. Edits that keep the digest right (a crafted file)
    are caught by the codes' check."""
    path = tmp_path / "d.txt"
    path.write_text(f"{START} | 10 | 1.0\n{KIWI} | -20 | 0.5\n{BLACK} | 7 | 0.0\n")
    first = load_data([path])
    cache = cache_path([path], first.info["files"])
    raw = bytearray(cache.read_bytes())
    at, n = _columns(bytes(raw)), 3
    occ_at, pcs_at = at, at + 8 * n
    score_at, result_at = pcs_at + 16 * n, pcs_at + 16 * n + 2 * n
    if damage == "score byte":
        raw[score_at] ^= 1
    elif damage == "result byte":
        raw[result_at + 1] ^= 2
    elif damage == "piece code 0xF":
        raw[pcs_at] = (raw[pcs_at] & 0xF0) | 0xF
    elif damage == "64 occupied squares":
        raw[occ_at:occ_at + 8] = b"\xff" * 8
    elif damage == "result 7":
        raw[result_at] = 7
    if damage in ("piece code 0xF", "64 occupied squares", "result 7"):
        _rewrite(cache, raw, digest=True)
    elif damage == "no digest":
        info = json.loads(bytes(raw[20:at]))
        del info["digest"]
        header = json.dumps(info).encode()
        cache.write_bytes(bytes(raw[:12]) + len(header).to_bytes(8, "little") + header
                          + bytes(raw[at:]))
    else:
        cache.write_bytes(bytes(raw))
    with pytest.raises(nndata.CacheDamaged, match=f"data cache {cache} is damaged"):
        nndata.read_cache(cache)
    with caplog.at_level("WARNING"):
        again = load_data([path])
    assert f"data cache {cache} is damaged" in caplog.text and "rebuilt" in caplog.text
    for name in ("occ", "pcs", "score", "result", "stm"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    assert len(nndata.read_cache(cache)) == 3  # the rebuilt cache is whole again
