"""Verification: recommended weights against the reference and the initial mean on held-out
openings, stored as verify.json and shown in the report; run from the CLI on a small real run."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.errors import ConfigError
from evotune.limits import LimitChanges, Limits
from evotune.match import play_match
from evotune.paths import DEFAULT_BOOK, DEFAULT_OPENINGS, HELD_OUT_OPENINGS
from evotune.players.spec import player_from_engine_spec
from evotune.runs.rundata import initial_mean, load_run, run_spec
from evotune.runs.runkind import recommend
from evotune.tuning.fitness import match_settings
from evotune.verify.run import VerifySettings, held_out_openings, verify_run
from evotune.verify.text import describe_match, describe_verification, verdict_text


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A tiny real run made by the CLI: DE, NP 4, 1 generation of 2-game matches at depth 1."""
    root = tmp_path_factory.mktemp("pops")
    res = CliRunner().invoke(cli, ["run", "--strategy", "de", "--np", "4", "--generations", "1",
                                   "--games", "2", "--depth", "1", "--workers", "1", "--runs-dir",
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
    assert "limits" not in doc and "limit" not in ref  # one limit: the document as before
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
    res = CliRunner().invoke(cli, ["report", "tiny", "--runs-dir", str(real_run), "--reports",
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
    doc = verify_run(store, settings=VerifySettings(games=2, workers=1,
                                                    limits=LimitChanges(depth=1),
                                                    openings="startpos"))
    assert (doc["openings"], doc["note"], doc["held_out"]) == ("startpos", "", True)
    assert describe_verification(doc)[1] == "held-out openings startpos, depth 1, seed 7"
    own = verify_run(store, settings=VerifySettings(games=2, workers=1,
                                                    limits=LimitChanges(depth=1),
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
                            data.config, limits=replace(data.config.play.limits, depth=1),
                            openings=None))
    assert (direct.wins, direct.draws, direct.losses, list(direct.pentanomial)) == tuple(
        doc["matches"][0][k] for k in ("wins", "draws", "losses", "pentanomial"))


def test_verify_bad_input(tmp_path, capsys, make_fake_run):
    make_fake_run(tmp_path, "r1", generations=1)
    with pytest.raises(ConfigError, match="games must be a positive even number"):
        verify_run("r1", runs_dir=tmp_path, settings=VerifySettings(games=3))
    with pytest.raises(ConfigError, match="depth must be an integer from 1"):
        verify_run("r1", runs_dir=tmp_path, settings=VerifySettings(limits=LimitChanges(depth=0)))
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
    """--opponent SPEC[:WEIGHTS]: one match per opponent; shannon (named by its old spelling
    'reference' here, which still works) plays the same games as the default verification's
    first match (same players, openings and seed)."""
    (tmp_path / "weak.json").write_text('{"knight": 100, "bishop": 100, "rook": 100, '
                                        '"queen": 100, "mobility": 0}')
    default = verify_run("tiny", runs_dir=real_run, settings=VerifySettings(games=4, workers=1))
    res = CliRunner().invoke(cli, ["verify", "tiny", "--games", "4", "--workers", "1",
                                   "--runs-dir", str(real_run), "--opponents", "reference",
                                   "--opponents", f"shannon:{tmp_path / 'weak.json'}"])
    assert res.exit_code == 0, res.output
    doc = json.loads((real_run / "tiny" / "verify.json").read_text())
    ref, weak = doc["matches"]
    assert ref["label"] == "recommended vs shannon" and ref["b"] == [100, 300, 330, 500, 900, 10]
    assert "'reference' is now called 'shannon'" in res.output
    assert ref["pentanomial"] == default["matches"][0]["pentanomial"]
    assert weak["label"] == "recommended vs shannon:weak" and weak["b"] == [100, 100, 100, 100,
                                                                           100, 0]
    assert weak["games"] == 4 and describe_match(weak) in res.output


def test_verify_at_a_second_depth_reports_both_results_and_verdicts(real_run):
    """--also-depth: every match again at the second depth on the same openings and seed; the
    first limit's matches are the games a one-limit verification plays."""
    one = verify_run("tiny", runs_dir=real_run,
                     settings=VerifySettings(games=6, workers=1, sprt=(-400, 400)))
    res = CliRunner().invoke(cli, ["verify", "tiny", "--games", "6", "--workers", "1",
                                   "--sprt", "-400", "400", "--also-depth", "2", "--runs-dir",
                                   str(real_run)])
    assert res.exit_code == 0, res.output
    doc = json.loads((real_run / "tiny" / "verify.json").read_text())
    assert doc["limits"] == ["depth 1", "depth 2"] and doc["depth"] == 1
    assert doc["also"] == {"depth": 2, "nodes": 0, "movetime": 0.0, "tc": ""}
    labels = [m["label"] for m in doc["matches"]]
    assert labels == ["recommended vs reference at depth 1", "recommended vs initial mean at depth 1",
                      "recommended vs reference at depth 2", "recommended vs initial mean at depth 2"]
    drop = ("label", "limit")
    for m, m1 in zip(doc["matches"][:2], one["matches"]):
        assert {k: v for k, v in m.items() if k not in drop} == \
            {k: v for k, v in m1.items() if k not in drop}  # the same games at depth 1
    for m in doc["matches"]:
        assert m["wins"] + m["draws"] + m["losses"] == m["games"] <= 6
        assert m["sprt"]["elo0"] == -400 and describe_match(m) in res.output
    assert "held-out openings 8moves_v3.pgn.zip, depth 1 and depth 2, seed 1" in res.output
    for label in ("reference", "initial mean"):
        legs = [m for m in doc["matches"] if m["opponent"] == label]
        line = (f"SPRT [-400, 400] against {label}: depth 1: {verdict_text(legs[0])}; "
                f"depth 2: {verdict_text(legs[1])}")
        assert line in res.output
    # played again at depth 2 alone, the second leg's games are the same
    two = verify_run("tiny", runs_dir=real_run,
                     settings=VerifySettings(games=6, workers=1, sprt=(-400, 400),
                                             limits=LimitChanges(depth=2)))
    assert [m["pentanomial"] for m in two["matches"]] == \
        [m["pentanomial"] for m in doc["matches"][2:]]


def test_the_second_limit_is_checked_before_any_game(real_run, capsys):
    assert VerifySettings(limits=LimitChanges(depth=3), also_tc="10+0.1").second_limits(Limits()) == \
        Limits(depth=3, tc="10+0.1")
    assert VerifySettings(also_depth=5).second_limits(Limits(depth=2, nodes=7)) == \
        Limits(depth=5, nodes=7)
    assert VerifySettings().second_limits(Limits()) is None
    for args, message in ((["--also-depth", "0"], "--also-depth must be an integer from 1 to 64"),
                          (["--also-tc", "fast"], "--also-tc 'fast': give BASE+INC"),
                          (["--also-depth", "1"], "the second limit (depth 1) is the first one"),
                          # issue 38 item 16: alpha-beta ignores the clock (the same games
                          # again), and both flags were merged into one leg without a word
                          (["--also-tc", "10"], "every player here is a built-in alpha-beta"),
                          (["--also-depth", "2", "--also-tc", "10+0.1"],
                           "give one second limit, --also-depth or --also-tc, not both")):
        with pytest.raises(SystemExit) as exc:
            main(["verify", "tiny", "--games", "2", "--runs-dir", str(real_run), *args])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_verdict_text():
    m = {"games": 40, "sprt": {"verdict": "H1", "elo0": 0, "elo1": 5, "llr": 3.0}}
    assert verdict_text(m) == "H1 accepted (elo >= 5) after 40 games"
    m["sprt"].update(verdict="H0")
    assert verdict_text(m) == "H0 accepted (elo <= 0) after 40 games"
    m["sprt"].update(verdict=None, llr=1.234)
    assert verdict_text(m) == "no verdict after 40 games (LLR 1.23)"
