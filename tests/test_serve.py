"""``evotune serve`` without a browser (issue 58): its rows equal ``evotune status --json``, a
run's state comes from its lock and files, a damaged file shows as 'damaged: FILE' (never a
server error), nothing outside the runs folder is served, a non-loopback address needs its
token, and the final check prints as fastchess's block."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evotune.match.gamerecord import GameRecord
from evotune.match.scoring import SprtParams, match_result, pentanomial_from_records, sprt_llr
from evotune.runs.finalcheck import FinalCheck, parse_final_check
from evotune.runs.store import Store

flask = pytest.importorskip("flask", reason="the serve extra (flask) is not installed")

from evotune.runs.finalcheck import final_check_block  # noqa: E402
from evotune.serve.app import create_app  # noqa: E402 (needs flask)

HERE = Path(__file__).resolve().parent
V1 = HERE / "data" / "store-v1"



@pytest.fixture
def folder(tmp_path, make_fake_run) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    for run_id, strategy in (("de-run", "de"), ("spsa-run", "spsa")):
        make_fake_run(runs, run_id, strategy=strategy, generations=4).unlock()
    shutil.copytree(V1 / "fit", runs / "old-fit")
    shutil.copytree(V1 / "games", runs / "old-games")
    return runs


@pytest.fixture
def client(folder):
    return create_app(folder).test_client()


def test_rows_show_what_status_json_says(client, folder, call_cli):
    rows = {r["run"]: r for r in client.get("/api/runs").get_json()["runs"]}
    assert set(rows) == {"de-run", "spsa-run", "old-fit", "old-games"}
    for run_id, row in rows.items():
        code, out, _ = call_cli("status", run_id, "--runs-dir", str(folder), "--json")
        assert code == 0
        info = json.loads(out)
        assert row["kind"] == info["kind"] and row["strategy"] == info["strategy"]
        assert row["generation"] == info["generation"] and row["games"] == info["games"]
        assert row["seconds"] == pytest.approx(info["seconds"])
        assert row["state"] == ("finished" if info["finished"] else "stopped")
        assert row["damaged"] is None
        if info["games"]:
            assert row["games_per_s"] == pytest.approx(info["games"] / info["seconds"], rel=1e-3)
    detail = client.get("/api/run/spsa-run").get_json()
    code, out, _ = call_cli("status", "spsa-run", "--runs-dir", str(folder), "--json")
    info = json.loads(out)
    assert detail["now"] == pytest.approx(info["mean"], abs=0.01)
    assert detail["start"] == pytest.approx(info["initial_mean"], abs=0.01)
    assert detail["std_now"] is None and detail["population"] is False  # SPSA: no population
    assert {"c_k", "R_k", "step"} <= set(detail["stats"])
    # named by the strategy's class (strategies.strategy_terms), not by tests on its name
    assert detail["terms"] == {"title": "SPSA", "centre": "theta", "step": ["c_k", "R_k"]}
    de = client.get("/api/run/de-run").get_json()
    assert de["population"] is True and len(de["std_columns"]["1"]) == 5
    assert set(de["columns"]) == {str(i) for i in range(len(de["names"]))}  # few: all sent


def test_state_comes_from_the_lock_and_the_files(folder, make_fake_run):
    app = create_app(folder)
    c = app.test_client()

    def state(run_id):
        return next(r["state"] for r in c.get("/api/runs").get_json()["runs"]
                    if r["run"] == run_id)

    held = make_fake_run(folder, "held", generations=2)  # this process holds its lock
    assert state("held") == "running"
    held.unlock()
    assert state("held") == "finished"
    root = folder / "de-run"
    doc = json.loads((root / "state.json").read_text())
    doc["finished"] = False
    (root / "state.json").write_text(json.dumps(doc))
    assert state("de-run") == "stopped"
    line = {"key": [doc["generation"] + 1, 0, 0, 0]}
    with open(root / "games.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")  # a game of the uncommitted generation
    assert state("de-run") == "crashed"
    (root / "games.jsonl").write_text('{"key": [1, 0, 0, 0]')  # a torn last line
    assert state("de-run") == "crashed"


def test_damaged_files_show_on_the_row_never_as_a_server_error(folder, client):
    (folder / "de-run" / "generations" / "gen-0002.json").write_text('{"generation": 2, "na')
    (folder / "spsa-run" / "state.json").write_text('{"generation": ')  # half written
    rows = {r["run"]: r for r in client.get("/api/runs").get_json()["runs"]}
    assert rows["spsa-run"]["damaged"] == "state.json"
    assert rows["old-fit"]["damaged"] is None
    r = client.get("/api/run/de-run")
    assert r.status_code == 200 and r.get_json()["damaged"] == "generations/gen-0002.json"
    r = client.get("/api/run/spsa-run/strength")
    assert r.status_code == 200 and "damaged: state.json" in r.get_json()["note"]
    for url in ("/", "/run/de-run", "/run/spsa-run"):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", [
    "/api/run/..", "/api/run/%2e%2e", "/api/run/..%2f..%2fetc", "/api/run/%2e%2e%2fruns",
    "/api/run//etc/passwd", "/api/run/%2fetc%2fpasswd", "/run/..%2f..", "/run/%2e%2e",
    "/static/..%2fapp.py", "/static/%2e%2e%2fviews.py", "/static/../app.py", "/static/",
    "/static/.hidden", "/api/run/outside", "/run/outside", "/api/run/outside/pgn/1",
    "/../../etc/passwd", "/api/run/de-run/../../etc/passwd", "/etc/passwd", "/api/run/nope",
])
def test_nothing_outside_the_runs_folder_is_served(folder, client, tmp_path, url):
    outside = tmp_path / "secret"
    shutil.copytree(folder / "de-run", outside)
    (folder / "outside").symlink_to(outside)  # a link out of the folder
    r = client.get(url)
    assert r.status_code in (403, 404, 405), (url, r.status_code)
    assert b"secret" not in r.data and b"root:" not in r.data


def test_only_get_and_the_page_runs_no_command(client):
    assert client.post("/api/runs").status_code == 405
    assert client.delete("/api/run/de-run").status_code == 405
    assert client.get("/static/uplot.iife.min.js").status_code == 200


def test_a_remote_address_needs_the_token_and_loopback_refuses_other_hosts(folder):
    c = create_app(folder, token="s3cret", loopback=False).test_client()
    assert c.get("/api/runs").status_code == 403
    assert c.get("/api/runs?token=wrong").status_code == 403
    r = c.get("/?token=s3cret")
    assert r.status_code == 200 and "evotune_token=s3cret" in r.headers["Set-Cookie"]
    assert c.get("/api/runs").status_code == 200  # the cookie carries it now
    local = create_app(folder).test_client()
    assert local.get("/api/runs", headers={"Host": "evil.example:8765"}).status_code == 403
    assert local.get("/api/runs", headers={"Host": "127.0.0.1:8765"}).status_code == 200


def test_cli_refuses_a_remote_host_without_the_flag(folder, call_cli):
    code, out, err = call_cli("serve", "--runs-dir", str(folder), "--host", "0.0.0.0")
    assert code == 2 and "--allow-remote" in err and len(err.strip().splitlines()) == 1
    code, _, err = call_cli("serve", "--runs-dir", str(folder / "nope"))
    assert code == 2 and "no such folder" in err


def test_without_flask_one_line_and_exit_2(folder):
    code = ("import sys; sys.modules['flask'] = None\n"
            "from evotune.cli import main\n"
            f"main(['serve', '--runs-dir', {str(folder)!r}])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip() == ("evotune: error: evotune serve needs the serve extra: pip "
                                "install -e .[serve]")


def test_final_check_block_has_fastchess_figures(tmp_path):
    """The page shows the final check in the block the terminal prints
    (runs.finalcheck.final_check_block, one formatter for the run's last lines and the page)."""
    check = FinalCheck(generation=5, tuned=(1.0,), start=(0.0,), games=200, wins=70, draws=80,
                       losses=50, pentanomial=(5, 15, 40, 25, 15), elo=34.9, elo_error=30.1,
                       verdict="undecided", better=True, openings="held-out.epd")
    lines = final_check_block(check)[1:]  # below the dashed rule
    assert lines[0] == "Results of tuned vs start (held-out.epd):"
    assert lines[1].startswith("Elo: ") and ", nElo: " in lines[1]
    # nElo: (mu - 0.5) / sqrt(2 var) * 800 / ln 10 on the pair scores
    mu = (15 * 0.25 + 40 * 0.5 + 25 * 0.75 + 15 * 1.0) / 100
    var = sum(c * (i / 4 - mu) ** 2 for i, c in enumerate((5, 15, 40, 25, 15))) / 100
    assert f"nElo: {(mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10):.2f}" in lines[1]
    # LOS by the normal approximation on the pairs' variance (100 pairs)
    los = 100 * 0.5 * (1 + math.erf((mu - 0.5) / math.sqrt(var / 100) / math.sqrt(2)))
    assert lines[2] == f"LOS: {los:.2f} %, DrawRatio: 40.00 %, PairsRatio: 2.00"
    assert lines[3] == "Games: 200, Wins: 70, Losses: 50, Draws: 80, Points: 110.0 (55.00 %)"
    assert lines[4] == "Ptnml(0-2): [5, 15, 40, 25, 15]"
    assert lines[5].startswith(f"LLR: {sprt_llr(check.pentanomial, 0.0, 5.0):.2f} (") \
        and lines[5].endswith(") (-2.94, 2.94) [0.00, 5.00]")
    assert parse_final_check(check.to_json(), tmp_path / "final-check.json") == check


def test_old_runs_are_read(client):
    row = next(r for r in client.get("/api/runs").get_json()["runs"] if r["run"] == "old-games")
    assert row["damaged"] is None and row["games"] == 7
    detail = client.get("/api/run/old-games").get_json()
    assert len(detail["latest_games"]) == 7
    pgn = client.get("/api/run/old-games/pgn/1")
    assert pgn.status_code == 200 and pgn.data.count(b"[Event ") == 7
    assert Store(Path(client.application.config["EVOTUNE_READER"].root) / "old-fit").manifest()


# ---- matches and verifications, games per generation, piece-square tables (issue 58) --------

WEIGHTS = '{"knight": 280, "bishop": 330, "rook": 500, "queen": 900, "mobility": 5}'


@pytest.fixture(scope="module")
def played(tmp_path_factory, make_fake_run):
    """A runs folder with a real match (``match --out``, an SPRT), a match under matches/ and a
    run verified by ``evotune verify`` (its matches kept in verify-games/), and what the
    commands printed."""
    from evotune.cli import main

    root = tmp_path_factory.mktemp("played")
    runs = root / "runs"
    runs.mkdir()
    w = root / "w.json"
    w.write_text(WEIGHTS)
    printed = {}

    def cli(*args):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                main([str(a) for a in args])
            except SystemExit as exc:
                assert exc.code in (0, None)
        return out.getvalue()

    common = ("--depth", "1", "--max-plies", "40", "--seed", "5", "--workers", "1")
    printed["sprt-match"] = cli("match", "shannon", w, "--games", "12", *common, "--sprt", "0",
                                "10", "--out", runs / "sprt-match")
    printed["matches/plain"] = cli("match", w, "shannon", "--games", "6", *common, "--out",
                                   runs / "matches" / "plain")
    make_fake_run(runs, "verified", strategy="de", generations=2).unlock()
    printed["verify"] = cli("verify", "verified", "--runs-dir", runs, "--games", "4",
                            "--depth", "1", "--workers", "1")
    return runs, printed


def test_matches_are_listed_with_the_block_match_prints(played):
    runs, printed = played
    c = create_app(runs).test_client()
    rows = {m["id"]: m for m in c.get("/api/runs").get_json()["matches"]}
    verifications = sorted(m for m in rows if m.startswith("verified/verify-games/"))
    assert set(rows) == {"sprt-match", "matches/plain", *verifications}
    assert len(verifications) == 2  # against the reference and the initial mean
    for mid in ("sprt-match", "matches/plain"):
        row = rows[mid]
        assert row["kind"] == "match" and row["state"] == "finished" and row["damaged"] is None
        detail = c.get(f"/api/match/{mid}").get_json()
        # the block the command printed, line for line (the page reuses resultsblock)
        assert detail["block"] == printed[mid].strip().splitlines()
        assert row["games"] == int(detail["block"][4].split(",")[0].split()[1])
        assert c.get(f"/match/{mid}").status_code == 200
    sp = c.get("/api/match/sprt-match").get_json()
    assert rows["sprt-match"]["llr"] == pytest.approx(float(sp["block"][6].split()[1]), abs=0.01)
    series = sp["running"]
    assert series["games"][-1] == rows["sprt-match"]["games"]
    assert series["llr"][-1] == pytest.approx(rows["sprt-match"]["llr"], abs=1e-3)
    assert series["upper"] == pytest.approx(math.log(0.95 / 0.05))
    assert c.get("/api/match/matches/plain").get_json()["running"]["upper"] is None
    for mid in verifications:
        row = rows[mid]
        assert row["kind"] == "verification" and row["run"] == "verified"
        assert row["state"] == "finished" and row["games"] == 4 and row["planned"] == 4
    # the run's page lists its verification matches and verify.json's blocks
    own = c.get("/api/run/verified/matches").get_json()["matches"]
    assert sorted(m["id"] for m in own) == verifications
    blocks = c.get("/api/run/verified").get_json()["verify_blocks"]
    assert len(blocks) == 2 and all(b[5].startswith("Ptnml(0-2): [") for b in blocks)
    assert blocks[0][1].startswith("Results of recommended vs ")


def test_a_running_match_shows_its_journal_so_far(played, tmp_path):
    runs, _ = played
    folder = tmp_path / "runs" / "cut"
    shutil.copytree(runs / "sprt-match", folder)
    (folder / "result.json").unlink()  # stopped before its end: the journal is all there is
    lines = (folder / "games.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "games.jsonl").write_bytes(b"".join(lines[:6]) + lines[6][:40])  # a torn line
    c = create_app(tmp_path / "runs").test_client()
    d = c.get("/api/match/cut").get_json()
    assert d["row"]["state"] == "stopped" and d["row"]["kept"] == 6
    records = [GameRecord.from_dict(json.loads(x)) for x in lines[:6]]
    res = match_result(records, sprt_params=SprtParams(0.0, 10.0))
    assert d["block"][4] == (f"Games: 6, Wins: {res.wins}, Losses: {res.losses}, Draws: "
                             f"{res.draws}, Points: {res.wins + res.draws / 2:.1f} "
                             f"({100 * res.score:.2f} %)")
    assert d["block"][5] == f"Ptnml(0-2): [{', '.join(map(str, res.pentanomial))}]"
    assert d["running"]["llr"][-1] == pytest.approx(res.sprt.llr, abs=1e-3)
    assert d["running"]["games"] == [2, 4, 6]
    with open(folder / "games.jsonl", "ab") as f:  # the torn line ends, the next game arrives
        f.write(lines[6][40:] + lines[7])
    d = c.get("/api/match/cut").get_json()
    assert d["row"]["kept"] == 8 and d["running"]["games"][-1] == 8


def test_a_damaged_match_file_shows_on_its_row(played, tmp_path):
    runs, _ = played
    for name, bad in (("match.json", b'{"kind": "match", "ident'),
                      ("games.jsonl", b'{"key": [0, 0, 0, 0], "result": "1-0"}\n'),
                      ("result.json", b'{"wins": "many"}')):
        folder = tmp_path / "runs" / f"bad-{name.split('.')[0]}"
        shutil.copytree(runs / "sprt-match", folder)
        if name != "result.json":
            (folder / "result.json").unlink()
        (folder / name).write_bytes(bad)
    c = create_app(tmp_path / "runs").test_client()
    rows = {m["id"]: m for m in c.get("/api/runs").get_json()["matches"]}
    assert rows["bad-match"]["damaged"] == "match.json"
    assert rows["bad-games"]["damaged"] == "games.jsonl"
    assert rows["bad-result"]["damaged"] == "result.json"
    for mid in rows:
        r = c.get(f"/api/match/{mid}")
        assert r.status_code == 200 and r.get_json()["damaged"] == rows[mid]["damaged"]


@pytest.mark.parametrize("url", [
    "/api/match/..", "/api/match/%2e%2e", "/api/match/matches/..", "/api/match/matches/%2e%2e",
    "/api/match/../../etc/passwd", "/api/match/%2fetc%2fpasswd", "/match/outside",
    "/api/match/outside", "/api/match/de-run", "/api/match/de-run/verify-games/..",
    "/api/match/a/b/c/d", "/match/..%2f..%2fsecret",
])
def test_no_match_outside_the_folder_is_served(folder, tmp_path, url):
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "match.json").write_text('{"kind": "match", "identity": {}, "settings": '
                                        '{"a": "the-hidden-player"}}')
    (folder / "outside").symlink_to(outside)
    r = create_app(folder).test_client().get(url, follow_redirects=True)  # '//' is merged
    assert r.status_code in (403, 404), (url, r.status_code)
    assert b"the-hidden-player" not in r.data and b"root:" not in r.data


def test_games_per_generation_have_the_logs_pentanomial(tmp_path, make_fake_run):
    """W/D/L per generation from the generation files, the pentanomial from the game log, each
    checked against the log's games by the match code's own rule."""
    runs = tmp_path / "runs"
    runs.mkdir()
    root = make_fake_run(runs, "logged", strategy="de", generations=2).root
    c = create_app(runs).test_client()
    recs = [{"key": [g, 0, p, k], "white": "a", "black": "b", "white_weights": [],
             "black_weights": [], "opening": {"fen": chess_start(), "moves": []},
             "moves": [], "result": r, "termination": "test"}
            for g, p, k, r in ((1, 0, 0, "1-0"), (1, 0, 1, "1-0"), (1, 1, 0, "0-1"),
                               (1, 1, 1, "1/2-1/2"), (2, 0, 0, "1-0"), (2, 0, 1, "0-1"),
                               (2, 1, 0, "1/2-1/2"))]
    (root / "games.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    d = c.get("/api/run/logged").get_json()
    expect = {g: pentanomial_from_records([GameRecord.from_dict(x) for x in recs
                                           if x["key"][0] == g]) for g in (1, 2)}
    assert expect == {1: (0, 1, 1, 0, 0), 2: (0, 0, 0, 0, 1)}  # B won game 1 of pair 0: A 2+2
    assert d["pentanomial"] == [None, list(expect[1]), list(expect[2])]
    assert len(d["wdl"]) == 3


def chess_start() -> str:
    import chess
    return chess.STARTING_FEN


def test_piece_square_tables_map_names_to_squares(tmp_path, make_fake_run, write_pst_spec):
    runs = tmp_path / "runs"
    runs.mkdir()
    spec = write_pst_spec(tmp_path)
    make_fake_run(runs, "pst", strategy="spsa", generations=2, engine=str(spec)).unlock()
    d = create_app(runs).test_client().get("/api/run/pst").get_json()
    tables = {(t["phase"], t["piece"]): t["index"] for t in d["pst"]}
    assert len(tables) == 12 and all(len(ix) == 64 for ix in tables.values())
    names = d["names"]
    assert names[tables["mg", "knight"][0]] == "pst.mg.knight.a1"
    assert names[tables["eg", "king"][63]] == "pst.eg.king.h8"
    assert names[tables["mg", "pawn"][8 * 3 + 4]] == "pst.mg.pawn.e4"
    assert create_app(runs).test_client().get("/api/run/pst").get_json()["pst"] is not None
    c = create_app(V1.parent / "store-v1").test_client()
    assert c.get("/api/run/games").get_json().get("pst") is None  # six weights: no table


def test_a_fit_shows_its_ridge_and_positions_a_training_its_net(tmp_path):
    import hashlib
    c = create_app(V1).test_client()
    fit = c.get("/api/run/fit").get_json()["fit"]
    summary = json.loads((V1 / "fit" / "texel.json").read_text())
    assert fit["l2"] == summary["l2"] == 0.001 and fit["l2_chosen_by_validation"] is True
    assert [t["l2"] for t in fit["l2_tried"]] == [0.0, 1e-05, 5e-05, 0.0002, 0.001]
    assert fit["read_per_s"] == pytest.approx(summary["positions_read"]
                                              / summary["seconds_extract"])
    assert (fit["train"], fit["validation"]) == (287, 32) and fit["absent"] == []
    runs = tmp_path / "runs"
    shutil.copytree(V1 / "fit", runs / "running-fit")
    (runs / "running-fit" / "texel.json").unlink()  # a fit still running has no summary yet
    fit = create_app(runs).test_client().get("/api/run/running-fit").get_json()["fit"]
    assert fit["l2"] == 0.001  # the state keeps it from the first epoch on
    assert "texel.json" in fit["absent"][0] and "read_per_s" not in fit
    train = HERE / "data" / "serve-train"
    net = create_app(train).test_client().get("/api/run/tr").get_json()["net"]
    note = create_app(train).test_client().get("/api/run/tr/strength").get_json()["note"]
    assert note.startswith("a training has no weight vector")  # not 'damaged: generations/..'

    assert net["shape"] == "(768 -> 8) x 2 -> 1"  # the manifest's hidden 8
    assert net["sha256"] == hashlib.sha256((train / "tr" / "net.nnue").read_bytes()).hexdigest()
    records = sorted((train / "tr" / "epochs").iterdir())
    last = json.loads(records[-1].read_text())
    assert net["positions_per_s"] == pytest.approx(last["positions"] / last["seconds"])
    shutil.copytree(train / "tr", runs / "bad-net")
    (runs / "bad-net" / "net.nnue").write_bytes(b"EVOTUNE-NNUE garbage")
    d = create_app(runs).test_client().get("/api/run/bad-net")
    assert d.status_code == 200 and d.get_json()["damaged"] == "net.nnue"


def test_a_run_of_many_weights_sends_only_what_it_charts_first(tmp_path, make_fake_run):
    """The first look of an 824-weight run carries every weight's start and now and the
    trajectories of the 8 that moved most; any other comes on its own, equal to the stored
    generations' values."""
    runs = tmp_path / "runs"
    runs.mkdir()
    store = make_fake_run(runs, "many", strategy="spsa", generations=5, engine="extended")
    store.unlock()
    c = create_app(runs).test_client()
    d = c.get("/api/run/many").get_json()
    gens = [store.read_generation(g) for g in range(6)]
    n = len(d["names"])
    assert n > 800 and len(d["start"]) == len(d["now"]) == n
    change = [abs(round(gens[-1].mean[i], 2) - round(gens[0].mean[i], 2)) for i in range(n)]
    free = [i for i in range(n) if not d["fixed"][i]]
    assert [round(change[i], 6) for i in d["order"]] == sorted(
        (round(change[i], 6) for i in free), reverse=True) and sorted(d["order"]) == free
    assert sorted(map(int, d["columns"])) == sorted(d["order"][:8])
    other = d["order"][-1]
    got = c.get(f"/api/run/many/columns?w={other},{n + 5}").get_json()
    assert set(got["columns"]) == {str(other)}  # an index past the weights: left out
    assert got["columns"][str(other)] == pytest.approx([g.mean[other] for g in gens], abs=0.01)
    assert c.get("/api/run/many/columns?w=x").status_code == 400
    assert len(c.get("/api/run/many").data) < 60_000  # not the whole matrix


def test_a_port_in_use_is_one_line_before_anything_is_served(folder, call_cli):
    """werkzeug prints two lines and exits 1 on a used port; serve says one line, exit 2."""
    from evotune.serve.server import PageServer

    with PageServer(folder) as first:
        port = first.server.server_port
        code, out, err = call_cli("serve", "--runs-dir", str(folder), "--port", str(port))
    assert code == 2 and out == ""
    assert err.splitlines() == [f"evotune: error: cannot listen on 127.0.0.1:{port} (Address "
                                "already in use); choose another --port"]
