"""Texel fitting: recovery of known weights, gradient, K, bounds, parsers, runs, kill + resume."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from evotune.learn import texel as tx
from evotune.learn.labels import DataError, format_line, parse_line, read_positions

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
EPD4 = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -"


def synthetic_problem(n=4000, p=8, seed=3, K=1.2, free=None, lower=None, upper=None):
    """Positions with small integer features labelled through the sigmoid of a known w."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, p)).astype(float)
    X[rng.random((n, p)) < 0.5] = 0.0  # sparse-ish
    w_true = np.array([100, 310, 335, 480, 910, 12, -25, 40][:p], dtype=float)
    y = tx.sigmoid(K * (X @ w_true) / 400)
    free = np.arange(1, p) if free is None else free
    lo = np.full(p, -2000.0) if lower is None else lower
    hi = np.full(p, 2000.0) if upper is None else upper
    lo[0] = hi[0] = 100.0
    return tx.Problem(sparse.csr_matrix(X), y, free=free, lower=lo, upper=hi), w_true


def test_lbfgs_recovers_known_weights_exactly():
    prob, w_true = synthetic_problem()
    w0 = np.array([100, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    w = w0
    for _ in range(10):
        w = tx.lbfgs_epoch(prob, w, 1.2, iters=50)
    assert np.array_equal(tx.rounded(w, prob), w_true)
    assert np.max(np.abs(w - w_true)) < 0.05
    assert prob.error(w, 1.2) < 1e-10


def test_adam_gets_to_the_known_weights():
    prob, w_true = synthetic_problem(n=2000)
    w = np.array([100, 200, 200, 400, 800, 0, 0, 0], dtype=float)
    state = tx.AdamState.zeros(8)
    for _ in range(6):
        w = tx.adam_epoch(prob, w, 1.2, state, iters=500, lr=2.0)
    assert np.max(np.abs(w - w_true)) < 1.0
    assert w[0] == 100.0


def test_gradient_matches_finite_differences():
    prob, w_true = synthetic_problem(n=500)
    rng = np.random.default_rng(0)
    prob.y = (rng.random(500) < 0.5).astype(float)  # results, not probabilities
    w = w_true + rng.normal(0, 50, size=8)
    K = 0.9
    _, g = prob.error_and_gradient(w, K)
    for i in range(8):
        h = 1e-3
        e = np.zeros(8)
        e[i] = h
        fd = (prob.error(w + e, K) - prob.error(w - e, K)) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-5, abs=1e-12)


def test_ridge_gradient_matches_finite_differences_and_pulls_toward_the_center():
    prob, w_true = synthetic_problem(n=500)
    rng = np.random.default_rng(1)
    prob.y = (rng.random(500) < 0.5).astype(float)
    center = np.array([100, 300, 300, 500, 900, 0, 0, 0], dtype=float)
    prob.l2, prob.center = 1e-3, center
    w = w_true + rng.normal(0, 50, size=8)
    K = 0.9
    obj, g = prob.objective_and_gradient(w, K)
    free = prob.free
    assert obj == pytest.approx(prob.error(w, K)
                                + 1e-3 * np.sum(((w - center)[free] / 100) ** 2), rel=1e-12)
    for i in range(8):
        e = np.zeros(8)
        e[i] = 1e-3
        fd = (prob.objective_and_gradient(w + e, K)[0]
              - prob.objective_and_gradient(w - e, K)[0]) / 2e-3
        assert g[i] == pytest.approx(fd, rel=1e-5, abs=1e-12)
    # on exactly labelled data, no ridge recovers w_true; a strong ridge stays near the center
    exact, _ = synthetic_problem()
    fits = {}
    for l2 in (0.0, 1.0):
        exact.l2, exact.center = l2, center
        w = center.copy()
        for _ in range(5):
            w = tx.lbfgs_epoch(exact, w, 1.2, iters=50)
        fits[l2] = w
    assert np.array_equal(tx.rounded(fits[0.0], exact), w_true)
    assert np.abs(fits[1.0] - center).sum() < np.abs(fits[0.0] - center).sum() / 2
    assert exact.error(fits[1.0], 1.2) > exact.error(fits[0.0], 1.2)


def test_k_is_fitted_first_with_the_given_weights():
    prob, w_true = synthetic_problem(K=1.37)
    assert tx.fit_k(prob, w_true) == pytest.approx(1.37, abs=1e-4)


def test_bounds_and_fixed_weights_are_respected():
    lo = np.full(8, -2000.0)
    hi = np.full(8, 2000.0)
    hi[4] = 700.0  # queen truly 910
    lo[6] = -10.0  # truly -25
    prob, w_true = synthetic_problem(lower=lo, upper=hi, free=np.array([1, 2, 3, 4, 6, 7]))
    w0 = np.array([100, 0, 0, 0, 0, 33, 0, 0], dtype=float)  # weight 5 fixed at 33
    w = w0
    for _ in range(5):
        w = tx.lbfgs_epoch(prob, w, 1.2, iters=50)
    assert w[4] == 700.0 and w[6] == -10.0
    assert w[0] == 100.0 and w[5] == 33.0
    wa = tx.adam_epoch(prob, w0, 1.2, tx.AdamState.zeros(8), iters=300, lr=5.0)
    assert wa[4] <= 700.0 and wa[6] >= -10.0 and wa[5] == 33.0


# ---- parsers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("line, result", [
    (f"{FEN} [1.0]", 1.0), (f"{FEN} [0.5]", 0.5), (f"{FEN} [0.0]", 0.0),
    (f"{FEN} [1-0] 35", 1.0), (f"{EPD4} c9 \"1-0\";", 1.0), (f"{EPD4} c9 \"0-1\";", 0.0),
    (f"{EPD4} c9 \"1/2-1/2\";", 0.5), (f"{EPD4} id \"x\"; c9 \"1/2-1/2\";", 0.5),
    (f"{FEN} | 1-0", 1.0), (f"{FEN} | 0.5", 0.5), (f"{FEN}|0", 0.0), (f"{EPD4} | 1/2-1/2", 0.5),
])
def test_every_format_parses(line, result):
    fen, res = parse_line(line)
    assert res == result
    assert fen.split()[:4] == FEN.split()[:4]


def test_writer_output_reads_back():
    for fmt in ("fen", "epd"):
        for r in (1.0, 0.5, 0.0):
            fen, res = parse_line(format_line(FEN, r, fmt))
            assert res == r and fen.split()[:4] == FEN.split()[:4]
    assert format_line(FEN, 0.5, "epd") == f"{EPD4} c9 \"1/2-1/2\";"
    assert format_line(FEN, 1.0, "fen") == f"{FEN} [1.0]"


def test_zurichess_style_file(tmp_path):
    # the layout of zurichess's quiet-labeled.epd: 4-field EPD, c9 result opcode
    text = ("rnb1kbnr/pp1pppp1/7p/2q5/5P2/N1P1P3/P2P2PP/R1BQKBNR w KQkq - c9 \"1/2-1/2\";\n"
            "2k4r/1p3pp1/p3p3/5b1p/8/P1P1B1P1/1P3P1P/4R1K1 b - - c9 \"0-1\";\n"
            "8/8/8/4k3/8/4K3/4P3/8 w - - c9 \"1-0\";\n")
    p = tmp_path / "quiet-labeled.epd"
    p.write_text(text)
    pos = read_positions([p])
    assert pos.results == [0.5, 0.0, 1.0]
    assert pos.fens[2] == "8/8/8/4k3/8/4K3/4P3/8 w - - 0 1"
    assert pos.files[0]["positions"] == 3 and pos.files[0]["size"] == len(text)


def test_bad_lines_name_file_and_line(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text(f"{FEN} [1.0]\n\n# comment\n{FEN} [2.0]\nnot a fen [0.5]\n{FEN} | 1-0\n")
    with pytest.raises(DataError, match=r"d\.txt:4: result \[2\.0\]"):
        read_positions([p])
    with pytest.raises(DataError, match=r"d\.txt:5: 'not a fen' is not a legal FEN"):
        read_positions([p], max_bad=1)
    pos = read_positions([p], max_bad=2)
    assert len(pos) == 2 and pos.bad == 2
    assert len(read_positions([p], max_bad=2, max_positions=1)) == 1


def test_cli_bad_data_is_one_line_exit_2_and_writes_nothing(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text(f"{FEN} [1.0]\n{FEN} [x]\n")
    out = tmp_path / "pops"
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "texel", str(p), "--runs-dir", str(out)],
                       capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert f"{p}:2: result [x]" in r.stderr
    assert not out.exists()


# ---- runs -------------------------------------------------------------------------------------

def labelled_file(path: Path, n: int = 600, seed: int = 5) -> Path:
    """Start positions of 2moves_v1 with results drawn from their material balance (quiet or
    not: the fit rejects the others and counts them)."""
    from evotune.paths import DEFAULT_OPENINGS

    rng = np.random.default_rng(seed)
    lines = []
    fens = [ln.split(" c9")[0].strip() for ln in DEFAULT_OPENINGS.read_text().splitlines()[:n]]
    for f in fens:
        lines.append(format_line(" ".join(f.split()[:4]) + " 0 1",
                                 float(rng.choice([0.0, 0.5, 1.0])), "fen"))
    path.write_text("\n".join(lines) + "\n")
    return path


def _fit_cmd(data, out, run_id, *extra):
    return [sys.executable, "-m", "evotune.cli", "texel", str(data), "--runs-dir", str(out),
            "--run-id", run_id, *extra]


def test_fit_run_works_with_status_export_and_plot(tmp_path):
    data = labelled_file(tmp_path / "d.txt", n=300)
    out = tmp_path / "pops"
    r = subprocess.run(_fit_cmd(data, out, "f1", "--epochs", "3"), capture_output=True,
                       text=True, env=ENV, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "f1" / "texel.json").read_text())
    assert doc["train"] + doc["validation"] + doc["not_quiet"] == 300
    assert doc["validation"] == round(0.1 * (300 - doc["not_quiet"]))
    manifest = json.loads((out / "f1" / "manifest.json").read_text())
    files = manifest["data_files"]
    assert files[0]["name"] == "d.txt" and files[0]["size"] == data.stat().st_size
    import hashlib

    assert files[0]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert manifest["kind"] == "fit" and len(manifest["identity"]["data"]) == 64
    st = subprocess.run([sys.executable, "-m", "evotune.cli", "status", "f1", "--runs-dir", str(out)],
                        capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert st.returncode == 0 and "texel" in st.stdout and "finished" in st.stdout, st.stderr
    ex = subprocess.run([sys.executable, "-m", "evotune.cli", "export", "f1", "--format", "json",
                         "--runs-dir", str(out)], capture_output=True, text=True, env=ENV,
                        cwd=tmp_path)
    assert ex.returncode == 0, ex.stderr
    assert json.loads(ex.stdout) == dict(zip(doc["names"], [int(v) for v in
                                                             doc["weights_rounded"]]))
    from evotune.runs.rundata import load_run

    run = load_run(out / "f1")
    assert run.strategy == "texel" and run.stats["loss_train"].shape == (run.last + 1,)
    assert np.all(np.diff(run.stats["loss_train"]) <= 1e-12)


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_killed_fit_resumed_equals_uninterrupted(tmp_path):
    data = labelled_file(tmp_path / "d.txt", n=600)
    out = tmp_path / "pops"
    args = ("--optimizer", "adam", "--iters", "400", "--lr", "1", "--epochs", "6", "--tol", "0")
    full = subprocess.run(_fit_cmd(data, out, "full", *args), capture_output=True, text=True,
                          env=ENV, cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen(_fit_cmd(data, out, "cut", *args), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=ENV, cwd=tmp_path)
    for line in proc.stderr:
        if "epoch 2/" in line:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    state = json.loads((out / "cut" / "state.json").read_text())
    assert not state["finished"] and 2 <= state["generation"] < 6
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "resume", "cut", "--runs-dir", str(out)],
                       capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for g in range(7):
        a = json.loads((out / "full" / "generations" / f"gen-{g:04d}.json").read_text())
        b = json.loads((out / "cut" / "generations" / f"gen-{g:04d}.json").read_text())
        assert a["population"] == b["population"] and a["stats"] == b["stats"]
    a = json.loads((out / "full" / "texel.json").read_text())
    b = json.loads((out / "cut" / "texel.json").read_text())
    assert a["weights"] == b["weights"] and a["error_after_rounding"] == b["error_after_rounding"]


def test_resume_refuses_changed_data(tmp_path):
    data = labelled_file(tmp_path / "d.txt", n=200)
    out = tmp_path / "pops"
    r = subprocess.run(_fit_cmd(data, out, "f", "--epochs", "1"), capture_output=True,
                       text=True, env=ENV, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with open(data, "a") as fh:
        fh.write(f"{FEN} [0.5]\n")
    r = subprocess.run([sys.executable, "-m", "evotune.cli", "resume", "f", "--runs-dir", str(out),
                        "--generations", "3"], capture_output=True, text=True, env=ENV,
                       cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "cannot be resumed: its data changed" in r.stderr


def test_validation_blocks_keep_consecutive_positions_together():
    from evotune.datafiles import DataFile
    from evotune.kinds.fit.config import TexelConfig
    from evotune.kinds.fit.solver import fit_identity
    from evotune.learn.fitdata import split_indices

    train, val = split_indices(1000, 0.1, 7, 64)
    assert len(val) == 100 and len(train) == 900 and not set(train) & set(val)
    runs = np.split(val, np.where(np.diff(val) != 1)[0] + 1)
    assert len(runs) <= 3  # one or two whole blocks of 64 and a part of one
    assert sum(len(r) == 64 and r[0] % 64 == 0 for r in runs) >= 1
    t1, v1 = split_indices(1000, 0.1, 7, 1)  # position by position, as before
    assert len(v1) == 100 and len(np.split(v1, np.where(np.diff(v1) != 1)[0] + 1)) > 80
    # val_block 1 (position by position, as fits stored before the setting) is left out of
    # the identity, so those fits keep theirs (tests/test_fit_kind.py reads such a fit)
    files = (DataFile(name="x.txt", size=1, sha256="0" * 64),)
    assert "val_block" not in TexelConfig.of(data=("x.txt",), val_block=1).identity_dict()
    assert fit_identity(TexelConfig.of(data=("x.txt",), val_block=1), files) != fit_identity(
        TexelConfig.of(data=("x.txt",)), files)


@pytest.mark.parametrize("use_qsearch", [False, True])
def test_extraction_threads_give_the_same_rows(use_qsearch, random_positions):
    from evotune.learn.phirows import extract
    from evotune.spec.file import load_engine_spec

    fens = [b.fen() for b in random_positions(3000, 5)]
    w = load_engine_spec("extended").space().reference_array
    one = extract(fens, w, features="extended", use_qsearch=use_qsearch, workers=1)
    two = extract(fens, w, features="extended", use_qsearch=use_qsearch, workers=2, chunk=700)
    assert np.array_equal(one.kept, two.kept)
    assert (one.not_quiet, one.mate) == (two.not_quiet, two.mate)
    assert one.not_quiet > 100 if not use_qsearch else one.kept.size > 2900
    assert one.X.shape == two.X.shape and (one.X != two.X).nnz == 0
