"""The package as users get it: a wheel installed into a fresh virtual environment and used from
another folder (engine specs and data come from the package, not from a checkout)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import chess
import chess.engine
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args, **kw):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(args, capture_output=True, text=True, env=env, **kw)


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_searches_speaks_uci_and_runs(tmp_path):
    dist = tmp_path / "dist"
    isolation = [] if importlib.util.find_spec("wheel") is None else ["--no-build-isolation"]
    built = _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                  "-w", str(dist), *isolation], timeout=900)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no 'wheel' package and no package index?): "
                    f"{built.stderr.strip().splitlines()[-1:]}")
    wheel = next(dist.glob("evotune-*.whl"))
    venv = tmp_path / "venv"
    # system site packages: numpy, numba, chess... are not downloaded again; evotune itself
    # comes from the wheel (the venv's site-packages come first)
    assert _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                timeout=300).returncode == 0
    py, exe = venv / "bin" / "python", venv / "bin" / "evotune"
    inst = _run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], timeout=600)
    assert inst.returncode == 0, inst.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([str(py), "-c", "import evotune, evotune.paths as c; "
                  "print(evotune.__file__); print(c.ENGINES_DIR)"], cwd=elsewhere, timeout=120)
    module, engines = where.stdout.split()
    assert module.startswith(str(venv)) and engines.startswith(str(venv)), where.stdout

    res = _run([str(exe), "search", chess.STARTING_FEN, "--depth", "2"], cwd=elsewhere,
               timeout=900)
    assert res.returncode == 0, res.stderr
    move = res.stdout.split()[1]
    assert chess.Move.from_uci(move) in chess.Board().legal_moves

    engine = chess.engine.SimpleEngine.popen_uci([str(exe), "uci"], cwd=elsewhere, timeout=900,
                                                 env={k: v for k, v in os.environ.items()
                                                      if k != "PYTHONPATH"})
    try:
        assert "KnightValue" in engine.options
        played = engine.play(chess.Board(), chess.engine.Limit(depth=2))
        assert played.move in chess.Board().legal_moves
    finally:
        engine.quit()

    res = _run([str(exe), "run", "--np", "4", "--generations", "1", "--games", "2", "--depth",
                "1", "--workers", "1", "--run-id", "w"], cwd=elsewhere, timeout=900)
    assert res.returncode == 0, res.stderr
    state = json.loads((elsewhere / "populations" / "w" / "state.json").read_text())
    assert state["generation"] == 1 and state["games"] > 0


SHIPPED_SPECS = sorted(p.name for p in (ROOT / "evotune" / "engines").glob("*.toml"))


@pytest.mark.slow
def test_an_sdist_and_the_wheel_built_from_it_ship_the_engine_specs(tmp_path):
    """`python -m build --sdist` from a copy of the source without symbolic links, then a wheel
    from that sdist: both hold every engine spec and the data files."""
    if importlib.util.find_spec("build") is None or importlib.util.find_spec("wheel") is None:
        pytest.skip("the 'build' and 'wheel' packages are not installed (pip install -e .[test])")
    assert len(SHIPPED_SPECS) >= 7 and "shannon.toml" in SHIPPED_SPECS
    src = tmp_path / "src"
    skip = shutil.ignore_patterns(".git", "populations", "reports", "__pycache__", "*.egg-info",
                                  "build", "dist", "site", ".pytest_cache", ".numba_cache",
                                  "*.nbi", "*.nbc")

    def ignore(folder, names):  # the top-level engines/ link is left out as well
        return set(skip(folder, names)) | ({"engines"} if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, src, symlinks=False, ignore=ignore)
    assert not any(p.is_symlink() for p in src.rglob("*"))
    dist = tmp_path / "dist"
    sdist = _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir",
                  str(dist), str(src)], timeout=600)
    assert sdist.returncode == 0, sdist.stderr[-2000:]
    tarball = next(dist.glob("evotune-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    top = names[0].split("/")[0]
    assert all(f"{top}/evotune/engines/{n}" in names for n in SHIPPED_SPECS), names
    assert f"{top}/evotune/engines/net11.nnue" in names  # the net the net11 spec plays
    wheel_dir = tmp_path / "wheel"
    built = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                  str(wheel_dir), str(tarball)], timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    with zipfile.ZipFile(next(wheel_dir.glob("evotune-*.whl"))) as whl:
        inside = set(whl.namelist())
    assert {f"evotune/engines/{n}" for n in SHIPPED_SPECS} <= inside
    assert "evotune/engines/net11.nnue" in inside
    assert {"evotune/data/pesto.json", "evotune/data/2moves_v1.epd"} <= inside
    # the tune page's own assets (evotune serve: no CDN), uPlot's licence beside them
    static = {p.name for p in (ROOT / "evotune" / "serve" / "static").iterdir()}
    assert {"uplot.iife.min.js", "uplot.LICENSE", "run.html", "runs.html"} <= static
    assert {f"evotune/serve/static/{n}" for n in static} <= inside
