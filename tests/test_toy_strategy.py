"""Issue 57's target for strategies: a new strategy is one module plus one registry line. A toy
(1+1) hill climber, defined here and registered in STRATEGIES alone, goes through run, status,
resume and export like a shipped strategy, and a resumed run equals an uninterrupted one."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli
from evotune.strategies import STRATEGIES
from evotune.strategies.base import MatchOutcome, MatchRequest, Param, Strategy, as_tuple


class Climb(Strategy):
    """(1+1) hill climbing: one mutant a generation against the current vector, kept when it
    scores more."""

    name = "climb"
    TITLE = "the climber"
    RECOMMENDS = "the climber's vector"
    PARAMS = {
        "games": Param(2, "int", low=2, even=True, doc="games of the mutant against the vector"),
        "step": Param(0.1, "float", low=0.0, high=1.0, low_open=True,
                      doc="mutation width, a fraction of each weight's bound width"),
    }

    def _initialize(self) -> None:
        self.population = self.space.round(self.space.reference_array)[None, :]

    def _plan(self):
        width = self.space.upper_array - self.space.lower_array
        x = self.population[0] + self.rng.uniform(-1, 1, self.space.size) * width * self.params["step"]
        mutant = self._repair_rows(self.space.round(x)[None, :], rule="clip")[0]
        return [MatchRequest(a=as_tuple(mutant), b=as_tuple(self.population[0]),
                             games=self.params["games"], tag=(0,))], mutant

    def _update(self, requests: list[MatchRequest], plan, outcomes: list[MatchOutcome]) -> dict:
        won = outcomes[0].points_a > outcomes[0].points_b
        if won:
            self.population = np.array([plan])
        return {"accepted": float(won)}


@pytest.fixture
def climb(monkeypatch):
    monkeypatch.setitem(STRATEGIES, "climb", Climb)  # the one registry line


def _cli(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_a_strategy_registered_once_runs_resumes_and_exports(climb, tmp_path, stored_games):
    common = ["--strategy", "climb", "--games", "2", "--depth", "1", "--workers", "1",
              "--seed", "5", "--final-check-games", "0", "--runs-dir", str(tmp_path), "--quiet"]
    _cli("run", *common, "--generations", "2", "--run-id", "toy")
    status = json.loads(_cli("status", "toy", "--runs-dir", str(tmp_path), "--json"))
    assert (status["strategy"], status["generation"]) == ("climb", 2)
    _cli("resume", "toy", "--generations", "4", "--runs-dir", str(tmp_path), "--quiet")
    _cli("run", *common, "--generations", "4", "--run-id", "whole")
    for run in ("toy", "whole"):
        status = json.loads(_cli("status", run, "--runs-dir", str(tmp_path), "--json"))
        assert status["generation"] == 4
    exported = [json.loads(_cli("export", run, "--format", "json", "--runs-dir", str(tmp_path)))
                for run in ("toy", "whole")]
    assert exported[0] == exported[1] and set(exported[0]) >= {"knight", "queen"}
    games = [stored_games(tmp_path / run) for run in ("toy", "whole")]
    assert games[0] == games[1] and len(games[0]) == 4 * 2


def test_an_unregistered_strategy_is_one_line(tmp_path, call_cli):
    code, _, err = call_cli("run", "--strategy", "climb", "--generations", "1", "--runs-dir",
                            str(tmp_path))
    assert code == 2 and err.startswith("evotune: error: unknown strategy 'climb'; use one of "
                                        f"{', '.join(STRATEGIES)} or ng:NAME")
    assert len(err.splitlines()) == 1 and not any(tmp_path.iterdir())


def test_the_help_lists_the_registry_s_strategies_with_what_each_is():
    """``run --help`` and ``compare --help`` name the strategies from the registry (each with
    its ABOUT), so a strategy added to STRATEGIES is listed without editing the command."""
    helps = {cmd: " ".join(_cli(cmd, "--help").split()) for cmd in ("run", "compare")}
    assert all(cls.ABOUT for cls in STRATEGIES.values())
    for name, cls in STRATEGIES.items():
        assert f"{name} ({cls.ABOUT})" in helps["run"], name
        assert f" {name}," in helps["compare"] or f" {name} or" in helps["compare"], name
    assert "ng:NAME (any nevergrad optimiser, e.g. ng:NGOpt)" in helps["run"]
