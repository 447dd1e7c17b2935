/* evotune serve: the page of runs (a sortable table, polled). */
"use strict";
(function () {
  let rows = [], sortKey = "started_at", asc = false, lastText = "";
  const tbody = document.querySelector("#runs tbody");

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
    const key = sortKey;
    const val = r => key === "progress_share" ? share(r) : r[key];
    const sorted = rows.slice().sort((a, b) => {
      const x = val(a), y = val(b);
      if (x == null && y == null) return 0;
      if (x == null) return 1;
      if (y == null) return -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y
        : String(x).localeCompare(String(y), undefined, {numeric: true});
      return asc ? c : -c;
    });
    tbody.innerHTML = sorted.map(cell).join("");
    document.getElementById("empty").hidden = rows.length > 0;
    document.querySelectorAll("th.sortable").forEach(th => {
      th.classList.toggle("sorted", th.dataset.key === sortKey);
      th.classList.toggle("asc", th.dataset.key === sortKey && asc);
    });
  }

  document.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => {
    if (sortKey === th.dataset.key) asc = !asc; else { sortKey = th.dataset.key; asc = true; }
    render();
  }));

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

  function renderMatches(ms) {
    document.getElementById("matches-card").hidden = !ms.length;
    document.querySelector("#matches tbody").innerHTML = ms.map(matchRow).join("");
  }

  ET.poll(async () => {
    const text = await ET.json("/api/runs");
    if (text === lastText) return;
    lastText = text;
    const data = JSON.parse(text);
    document.getElementById("folder").textContent = data.folder;
    rows = data.runs;
    render();
    renderMatches(data.matches || []);
  });
})();
