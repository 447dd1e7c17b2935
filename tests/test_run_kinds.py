"""Run kinds are one protocol (issue 36, item 1): the commands ask a run's kind, so a new kind
plugs in without editing them. A toy kind, one package (tests/toykind/) registered here by one
line (no file of evotune changes), is created, listed by ``evotune runs``, shown by ``evotune
status`` (text and --json) and continued by ``evotune resume``; the built-in kinds answer the
same protocol."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from toykind import TOY, ToyConfig, ToyKind, read_toy

from evotune.cli import main
from evotune.errors import StoreError
from evotune.kinds import FIT, GAMES, MOVES, TRAINING, kind_named, kind_of, kinds
from evotune.kinds.fit.config import TexelConfig
from evotune.kinds.games.config import RunConfig
from evotune.kinds.games.settings import Budget
from evotune.kinds.moves import MoveRunConfig
from evotune.kinds.training import TrainConfig
from evotune.learn.movetrain import MoveTrainSettings
from evotune.learn.nn.trainer import TrainSettings
from evotune.runs.registry import KindConfig, StoredKind
from evotune.runs.runkind import (
    RunKind,
    register,
    unregister,
)
from evotune.runs.store import Store


@pytest.fixture
def toy():
    kind = register(TOY)  # the one registration line a new kind adds
    yield kind
    unregister(kind.name)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_toy_kind_registered_in_a_test_is_listed_shown_and_resumed(toy, tmp_path, capsys):
    store = toy.new(ToyConfig(steps=3), out_dir=tmp_path, run_id="toy-1", workers=0,
                    ui=None).store
    manifest = json.loads(store.manifest_path.read_text())
    assert manifest["kind"] == "toy" and manifest["config"] == {"steps": 3}
    assert "data_files" not in manifest and isinstance(store.manifest().config, ToyConfig)
    assert kind_of(store) is toy

    code, out, _ = cli(capsys, "resume", "toy-1", "--runs-dir", str(tmp_path))
    assert code == 0 and out == "toy toy-1: step 1/3\n"
    code, out, _ = cli(capsys, "status", "toy-1", "--runs-dir", str(tmp_path))
    assert code == 0 and out == "toy toy-1: counted 1 of 3\n"
    code, out, _ = cli(capsys, "status", "toy-1", "--runs-dir", str(tmp_path), "--json")
    assert code == 0 and json.loads(out) == {"run_id": "toy-1", "kind": "toy", "done": 1}
    code, out, _ = cli(capsys, "runs", "--runs-dir", str(tmp_path))
    assert code == 0
    assert out.splitlines()[1].split() == ["toy-1", "toy", "count", "step", "1/3", "-", "-",
                                           "stopped", "now"]
    code, _, err = cli(capsys, "report", "toy-1", "--runs-dir", str(tmp_path),
                       "--reports", str(tmp_path / "reports"))
    assert code == 2 and err.strip() == "evotune: error: a toy has no report"


def test_a_new_kind_is_one_package_and_one_registration_line():
    """What a new kind touches: its own package (here tests/toykind/: __init__, config, kind)
    and the line that registers it; no file of evotune names it."""
    import toykind

    package = Path(toykind.__file__).parent
    assert sorted(p.name for p in package.glob("*.py")) == ["__init__.py", "config.py",
                                                            "kind.py"]
    root = Path(__file__).resolve().parents[1] / "evotune"
    named = [str(p) for p in root.rglob("*.py") if '"toy"' in p.read_text()
             or "toykind" in p.read_text()]
    assert named == []
    registered = [ln for ln in Path(__file__).read_text().splitlines()
                  if ln.strip().startswith("kind = register(TOY)")]
    assert len(registered) == 1


def test_a_run_of_an_unregistered_kind_is_refused_in_one_line(tmp_path, capsys):
    register(ToyKind())
    try:
        Store.create(tmp_path, "toy-2", config=ToyConfig(steps=2), identity={}).unlock()
    finally:
        unregister("toy")
    with pytest.raises(StoreError, match="'kind' must be one of games, fit, train, moves, not 'toy'"):
        Store.open("toy-2", tmp_path).manifest()
    code, out, err = cli(capsys, "runs", "--runs-dir", str(tmp_path))
    assert code == 0 and "toy-2  unreadable:" in out
    with pytest.raises(StoreError, match="no run kind 'toy' is known"):
        kind_named("toy")


def test_a_kind_name_is_registered_once():
    with pytest.raises(StoreError, match="a run kind 'games' is registered already"):
        register(ToyKind.__new__(type("Other", (ToyKind,), {"name": "games"})))


def test_the_built_in_kinds_follow_the_protocol():
    assert [k.name for k in kinds()][:3] == ["games", "fit", "train"]
    assert (kind_named("games"), kind_named("fit"), kind_named("train")) == (GAMES, FIT,
                                                                             TRAINING)
    assert kind_named("moves") is MOVES and not MOVES.overlays
    for kind in (GAMES, FIT, TRAINING, MOVES, ToyKind()):
        assert kind.stored.name == kind.name
        for method in ("new", "resume", "execute", "status", "row", "plot", "report", "export",
                       "verify", "recommend"):
            assert callable(getattr(kind, method)), (kind.name, method)
    assert (GAMES.overlays, FIT.overlays, TRAINING.overlays) == (True, True, False)
    assert (GAMES.config_class, FIT.config_class, TRAINING.config_class) == (
        RunConfig, TexelConfig, TrainConfig)
    assert (GAMES.stored.takes_start, FIT.stored.data_files, TRAINING.stored.data_files) == (
        True, True, True)
    assert isinstance(ToyConfig(), KindConfig)
    _: RunKind = ToyKind()  # `mypy tests/test_run_kinds.py` checks the toy against the protocol


def test_no_kind_poses_as_a_population():
    """Every kind's config names its method and planned steps; only a games run's has a
    strategy, a population and a budget of generations (a fit, a training and a move-model
    training have none to fake)."""
    games = RunConfig(strategy="jde", population=12, budget=Budget(generations=7))
    configs: dict[str, KindConfig] = {
        "games": games,
        "fit": TexelConfig.of(data=("d.txt",), epochs=9),
        "train": TrainConfig(data=("d.txt",), settings=TrainSettings(epochs=5)),
        "moves": MoveRunConfig(data=("m.txt",), settings=MoveTrainSettings(epochs=4)),
    }
    got = {name: (cfg.method, cfg.steps) for name, cfg in configs.items()}
    assert got == {"games": ("jde", 7), "fit": ("texel", 9), "train": ("nn-train", 5),
                   "moves": ("move-model", 4)}
    for name, cfg in configs.items():
        assert isinstance(cfg, KindConfig), name
        posed = [a for a in ("strategy", "population", "budget") if hasattr(cfg, a)]
        assert posed == ([] if name != "games" else ["strategy", "population", "budget"])
    assert (games.population, GAMES.population(games), FIT.population(configs["fit"])) == (
        12, 12, 1)
    assert [cfg.max_games for cfg in configs.values()] == [0, 0, 0, 0]
    assert RunConfig(budget=Budget(max_games=20000)).max_games == 20000
    # what the readers of any weights run ask its config, never its kind's name
    spsa = RunConfig(strategy="spsa", params=(("init", "reference"),), budget=Budget(generations=3))
    fit = TexelConfig.of(data=("d.txt",), epochs=9)
    assert [(c.keeps_population, c.vector_name, c.starts_from_given, c.params_dict())
            for c in (games, spsa, fit)] == [
        (True, "the population mean", False, {}),
        (False, "SPSA's theta", True, {"init": "reference"}),
        (False, "the fitted weights", False, {})]


def test_a_kind_that_does_not_overlay_or_store_weights_is_refused_in_one_line(tmp_path, capsys):
    class NoWeights(ToyKind):
        stored = StoredKind("toy", read_toy, weights=False)

    register(NoWeights())
    try:
        for run_id in ("toy-a", "toy-b"):
            NoWeights().new(ToyConfig(), out_dir=tmp_path, run_id=run_id, workers=0, ui=None)
        code, _, err = cli(capsys, "plot", "toy-a", "toy-b", "--runs-dir", str(tmp_path),
                           "--reports", str(tmp_path / "reports"))
        assert code == 2
        assert err == "evotune: error: run 'toy-a' (toy) is plotted alone: give one run\n"
        code, _, err = cli(capsys, "run", "--init-from", "toy-a", "--runs-dir", str(tmp_path))
        assert code == 2 and err.count("\n") == 1
        assert "run toy-a is a toy run, which stores no vector of evaluation weights" in err
        assert not (tmp_path / "reports").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["toy-a", "toy-b"]
    finally:
        unregister("toy")
