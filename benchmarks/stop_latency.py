"""How fast `evotune uci` answers, per search (issue 60: a search honours every limit at every
level): for each engine, one `evotune uci` process; from the start position and a middlegame,
`--repeat` times each, the seconds from sending `go nodes 1` to its `bestmove`, and from sending
`stop` (after `--think` seconds of `go infinite`) to its `bestmove`; plus `isready` during the
search and the first `readyok` from the process's start (Python's start, the imports and the
core's code loaded: the warm-up).

Prints one line per engine: the worst `go nodes 1`, the worst `stop`, the worst `isready`
during a search, and the start's `readyok` (seconds); then a JSON object of the same. The
figures are wall-clock and move with the machine's load: report the load beside them.

    python benchmarks/stop_latency.py                      # every family below
    python benchmarks/stop_latency.py --engine shannon --engine net11-puct-moves
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from evotune.engine.net.network import random_net, write_net

ROOT = Path(__file__).resolve().parent.parent
MIDDLEGAME = "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1"  # BK.05
SHANNON_WEIGHTS = "".join(f'[[weight]]\nname = "{n}"\nreference = {v}\n' for n, v in zip(
    ("pawn", "knight", "bishop", "rook", "queen", "mobility"), (100, 300, 330, 500, 900, 10)))
"""The Shannon reference weights as a spec's [[weight]] tables."""
POSITIONS = ("position startpos", f"position fen {MIDDLEGAME}")
MADE = {  # searches no shipped spec has: [search] tables of a spec made for the run
    "uct-random": ("shannon", 'algorithm = "uct"\npolicy = "random"'),
    "uct-eval": ("shannon", 'algorithm = "uct"\npolicy = "eval"'),
    "uct-alphabeta2": ("shannon", 'algorithm = "uct"\npolicy = "alphabeta:2"'),
    "uct-alphabeta8": ("shannon", 'algorithm = "uct"\npolicy = "alphabeta:8"'),
    "uct-alphabeta8-nodes": ("shannon", 'algorithm = "uct"\npolicy = "alphabeta:8"\n'
                                        'budget = "nodes"'),
    "puct-qsearch": ("shannon", 'algorithm = "uct"\npolicy = "qsearch"\nprior = true'),
    "flat-net-alphabeta": ("nnue", ""),
    "flat-net-uct-qsearch": ("nnue", 'algorithm = "uct"\npolicy = "qsearch"'),
    "flat-net-probability": ("nnue", 'algorithm = "probability"'),
}
DEFAULT = ("shannon", "pst-pesto", "net11",
           str(ROOT / "docs/results/artefacts/move-model/reduce-late.toml"),
           str(ROOT / "docs/results/artefacts/move-model/reduce-model.toml"),
           "shannon-uct", "extended-uct", "pst-pesto-puct-moves", "net11-puct-moves",
           "shannon-probability", "pst-pesto-probability-moves", "net11-probability-moves",
           *MADE)


class Engine:
    """One `evotune uci` process, its output lines timestamped by a reader thread."""

    def __init__(self, args: list[str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", "uci", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), line.strip()))

    def send(self, line: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def until(self, prefix: str, timeout: float) -> float:
        end = time.perf_counter() + timeout
        while True:
            at, line = self.lines.get(timeout=max(0.001, end - time.perf_counter()))
            if line.startswith(prefix):
                return at

    def latency(self, line: str, prefix: str, timeout: float) -> float:
        sent = self.send(line)
        return self.until(prefix, timeout) - sent

    def close(self) -> None:
        self.send("quit")
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def engine_args(name: str, folder: Path, net: Path) -> list[str]:
    if name not in MADE:
        return ["--engine", name]
    features, table = MADE[name]
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nkind = "builtin"\nfeatures = "{features}"\n'
                    f'[search]\n{table}\n' + SHANNON_WEIGHTS * (features == "shannon"))
    return ["--engine", f"{path}:{net}" if features == "nnue" else str(path)]


def measure(name: str, folder: Path, net: Path, *, repeat: int, think: float,
            timeout: float) -> dict:
    eng = Engine(engine_args(name, folder, net))
    out: dict = {"engine": Path(name).stem if name.endswith(".toml") else name}
    try:
        eng.send("uci")
        eng.send("isready")
        out["start_readyok"] = round(eng.until("readyok", timeout) - eng.started, 3)
        nodes1 = stops = readies = 0.0
        for _ in range(repeat):
            for position in POSITIONS:
                eng.send(position)
                nodes1 = max(nodes1, eng.latency("go nodes 1", "bestmove", timeout))
                eng.send("go infinite")
                time.sleep(think / 2)
                readies = max(readies, eng.latency("isready", "readyok", timeout))
                time.sleep(think / 2)
                stops = max(stops, eng.latency("stop", "bestmove", timeout))
        out.update(go_nodes_1=round(nodes1, 3), stop=round(stops, 3),
                   isready_searching=round(readies, 3))
    except queue.Empty:
        out["error"] = f"no answer within {timeout} s"
    finally:
        eng.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", action="append", help="A builtin spec, a spec file or one of "
                    f"{', '.join(MADE)} (repeatable; default: {len(DEFAULT)} searches).")
    ap.add_argument("--repeat", type=int, default=3, help="Rounds per position.")
    ap.add_argument("--think", type=float, default=0.5, help="Seconds of 'go infinite' before 'stop'.")
    ap.add_argument("--timeout", type=float, default=300.0, help="Seconds to wait for an answer.")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        net = folder / "flat.nnue"
        write_net(random_net(16, 1), net)  # a random net: its quiescence finds few cut-offs
        for name in args.engine or DEFAULT:
            r = measure(name, folder, net, repeat=args.repeat, think=args.think,
                        timeout=args.timeout)
            results.append(r)
            print(f"{Path(name).stem:32s} go nodes 1 {r.get('go_nodes_1', '-'):>7} s   stop "
                  f"{r.get('stop', '-'):>6} s   isready searching {r.get('isready_searching', '-'):>6}"
                  f" s   start readyok {r.get('start_readyok', '-'):>6} s {r.get('error', '')}",
                  flush=True)
    print(json.dumps({"load": os.getloadavg()[0], "results": results}))


if __name__ == "__main__":
    main()
