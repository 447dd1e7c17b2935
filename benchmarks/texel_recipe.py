"""The Texel recipe of docs/results/texel-fits.md ("+150 Elo: Stockfish labels beside self-play,
and a ridge") as one chain of commands: datagen -> texel -> verify, with the published seeds and
exact position counts, so that its inputs are remade byte for byte.

    python benchmarks/texel_recipe.py --out recipe            # the published sizes (hours)
    python benchmarks/texel_recipe.py --out small --scale 0.002 --verify-games 4   # a minute

Steps (each printed before it runs; N1, N2, N3 = the counts below times --scale):

    evotune datagen --games 12000 --positions N1 --depth 3 --seed 7 --out sp3.txt
    evotune datagen --games 6000 --positions N2 --depth 3 --seed 8 --out sp3b.txt
    evotune datagen --games 5600 --positions N3 --engine sf.toml --nodes 2000 --per-game 20
                    --seed 11 --out sf110k.txt           # Debian's Stockfish 15.1, sf.toml below
    evotune texel sf110k.txt sp3.txt sp3b.txt --engine extended --l2 5e-5 --run-id recipe
    evotune verify recipe --games G --depth 3 --opponents shannon

The published self-play file (all136k.txt, 135,994 positions) joined the seed-7 and seed-8 files
cut at chunk boundaries that were not recorded; this recipe cuts them at fixed counts with the
same total (90,000 + 45,994), so it remakes a data set of the same sources, seeds and size, not
those bytes (see the results page). The last lines printed are the SHA-256 of every data file,
of the fitted weights and of the verification's games: two runs with the same arguments print
the same digests. Datagen and the fit are resumable, so a killed call continues when rerun.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

SELF_PLAY = (("sp3.txt", 12000, 90_000, 7), ("sp3b.txt", 6000, 45_994, 8))
"""(file, games at most, positions, seed) of the depth-3 shannon self-play data."""
STOCKFISH = ("sf110k.txt", 5600, 110_313, 11)
"""The same for the Stockfish-labelled data (--nodes 2000 with datagen's default --depth 3: Stockfish
stops at depth 3, about 170 nodes a move; 20 positions a game)."""
SF_SPEC = """name = "stockfish"
kind = "uci"
command = [{command}]
options = {{ Threads = 1, Hash = 16 }}
"""


def evotune(*args: str) -> None:
    """Run one evotune command (printed first); stop the chain when it fails."""
    print("$ evotune " + " ".join(args), flush=True)
    res = subprocess.run([sys.executable, "-m", "evotune.cli", *args])
    if res.returncode != 0:
        sys.exit(res.returncode)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="Folder of the data files and the runs.")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="Share of the published position counts (1 = 90,000 + 45,994 + 110,313).")
    ap.add_argument("--verify-games", type=int, default=400, help="Games of the verification.")
    ap.add_argument("--workers", type=int, default=1,
                    help="Worker processes of datagen and verify (results do not depend on it).")
    ap.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish",
                    help="Stockfish 15.1's command (Debian: apt-get install stockfish).")
    args = ap.parse_args(argv)
    if not 0 < args.scale <= 1:
        ap.error(f"--scale {args.scale}: give a share in (0, 1]")
    if not Path(args.stockfish).is_file():
        ap.error(f"--stockfish {args.stockfish}: no such file; the recipe labels with Stockfish")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "sf.toml"
    spec.write_text(SF_SPEC.format(command=json.dumps(str(Path(args.stockfish).resolve()))))
    workers = str(args.workers)
    files = []
    for name, games, positions, seed in SELF_PLAY:
        n = max(1, round(positions * args.scale))
        evotune("datagen", "--games", str(games), "--positions", str(n), "--depth", "3",
                "--seed", str(seed), "--workers", workers, "--out", str(out / name))
        files.append(out / name)
    name, games, positions, seed = STOCKFISH
    n = max(1, round(positions * args.scale))
    evotune("datagen", "--games", str(games), "--positions", str(n), "--engine", str(spec),
            "--nodes", "2000", "--per-game", "20", "--seed", str(seed), "--workers", workers,
            "--out", str(out / name))
    files.insert(0, out / name)
    runs = out / "runs"
    if not (runs / "recipe" / "texel.json").exists():
        evotune("texel", *map(str, files), "--engine", "extended", "--l2", "5e-5", "--run-id",
                "recipe", "--runs-dir", str(runs))
    evotune("verify", "recipe", "--games", str(args.verify_games), "--depth", "3", "--opponents",
            "shannon", "--workers", workers, "--runs-dir", str(runs))
    fit = json.loads((runs / "recipe" / "texel.json").read_text())
    verify = json.loads((runs / "recipe" / "verify.json").read_text())
    print("digests (equal for two runs with the same arguments):")
    for f in files:
        print(f"  {f.name}: {sum(1 for _ in open(f, 'rb'))} positions, sha256 "
              f"{digest(f.read_bytes())}")
    print(f"  fitted weights (rounded): sha256 "
          f"{digest(json.dumps(fit['weights_rounded']).encode())}")
    games = [{k: m[k] for k in ("label", "wins", "draws", "losses", "pentanomial")}
             for m in verify["matches"]]
    print(f"  verification: sha256 {digest(json.dumps(games, sort_keys=True).encode())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
