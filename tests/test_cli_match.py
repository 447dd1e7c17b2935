"""`evotune match`: --json keys, text output, PGN, external players, exit 2 on bad input."""
from __future__ import annotations

import json

import chess.pgn
import pytest

from evotune.cli import main

KEYS = {"games", "wins", "draws", "losses", "pentanomial", "score", "elo", "elo_error", "los",
        "sprt", "block"}
BLOCK = {"model", "games", "wins", "losses", "draws", "pentanomial", "elo", "elo_error", "nelo",
         "nelo_error", "los", "draw_ratio", "pairs_ratio", "points", "points_ratio",
         "llr_fraction", "llr_percent"}


def run(capsys, *args):
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def spec(tmp_path, command) -> str:
    p = tmp_path / "fake.toml"
    p.write_text(f'name = "fake"\nkind = "uci"\ncommand = {json.dumps(command)}\n'
                 '[[weight]]\nname = "knight"\nreference = 300\noption = "KnightValue"\n')
    return str(p)


def test_json_keys_and_pgn(tmp_path, capsys):
    w = tmp_path / "w.json"
    w.write_text('{"knight": 280, "bishop": 330, "rook": 500, "queen": 900, "mobility": 0}')
    pgn = tmp_path / "out.pgn"
    code, out, err = run(capsys, "match", "shannon", str(w), "--games", "4", "--depth", "1",
                         "--max-plies", "40", "--seed", "3", "--json", "--pgn", str(pgn))
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == KEYS and d["games"] == 4 and d["sprt"] is None
    assert set(d["block"]) == BLOCK and d["block"]["games"] == 4
    assert d["block"]["pentanomial"] == d["pentanomial"] and d["block"]["llr_percent"] is None
    assert d["wins"] + d["draws"] + d["losses"] == 4 and sum(d["pentanomial"]) == 2
    with open(pgn) as fh:
        g = chess.pgn.read_game(fh)
    assert g.headers["White"] == "shannon" and g.headers["Black"] == "w"
    assert g.headers["BlackWeights"] == "100,280,330,500,900,0"


def test_text_output_with_sprt(capsys):
    code, out, _ = run(capsys, "match", "shannon", "shannon", "--games", "2", "--depth", "1",
                       "--max-plies", "20", "--sprt", "0", "10", "--openings", "startpos")
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == "Results of shannon-A vs shannon-B (1 plies, startpos):"
    assert lines[2].startswith("Elo: ") and ", nElo: " in lines[2]
    assert lines[3].startswith("LOS: ") and "DrawRatio: " in lines[3] and "PairsRatio" in lines[3]
    assert lines[4].startswith("Games: 2, Wins: ") and lines[5].startswith("Ptnml(0-2): [")
    assert lines[6].startswith("LLR: ") and lines[6].endswith("(-2.94, 2.94) [0.00, 10.00]")
    assert lines[0] == lines[7] == "-" * 50
    assert out.rstrip().endswith("SPRT [0, 10]: no verdict after 2 games")


def test_external_player(tmp_path, capsys, fake_engine):
    code, out, err = run(capsys, "match", "shannon", spec(tmp_path, fake_engine("random_mover")),
                         "--games", "2", "--depth", "1", "--max-plies", "30", "--json")
    assert code == 0, err
    assert json.loads(out)["games"] == 2


@pytest.mark.parametrize("args, message", [
    (["missing.json", "shannon"], "no such file"),
    (["shannon", "shannon", "--games", "3"], "even"),
    (["shannon", "shannon", "--openings", "nowhere.epd"], "openings"),
    (["shannon", "BAD"], "not valid JSON"),
    (["shannon", "OUT"], "outside the bounds"),
    (["shannon", "NOSTART"], "did not start"),
])
def test_bad_input_exits_2(tmp_path, capsys, args, message):
    (tmp_path / "bad.json").write_text("[100, 300,")
    (tmp_path / "out.json").write_text("[100, 300, 330, 500, 900, 5000]")
    subst = {"BAD": str(tmp_path / "bad.json"), "OUT": str(tmp_path / "out.json"),
             "NOSTART": spec(tmp_path, [str(tmp_path / "no-such-engine")])}
    code, out, err = run(capsys, "match", *[subst.get(a, a) for a in args])
    assert code == 2 and out == ""
    assert err.startswith("evotune: error:") and message in err and err.count("\n") == 1


def test_adjudication_options_end_games_early(tmp_path, capsys):
    pgn = tmp_path / "adj.pgn"
    weak = tmp_path / "weak.json"
    weak.write_text("[100, 100, 100, 100, 100, 0]")  # undervalues every piece: it loses material
    code, out, err = run(capsys, "match", "shannon", str(weak), "--games", "4", "--depth", "2",
                         "--resign", "300", "2", "--json", "--pgn", str(pgn))
    assert code == 0, err
    terms = []
    with open(pgn) as fh:
        while (g := chess.pgn.read_game(fh)) is not None:
            terms.append(g.headers["Termination"])
    assert terms.count("adjudication-resign") >= 1
    code, out, err = run(capsys, "match", "shannon", "shannon", "--games", "2", "--depth", "1",
                         "--draw", "10000", "2", "0", "--pgn", str(tmp_path / "d.pgn"), "--json")
    assert code == 0 and json.loads(out)["draws"] == 2  # every |score| <= 10000: drawn at once
    text = (tmp_path / "d.pgn").read_text()
    assert text.count("adjudication-draw") == 2
    code, out, err = run(capsys, "match", "shannon", "shannon", "--resign", "0", "3")
    assert code == 2 and "--resign SCORE MOVES" in err
