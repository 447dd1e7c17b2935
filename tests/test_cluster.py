"""Runs on a real Dask cluster (LocalCluster on loopback, 2 worker processes): same generations
and game log as a local run, a worker SIGKILLed mid-generation loses and duplicates nothing,
workers are warmed (also one that joins later), an unreachable scheduler is one line + exit 2."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

from evotune.cli import main  # noqa: E402
from evotune.errors import ClusterError, ConfigError  # noqa: E402
from evotune.kinds.games.config import build_run_config  # noqa: E402
from evotune.kinds.games.lifecycle import new_run  # noqa: E402
from evotune.kinds.games.solver import execute  # noqa: E402
from evotune.match import cluster  # noqa: E402

SMALL = dict(strategy="de", population=4, generations=2, games=2, depth=1, seed=11, openings="book")
# games long enough (depth 3, ~0.1 s each) that a worker is surely busy when it is killed
KILL = dict(strategy="de", population=8, generations=2, games=4, depth=3, seed=3, openings="book")




def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=40) as lc:
        with distributed.Client(lc.scheduler_address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
            yield lc, client


def _run(tmp_path: Path, run_id: str, progress=None, **kw) -> Path:
    cfg = build_run_config(**kw)
    store, plan = new_run(cfg, out_dir=tmp_path, run_id=run_id)
    execute(store, plan, progress=progress)
    return store.root


def test_dask_run_equals_local_run(tmp_path, dask_cluster, stored_generations, stored_games):
    lc, client = dask_cluster
    local = _run(tmp_path, "local", workers=1, **SMALL)
    remote = _run(tmp_path, "dask", backend="dask", scheduler=lc.scheduler_address, **SMALL)
    gens = stored_generations(remote)
    assert [g["generation"] for g in gens] == [0, 1, 2]
    assert all(g["games"] > 0 for g in gens[1:])
    assert gens == stored_generations(local)
    assert stored_games(remote) == stored_games(local)
    # the plugin warmed every worker
    assert list(client.run(cluster.worker_warm).values()) == [True, True]


def test_verification_on_the_cluster_equals_the_local_one(tmp_path, dask_cluster):
    from evotune.verify.run import VerifySettings, verify_run

    lc, _ = dask_cluster
    _run(tmp_path, "v", workers=1, **SMALL)
    local = verify_run("v", settings=VerifySettings(games=4, workers=1), runs_dir=tmp_path)
    remote = verify_run("v", settings=VerifySettings(games=4, backend="dask",
                                                     scheduler=lc.scheduler_address),
                        runs_dir=tmp_path)
    strip = lambda doc: [{k: v for k, v in m.items() if k != "seconds"}  # noqa: E731
                         for m in doc["matches"]]
    assert strip(remote) == strip(local) and len(local["matches"]) == 2


def test_session_reports_cluster_threads_and_closes_client(dask_cluster):
    lc, _ = dask_cluster
    with cluster.backend_session("dask", lc.scheduler_address, workers=1) as s:
        assert (s.backend, s.workers, s.scheduler) == ("dask", 2, lc.scheduler_address)
        client = s.client
        assert client.status == "running"
    assert client.status == "closed"
    with cluster.backend_session("local", workers=3) as s:
        assert (s.backend, s.workers, s.client) == ("loky", 3, None)
    with pytest.raises(ConfigError, match="unknown backend"):
        with cluster.backend_session("ray"):
            pass


def test_worker_killed_mid_generation_loses_and_duplicates_no_game(tmp_path, dask_cluster,
                                                                   stored_generations,
                                                                   stored_games):
    lc, client = dask_cluster
    local = _run(tmp_path, "local", workers=1, **KILL)
    killed: dict = {}

    def progress(ev):
        # first finished game of generation 1: other games of the generation are running
        if killed or ev.kind != "game" or ev.generation != 1:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            busy = {w: keys for w, keys in client.processing().items() if keys}
            if busy:
                addr, keys = next(iter(busy.items()))
                pid = client.run(os.getpid, workers=[addr])[addr]
                os.kill(pid, signal.SIGKILL)
                killed.update(addr=addr, pid=pid, keys=list(keys),
                              games_before=ev.games_in_generation)
                return
            time.sleep(0.005)

    remote = _run(tmp_path, "dask", progress=progress, backend="dask",
                  scheduler=lc.scheduler_address, **KILL)
    # it really happened, in generation 1, with a task running on the killed worker
    assert killed and killed["keys"], killed
    local_gens = stored_generations(local)
    assert killed["games_before"] < local_gens[1]["games"]
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker
    pids = set(client.run(os.getpid).values())
    assert killed["pid"] not in pids
    # the run went on: every generation stored, equal to the local run's, no game lost or doubled
    assert stored_generations(remote) == local_gens
    games = stored_games(remote)
    assert len(games) == local_gens[-1]["games_total"]
    assert len({tuple(g["key"]) for g in games}) == len(games)
    assert games == stored_games(local)
    # the restarted worker was warmed up by the plugin when it joined
    assert list(client.run(cluster.worker_warm).values()) == [True, True]


def test_unreachable_scheduler_is_one_clear_line_and_exit_2(tmp_path, monkeypatch, capsys):
    address = f"tcp://127.0.0.1:{_free_port()}"
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    t0 = time.perf_counter()
    with pytest.raises(SystemExit) as exc:
        main(["run", "--np", "4", "--generations", "1", "--games", "2", "--depth", "1",
              "--backend", "dask", "--scheduler", address, "--runs-dir", str(tmp_path)])
    assert exc.value.code == 2
    assert time.perf_counter() - t0 < 10
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1  # checked before the run folder is made: nothing to resume
    assert err[0].startswith(f"evotune: error: cannot reach the Dask scheduler at {address} "
                             "within 1 s")
    assert "dask scheduler" in err[0] and "dask worker" in err[0]
    assert list(tmp_path.iterdir()) == []


def test_bad_address_and_no_workers_are_cluster_errors():
    with pytest.raises(ClusterError, match="not valid"):
        cluster.connect("tcp://127.0.0.1", timeout=1)
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as empty:
        with pytest.raises(ClusterError, match="has no worker after 0.5 s"):
            with cluster.backend_session("dask", empty.scheduler_address, timeout=5,
                                         workers_timeout=0.5):
                pass


@pytest.mark.slow
def test_cli_exits_2_within_the_default_timeout(tmp_path):
    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "evotune.cli", "run", "--np", "4",
                          "--generations", "1", "--games", "2", "--depth", "1", "--backend",
                          "dask", "--scheduler", address, "--runs-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    assert res.returncode == 2, res.stderr
    assert wall < cluster.CONNECT_TIMEOUT + 20
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("evotune: error")]
    assert len(lines) == 1 and f"at {address} within {cluster.CONNECT_TIMEOUT:g} s" in lines[0]
    assert "Traceback" not in res.stderr


def test_the_tune_page_reads_a_folder_a_dask_run_is_writing(tmp_path, dask_cluster, call_cli):
    """Issue 58: `evotune serve` on the folder of a run on the cluster: while it plays (at each
    stored generation) its row says running with the generation just stored, and after the run
    its figures are those of `status --json`."""
    pytest.importorskip("flask", reason="the serve extra (flask) is not installed")
    from evotune.serve.app import create_app

    lc, _ = dask_cluster
    page = create_app(tmp_path).test_client()
    seen = []

    def watch(p):  # called by the run's coordinator right after a generation is stored
        if p.kind == "generation":
            row = next(r for r in page.get("/api/runs").get_json()["runs"] if r["run"] == "dk")
            assert page.get("/api/run/dk").status_code == 200
            seen.append((row["state"], row["generation"], row["damaged"]))

    _run(tmp_path, "dk", progress=watch, backend="dask", scheduler=lc.scheduler_address,
         **SMALL)
    assert seen == [("running", g, None) for g in range(1, SMALL["generations"] + 1)]
    row = next(r for r in page.get("/api/runs").get_json()["runs"] if r["run"] == "dk")
    code, out, _ = call_cli("status", "dk", "--runs-dir", str(tmp_path), "--json")
    info = json.loads(out)
    assert code == 0 and row["state"] == "finished" and info["finished"]
    assert (row["generation"], row["games"]) == (info["generation"], info["games"]) != (0, 0)
