"""A fit resolves its plan once (issue 57): ``evotune texel`` and ``evotune resume`` of a fit
parse its engine spec once each, and the plan carries the spec, feature set, space and start."""
from __future__ import annotations

from pathlib import Path

import pytest

from evotune.errors import ConfigError
from evotune.kinds.fit import TexelConfig, plan_fit

V1 = Path(__file__).resolve().parent / "data" / "store-v1"
TINY = ('# tiny spec\nname = "tiny"\nfeatures = "shannon"\n'
        '[[group]]\nmatch = "*"\nreference = 100\nlower = 0\nupper = 1000\n'
        '[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n')


def test_a_fit_and_its_resume_parse_the_spec_once(tmp_path, toml_parses, call_cli):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    runs = tmp_path / "runs"
    code, out, err = call_cli("texel", V1 / "d.txt", "--engine", spec, "--epochs", "1",
                              "--iters", "2", "--l2", "0", "--runs-dir", runs, "--run-id", "f")
    assert code == 0, err
    assert "1 epochs" in out and toml_parses == {"# tiny spec": 1}
    toml_parses.clear()
    code, out, err = call_cli("resume", "f", "--generations", "2", "--runs-dir", runs)
    assert code == 0, err
    assert "2 epochs" in out and toml_parses == {"# tiny spec": 1}


def test_the_plan_holds_the_spec_space_and_start(tmp_path):
    weights = tmp_path / "w.json"
    weights.write_text((V1 / "w.json").read_text())
    plan = plan_fit(TexelConfig.of(data=(str(V1 / "d.txt"),), init=str(weights)))
    assert plan.spec.name == "shannon" and plan.evaluation.name == "shannon"
    assert plan.space.names == plan.spec.names and len(plan.start) == plan.space.size == 6
    assert plan.start != tuple(plan.space.reference_array)  # --init's weights, not the spec's
    assert plan.w0.tolist() == list(plan.start)
    with pytest.raises(ConfigError, match="--init nothing.json: give 'reference' or a weights"):
        plan_fit(TexelConfig.of(data=(str(V1 / "d.txt"),), init="nothing.json"))
