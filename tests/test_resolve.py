"""Players written SPEC[:WEIGHTS]: specs, the old spelling 'reference' of shannon, every json
export read back,
many-weight specs, player lists, and one line + exit 2 for every bad player string."""
from __future__ import annotations

import json

import numpy as np
import pytest

from evotune.cli import main
from evotune.errors import ConfigError, WeightsError
from evotune.match.resolve import resolve_player, resolve_player_list, resolve_players, split_player
from evotune.reporting.export import export_run
from evotune.runs.rundata import load_run
from evotune.runs.runkind import recommend
from evotune.spec.file import load_engine_spec
from evotune.spec.player import PlayerRef, parse_engine_ref, parse_player_ref
from evotune.weightsio import weights_for

SHANNON_REF = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)


def test_bare_spec_and_the_reference_alias():
    ref, sh = resolve_player("reference"), resolve_player("shannon")
    assert ref.weights == sh.weights == SHANNON_REF
    # the old spelling plays shannon and is labelled by its spec name (round 5)
    assert (ref.name, sh.name) == ("shannon", "shannon") and ref.kind == "builtin"
    cp = resolve_player("example-centipawn")
    assert cp.kind == "uci" and cp.weights == tuple(
        w.reference for w in load_engine_spec("example-centipawn").weights)
    assert split_player("reference:w.json") == ("reference", "w.json")
    assert split_player("engines/shannon.toml:x:y.json") == ("engines/shannon.toml", "x:y.json")


def test_one_typed_parser_of_players_and_engines(tmp_path):
    """spec/player.py reads SPEC[:WEIGHTS|NET] for players and --engine alike (issue 36)."""
    ref = parse_player_ref("reference:w.json")
    assert ref == PlayerRef("reference:w.json", "reference", "w.json")
    assert (ref.spec_name, ref.is_reference, ref.bare_file) == ("shannon", True, False)
    (tmp_path / "t.json").write_text("[1, 2, 3, 4, 5, 6]")
    bare = parse_player_ref(str(tmp_path / "t.json"))
    assert (bare.spec, bare.file, bare.bare_file) == ("shannon", str(tmp_path / "t.json"), True)
    assert parse_player_ref("nnue:a:b.nnue").as_pair() == ("nnue", "a:b.nnue")
    assert parse_engine_ref("pst") == PlayerRef("pst", "pst")
    assert parse_engine_ref("nnue:x.nnue") == PlayerRef("nnue:x.nnue", "nnue", "x.nnue")
    with pytest.raises(ConfigError, match="engine spec 'nope' not found"):
        parse_engine_ref("nope")
    with pytest.raises(ConfigError, match="player 'nope:x': 'nope' is not an engine spec"):
        parse_engine_ref("nope:x")


def test_spec_with_weights_list_flat_and_nested(tmp_path):
    (tmp_path / "l.json").write_text("[100, 280, 330, 500, 900, 0]")
    (tmp_path / "f.json").write_text('{"knight": 310, "bishop": 320, "rook": 510, "queen": 880,'
                                     ' "mobility": 4}')
    (tmp_path / "n.json").write_text('{"knight": 310, "bishop": 320, "rook": 510, "queen": 880,'
                                     ' "mobility": 4, "pawn": 100}')
    a = resolve_player(f"shannon:{tmp_path / 'l.json'}")
    assert a.weights == (100, 280, 330, 500, 900, 0) and a.name == "shannon:l"
    b = resolve_player(f"reference:{tmp_path / 'f.json'}")
    assert b.weights == (100, 310, 320, 510, 880, 4)
    # a bare weights file still means shannon:FILE, named by its stem
    c = resolve_player(str(tmp_path / "n.json"))
    assert c.weights == (100, 310, 320, 510, 880, 4) and c.name == "n"


@pytest.fixture(scope="module")
def pst_run(tmp_path_factory, make_fake_run, write_pst_spec):
    root = tmp_path_factory.mktemp("pst")
    spec = write_pst_spec(root, "pst-uci", extra=True, kind="uci")
    store = make_fake_run(root, "p1", generations=2, engine=str(spec), init_low=-60,
                          init_high=60)
    return root, spec, load_run(store)


@pytest.mark.parametrize("fmt, suffix, engine", [("json", ".json", None),
                                                 ("json", ".json", "SPEC"),
                                                 ("header", ".h", None),
                                                 ("csv", ".csv", None)])
def test_every_export_of_a_many_weight_run_is_accepted_back_exactly(pst_run, fmt, suffix,
                                                                    engine):
    root, spec, run = pst_run
    out = export_run(run, fmt=fmt, engine=str(spec) if engine else None)
    path = root / f"w-{fmt}-{engine}{suffix}"
    path.write_text(out.text)
    player = resolve_player(f"{spec}:{path}")
    rec = np.array(recommend(run).weights)
    assert len(rec) == 824
    np.testing.assert_array_equal(player.weights, rec)
    np.testing.assert_array_equal(weights_for(load_engine_spec(spec), path), rec)
    if fmt == "json":
        data = json.loads(out.text)
        assert set(data) == {"material", "pst", "bishop_pair", "doubled", "isolated",
                             "backward", "passed", "rook_open", "rook_semiopen", "mobility",
                             "shelter", "king_attack", "tempo"}
        i = run.names.index("pst.eg.knight.e4")
        assert data["pst"]["eg"]["knight"]["e4"] == rec[i]
    # the options sent to the engine are the weights, by option name
    opts = dict(player.options + player.weight_options)
    assert opts["pst.mg.king.g1"] == int(rec[run.names.index("pst.mg.king.g1")])


def test_player_list_tells_repeated_names_apart(tmp_path):
    players = resolve_player_list("shannon, pst,shannon")
    assert [p.name for p in players] == ["shannon-A", "pst", "shannon-B"]
    a, b = resolve_players("shannon", "reference")
    assert (a.name, b.name) == ("shannon-A", "shannon-B")
    with pytest.raises(ConfigError, match="an empty entry"):
        resolve_player_list("shannon,,pst")


def test_errors_stay_one_short_line_for_big_specs(pst_run, tmp_path):
    root, spec, run = pst_run
    (tmp_path / "part.json").write_text('{"pst": {"mg": {"knight": {"e4": 20}}}}')
    with pytest.raises(WeightsError, match=r"822 weight\(s\) of pst-uci missing \(material.mg"
                                           r".knight, .*\(822 in all\)\)") as exc:
        resolve_player(f"{spec}:{tmp_path / 'part.json'}")
    assert len(str(exc.value)) < 300
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    with pytest.raises(WeightsError, match="a list of 3 values, but pst-uci has 824 weights"):
        resolve_player(f"{spec}:{tmp_path / 'list.json'}")
    (tmp_path / "unk.json").write_text('{"pst": {"mg": {"knight": {"i9": 20}}}}')
    with pytest.raises(WeightsError, match=r"names 'pst.mg.knight.i9', which engine spec "
                                           r"pst-uci does not have; known: .*\(824 in all") as exc:
        resolve_player(f"{spec}:{tmp_path / 'unk.json'}")
    assert len(str(exc.value)) < 400


@pytest.mark.parametrize("player, message", [
    ("nosuch:w.json", "'nosuch' is not an engine spec; give SPEC[:WEIGHTS]"),
    ("nosuch", "no such file or engine spec"),
    ("shannon:", "nothing after ':'"),
    ("shannon:MISSING", "no such file"),
    ("shannon:WRONGKIND", "unknown kind '.txt'"),
    ("shannon:UNKNOWN", "names 'rook_open.mg', which engine spec shannon does not have"),
    ("shannon:PARTIAL", "1 weight(s) of shannon missing (mobility)"),
    ("shannon:OUT", "1 value(s) outside the bounds of shannon (queen)"),
    ("shannon:NOTNUM", "value 'x' of 'queen' is not a number"),
])
def test_bad_player_strings_exit_2_with_one_line(tmp_path, capsys, player, message,
                                                 make_fake_run):
    files = {"MISSING": "missing.json", "WRONGKIND": "w.txt", "UNKNOWN": "u.json",
             "PARTIAL": "p.json", "OUT": "o.json", "NOTNUM": "x.json"}
    (tmp_path / "w.txt").write_text("1")
    (tmp_path / "u.json").write_text('{"rook_open": {"mg": 3}}')
    (tmp_path / "p.json").write_text('{"knight": 1, "bishop": 1, "rook": 1, "queen": 1}')
    (tmp_path / "o.json").write_text('{"knight": 1, "bishop": 1, "rook": 1, "queen": 5000, '
                                     '"mobility": 1}')
    (tmp_path / "x.json").write_text('{"knight": 1, "bishop": 1, "rook": 1, "queen": "x", '
                                     '"mobility": 1}')
    for key, name in files.items():
        player = player.replace(key, str(tmp_path / name))
    make_fake_run(tmp_path, "r1", generations=1)
    for args in (["match", "shannon", player, "--games", "2"],
                 ["verify", "r1", "--opponents", "shannon", "--opponents", player, "--runs-dir",
                  str(tmp_path), "--games", "2"]):
        with pytest.raises(SystemExit) as exc:
            main(args)
        out, err = capsys.readouterr()
        assert exc.value.code == 2 and out == ""
        assert err.startswith("evotune: error:") and message in err and err.count("\n") == 1
    assert not (tmp_path / "r1" / "verify.json").exists()


def test_load_weights_file_reads_the_nested_json_export(pst_run):
    from evotune.weightsio import load_weights_file

    root, spec, run = pst_run
    path = root / "nested.json"
    path.write_text(export_run(run, fmt="json").text)
    np.testing.assert_array_equal(load_weights_file(path, load_engine_spec(spec)),
                                  recommend(run).weights)


def test_real_pst_spec_players(tmp_path):
    """The built-in engine's pst feature set: bare SPEC is its reference, SPEC:WEIGHTS its
    nested json export read back exactly, a header too."""
    from evotune.weightsio import export_params, render

    spec = load_engine_spec("pst")
    ref = resolve_player("pst")
    assert ref.kind == "builtin" and ref.features == "pst" and len(ref.weights) == 778
    assert ref.weights == tuple(w.reference for w in spec.weights)
    w = np.array(ref.weights)
    w[spec.names.index("pst.mg.knight.e4")] = 25
    w[spec.names.index("material.eg.queen")] = 950
    params, _, _ = export_params(spec.names, w, spec, option_keys=False)
    for fmt, suffix in (("json", ".json"), ("header", ".h")):
        path = tmp_path / f"tuned{suffix}"
        path.write_text(render(fmt, params))
        player = resolve_player(f"pst:{path}")
        assert player.features == "pst" and player.name == "pst:tuned"
        np.testing.assert_array_equal(player.weights, w)
