"""benchmarks/finetune_curve.py's arithmetic and its --with check: the difference of two
methods' seed means at shared checkpoints, and an earlier figure's points refused when their
checkpoints or games differ (one line, exit 2, nothing written)."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("finetune_curve",
                                               ROOT / "benchmarks" / "finetune_curve.py")
assert _spec is not None and _spec.loader is not None
curve = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(curve)


def _point(checkpoint: int, elo: float, error: float, **extra) -> dict:
    return {"checkpoint": checkpoint, "elo": elo, "elo_error": error, **extra}


def test_the_difference_of_seed_means_at_the_checkpoints_every_run_shares():
    a = {"a1": [_point(2500, 10.0, 20.0), _point(5000, 30.0, 20.0),
                _point(9000, 99.0, 15.0, final_check=True)],
         "a2": [_point(2500, 0.0, 20.0), _point(5000, 10.0, 20.0)]}
    b = {"b1": [_point(2500, 4.0, 18.0), _point(5000, 20.0, 18.0), _point(7500, 1.0, 18.0)],
         "b2": [_point(2500, 2.0, 18.0), _point(5000, 0.0, 18.0)]}
    got = curve.mean_differences(a, b)
    assert [c for c, _, _ in got] == [2500, 5000]  # 7,500 is not b2's; a final check is no point
    (_, d1, e1), (_, d2, e2) = got
    assert d1 == 5.0 - 3.0 and d2 == 20.0 - 10.0
    mean_error_a, mean_error_b = math.sqrt(2 * 20.0 ** 2) / 2, math.sqrt(2 * 18.0 ** 2) / 2
    assert math.isclose(e1, math.hypot(mean_error_a, mean_error_b)) and math.isclose(e1, e2)


def test_with_refuses_other_checkpoints_in_one_line(tmp_path, capsys):
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"every": 2500, "first": 2500, "games_per_match": 400,
                                   "methods": {"SPSA": {"s1": [_point(2500, 1.0, 30.0)]}}}))
    out = tmp_path / "out.json"
    code = curve.main(["--runs", str(tmp_path), "--run", "quad=none", "--games", "1000",
                       "--with", str(earlier), "--json", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not out.exists()
    assert len(err) == 1 and "at 400 games, not every 2500 from 2500 at 1000" in err[0]
    earlier.write_text("[1, 2]")
    code = curve.main(["--runs", str(tmp_path), "--run", "quad=none", "--with", str(earlier)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "not this script's points" in err[0]
