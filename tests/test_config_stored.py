"""A RunConfig's stored forms (the manifest's flat ``config``, the identity hash, the TOML of
``--print-config``) are byte for byte those of the code before the config embedded a Limits:
runs stored before open, resume and keep their identity. The expected bytes and hashes below
were made by that code (evotune at 2c5a025), with one key added since: ``guard_openings`` (left
out of the identity, and read as 'run' from a config stored before it)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from evotune.kinds.games.config import (
    LIMIT_KEYS,
    STORED_KEYS,
    RunConfig,
    build_run_config,
    dump_config_toml,
    run_config_from_dict,
    stored_key,
)
from evotune.kinds.games.settings import GROUPS, SETTINGS

V1_GAMES = Path(__file__).resolve().parent / "data" / "store-v1" / "games" / "manifest.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _identity(cfg) -> str:
    return _sha(json.dumps(cfg.identity_dict(), sort_keys=True, default=str))


def test_a_format_1_games_config_reads_back_to_its_stored_keys_and_identity():
    manifest = json.loads(V1_GAMES.read_text())
    cfg = run_config_from_dict(manifest["config"])
    # format 1 stored no guard_games nor guard_openings: they read as 0 and 'run' (the check
    # such runs had: none, on their own openings) and are written from then on
    assert json.dumps(cfg.to_dict(), sort_keys=True) == json.dumps(
        {**manifest["config"], "guard_games": 0, "guard_openings": "run"}, sort_keys=True)
    assert _identity(cfg) == manifest["identity"]["config"] == \
        "881408c96d8f4b5b24ce24c1f468a64083adb9874e88801a4bbda1b8ad65bac0"
    limits = cfg.play.limits
    assert (limits.depth, limits.max_plies, limits.tc) == (1, 400, None)


CLOCK = dict(tc="60", time_margin=0.25, max_plies=300, nodes=5000, resign_score=900,
             resign_moves=4, draw_score=10, draw_moves=8, draw_start_ply=40, final_check_games=0,
             strategy="spsa", population=4, params={"batch": 2})
CLOCK_JSON = (
    '{"backend": "local", "book_plies": 8, "depth": 3, "draw_moves": 8, "draw_score": 10, '
    '"draw_start_ply": 40, "engine": "shannon", "games": 4, "generations": 50, '
    '"guard_games": 0, "guard_openings": "held-out", "init_high": 1000.0, "init_low": 0.0, '
    '"max_games": 0, "max_plies": 300, '
    '"max_seconds": 0.0, "movetime": 0.0, "nodes": 5000, "np": 4, "openings": "book", '
    '"opponents": "", "params": {"batch": 2}, "resign_moves": 4, "resign_score": 900, '
    '"scheduler": "", "seed": 1, "strategy": "spsa", "tc": "60", "time_margin": 0.25, '
    '"workers": 0}')
MOVETIME = dict(movetime=0.05, depth=2, opponents="shannon", final_check_games=200)
MOVETIME_JSON = (
    '{"backend": "local", "book_plies": 8, "depth": 2, "draw_moves": 0, "draw_score": 0, '
    '"draw_start_ply": 0, "engine": "shannon", "games": 4, "generations": 50, '
    '"guard_games": 200, "guard_openings": "held-out", "init_high": 1000.0, "init_low": 0.0, '
    '"max_games": 0, '
    '"max_plies": 400, "max_seconds": 0.0, "movetime": 0.05, "nodes": 0, "np": 20, '
    '"openings": "book", "opponents": "shannon", "params": {}, "resign_moves": 0, '
    '"resign_score": 0, "scheduler": "", "seed": 1, "strategy": "de", "tc": "", '
    '"time_margin": 0.1, "workers": 0}')


@pytest.mark.parametrize("flags,stored,identity,toml", [
    (CLOCK, CLOCK_JSON, "621d42faf9fe6bc30c164fc601838e5f45338fa3d722154d4ae25f8146f266a9",
     "aec441ae44140b029a65227e66fc02f4111af5b3bbf1994aa70963a5fa7ca8d4"),
    (MOVETIME, MOVETIME_JSON, "91dba728494e1511daa519fed8786d9b048e76f54a2e7e5722b28fc8cf763230",
     "1497a69e65d8bf10e1d3923bbacc992d618971c73d69871455a9ec28c3c623aa"),
])
def test_a_config_is_stored_as_before_and_reads_back_to_the_same_bytes(flags, stored, identity,
                                                                        toml):
    cfg = build_run_config(**flags)
    assert json.dumps(cfg.to_dict(), sort_keys=True) == stored
    assert _identity(cfg) == identity
    # the printed config as before, but for the final check's keys (renamed in round 5)
    printed = dump_config_toml(cfg)
    assert "guard" not in printed and _sha(printed.replace("final_check_", "guard_")) == toml
    back = run_config_from_dict(json.loads(stored))
    assert back == cfg
    assert json.dumps(back.to_dict(), sort_keys=True) == stored and _identity(back) == identity
    # stored before the check's openings were a setting: the check played the run's own
    # openings, and the identity is the same (the check's openings never change the games)
    before = {k: v for k, v in json.loads(stored).items() if k != "guard_openings"}
    old = run_config_from_dict(before)
    assert old.final_check.openings == "run" and _identity(old) == identity


def test_every_setting_is_stored_once():
    """A field added to RunConfig (or to one of its records) without a stored key would be
    dropped from every manifest; the settings stored under another name (the population as 'np',
    the final check's under its old name) are stored under exactly those."""
    flat = {where: name for name, where in SETTINGS.items()}  # a record's field: its flat name
    fields = {f.name for f in dataclasses.fields(RunConfig) if f.name not in GROUPS} | {
        flat.get((group, f.name), f"{group}.{f.name}") for group, record in GROUPS.items()
        for f in dataclasses.fields(record) if f.name != "limits"}
    assert len(STORED_KEYS) == len(set(STORED_KEYS))
    assert set(STORED_KEYS) == {stored_key(f) for f in fields} | set(LIMIT_KEYS) \
        == set(RunConfig().to_dict())
    assert {f: stored_key(f) for f in fields if stored_key(f) != f} == {
        "population": "np", "final_check_games": "guard_games",
        "final_check_openings": "guard_openings"}
