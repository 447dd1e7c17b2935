"""``evotune bench``: the six figures, positive, and a signature that only the search decides."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evotune.engine.bench import BENCH_KEYS, QUICK, BenchSettings, run_bench
from evotune.errors import ConfigError


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
    from evotune.engine.netfile import read_net
    from evotune.paths import ENGINES_DIR

    net11 = read_net(ENGINES_DIR / "net11.nnue")
    assert net_signature(net11) == NET11_SIGNATURE == 1824413642
    net9 = read_net(Path(__file__).resolve().parents[1] / "docs/results/nn-study-net9.nnue")
    assert net_signature(net9) != NET11_SIGNATURE
    # the scale study's net12 (docs/engine.md names it)
    assert net_signature(read_net(ENGINES_DIR / "net12.nnue")) == 830459502
    assert net_signature(read_net(ENGINES_DIR / "net13.nnue")) == 1535396929  # and its next loop
