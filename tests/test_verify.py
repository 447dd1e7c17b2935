"""Verification: recommended weights against the reference and the initial mean on held-out
openings, stored as verify.json and shown in the report; run from the CLI on a small real run."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.errors import ConfigError
from evotune.paths import DEFAULT_BOOK, DEFAULT_OPENINGS, HELD_OUT_OPENINGS
from evotune.match import play_match
from evotune.players.spec import player_from_engine_spec
from evotune.reporting.data import initial_mean, load_run, recommend, run_spec
from evotune.reporting.verify import (VerifySettings, describe_match, describe_verification,
                                      held_out_openings, verify_run)
from evotune.tuning.fitness import match_settings


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A tiny real run made by the CLI: DE, NP 4, 1 generation of 2-game matches at depth 1."""
    root = tmp_path_factory.mktemp("pops")
    res = CliRunner().invoke(cli, ["run", "--strategy", "de", "--np", "4", "--generations", "1",
                                   "--games", "2", "--depth", "1", "--workers", "1", "--out",
                                   str(root), "--run-id", "tiny"])
    assert res.exit_code == 0, res.output
    return root


def test_cli_verify_stores_both_matches_and_the_report_shows_them(real_run, tmp_path):
    res = CliRunner().invoke(cli, ["verify", "tiny", "--games", "4", "--workers", "1",
                                   "--runs-dir", str(real_run)])
    assert res.exit_code == 0, res.output
    doc = json.loads((real_run / "tiny" / "verify.json").read_text())
    run = load_run("tiny", out_dir=real_run)
    assert doc["weights"] == list(recommend(run).weights)
    assert doc["openings"] == HELD_OUT_OPENINGS.name and doc["note"] == ""
    assert doc["depth"] == 1 and doc["seed"] == 1 and doc["generation"] == 1
    ref, init = doc["matches"]
    assert ref["label"] == "recommended vs reference" and ref["b"] == [100, 300, 330, 500, 900, 10]
    assert init["label"] == "recommended vs initial mean" and init["b"] == list(initial_mean(run))
    for m in (ref, init):
        assert m["a"] == doc["weights"] and m["games"] == 4
        assert m["wins"] + m["draws"] + m["losses"] == 4 and sum(m["pentanomial"]) == 2
        assert 2 * m["wins"] + m["draws"] == m["points_a"]
        assert describe_match(m) in res.output  # both results printed
    # seeded: the same verification again gives the same games
    again = verify_run("tiny", runs_dir=real_run,
                       settings=VerifySettings(games=4, workers=1))
    assert [m["pentanomial"] for m in again["matches"]] == [ref["pentanomial"],
                                                            init["pentanomial"]]
    res = CliRunner().invoke(cli, ["report", "tiny", "--runs-dir", str(real_run), "--out",
                                   str(tmp_path)])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "tiny" / "report.md").read_text()
    assert describe_match(ref) in md and describe_match(init) in md


def test_cli_export_of_a_real_run(real_run):
    res = CliRunner().invoke(cli, ["export", "tiny", "--format", "cutechess", "--runs-dir",
                                   str(real_run)])
    assert res.exit_code == 0, res.output
    weights = recommend(load_run("tiny", out_dir=real_run)).weights
    assert res.output == " ".join(f"option.{k}={int(v)}" for k, v in zip(
        ("PawnValue", "KnightValue", "BishopValue", "RookValue", "QueenValue",
         "MobilityWeight"), weights)) + "\n"


def test_held_out_openings_never_the_runs_own():
    assert held_out_openings("book") == (HELD_OUT_OPENINGS, "")
    assert held_out_openings("2moves") == (HELD_OUT_OPENINGS, "")
    path, note = held_out_openings(str(HELD_OUT_OPENINGS))
    assert path == DEFAULT_OPENINGS and "tuned on 8moves_v3.pgn.zip" in note


def test_a_run_tuned_on_8moves_is_verified_on_2moves(tmp_path, make_fake_run):
    store = make_fake_run(tmp_path, "on8", generations=1)
    manifest = store.manifest().to_json()
    manifest["config"]["openings"] = str(HELD_OUT_OPENINGS)
    (store.root / "manifest.json").write_text(json.dumps(manifest))
    doc = verify_run(store, settings=VerifySettings(games=2, workers=1, sprt=(0, 10)))
    assert doc["openings"] == DEFAULT_OPENINGS.name and "uses 2moves_v1.epd" in doc["note"]
    assert all(m["sprt"]["elo0"] == 0 and m["sprt"]["elo1"] == 10 for m in doc["matches"])
    assert store.read_document("verify") == doc


def test_openings_flag_replaces_the_held_out_suite(tmp_path, make_fake_run):
    """--openings: the games start from those openings; the run's own tuning openings are said
    not to be held out (the fake run tuned on the packaged book)."""
    store = make_fake_run(tmp_path, "op", generations=1)
    doc = verify_run(store, settings=VerifySettings(games=2, workers=1, depth=1,
                                                    openings="startpos"))
    assert (doc["openings"], doc["note"], doc["held_out"]) == ("startpos", "", True)
    assert describe_verification(doc)[1] == "held-out openings startpos, depth 1, seed 7"
    own = verify_run(store, settings=VerifySettings(games=2, workers=1, depth=1,
                                                    openings="book"))
    assert own["openings"] == DEFAULT_BOOK.name and own["held_out"] is False
    assert "not on held-out openings" in own["note"]
    assert describe_verification(own)[1].startswith(f"openings {DEFAULT_BOOK.name}, ")
    # the games of the first match are those of the same players from the start position
    data = load_run(store)
    spec = run_spec(data)
    direct = play_match(player_from_engine_spec(spec, recommend(data).weights, name="a"),
                        player_from_engine_spec(spec, None, name="b"), games=2, seed=7,
                        workers=1, settings=match_settings(
                            data.config, limits=replace(data.config.limits, depth=1),
                            openings=None))
    assert (direct.wins, direct.draws, direct.losses, list(direct.pentanomial)) == tuple(
        doc["matches"][0][k] for k in ("wins", "draws", "losses", "pentanomial"))


def test_verify_bad_input(tmp_path, capsys, make_fake_run):
    make_fake_run(tmp_path, "r1", generations=1)
    with pytest.raises(ConfigError, match="games must be a positive even number"):
        verify_run("r1", runs_dir=tmp_path, settings=VerifySettings(games=3))
    with pytest.raises(ConfigError, match="depth must be an integer from 1"):
        verify_run("r1", runs_dir=tmp_path, settings=VerifySettings(depth=0))
    with pytest.raises(SystemExit) as exc:
        main(["verify", "nope", "--runs-dir", str(tmp_path)])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("evotune: error: no run 'nope'")
    with pytest.raises(SystemExit) as exc:
        main(["verify", "r1", "--sprt", "10", "0", "--runs-dir", str(tmp_path)])
    assert exc.value.code == 2 and "need elo0 < elo1" in capsys.readouterr().err


def test_verify_with_sprt_and_two_workers_equals_one_worker(real_run):
    """Up to 200 games at depth 1 with a wide SPRT, 2 workers against 1 (a few seconds)."""
    one = verify_run("tiny", runs_dir=real_run,
                     settings=VerifySettings(games=200, workers=1, sprt=(-50, 50)))
    two = verify_run("tiny", runs_dir=real_run,
                     settings=VerifySettings(games=200, workers=2, sprt=(-50, 50)))
    assert one["matches"] == two["matches"]
    for m in one["matches"]:
        assert m["sprt"]["lower"] < 0 < m["sprt"]["upper"]
        if m["sprt"]["verdict"] is None:
            assert m["games"] == 200


def test_verify_against_named_opponents(real_run, tmp_path):
    """--opponent SPEC[:WEIGHTS]: one match per opponent; the reference opponent plays the same
    games as the default verification's first match (same players, openings and seed)."""
    (tmp_path / "weak.json").write_text('{"knight": 100, "bishop": 100, "rook": 100, '
                                        '"queen": 100, "mobility": 0}')
    default = verify_run("tiny", runs_dir=real_run, settings=VerifySettings(games=4, workers=1))
    res = CliRunner().invoke(cli, ["verify", "tiny", "--games", "4", "--workers", "1",
                                   "--runs-dir", str(real_run), "--opponent", "reference",
                                   "--opponent", f"shannon:{tmp_path / 'weak.json'}"])
    assert res.exit_code == 0, res.output
    doc = json.loads((real_run / "tiny" / "verify.json").read_text())
    ref, weak = doc["matches"]
    assert ref["label"] == "recommended vs reference" and ref["b"] == [100, 300, 330, 500, 900, 10]
    assert ref["pentanomial"] == default["matches"][0]["pentanomial"]
    assert weak["label"] == "recommended vs shannon:weak" and weak["b"] == [100, 100, 100, 100,
                                                                           100, 0]
    assert weak["games"] == 4 and describe_match(weak) in res.output
