"""``evotune serve`` in a real browser (issue 58, item 5): Debian's chromium driven by Selenium
through Debian's chromium-driver (no browser is downloaded). The runs page lists a DE run, an
SPSA run, a fit and a training with the figures of ``evotune status --json``; a run's page
charts its weights with the stored values; a new generation shows without a reload; a
traversal request is refused. Screenshots of both pages, at a laptop's and a phone's width, are
written to tests/screenshots/ (ignored by git) for a person to look at."""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from evotune.cli import main
from evotune.runs.finalcheck import FinalCheck

pytest.importorskip("flask", reason="the serve extra (flask) is not installed")
webdriver = pytest.importorskip("selenium.webdriver",
                                reason="selenium is not installed (pip install -e .[serve])")

from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from evotune.serve.server import PageServer  # noqa: E402

HERE = Path(__file__).resolve().parent
V1 = HERE / "data" / "store-v1"
TRAINING = HERE / "data" / "serve-train" / "tr"
SHOTS = HERE / "screenshots"
CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()),
                None)
DRIVER = Path("/usr/bin/chromedriver")
LAPTOP, PHONE = (1366, 900), (390, 844)

pytestmark = pytest.mark.skipif(CHROMIUM is None or not DRIVER.exists(),
                                reason="Debian's chromium and chromium-driver are not installed "
                                       "(apt-get install chromium chromium-driver)")


def status_json(folder: Path, run_id: str, capsys) -> dict:
    capsys.readouterr()
    try:
        main(["status", run_id, "--runs-dir", str(folder), "--json"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def folder(tmp_path_factory, make_fake_run) -> Path:
    runs = tmp_path_factory.mktemp("serve") / "runs"
    runs.mkdir()
    make_fake_run(runs, "de-run", strategy="de", generations=3).unlock()
    spare = tmp_path_factory.mktemp("spare")  # the same run one generation further
    make_fake_run(spare, "de-run", strategy="de", generations=4).unlock()
    spsa = make_fake_run(runs, "spsa-run", strategy="spsa", generations=6, engine="extended")
    spsa.unlock()
    last = spsa.read_generation(6)
    check = FinalCheck(generation=6, tuned=last.mean, start=spsa.read_generation(0).mean,
                       games=200, wins=70, draws=80, losses=50,
                       pentanomial=(5, 15, 40, 25, 15), elo=34.9, elo_error=30.1,
                       verdict="H1", better=True, openings="held-out.epd")
    # under its old name, as runs made before round 5 stored it: the page reads both
    (spsa.root / "guard.json").write_text(json.dumps(check.to_json()))
    shutil.copytree(V1 / "fit", runs / "old-fit")
    shutil.copytree(TRAINING, runs / "training")
    (runs.parent / "spare").symlink_to(spare / "de-run")
    w = runs.parent / "w.json"
    w.write_text('{"knight": 280, "bishop": 330, "rook": 500, "queen": 900, "mobility": 5}')
    try:  # a real match with an SPRT, kept in a folder of the runs folder
        main(["match", "shannon", str(w), "--games", "12", "--depth", "1", "--max-plies", "40",
              "--seed", "5", "--workers", "1", "--sprt", "0", "10", "--quiet", "--out",
              str(runs / "sprt-match")])
    except SystemExit as exc:
        assert exc.code in (0, None)
    try:  # a shorter one beside it, for the matches table's order
        main(["match", "shannon", str(w), "--games", "4", "--depth", "1", "--max-plies", "20",
              "--seed", "6", "--workers", "1", "--quiet", "--out", str(runs / "short-match")])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return runs


@pytest.fixture(scope="module")
def server(folder):
    with PageServer(folder) as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", f"--window-size={LAPTOP[0]},{LAPTOP[1]}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    yield driver
    driver.quit()


def wait_for(check, timeout: float = 10.0):
    end = time.monotonic() + timeout
    while True:
        try:
            got = check()
            if got:
                return got
        except Exception:  # noqa: BLE001 (an element not drawn yet)
            got = None
        if time.monotonic() > end:
            raise AssertionError(f"not seen within {timeout} s")
        time.sleep(0.1)


def shoot(driver, name: str, size: tuple[int, int]) -> Path:
    """A screenshot of the whole page at ``size``'s width."""
    SHOTS.mkdir(exist_ok=True)
    driver.set_window_size(*size)
    time.sleep(0.6)  # the charts resize after 150 ms
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size[0], max(size[1], min(int(height) + 120, 6000)))
    time.sleep(0.6)
    path = SHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(*LAPTOP)
    return path


def test_runs_page_lists_every_kind_with_status_figures(server, browser, folder, capsys):
    browser.get(server.url)
    wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")) == 4)
    for run_id in ("de-run", "spsa-run", "old-fit", "training"):
        info = status_json(folder, run_id, capsys)
        row = browser.find_element(By.CSS_SELECTOR, f'#runs tr[data-run="{run_id}"]')
        cells = {c.get_attribute("data-field"): c.text
                 for c in row.find_elements(By.CSS_SELECTOR, "td[data-field]")}
        assert cells["state"] == ("finished" if info["finished"] else "stopped")
        if "final_check" in info:  # the final check's verdict is the row's result
            check = info["final_check"]
            assert cells["result"] == (f"final check {check['verdict']}: "
                                       f"{check['elo']:+.1f} +- {check['elo_error']:.1f}")
        done = info.get("generation", info.get("epoch"))
        total = info.get("generations", info.get("epochs"))
        assert f"{done}/{total}" in cells["progress"]
        if info["kind"] == "games":
            assert cells["amount"] == f"{info['games']:,} games"
            assert cells["games_per_s"] == f"{info['games'] / info['seconds']:,.1f}"
        else:
            assert cells["games_per_s"] == "-"
    kinds = {r.get_attribute("data-run"): r.find_elements(By.TAG_NAME, "td")[1].text
             for r in browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")}
    assert kinds == {"de-run": "games", "spsa-run": "games", "old-fit": "fit",
                     "training": "train"}
    # sortable: by games, descending then ascending
    header = browser.find_element(By.CSS_SELECTOR, '#runs th[data-key="games"]')
    header.click()
    first = browser.find_element(By.CSS_SELECTOR, "#runs tbody tr").get_attribute("data-run")
    assert first in ("old-fit", "training")  # no games: 0, smallest first
    header.click()
    assert browser.find_element(By.CSS_SELECTOR, "#runs tbody tr").get_attribute(
        "data-run") == "spsa-run"
    shoot(browser, "runs-laptop", LAPTOP)
    shoot(browser, "runs-phone", PHONE)


def test_run_page_charts_the_stored_weights(server, browser, folder, capsys):
    info = status_json(folder, "spsa-run", capsys)
    browser.get(server.url + "run/spsa-run")
    data = wait_for(lambda: browser.execute_script(
        "return Charts.all.weights && Charts.all.weights.u.data"))
    labels = browser.execute_script(
        "return Charts.all.weights.u.series.slice(1).map(s => s.label)")
    assert len(labels) == 8  # many weights: the eight that moved most
    names, mean, start = info["names"], info["mean"], info["initial_mean"]
    moved = sorted((i for i in range(len(names))),
                   key=lambda i: -abs(mean[i] - start[i]))[:8]
    assert set(labels) == {names[i] for i in moved}
    for k, label in enumerate(labels):
        i = names.index(label)
        assert data[k + 1][-1] == pytest.approx(mean[i], abs=0.01)
        assert data[k + 1][0] == pytest.approx(start[i], abs=0.01)
    assert data[0][-1] == info.get("tuning_games", info["games"])  # the final check's come after
    # the table of every weight, searchable
    rows = browser.find_elements(By.CSS_SELECTOR, "#wtable tbody tr")
    assert len(rows) == len(names)
    box = browser.find_element(By.ID, "filter")
    box.send_keys(names[moved[0]])
    row = wait_for(lambda: browser.find_element(
        By.CSS_SELECTOR, f'#wtable tr[data-weight="{names[moved[0]]}"]'))
    assert row.find_element(By.CSS_SELECTOR, 'td[data-field="now"]').text == \
        f"{mean[moved[0]]:,.1f}"
    browser.execute_script("const b = document.getElementById('filter'); b.value = ''; "
                           "b.dispatchEvent(new Event('input'))")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#wtable tbody tr")) == len(names)
    # a weight the first look did not carry: ticked, fetched, charted with its stored values
    free = browser.execute_script("return [...document.querySelectorAll("
                                  "'#wtable input:not([disabled])')].map(e => +e.dataset.i)")
    least = min((i for i in free if i not in moved), key=lambda i: abs(mean[i] - start[i]))
    browser.find_element(By.CSS_SELECTOR, f'#wtable input[data-i="{least}"]').click()
    wait_for(lambda: browser.execute_script("return Charts.all.weights.u.series.length") == 10)
    data = browser.execute_script("return Charts.all.weights.u.data")
    assert data[9][-1] == pytest.approx(mean[least], abs=0.01)
    # SPSA draws its schedule, not population deviations
    assert browser.find_element(By.ID, "spread-card").get_attribute("hidden")
    stats = browser.execute_script("return Charts.all.stats.u.series.slice(1).map(s => s.label)")
    assert any(s.startswith("c_k") for s in stats) and any(s.startswith("R_k") for s in stats)
    assert browser.find_element(By.ID, "stats-title").text == "SPSA's c_k, R_k and step"
    assert browser.find_element(By.ID, "weights-title").text == "Weights over games (SPSA's theta)"
    block = browser.find_element(By.ID, "check").text
    assert block.splitlines()[1].startswith("Results of tuned vs start (")  # the terminal's block
    assert "Ptnml(0-2): [5, 15, 40, 25, 15]" in block and "LLR: " in block
    wait_for(lambda: browser.execute_script("return !!Charts.all.strength"))
    assert "rating model" in browser.find_element(By.ID, "strength-method").text
    # the piece-square tables as heat maps: the stored value of each square
    square = browser.find_element(By.CSS_SELECTOR,
                                  'figure[data-table="mg.knight"] rect[data-square="e4"]')
    assert float(square.get_attribute("data-value")) == pytest.approx(
        mean[names.index("pst.mg.knight.e4")], abs=0.01)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#pst figure")) == 12
    browser.find_element(By.CSS_SELECTOR, 'input[name="pst"][value="change"]').click()
    square = browser.find_element(By.CSS_SELECTOR,
                                  'figure[data-table="mg.knight"] rect[data-square="e4"]')
    i = names.index("pst.mg.knight.e4")
    assert float(square.get_attribute("data-value")) == pytest.approx(mean[i] - start[i], abs=0.01)
    # games per generation: the newest first, W/D/L as the generation file has them
    first = browser.find_element(By.CSS_SELECTOR, "#gentable tbody tr")
    assert first.get_attribute("data-generation") == "6"
    shoot(browser, "run-spsa-laptop", LAPTOP)
    shoot(browser, "run-spsa-phone", PHONE)
    browser.get(server.url + "run/training")
    wait_for(lambda: browser.execute_script("return Charts.all.loss && Charts.all.loss.u.data"))
    shape = browser.find_element(By.CSS_SELECTOR, '#facts tr[data-fact="shape"] td').text
    assert shape == "(768 -> 8) x 2 -> 1"
    sha = browser.find_element(By.CSS_SELECTOR, '#facts tr[data-fact="SHA-256 of net.nnue"] td')
    assert sha.text == hashlib.sha256((folder / "training" / "net.nnue").read_bytes()).hexdigest()
    shoot(browser, "run-training-laptop", LAPTOP)


def test_a_new_generation_shows_without_a_reload(server, browser, folder):
    browser.get(server.url + "run/de-run")
    wait_for(lambda: browser.execute_script(
        "return Charts.all.weights && Charts.all.weights.u.data[0].length === 4"))
    browser.execute_script("window.__same_page = 1")
    shoot(browser, "run-de-laptop", LAPTOP)
    spare = folder.parent / "spare"
    shutil.copy(spare / "generations" / "gen-0004.json", folder / "de-run" / "generations")
    shutil.copy(spare / "state.json", folder / "de-run" / "state.json")
    t0 = time.monotonic()
    wait_for(lambda: browser.execute_script(
        "return Charts.all.weights.u.data[0].length === 5"), timeout=5.0)
    assert time.monotonic() - t0 < 5.0
    assert browser.execute_script("return window.__same_page") == 1  # not reloaded
    assert "generation 4/3" in browser.find_element(By.ID, "figures").text


def test_a_traversal_request_is_refused_in_the_browser(server, browser):
    for path in ("api/run/..%2F..%2Fspare%2Fmanifest.json", "run/%2e%2e", "static/..%2fapp.py"):
        browser.get(server.url + path)
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "manifest" not in body.lower() or "no run" in body.lower()
        assert "import" not in body and "config" not in body


def test_a_match_has_a_row_and_a_page_with_its_block_and_llr(server, browser, folder):
    browser.get(server.url)
    row = wait_for(lambda: browser.find_element(By.CSS_SELECTOR,
                                                '#matches tr[data-match="sprt-match"]'))
    assert row.find_element(By.CSS_SELECTOR, 'td[data-field="state"]').text == "finished"
    data = json.loads((folder / "sprt-match" / "result.json").read_text())
    assert row.find_element(By.CSS_SELECTOR, 'td[data-field="games"]').text == \
        f"{data['games']} / 12"
    assert f"LLR {data['sprt']['llr']:.2f}" in \
        row.find_element(By.CSS_SELECTOR, 'td[data-field="result"]').text
    # the matches table sorts too: by games, fewest first, then most
    order = lambda: [r.get_attribute("data-match")  # noqa: E731
                     for r in browser.find_elements(By.CSS_SELECTOR, "#matches tbody tr")]
    header = browser.find_element(By.CSS_SELECTOR, '#matches th[data-key="games"]')
    header.click()
    assert order() == ["short-match", "sprt-match"]
    header.click()
    assert order() == ["sprt-match", "short-match"]
    row = browser.find_element(By.CSS_SELECTOR, '#matches tr[data-match="sprt-match"]')
    row.find_element(By.CSS_SELECTOR, "a").click()
    block = wait_for(lambda: browser.find_element(By.ID, "block").text)
    assert block.splitlines()[1] == "Results of shannon vs w (1 plies, 2moves_v1.epd):"
    assert f"Ptnml(0-2): [{', '.join(map(str, data['pentanomial']))}]" in block
    llr = wait_for(lambda: browser.execute_script("return Charts.all.llr && Charts.all.llr.u.data"))
    assert llr[0][-1] == data["games"] and llr[1][-1] == pytest.approx(data["sprt"]["llr"],
                                                                        abs=1e-3)
    assert llr[2][0] == pytest.approx(data["sprt"]["upper"])  # the H1 bound
    shoot(browser, "match-laptop", LAPTOP)
    shoot(browser, "match-phone", PHONE)
