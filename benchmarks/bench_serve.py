"""The tune page's figures (issue 58): first draw of the runs page of a folder of 200 runs and
of the page of an 824-weight SPSA run with 20,000 games (served and parsed, in Debian's headless
chromium: from navigation to the table's rows or the weights chart drawn), how soon a new
generation shows, and games/s of a run with the page open and polled against without.

    python benchmarks/bench_serve.py [--runs 200] [--games 20000] [--pairs 3] [--skip-rate]
    python benchmarks/bench_serve.py --skip-pages --pairs 3 --generations 20 --depth 3

Prints figures (no assertions). Synthetic runs come from tests/conftest.py's make_fake_run (a
real strategy, random outcomes); the games/s comparison plays a real tiny run (DE, depth 1, 2
workers), alternating without/with the page, and reports medians.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import _make_fake_run  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

from evotune.runs.records import State  # noqa: E402
from evotune.runs.store import Store  # noqa: E402
from evotune.serve.server import PageServer  # noqa: E402


def browser():
    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1366,900"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def drawn_ms(driver, url: str, ready_js: str, timeout: float = 120.0) -> float:
    """Milliseconds from navigation start to ``ready_js`` being true (performance.now())."""
    driver.get(url)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        t = driver.execute_script(f"return ({ready_js}) ? performance.now() : null")
        if t is not None:
            return float(t)
        time.sleep(0.01)
    seen = driver.execute_script("return [typeof Charts === 'undefined' ? null : "
                                 "Object.keys(Charts.all), document.getElementById('live')"
                                 ".textContent, location.href]")
    raise SystemExit(f"not drawn within {timeout} s: {url} ({seen})")


def big_spsa(folder: Path, games: int, run_id: str = "spsa-824") -> Path:
    gens = games // 16  # SPSA's default batch 8 x 2 games
    t0 = time.perf_counter()
    store = _make_fake_run(folder, run_id, strategy="spsa", generations=gens, games=2,
                           engine="extended")
    store.unlock()
    print(f"made {run_id}: {gens} generations, {gens * 16:,} games, "
          f"{sum(p.stat().st_size for p in store.root.rglob('*')) / 1e6:.0f} MB "
          f"in {time.perf_counter() - t0:.0f} s")
    return store.root


def page_figures(args, work: Path) -> None:
    runs = work / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    shutil.rmtree(work / "template", ignore_errors=True)
    one = _make_fake_run(work, "template", generations=5)
    one.unlock()
    for i in range(args.runs):
        shutil.copytree(one.root, runs / f"run-{i:03d}")
    rows = f"document.querySelectorAll('#runs tbody tr').length === {args.runs}"
    driver = browser()
    try:
        with PageServer(runs) as server:
            cold = drawn_ms(driver, server.url, rows)
            warm = [drawn_ms(driver, server.url, rows) for _ in range(3)]
        with PageServer(runs) as server:
            server.warm().join()
            first = drawn_ms(driver, server.url, rows)
        print(f"runs page, {args.runs} runs: first draw {cold:.0f} ms on a server that has read "
              f"nothing yet, {first:.0f} ms on one that read them at start (evotune serve "
              f"does), {statistics.median(warm):.0f} ms after (median of 3)")
        big = work / "big"
        spare = work / "spsa-824"
        if not (spare / "state.json").exists():  # kept in --work between calls
            spare = big_spsa(work, args.games + 16)  # one generation more, shown later
        shutil.rmtree(big, ignore_errors=True)
        big.mkdir()
        root = big / spare.name
        shutil.copytree(spare, root)
        last = (args.games + 16) // 16
        (root / "generations" / f"gen-{last:04d}.json").unlink()
        held = Store(root)
        before, full = held.read_generation(last - 1), held.read_state()
        assert full is not None
        held.write_state(State(generation=before.generation, games=before.games_total,
                               seconds=before.seconds_total, finished=False,
                               strategy=full.strategy))
        ready = ("typeof Charts !== 'undefined' && Charts.all.weights && "
                 "Charts.all.weights.u.data[0].length > 1")
        with PageServer(big) as server:
            url = server.url + f"run/{root.name}"
            t0 = time.perf_counter()
            server.warm().join()  # as evotune serve does at start
            print(f"the server reads the 824-weight run once at start: "
                  f"{time.perf_counter() - t0:.1f} s")
            cold = drawn_ms(driver, url, ready)
            warm = [drawn_ms(driver, url, ready) for _ in range(3)]
            table = statistics.median(drawn_ms(driver, url, "document.querySelectorAll("
                                               "'#wtable tbody tr').length > 800")
                                      for _ in range(3))
            body = server.app.test_client().get(f"/api/run/{root.name}").data
            print(f"its first look's JSON: {len(body) / 1e3:.0f} kB; the table of every weight "
                  f"drawn {table:.0f} ms (median of 3)")
            strength = drawn_ms(driver, url, "typeof Charts !== 'undefined' && Charts.all.strength")
            print(f"824-weight SPSA page, {args.games:,} games: weights drawn {cold:.0f} ms at "
                  f"the first look, {statistics.median(warm):.0f} ms after (median of 3); strength "
                  f"curve drawn {strength:.0f} ms (its first fit included in the first look's)")
            # a new generation, written as the run writes it (generation file, then state)
            last_x = "const x = Charts.all.weights.u.data[0]; return x[x.length - 1]"
            n = driver.execute_script(last_x)  # the series is thinned: its last games count
            t0 = time.monotonic()
            shutil.copy(spare / "generations" / f"gen-{last:04d}.json", root / "generations")
            shutil.copy(spare / "state.json", root / "state.json")
            while driver.execute_script(last_x) == n:
                time.sleep(0.02)
                if time.monotonic() - t0 > 60:
                    raise SystemExit("the new generation did not show within 60 s")
            print(f"a new generation of the 824-weight run shows after "
                  f"{time.monotonic() - t0:.1f} s (polling every 2 s)")
    finally:
        driver.quit()


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of the living processes ``pid`` and its descendants (Linux
    /proc): the browser's share of the machine."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    tree, total, grew = {pid}, 0.0, True
    while grew:
        more = {p for p, (parent, _) in stats.items() if parent in tree} - tree
        grew, tree = bool(more), tree | more
    for p in tree:
        total += stats.get(p, (0, 0.0))[1]
    return total


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the runs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(work: Path, tag: str, gens: int, depth: int = 1) -> float:
    """games/s of a tiny real run (its own summary line)."""
    out = subprocess.run([sys.executable, "-m", "evotune.cli", "run", "--strategy", "de", "--np",
                          "6", "--games", "2", "--depth", str(depth), "--generations", str(gens),
                          "--workers", "2", "--seed", "3", "--runs-dir", str(work / "rate"),
                          "--run-id", tag, "--quiet"], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    m = re.search(r"\(([\d.]+) games/s\)", out.stdout)
    assert m, out.stdout
    return float(m.group(1))


def rate_figures(args, work: Path) -> None:
    shutil.rmtree(work / "rate", ignore_errors=True)
    (work / "rate").mkdir()
    one_run(work, "warm", 2)  # the numba cache, loaded once
    without, with_page = [], []
    page_cpu = [0.0, 0.0, 0.0]  # the server's, the browser's, the runs' CPU seconds
    steady: list[float] = []  # when the page's first draw was done, and the browser's CPU then
    polled = [0.0, 0.0]  # seconds of polling after the first draws, the browser's CPU in them
    driver = browser()
    try:
        with PageServer(work / "rate") as server:
            for k in range(args.pairs):
                without.append(one_run(work, f"a{k}", args.generations, args.depth))
                stop = threading.Event()

                def poll(tag=f"b{k}", stop=stop):  # the playing run's page, open and polled
                    while not stop.is_set() and not (work / "rate" / tag).is_dir():
                        time.sleep(0.05)
                    if not stop.is_set():
                        driver.get(server.url + f"run/{tag}")
                        time.sleep(1.0)  # its first draw done: the polls from here on
                        steady[:] = [time.monotonic(), tree_cpu(driver.service.process.pid)]

                watcher = threading.Thread(target=poll)
                browser0, server0 = tree_cpu(driver.service.process.pid), time.process_time()
                run0 = children_cpu()
                watcher.start()
                with_page.append(one_run(work, f"b{k}", args.generations, args.depth))
                stop.set()
                watcher.join()
                page_cpu[0] += time.process_time() - server0
                page_cpu[1] += tree_cpu(driver.service.process.pid) - browser0
                if steady:
                    polled[0] += time.monotonic() - steady[0]
                    polled[1] += tree_cpu(driver.service.process.pid) - steady[1]
                steady.clear()
                page_cpu[2] += children_cpu() - run0
                driver.get("about:blank")
    finally:
        driver.quit()
    a, b = statistics.median(without), statistics.median(with_page)
    print(f"games/s without the page {without} (median {a:.1f}), with the page open and polled "
          f"{with_page} (median {b:.1f}): {100 * (b - a) / a:+.1f}%")
    server, browser_s, run = page_cpu
    print(f"CPU while the runs with the page played: the server {server:.2f} s, the browser "
          f"{browser_s:.2f} s, the runs {run:.1f} s: the page took {100 * (server + browser_s) / run:.2f}% "
          "of the runs' CPU (the most it can slow a run that has the machine's cores)")
    if polled[0]:
        print(f"the browser after each page's first draw: {polled[1]:.2f} s of CPU in "
              f"{polled[0]:.1f} s of polling ({100 * polled[1] / polled[0]:.2f}% of one core; "
              "a generation stored every poll or more often, each redrawing the page)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--games", type=int, default=20_000)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--generations", type=int, default=12)
    p.add_argument("--depth", type=int, default=1, help="the real run's depth (deeper: fewer "
                   "generations a second, as real runs store them)")
    p.add_argument("--skip-rate", action="store_true")
    p.add_argument("--skip-pages", action="store_true")
    p.add_argument("--work", help="a folder for the synthetic runs, kept (the 824-weight run "
                                  "takes minutes to make); default: a temporary one")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        if not args.skip_pages:
            page_figures(args, work)
        if not args.skip_rate:
            rate_figures(args, work)


if __name__ == "__main__":
    main()
