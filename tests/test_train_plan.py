"""A training resolves its plan once (issue 57): ``evotune nn train --init eval:SPEC`` and
``evotune resume`` of that training read the spec once each (before the plan: three times and
twice), and the plan carries the evaluation the initial net is fitted to."""
from __future__ import annotations

import pytest

from evotune.errors import ConfigError
from evotune.kinds.training import TrainConfig, plan_training
from evotune.learn.nn.trainer import TrainSettings

TINY = ('# tiny eval spec\nname = "tiny"\nfeatures = "shannon"\n'
        '[[group]]\nmatch = "*"\nreference = 100\nlower = 0\nupper = 1000\n'
        '[[weight]]\nname = "pawn"\nreference = 100\nfixed = true\n')


@pytest.fixture()
def files(tmp_path, random_positions):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{b.fen()} | {i % 300 - 150} | 0.5\n"
                            for i, b in enumerate(random_positions(300, 7))))
    return spec, data


def test_a_training_and_its_resume_read_the_eval_spec_once(files, tmp_path, toml_parses,
                                                           call_cli):
    spec, data = files
    runs = tmp_path / "runs"
    code, out, err = call_cli("nn", "train", data, "--init", f"eval:{spec}", "--init-epochs", "1",
                              "--hidden", "16", "--batch", "64", "--epochs", "1",
                              "--runs-dir", runs, "--run-id", "t", "--quiet")
    assert code == 0, err
    assert "1 epochs" in out and toml_parses["# tiny eval spec"] == 1
    toml_parses.clear()
    code, out, err = call_cli("resume", "t", "--generations", "2", "--runs-dir", runs, "--quiet")
    assert code == 0, err
    assert "2 epochs" in out and toml_parses["# tiny eval spec"] == 1


def test_the_plan_holds_the_evaluation_and_keeps_it_for_more_epochs(files):
    spec, data = files
    cfg = TrainConfig(data=(str(data),), init=f"eval:{spec}",
                      settings=TrainSettings(hidden=16, epochs=1))
    plan = plan_training(cfg)
    assert plan.config is cfg and plan.initial.target is not None
    assert plan.initial.target.weights.tolist() == [100.0] * 6  # the spec's reference weights
    more = plan.with_epochs(3)
    assert more.settings.epochs == 3 and more.initial.target is plan.initial.target
    assert more.initial.settings.epochs == 3 and more.config.init == cfg.init
    random = plan_training(TrainConfig(data=(str(data),)))
    assert random.initial.target is None and random.initial.random
    with pytest.raises(ConfigError, match="needs the positions in memory"):
        plan_training(TrainConfig(data=(str(data),), init=f"eval:{spec}",
                                  settings=TrainSettings(hidden=16, stream=1000)))
    with pytest.raises(ConfigError, match="data file"):
        plan_training(TrainConfig(data=(str(data) + ".missing",)), check_data=True)
