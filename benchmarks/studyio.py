"""What the study scripts of benchmarks/ share (imported as ``studyio`` when a script runs as
``python benchmarks/NAME.py``, whose folder is then first on sys.path): their results file, the
evotune commands they print and run, cached matches on the held-out openings, and the Texel
evaluation they start from."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = 5
"""The seed of every study match's openings."""
PESTO = "pst-pesto"


class Results:
    """``OUT/results.json``: every finished measurement under its key (written after each, through
    a temporary file and a rename, so a killed study keeps what it finished; each write first
    takes in what the file holds, so two calls of a study on different steps keep each other's
    results, short of two writes at the same instant)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def get(self, key: str):
        return self.data.get(key)

    def items(self):
        """Every (key, value), with what another call of the study wrote meanwhile."""
        if self.path.exists():
            self.data = {**json.loads(self.path.read_text()), **self.data}
        return sorted(self.data.items())

    def put(self, key: str, value) -> None:
        if self.path.exists():  # what another call of the study wrote meanwhile stays
            self.data = {**json.loads(self.path.read_text()), **self.data}
        self.data[key] = value
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def log(msg: str) -> None:
    print(msg, flush=True)


def evotune(*args: str, capture: bool = False) -> str:
    """Run one evotune command (printed first); stop the study when it fails."""
    log("$ evotune " + " ".join(args))
    res = subprocess.run([sys.executable, "-m", "evotune.cli", *args], text=True,
                         stdout=subprocess.PIPE if capture else None)
    if res.returncode != 0:
        sys.exit(f"evotune {args[0]} failed with exit code {res.returncode}")
    return res.stdout if capture else ""


def match(results: Results, key: str, a: str, b: str, *, games: int, workers: int,
          limit: tuple[str, ...], out: Path, extra: tuple[str, ...] = ()) -> dict:
    """``evotune match A B`` on the held-out 8moves openings, seed :data:`SEED` (cached under
    ``key``; ``extra``: more options, e.g. ``("--sprt", "0", "5")``)."""
    done = results.get(key)
    if done is not None:
        return done
    from evotune.paths import HELD_OUT_OPENINGS
    t0 = time.perf_counter()
    (out / "pgn").mkdir(parents=True, exist_ok=True)
    text = evotune("match", a, b, "--games", str(games), "--openings", str(HELD_OUT_OPENINGS),
                   "--seed", str(SEED), "--workers", str(workers), *limit, *extra, "--json",
                   "--pgn", str(out / "pgn" / f"{key}.pgn"), capture=True)
    r = json.loads(text)
    r.update(a=a, b=b, limit=" ".join(limit), seconds=round(time.perf_counter() - t0, 1))
    results.put(key, r)
    say(key, r)
    return r


def uci_spec(out: Path, name: str, engine: str, weights: Path | None = None) -> Path:
    """A 'uci' spec that runs ``evotune uci --engine ENGINE`` (this checkout's code)."""
    command = [sys.executable, "-m", "evotune.cli", "uci", "--engine", engine]
    if weights is not None:
        command += ["--weights", str(weights)]
    path = out / f"{name}-uci.toml"
    path.write_text(f'name = "{name}"\nkind = "uci"\ncommand = {json.dumps(command)}\n')
    return path


def elo_text(m: dict) -> str:
    """'+123 ± 45' (an infinite Elo, all points to one side, is JSON null)."""
    if m["elo"] is None or m["elo_error"] is None:
        if m["elo"] is None:  # every point to one side: say which
            return "+inf (won every game)" if m.get("score", 0) > 0.5 else "-inf (lost every game)"
        return f"{m['elo']:+.0f} ± inf"
    return f"{m['elo']:+.0f} ± {m['elo_error']:.0f}"


def say(key: str, r: dict) -> None:
    log(f"  {key}: {r['wins']}-{r['draws']}-{r['losses']} Elo {elo_text(r)} "
        f"({r['games']} games, {r.get('seconds', 0):.0f} s)")


def texel_start(out: Path, results: Results, *, recipe: Path, scale: float, workers: int,
                games: int, stockfish: str) -> Path:
    """The Texel-tuned ``extended`` evaluation the studies start from: benchmarks/texel_recipe.py
    at ``scale`` in ``recipe`` (skipped when its fit exists), exported to OUT/texel.json, and its
    Elo against shannon and PeSTO's tables at depth 3 (``texel:shannon-d3``, ``texel:pesto-d3``).
    Returns the weights file."""
    texel = out / "texel.json"
    if not texel.exists():
        if not (recipe / "runs" / "recipe").is_dir():
            cmd = [sys.executable, str(ROOT / "benchmarks" / "texel_recipe.py"), "--out",
                   str(recipe), "--scale", str(scale), "--workers", str(workers),
                   "--verify-games", "200", "--stockfish", stockfish]
            log("$ " + " ".join(cmd))
            if subprocess.run(cmd).returncode != 0:
                sys.exit("texel_recipe.py failed")
        evotune("export", "recipe", "--format", "json", "--runs-dir", str(recipe / "runs"),
                "--out", str(texel))
    tx = f"extended:{texel}"
    d3 = ("--depth", "3")
    match(results, "texel:shannon-d3", tx, "shannon", games=games, workers=workers, limit=d3,
          out=out)
    match(results, "texel:pesto-d3", tx, PESTO, games=games, workers=workers, limit=d3, out=out)
    return texel
