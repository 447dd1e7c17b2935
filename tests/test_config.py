from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from evotune.errors import ConfigError
from evotune.kinds.games.config import RunConfig, build_run_config, dump_config_toml, run_config_from_dict
from evotune.kinds.games.identity import config_differences
from evotune.kinds.games.plan import plan_run
from evotune.kinds.games.settings import Budget, Cluster, FinalCheckSettings, PlaySettings, StartRange
from evotune.limits import Limits
from evotune.spec.file import engine_spec_from_dict, load_engine_spec


def test_defaults_are_the_papers_setup():
    cfg = build_run_config()
    assert (cfg.strategy, cfg.population, cfg.play.games, cfg.play.limits.depth,
            cfg.budget.generations) == \
        ("de", 20, 4, 3, 50)
    space = load_engine_spec("shannon").space()
    assert space.reference == (100, 300, 330, 500, 900, 10)
    assert space.fixed == (True, False, False, False, False, False)
    assert (space.init_low, space.init_high) == (0, 1000)


def test_precedence_defaults_file_flags(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('np = 8\ngames = 6\n[params]\nF = 0.7\nCR = 0.5\n')
    cfg = build_run_config(file=f, games=2, params={"CR": 0.2})
    assert cfg.population == 8    # file over default
    assert cfg.play.games == 2    # flag over file
    assert cfg.params_dict() == {"F": 0.7, "CR": 0.2}


def test_fields_stored_under_other_names_are_read_and_written_under_them():
    """The population is stored as 'np' and the final check's settings as 'guard_*' (their names
    in every manifest made before); only the fields are flags of build_run_config."""
    cfg = build_run_config(population=6, final_check_games=300, final_check_openings="run")
    stored = cfg.to_dict()
    assert (stored["np"], stored["guard_games"], stored["guard_openings"]) == (6, 300, "run")
    assert not {"population", "final_check_games", "final_check_openings"} & set(stored)
    assert "np" in cfg.identity_dict() and "guard_games" not in cfg.identity_dict()
    assert run_config_from_dict(stored) == cfg
    for stored_name in ("np", "guard_games", "guard_openings"):
        with pytest.raises(ConfigError, match=f"unknown option '{stored_name}'"):
            build_run_config(**{stored_name: 4})
    changed = config_differences(stored, build_run_config(population=8, final_check_games=0)
                                 .to_dict())
    assert changed == ["np: 6 -> 8"]  # the final check's settings leave the identity alone


V1_GAMES = Path(__file__).resolve().parent / "data" / "store-v1" / "games" / "manifest.json"


def test_the_config_is_grouped_in_records_and_stores_and_hashes_as_before():
    """RunConfig's own fields are the strategy's and the engine's; the rest are its records.
    The flat flags land in their records, and the stored forms are those of the flat config: the
    config of a stored run (store format 1) built from its flags has that run's identity."""
    assert [f.name for f in dataclasses.fields(RunConfig)] == [
        "strategy", "population", "params", "seed", "engine", "play", "budget", "cluster",
        "start", "final_check"]
    stored = json.loads(V1_GAMES.read_text())
    cfg = build_run_config(population=4, games=2, generations=1, depth=1, seed=3,
                           final_check_games=0, final_check_openings="run")
    assert cfg == RunConfig(population=4, seed=3, budget=Budget(generations=1),
                            play=PlaySettings(games=2, limits=Limits(depth=1)),
                            final_check=FinalCheckSettings(games=0, openings="run"))
    assert {k: v for k, v in cfg.to_dict().items() if k not in ("guard_games", "guard_openings")} \
        == stored["config"]
    back = run_config_from_dict(cfg.to_dict())
    assert back == cfg and back.identity_dict() == cfg.identity_dict()
    digest = hashlib.sha256(json.dumps(cfg.identity_dict(), sort_keys=True,
                                       default=str).encode()).hexdigest()
    assert digest == stored["identity"]["config"]
    # every record's settings from their flat flags, and back to the same flat keys
    flags = dict(games=6, depth=2, openings="startpos", book_plies=4, opponents="shannon",
                 generations=0, max_games=600, max_seconds=30.0, workers=2, backend="local",
                 init_low=-5.0, init_high=5.0, final_check_games=100,
                 final_check_openings="book")
    other = build_run_config(**flags)
    assert (other.play, other.budget, other.cluster, other.start, other.final_check) == (
        PlaySettings(games=6, limits=Limits(depth=2), openings="startpos", book_plies=4,
                     opponents="shannon"),
        Budget(generations=0, max_games=600, max_seconds=30.0), Cluster(workers=2),
        StartRange(low=-5.0, high=5.0), FinalCheckSettings(games=100, openings="book"))
    assert run_config_from_dict(other.to_dict()) == other
    assert {k: other.to_dict()[stored_name] for k, stored_name in (
        ("init_low", "init_low"), ("max_games", "max_games"), ("final_check_games", "guard_games"),
        ("final_check_openings", "guard_openings"), ("opponents", "opponents"))} == {
        k: flags[k] for k in ("init_low", "max_games", "final_check_games",
                              "final_check_openings", "opponents")}


def test_print_config_round_trips(tmp_path):
    cfg = build_run_config(population=10, seed=9, params={"F": 0.6})
    f = tmp_path / "c.toml"
    f.write_text(dump_config_toml(cfg))
    assert build_run_config(file=f) == cfg
    assert run_config_from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize("kwargs,msg", [
    ({"strategy": "pso"}, "unknown strategy 'pso'"),
    ({"population": 3}, "NP >= 4"),
    ({"games": 3}, "even number"),
    ({"depth": 0}, "depth must be an integer from 1 to 64"),
    ({"backend": "dask"}, "needs --scheduler"),
])
def test_bad_values_have_fix_hints(kwargs, msg):
    with pytest.raises(ConfigError, match=msg):
        build_run_config(**kwargs)


def test_unknown_config_key_is_named(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("np = 8\npopsize = 3\n")
    with pytest.raises(ConfigError, match="unknown key 'popsize'"):
        build_run_config(file=f)


def test_identity_ignores_workers_but_not_depth():
    a = plan_run(build_run_config(workers=1)).identity
    assert a == plan_run(build_run_config(workers=2)).identity
    assert a["hash"] != plan_run(build_run_config(depth=2)).identity["hash"]
    diff = config_differences(RunConfig().to_dict(), build_run_config(depth=2).to_dict())
    assert diff == ["depth: 3 -> 2"]


def test_engine_spec_validation():
    with pytest.raises(ConfigError, match="unknown key"):
        engine_spec_from_dict({"name": "x", "weight": [{"name": "a", "reference": 1, "colour": 2}]})
    with pytest.raises(ConfigError, match="needs command"):
        engine_spec_from_dict({"name": "x", "kind": "uci", "weight": [{"name": "a", "reference": 1}]})
    with pytest.raises(ConfigError, match="not found"):
        load_engine_spec("no-such-engine")
