"""``evotune bench``: the six figures, positive, and a signature that only the search decides."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evotune.engine.bench import BENCH_KEYS, QUICK, BenchSettings, run_bench
from evotune.engine.net.network import random_net, read_net, write_net
from evotune.errors import ConfigError
from evotune.spec.file import load_engine_spec


def test_bench_json_quick_prints_the_six_figures():
    proc = subprocess.run([sys.executable, "-m", "evotune.cli", "bench", "--json", "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert tuple(figures) == BENCH_KEYS
    assert (figures.pop("engine"), figures.pop("features")) == ("shannon", "shannon")
    assert all(isinstance(v, (int, float)) and v > 0 for v in figures.values()), figures
    assert isinstance(figures["signature"], int)
    assert figures["speedup"] == pytest.approx(figures["search_nps"]
                                               / figures["reference_search_nps"])


def test_signature_is_reproducible():
    a, b = run_bench(QUICK), run_bench(QUICK)
    assert a.signature == b.signature


def test_bench_settings_validation():
    with pytest.raises(ConfigError):
        BenchSettings(depth=0)
    with pytest.raises(ConfigError):
        BenchSettings(reference_positions=99)
    with pytest.raises(ConfigError):
        BenchSettings(perft_scale=-5)
    with pytest.raises(ConfigError):
        BenchSettings(search_budget=-1)


def test_the_default_signature_is_pinned():
    """The search set at the default depth with the Shannon reference weights: 21833316 nodes.
    A change of the core that alters this number changes the search (restructurings must not)."""
    from evotune.engine.bench import SIGNATURE, signature

    assert SIGNATURE == 21833316
    assert signature() == SIGNATURE


def test_a_nets_signature_is_pinned_and_tells_nets_apart():
    """A net's searches stop on the node limit (every count is the limit), so its signature is
    the CRC of the searches' moves, scores, depths and PVs: net11's is pinned, net9's differs."""
    from evotune.engine.bench import NET11_SIGNATURE, net_signature
    from evotune.engine.net.network import read_net
    from evotune.paths import ENGINES_DIR

    net11 = read_net(ENGINES_DIR / "net11.nnue")
    assert net_signature(net11) == NET11_SIGNATURE == 1824413642
    net9 = read_net(Path(__file__).resolve().parents[1] / "docs/results/nn-study-net9.nnue")
    assert net_signature(net9) != NET11_SIGNATURE
    # the scale study's net12 (docs/engine.md names it)
    assert net_signature(read_net(ENGINES_DIR / "net12.nnue")) == 830459502
    assert net_signature(read_net(ENGINES_DIR / "net13.nnue")) == 1535396929  # and its next loop


@pytest.mark.parametrize("search", ['features = "nnue"\nnet = "n.nnue"\n[search]\n'
                                    'algorithm = "uct"\npolicy = "qsearch"\n',
                                    '[search]\nalgorithm = "uct"\npolicy = "alphabeta:8"\n'])
def test_a_quick_bench_of_a_uct_spec_is_quick(tmp_path, search):
    """A random net's quiescence finds few cut-offs, so UCT with quiescence leaves makes a few
    hundred simulations a second, and a depth-8 leaf takes millions of nodes: at the default
    budgets (1,000 simulations a position and a move) ``bench --quick`` of such specs took 4 min
    45 s and more than a minute here (issue 60's second pass); the quick bench gives every
    search of a spec's own algorithm 20,000 nodes, leaves included (1.7 s)."""
    write_net(random_net(hidden=16, seed=1), tmp_path / "n.nnue")
    (tmp_path / "s.toml").write_text(f'name = "u"\nkind = "builtin"\n{search}' + (
        "" if "nnue" in search else "".join(
            f'[[weight]]\nname = "{n}"\nreference = {v}\n' for n, v in
            zip(("pawn", "knight", "bishop", "rook", "queen", "mobility"),
                (100, 300, 330, 500, 900, 10)))))
    spec = load_engine_spec(str(tmp_path / "s.toml"))
    start = time.perf_counter()
    result = run_bench(QUICK, spec, weights=read_net(tmp_path / "n.nnue") if "nnue" in search
                       else None)
    assert time.perf_counter() - start < 30
    assert result.algorithm == "uct" and result.simulations_per_second > 0
