"""datagen and texel as safe as runs: one writer per datagen output (two real processes), a
progress record that never disagrees with its file, an exact --positions count, engines checked
before any game, forfeited games giving no positions; texel's ridge chosen by validation error,
its warning, no validation said as such, and a resume that names a missing data file."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evotune.errors import ConfigError, EngineError, EvotuneError, StoreError
from evotune.kinds.fit import TexelConfig, plan_fit
from evotune.kinds.fit import solver as fitrun
from evotune.learn import datagen as dg
from evotune.learn import texel as tx
from evotune.limits import Limits
from evotune.runs.lock import RunLock
from evotune.spec.file import load_engine_spec

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SMALL = dg.DatagenSettings(games=4, limits=Limits(depth=1), per_game=5, seed=5, chunk=2)


def _cli(args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "evotune.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _progress(out: Path) -> dict:
    return json.loads(Path(str(out) + dg.PROGRESS_SUFFIX).read_text())


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, dg.DatagenSummary]:
    out = tmp_path_factory.mktemp("small") / "pos.txt"
    return out, dg.datagen(SMALL, out, workers=1)


# ---- one writer ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_two_concurrent_datagens_one_writes_the_other_is_refused(tmp_path):
    args = ["datagen", "--games", "5000", "--depth", "2", "--per-game", "5", "--seed", "3",
            "--chunk", "2", "--out", "pos.txt"]
    a = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args], cwd=tmp_path,
                         env={**ENV, "EVOTUNE_PROGRESS_SECONDS": "0"},  # a line per chunk
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in a.stderr:  # A holds the lock once it has written its first chunk
            if " 2/5,000 games" in line:  # the progress line groups thousands
                break
        b = _cli(args, cwd=tmp_path)
        assert a.poll() is None, "A finished before B tried: the test proves nothing"
    finally:
        a.send_signal(signal.SIGKILL)
        a.wait()
    assert b.returncode == 2, b.stderr
    assert b.stderr.splitlines() == [f"evotune: error: pos.txt is being written by another "
                                     f"evotune datagen (PID {a.pid}); wait for it to finish or "
                                     "choose another --out"]
    out = tmp_path / "pos.txt"
    state = _progress(out)
    assert state["games"] >= 2
    data = out.read_bytes()[:state["bytes"]]  # (a chunk appended but not recorded may follow)
    assert data.count(b"\n") == state["positions"]
    # what A wrote is exactly the first games of these settings, each once
    settings = dg.DatagenSettings(games=state["games"], limits=Limits(depth=2), per_game=5,
                                  seed=3, chunk=2)
    ref = tmp_path / "ref.txt"
    dg.datagen(settings, ref, workers=1)
    assert data == ref.read_bytes()
    # and the killed output continues (repairing only an exact unrecorded chunk) to the same file
    more = dataclasses.replace(settings, games=state["games"] + 2)
    summary = dg.datagen(more, out, workers=1)
    dg.datagen(more, ref, workers=1)
    assert out.read_bytes() == ref.read_bytes()
    assert summary.positions == out.read_bytes().count(b"\n") == _progress(out)["positions"]


def test_a_held_lock_refuses_before_anything_is_written(tmp_path):
    out = tmp_path / "pos.txt"
    lock = RunLock(Path(str(out) + dg.LOCK_SUFFIX), busy="held by {pid}")
    lock.acquire()
    try:
        with pytest.raises(StoreError, match=f"being written by another evotune datagen "
                                             f"\\(PID {os.getpid()}\\)"):
            dg.datagen(SMALL, out, workers=1)
    finally:
        lock.release()
    assert not out.exists() and not Path(str(out) + dg.PROGRESS_SUFFIX).exists()


# ---- the progress record and the file ---------------------------------------------------------------

def _copy(small, tmp_path) -> Path:
    out, _ = small
    copy = tmp_path / "pos.txt"
    copy.write_bytes(out.read_bytes())
    Path(str(copy) + dg.PROGRESS_SUFFIX).write_bytes(
        Path(str(out) + dg.PROGRESS_SUFFIX).read_bytes())
    return copy


def test_a_changed_recorded_byte_is_refused_and_nothing_is_touched(small, tmp_path):
    copy = _copy(small, tmp_path)
    data = bytearray(copy.read_bytes())
    data[10] = ord("x") if data[10] != ord("x") else ord("y")
    copy.write_bytes(bytes(data))
    more = dataclasses.replace(SMALL, games=6)
    with pytest.raises(ConfigError, match=f"{copy}: its first {len(data)} bytes are not the"):
        dg.datagen(more, copy, workers=1)
    assert copy.read_bytes() == bytes(data)
    assert _progress(copy) == _progress(small[0])


def test_bytes_after_the_record_are_dropped_only_when_they_are_the_next_chunk(small, tmp_path):
    out, _ = small
    # an output of 2 games plus the first 40 bytes of games 2-3 (a killed append): repaired
    first = tmp_path / "first.txt"
    dg.datagen(dataclasses.replace(SMALL, games=2), first, workers=1)
    recorded = _progress(first)["bytes"]
    full = out.read_bytes()
    assert full[:recorded] == first.read_bytes()
    first.write_bytes(full[:recorded + 40])
    summary = dg.datagen(SMALL, first, workers=1)
    assert first.read_bytes() == full and summary.resumed_from == 2
    # the same length of foreign bytes (another game's line): refused, file untouched
    other = tmp_path / "other.txt"
    dg.datagen(dataclasses.replace(SMALL, games=2), other, workers=1)
    foreign = full[:recorded] + full[:40]
    assert foreign != full[:recorded + 40]
    other.write_bytes(foreign)
    with pytest.raises(EvotuneError, match="are not the start of games 2-3 as these settings "
                                           "play them"):
        dg.datagen(SMALL, other, workers=1)
    assert other.read_bytes() == foreign
    assert _progress(other)["games"] == 2


def test_a_missing_output_with_its_progress_is_refused(small, tmp_path):
    copy = _copy(small, tmp_path)
    copy.unlink()
    with pytest.raises(ConfigError, match=f"{copy} is missing but .* records 4 games"):
        dg.datagen(SMALL, copy, workers=1)
    assert not copy.exists()


# ---- --positions ---------------------------------------------------------------------------------

def test_positions_stops_at_exactly_n_lines_the_first_of_a_longer_file(small, tmp_path):
    out, summary = small
    n = summary.positions - 3  # inside the last game: the file is cut mid-game
    cut = tmp_path / "cut.txt"
    s = dg.datagen(dataclasses.replace(SMALL, positions=n, games=1000), cut, workers=1)
    lines = out.read_text().splitlines(keepends=True)
    assert s.positions == n and cut.read_text() == "".join(lines[:n])
    assert s.games == 4  # games played up to the chunk that reached n positions
    again = dg.datagen(dataclasses.replace(SMALL, positions=n, games=1000), cut, workers=1)
    assert again.positions == n and cut.read_text() == "".join(lines[:n])
    with pytest.raises(ConfigError, match="positions differ"):
        dg.datagen(dataclasses.replace(SMALL, positions=n + 1, games=1000), cut, workers=1)


@pytest.mark.slow
def test_positions_flag_on_the_command_line(tmp_path):
    r = _cli(["datagen", "--games", "50", "--positions", "17", "--depth", "1", "--out",
              "p.txt"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "p.txt").read_text().splitlines()) == 17
    assert "p.txt: 17 positions from" in r.stdout


# ---- engines -------------------------------------------------------------------------------------

def _uci_spec(folder: Path, name: str, code: str) -> Path:
    p = folder / f"{name}.toml"
    p.write_text(f'name = "{name}"\nkind = "uci"\ncommand = {json.dumps([sys.executable, "-c", code])}\n')
    return p


@pytest.mark.parametrize("name,code,says", [
    ("exits", "import sys; sys.exit(3)", "exit"),
    pytest.param("garbage", "while True: print('garbage', flush=True)", "uciok",
                 marks=pytest.mark.slow),  # waits out the 10 s start-up limit
])
def test_an_engine_that_cannot_play_is_refused_before_any_game(tmp_path, name, code, says):
    spec = _uci_spec(tmp_path, name, code)
    out = tmp_path / "pos.txt"
    with pytest.raises(EngineError, match=says):
        dg.datagen(dataclasses.replace(SMALL, engine=str(spec)), out, workers=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == [spec.name]


@pytest.mark.slow
def test_forfeited_games_give_no_positions(tmp_path, fake_engine_spec):
    good = fake_engine_spec(tmp_path, "random_mover", name="good")
    bad = fake_engine_spec(tmp_path, "crash", "--after", "3", "--once", str(tmp_path / "once"),
                           name="bad")
    settings = dataclasses.replace(SMALL, games=2, engine=str(good))
    ref = dg.datagen(settings, tmp_path / "good.txt", workers=1)
    got = dg.datagen(dataclasses.replace(settings, engine=str(bad)), tmp_path / "bad.txt",
                     workers=1)
    assert ref.forfeits == 0 and got.forfeits == 1  # game 0 is lost when its engine crashes
    good_text, bad_text = (tmp_path / "good.txt").read_text(), (tmp_path / "bad.txt").read_text()
    assert 0 < len(bad_text) < len(good_text) and good_text.endswith(bad_text)  # game 1 only
    assert got.positions == bad_text.count("\n")


# ---- texel ---------------------------------------------------------------------------------------

def _synthetic(seed: int = 5):
    """A problem where the start is the truth and 80 noisy rows overfit 30 free weights."""
    rng = np.random.default_rng(seed)
    p = 30
    w_true = np.zeros(p)
    w_true[:5] = [100, 300, 320, 500, 900]

    def rows(n):
        X = rng.integers(-2, 3, size=(n, p)).astype(float)
        y = (rng.random(n) < tx.sigmoid(X @ w_true / 400)).astype(float)
        return X, y

    bounds = dict(free=np.arange(p), lower=np.full(p, -2000.0), upper=np.full(p, 2000.0))
    train = tx.Problem(*rows(80), **bounds, l2=0.0, center=w_true)
    val = tx.Problem(*rows(3000), **bounds)
    return train, val, w_true


def test_auto_ridge_keeps_the_grid_value_with_the_lowest_validation_error():
    train, val, w0 = _synthetic()
    cfg = TexelConfig.of(data=("x",), l2_rule="lowest")  # the rule of fits before one-se
    said: list[str] = []
    l2, tried = fitrun.choose_l2(train, val, w0, 1.0, cfg, said.append,
                                 groups=np.arange(3000))  # each validation position its own block
    assert [t["l2"] for t in tried] == list(tx.L2_GRID)
    assert len(said) == len(tx.L2_GRID) + 1 and said[-1].startswith(f"ridge --l2 {l2:g} chosen")
    for t in tried:  # each error is the whole fit's, as the fit would run with that ridge
        problem = dataclasses.replace(train, l2=t["l2"])
        w = w0
        for step in tx.epochs(problem, w0, 1.0, optimizer="lbfgs", iters=cfg.optimiser.iters,
                              lr=cfg.optimiser.lr, tol=cfg.optimiser.tol, adam=tx.AdamState.zeros(w0.size),
                              start=0, stop=cfg.epochs, last=problem.error(w0, 1.0)):
            w = step[1]  # the last epoch's
        assert t["validation"] == pytest.approx(val.error(w, 1.0), rel=1e-12)
    errors = [t["validation"] for t in tried]
    assert l2 == tx.L2_GRID[int(np.argmin(errors))] and l2 > 0
    assert errors[0] > min(errors) * 1.5  # on this data the plain fit overfits badly


@pytest.fixture(scope="module")
def positions_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("texel") / "pos.txt"
    dg.datagen(dataclasses.replace(SMALL, games=40, chunk=8, per_game=8), out, workers=1)
    return out


@pytest.mark.slow
def test_explicit_l2_fits_as_the_plain_epoch_loop_does(positions_file, tmp_path):
    cfg = TexelConfig.of(data=(str(positions_file),), engine="pst", l2=5e-5, epochs=4)
    data = fitrun.read_data(plan_fit(cfg))
    store = fitrun.new_fit(plan_fit(cfg), data, out_dir=tmp_path, run_id="f")
    s = fitrun.execute_fit(store, plan_fit(cfg), data)
    assert s["l2"] == 5e-5 and not s["l2_chosen_by_validation"] and "l2_tried" not in s
    # the loop as it was before the ridge could be chosen, written out
    spec = load_engine_spec("pst")
    space = spec.space()
    w0 = space.reference_array
    X, y = data.extracted.X, data.y
    train = tx.Problem(X[data.train_idx], y[data.train_idx], free=space.free,
                       lower=space.lower_array, upper=space.upper_array, l2=5e-5, center=w0)
    K = tx.fit_k(train, w0)
    w, last = w0, train.error(w0, K)
    for _ in range(cfg.epochs):
        w = tx.lbfgs_epoch(train, w, K, iters=cfg.iters)
        if abs(last - train.error(w, K)) < cfg.tol:
            break
        last = train.error(w, K)
    assert s["K"] == K and s["weights"] == w.tolist()


@pytest.mark.slow
def test_a_fit_worse_than_its_start_on_validation_is_warned_once(positions_file, tmp_path):
    # 824 weights on a few hundred positions without a ridge overfit
    r = _cli(["texel", str(positions_file), "--engine", "extended", "--l2", "0", "--epochs", "5",
              "--runs-dir", "pop", "--run-id", "over"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "pop" / "over" / "texel.json").read_text())
    worse = s["error_after_rounding"]["validation"] > s["error_initial"]["validation"]
    assert worse, s["error_after_rounding"]
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("evotune: warning:")]
    assert len(warnings) == 1 and "likely weaker than its start" in warnings[0]
    # the default chooses the ridge, says every choice, and keeps the best
    r = _cli(["texel", str(positions_file), "--engine", "extended", "--epochs", "5",
              "--runs-dir", "pop", "--run-id", "auto"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s2 = json.loads((tmp_path / "pop" / "auto" / "texel.json").read_text())
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("ridge --l2 ")]
    assert len(said) == len(tx.L2_GRID_ONE_SE) + 1  # the default rule's grid, and the choice
    best = min(s2["l2_tried"], key=lambda t: t["validation"])
    chosen = next(t for t in s2["l2_tried"] if t["l2"] == s2["l2"])
    # one-se: the strongest ridge within a standard error of the lowest validation error
    assert s2["l2"] >= best["l2"] and s2["l2_chosen_by_validation"]
    assert s2["error_before_rounding"]["validation"] == pytest.approx(chosen["validation"])
    assert s2["error_before_rounding"]["validation"] <= s["error_before_rounding"]["validation"]
    assert ("evotune: warning:" in r.stderr) == (
        s2["error_after_rounding"]["validation"] > s2["error_initial"]["validation"])


@pytest.mark.slow
def test_no_validation_is_said_and_needs_an_explicit_ridge(positions_file, tmp_path):
    r = _cli(["texel", str(positions_file), "--val-share", "0", "--l2", "0", "--epochs", "2",
              "--runs-dir", "pop"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "no validation positions (--val-share 0): nothing measures overfitting" in r.stdout
    with pytest.raises(ConfigError, match="--val-share 0 holds out no positions"):
        TexelConfig.of(data=("x",), val_share=0)


def test_resume_names_a_missing_data_file(positions_file, tmp_path):
    data = tmp_path / "d.txt"
    data.write_bytes(positions_file.read_bytes())
    cfg = TexelConfig.of(data=(str(data),), l2=0.0, epochs=1)
    fd = fitrun.read_data(plan_fit(cfg))
    store = fitrun.new_fit(plan_fit(cfg), fd, out_dir=tmp_path, run_id="f")
    fitrun.execute_fit(store, plan_fit(cfg), fd)
    store.unlock()
    data.unlink()
    with pytest.raises(StoreError, match=f"its data file {data} is missing; put it back"):
        fitrun.open_fit(store)


def test_a_foreign_tail_is_refused_in_one_line_without_a_progress_line(tmp_path):
    """Issue 38 item 15: datagen printed its progress line (2/4 games) before refusing bytes
    after the record that are not the next chunk."""
    args = ["datagen", "--games", "2", "--chunk", "1", "--depth", "1", "--per-game", "3",
            "--out", "pos.txt"]
    assert _cli(args, tmp_path).returncode == 0
    with open(tmp_path / "pos.txt", "a") as fh:
        fh.write("garbage line\n")
    before = (tmp_path / "pos.txt").read_bytes()
    got = _cli(args[:2] + ["4"] + args[3:], tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
    assert "are not the start of games 2-2" in got.stderr
    assert (tmp_path / "pos.txt").read_bytes() == before
