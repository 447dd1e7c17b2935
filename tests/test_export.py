"""Export formats: every format round-trips through its parser; engine-spec mapping; CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.errors import ConfigError
from evotune.reporting.export import export_run
from evotune.runs.rundata import load_run
from evotune.runs.runkind import recommend
from evotune.spec.file import load_engine_spec
from evotune.weightsio import FORMATS, export_params, parse, render

SHANNON = load_engine_spec("shannon")
CENTIPAWN = load_engine_spec("example-centipawn")


@pytest.fixture(scope="module")
def run(tmp_path_factory, make_fake_run):
    root = tmp_path_factory.mktemp("runs")
    make_fake_run(root, "exp", generations=2)
    return load_run("exp", out_dir=root)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips_on_the_runs_own_engine(run, fmt):
    out = export_run(run, fmt=fmt)
    rec = recommend(run)
    back = parse(fmt, out.text, SHANNON)
    expected = dict(zip(run.names, rec.weights))
    if fmt.startswith("spsa"):  # only the tunable weights; pawn is fixed
        expected.pop("pawn")
    assert back == expected
    assert out.omitted == () and out.notes == ()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips_through_another_engines_scale(run, fmt):
    out = export_run(run, fmt=fmt, engine="example-centipawn")
    rec = dict(zip(run.names, recommend(run).weights))
    back = parse(fmt, out.text, CENTIPAWN)
    assert "mobility" not in back and out.omitted == ("mobility",)
    assert "no parameter for mobility; left out" in out.notes[0]
    names = ["knight", "bishop", "rook", "queen"] + ([] if fmt.startswith("spsa") else ["pawn"])
    assert sorted(back) == sorted(names)
    for n in names:  # within the rounding the scale implies
        assert abs(back[n] - rec[n]) <= 0.5 / 2.56 + 1e-9
    assert out.params[0].key == "PawnValueMg" and out.params[0].value == 256


def test_formats_look_like_what_the_tools_read():
    params, _, _ = export_params(("pawn", "knight", "mobility"), (100, 310, 7.4), SHANNON,
                                 option_keys=True)
    assert render("uci", params) == ("setoption name PawnValue value 100\n"
                                     "setoption name KnightValue value 310\n"
                                     "setoption name MobilityWeight value 7\n")
    assert render("cutechess", params) == \
        "option.PawnValue=100 option.KnightValue=310 option.MobilityWeight=7\n"
    assert render("spsa", params) == ("KnightValue, int, 310, 0, 1000, 50, 0.002\n"
                                      "MobilityWeight, int, 7, 0, 1000, 50, 0.002\n")
    assert render("spsa-fishtest", params) == ("KnightValue,310,0,1000,50,0.002\n"
                                               "MobilityWeight,7,0,1000,50,0.002\n")
    header = render("header", params, comment="run x")
    assert "// run x\n" in header and "constexpr int KnightValue = 310;\n" in header
    assert json.loads(render("json", params)) == {"PawnValue": 100, "KnightValue": 310,
                                                  "MobilityWeight": 7}
    assert render("csv", params).splitlines()[:2] == ["name,value", "PawnValue,100"]


def test_option_names_with_spaces_survive_cutechess_and_header():
    from evotune.spec.file import engine_spec_from_dict

    spec = engine_spec_from_dict({"name": "odd", "kind": "uci", "command": ["odd"], "weight": [
        {"name": "knight", "reference": 300, "option": "Knight Value", "scale": 10}]})
    params, _, _ = export_params(("knight",), (312.34,), spec, option_keys=True)
    text = render("cutechess", params)
    assert text == "'option.Knight Value=3123'\n"
    assert parse("cutechess", text, spec) == {"knight": 312.3}
    assert parse("header", render("header", params), spec) == {"knight": 312.3}
    assert parse("uci", render("uci", params), spec) == {"knight": 312.3}


def test_parse_errors_name_the_problem():
    with pytest.raises(ConfigError, match="'RookValueMg', which engine spec shannon does not"):
        parse("uci", "setoption name RookValueMg value 1\n", SHANNON)
    with pytest.raises(ConfigError, match="expected fishtest 'name,start,min,max,c_end,r_end'"):
        parse("spsa", "KnightValue, 310\n", SHANNON)
    with pytest.raises(ConfigError, match="unknown export format 'yaml'"):
        parse("yaml", "", SHANNON)
    with pytest.raises(ConfigError, match="not JSON"):
        parse("json", "{", SHANNON)


def test_cli_export_to_file_and_stdout(tmp_path, make_fake_run):
    make_fake_run(tmp_path, "r1", generations=1)
    target = tmp_path / "w.json"
    res = CliRunner().invoke(cli, ["export", "r1", "--format", "json", "--runs-dir",
                                   str(tmp_path), "--out", str(target)])
    assert res.exit_code == 0, res.output
    data = json.loads(target.read_text())
    pop = np.array(json.loads((tmp_path / "r1/generations/gen-0001.json").read_text())[
        "population"])
    assert list(data.values()) == np.rint(pop.mean(axis=0)).tolist()
    # the JSON uses evotune's names, so the Shannon weight space reads it back
    SHANNON.space().from_dict(data)
    res = CliRunner().invoke(cli, ["export", "r1", "--format", "uci", "--engine",
                                   "example-centipawn", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0 and res.output.startswith("note: example-centipawn has no "
                                                        "parameter for mobility")
    assert "setoption name PawnValueMg value 256\n" in res.output


@pytest.mark.parametrize("args, message", [
    (["export", "r1", "--format", "xml"], "unknown export format 'xml'"),
    (["export", "zz", "--format", "json"], "no run 'zz'"),
    (["export", "empty", "--format", "json"], "run empty has no generation yet"),
    (["plot", "r1", "--x", "time"], "unknown x axis 'time'"),
    (["report", "r1", "--recommend", "best"], "unknown recommendation rule 'best'"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message, make_fake_run):
    from evotune.kinds.games.config import build_run_config
    from evotune.kinds.games.plan import plan_run
    from evotune.runs.store import Store

    make_fake_run(tmp_path, "r1", generations=1)
    cfg = build_run_config(depth=1)
    Store.create(tmp_path, "empty", config=cfg, identity=plan_run(cfg).identity)
    with pytest.raises(SystemExit) as exc:
        main(args + ["--runs-dir", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# ---- many weights: nested json, C arrays ------------------------------------------------------

@pytest.fixture(scope="module")
def pst(tmp_path_factory, make_fake_run, write_pst_spec):
    root = tmp_path_factory.mktemp("pst")
    spec = write_pst_spec(root, extra=True)
    make_fake_run(root, "p", generations=2, engine=str(spec), init_low=-60, init_high=60)
    run = load_run("p", out_dir=root)
    return run, load_engine_spec(spec), dict(zip(run.names, recommend(run).weights))


def test_json_of_many_weights_nests_per_table_and_round_trips_exactly(pst):
    import re

    run, spec, rec = pst
    out = export_run(run, fmt="json")
    data = json.loads(out.text)
    assert data["material"]["eg"] == {p: rec[f"material.eg.{p}"]
                                      for p in ("pawn", "knight", "bishop", "rook", "queen")}
    assert data["pst"]["mg"]["queen"]["h8"] == rec["pst.mg.queen.h8"]
    assert data["passed"]["eg"]["rank6"] == rec["passed.eg.rank6"]
    assert data["tempo"] == {"mg": rec["tempo.mg"], "eg": rec["tempo.eg"]}
    assert len(data["pst"]["eg"]["king"]) == 64
    assert parse("json", out.text, spec) == rec  # exact
    # a table is laid out as a board: rank 8 first, one line per rank
    lines = out.text.splitlines()
    start = lines.index('   "pawn": {')
    assert re.match(r'\s+"a8": -?\d+, "b8": .*"h8": -?\d+,$', lines[start + 1])
    assert re.match(r'\s+"a1": -?\d+, .*"h1": -?\d+$', lines[start + 8])


def test_header_of_many_weights_writes_c_arrays_that_round_trip(pst):
    import re

    run, spec, rec = pst
    out = export_run(run, fmt="header")
    m = re.search(r"constexpr int pst_eg\[6\]\[64\] = \{(.*?)\};", out.text, re.S)
    body = re.sub(r"//[^\n]*", "", m.group(1))
    values = [int(v) for v in re.findall(r"-?\d+", body)]
    assert len(values) == 384
    # [piece][square]: knight (1) on e4 (index 28), king (5) on a1 (0) and h8 (63)
    assert values[64 + 28] == rec["pst.eg.knight.e4"]
    assert values[5 * 64] == rec["pst.eg.king.a1"] and values[-1] == rec["pst.eg.king.h8"]
    assert "constexpr int pst_mg[6][64] = {" in out.text
    assert f"constexpr int material_eg_rook = {int(rec['material.eg.rook'])};" in out.text
    assert f"constexpr int passed_mg_rank7 = {int(rec['passed.mg.rank7'])};" in out.text
    assert "pst_mg_pawn_a1" not in out.text  # table cells only in the arrays
    assert parse("header", out.text, spec) == rec
    # a phase with a square missing is not a full table: its weights stay scalars
    params, _, _ = export_params([n for n in run.names if n != "pst.eg.rook.d5"],
                                 [rec[n] for n in run.names if n != "pst.eg.rook.d5"], spec,
                                 option_keys=False)
    text = render("header", params)
    assert "pst_mg[6][64]" in text and "pst_eg[6][64]" not in text
    assert f"constexpr int pst_eg_rook_d4 = {int(rec['pst.eg.rook.d4'])};" in text
    with pytest.raises(ConfigError, match=r"pst_mg\[6\]\[64\] has 383 values, need 384"):
        parse("header", text.replace(f"{int(rec['pst.mg.pawn.a1']):4d},", "", 1), spec)


@pytest.mark.parametrize("fmt", ["uci", "spsa", "csv", "cutechess", "python"])
def test_flat_formats_of_many_weights_have_one_entry_per_weight(pst, fmt):
    run, spec, rec = pst
    out = export_run(run, fmt=fmt)
    if fmt in ("uci", "spsa"):  # one line per scalar option (spsa: the tunable ones)
        assert len(out.text.splitlines()) == (823 if fmt == "spsa" else 824)
        assert f"setoption name pst.mg.knight.e4 value {int(rec['pst.mg.knight.e4'])}\n" \
            in out.text or fmt == "spsa"
    back = parse(fmt, out.text, spec)
    if fmt == "spsa":
        rec = {k: v for k, v in rec.items() if k != "material.mg.pawn"}
    assert back == rec


def test_mapping_onto_a_spec_of_other_weights_is_two_notes_not_one_per_weight():
    """Weights the spec lacks and the spec's parameters the run did not tune are one note each,
    naming a few and counting the rest (778 untuned parameters were 778 lines)."""
    pst = load_engine_spec("pst")
    params, omitted, notes = export_params(SHANNON.names, SHANNON.space().reference_array, pst,
                                           option_keys=False)
    assert omitted == SHANNON.names and params == ()
    assert notes == (
        "pst has no parameter for pawn, knight, bishop, rook, queen, mobility; left out",
        "pst: the run does not tune material.mg.pawn, material.mg.knight, material.mg.bishop, "
        f"material.mg.rook, material.mg.queen, material.eg.pawn, ... ({len(pst.weights)} in all); "
        "the engine keeps its defaults")
    one = export_params(("pawn",), (100.0,), SHANNON, option_keys=False)[2]
    assert one == ("shannon: the run does not tune 'KnightValue' (knight), 'BishopValue' "
                   "(bishop), 'RookValue' (rook), 'QueenValue' (queen), 'MobilityWeight' "
                   "(mobility); the engine keeps its defaults",)
