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

from evotune.match.scoring import sprt_llr
from evotune.runs.guard import Guard, parse_guard
from evotune.runs.store import Store

flask = pytest.importorskip("flask", reason="the serve extra (flask) is not installed")

from evotune.runs.guard import guard_block  # noqa: E402
from evotune.serve.app import create_app  # noqa: E402 (needs flask)

V1 = Path(__file__).resolve().parent / "data" / "store-v1"



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
    assert detail["mean"][-1] == pytest.approx(json.loads(out)["mean"], abs=0.01)
    assert detail["std"] is None and detail["population"] is False  # SPSA: theta, no population
    assert {"c_k", "R_k", "step"} <= set(detail["stats"])
    de = client.get("/api/run/de-run").get_json()
    assert de["population"] is True and len(de["std"]) == 5


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
    """The page shows the final check in the block the terminal prints (runs.guard.guard_block,
    one formatter for the run's last lines and the page)."""
    guard = Guard(generation=5, tuned=(1.0,), start=(0.0,), games=200, wins=70, draws=80,
                  losses=50, pentanomial=(5, 15, 40, 25, 15), elo=34.9, elo_error=30.1,
                  verdict="undecided", better=True, openings="held-out.epd")
    lines = guard_block(guard)[1:]  # below the dashed rule
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
    assert lines[5].startswith(f"LLR: {sprt_llr(guard.pentanomial, 0.0, 5.0):.2f} (") \
        and lines[5].endswith(") (-2.94, 2.94) [0.00, 5.00]")
    assert parse_guard(guard.to_json(), tmp_path / "guard.json") == guard


def test_old_runs_are_read(client):
    row = next(r for r in client.get("/api/runs").get_json()["runs"] if r["run"] == "old-games")
    assert row["damaged"] is None and row["games"] == 7
    detail = client.get("/api/run/old-games").get_json()
    assert len(detail["latest_games"]) == 7
    pgn = client.get("/api/run/old-games/pgn/1")
    assert pgn.status_code == 200 and pgn.data.count(b"[Event ") == 7
    assert Store(Path(client.application.config["EVOTUNE_READER"].root) / "old-fit").manifest()
