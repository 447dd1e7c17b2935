from __future__ import annotations

import pytest

from evotune.errors import ConfigError
from evotune.runs.config import RunConfig, build_run_config, dump_config_toml, run_config_from_dict
from evotune.runs.identity import config_differences
from evotune.runs.plan import plan_run
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
