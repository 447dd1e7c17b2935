/* evotune serve: the page of runs and of matches (sortable tables, polled). */
"use strict";
(function () {
  let rows = [], matches = [], lastText = "";
  const tbody = document.querySelector("#runs tbody");

  /* A table's sort: its key and direction, set by a click on a header of class "sortable";
     numbers compare as numbers, the rest as text with numeric parts, missing values last. */
  function sorter(table, key, asc, draw) {
    const s = {key, asc};
    s.sort = (list, val) => list.slice().sort((a, b) => {
      const x = val(a, s.key), y = val(b, s.key);
      if (x == null && y == null) return 0;
      if (x == null) return 1;
      if (y == null) return -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y
        : String(x).localeCompare(String(y), undefined, {numeric: true});
      return s.asc ? c : -c;
    });
    s.mark = () => table.querySelectorAll("th.sortable").forEach(th => {
      th.classList.toggle("sorted", th.dataset.key === s.key);
      th.classList.toggle("asc", th.dataset.key === s.key && s.asc);
    });
    table.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => {
      if (s.key === th.dataset.key) s.asc = !s.asc; else { s.key = th.dataset.key; s.asc = true; }
      draw();
    }));
    return s;
  }
  const runSort = sorter(document.getElementById("runs"), "started_at", false, () => render());
  const matchSort = sorter(document.getElementById("matches"), "started", false,
                           () => renderMatches());

  function share(r) {
    if (r.max_games) return r.games / r.max_games;
    if (r.generations) return r.generation / r.generations;
    return r.generation || 0;
  }

  function cell(r) {
    const link = '<a href="/run/' + encodeURIComponent(r.run) + '">' + ET.esc(r.run) + "</a>";
    if (r.damaged) {
      return '<tr data-run="' + ET.esc(r.run) + '"><td>' + link + "</td><td>" + ET.esc(r.kind) +
        '</td><td colspan="9" class="damaged">damaged: ' + ET.esc(r.damaged) + "</td></tr>";
    }
    return '<tr data-run="' + ET.esc(r.run) + '">' +
      '<td class="name">' + link + "</td>" +
      '<td data-label="kind">' + ET.esc(r.kind) + "</td>" +
      '<td data-label="strategy">' + ET.esc(r.strategy) + "</td>" +
      '<td class="wide" data-label="engine">' + ET.esc(r.engine) + "</td>" +
      '<td data-field="state">' + ET.badge(r.state) + "</td>" +
      '<td data-field="progress" data-label="progress">' + ET.esc(r.progress) + "</td>" +
      '<td class="num" data-field="amount" data-label="games">' + ET.esc(r.amount) + "</td>" +
      '<td class="num" data-field="games_per_s" data-label="games/s">' + ET.num(r.games_per_s, 1) + "</td>" +
      '<td class="num" data-field="left" data-label="left">' + (r.state === "running" || r.state === "stopped"
                                               ? ET.clock(r.left_s) : "-") + "</td>" +
      '<td data-field="result" data-label="result">' + ET.esc(r.result) + "</td>" +
      '<td class="wide" data-label="started">' + ET.esc(r.started) + "</td></tr>";
  }

  function render() {
    const sorted = runSort.sort(rows, (r, key) => key === "progress_share" ? share(r) : r[key]);
    tbody.innerHTML = sorted.map(cell).join("");
    document.getElementById("empty").hidden = rows.length > 0;
    runSort.mark();
  }

  function matchRow(m) {
    const link = '<a href="/match/' + m.id.split("/").map(encodeURIComponent).join("/") + '">' +
      ET.esc(m.id) + "</a>";
    const kind = m.kind === "verification" ? 'verification of <a href="/run/' +
      encodeURIComponent(m.run) + '">' + ET.esc(m.run) + "</a>" : "match";
    if (m.damaged) {
      return '<tr data-match="' + ET.esc(m.id) + '"><td>' + link + "</td><td>" + kind +
        '</td><td colspan="5" class="damaged" data-field="result">damaged: ' + ET.esc(m.damaged) + "</td></tr>";
    }
    return '<tr data-match="' + ET.esc(m.id) + '"><td class="name">' + link + "</td><td>" + kind +
      '</td><td data-label="A vs B">' + ET.esc(m.a) + " vs " + ET.esc(m.b) + '</td><td data-field="state">' +
      ET.badge(m.state) + '</td><td class="num" data-field="games" data-label="games">' + ET.num(m.games) +
      (m.planned ? " / " + ET.num(m.planned) : "") + '</td><td data-field="result" data-label="score">' +
      ET.esc(m.result) + '</td><td class="wide">' + ET.esc(m.started) + "</td></tr>";
  }

  function renderMatches() {
    document.getElementById("matches-card").hidden = !matches.length;
    const sorted = matchSort.sort(matches, (m, key) => m[key]);
    document.querySelector("#matches tbody").innerHTML = sorted.map(matchRow).join("");
    matchSort.mark();
  }

  ET.poll(async () => {
    const text = await ET.json("/api/runs");
    if (text === lastText) return;
    lastText = text;
    const data = JSON.parse(text);
    document.getElementById("folder").textContent = data.folder;
    rows = data.runs;
    matches = data.matches || [];
    render();
    renderMatches();
  });
})();
