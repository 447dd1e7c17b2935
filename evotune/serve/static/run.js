/* evotune serve: the page of one run (strength, weights, statistics, games), polled. */
"use strict";
(function () {
  const runId = decodeURIComponent(location.pathname.split("/").pop());
  const api = "/api/run/" + encodeURIComponent(runId);
  const MANY = 12, CHARTED = 8;
  let last = "", lastStrength = "", data = null, charted = null, scale = "abs",
      sortKey = "change", asc = false;
  document.getElementById("title").textContent = runId;
  document.title = runId + " - evotune";
  const $ = id => document.getElementById(id);
  const show = (id, on) => { $(id).hidden = !on; };

  function figures(row) {
    const f = [["state", ET.badge(row.state)], ["strategy", ET.esc(row.strategy)],
               ["progress", ET.esc(row.progress)], ["games", ET.esc(row.amount)],
               ["games/s", ET.num(row.games_per_s, 1)],
               ["time left", row.state === "finished" ? "-" : ET.clock(row.left_s)],
               ["result", ET.esc(row.result)], ["engine", ET.esc(row.engine)]];
    $("figures").innerHTML = f.map(([k, v]) => "<div><b>" + v + "</b><span>" + k + "</span></div>").join("");
    $("state").innerHTML = ET.badge(row.state);
  }

  function value(d, i, v) {
    if (scale !== "share" || !d.lower || d.upper[i] === d.lower[i] || v == null) return v;
    return 100 * (v - d.lower[i]) / (d.upper[i] - d.lower[i]);
  }

  // the first look carries the trajectories of the weights charted first; others are fetched
  let fetching = false;
  async function fetchColumns(d, missing) {
    if (fetching) return;
    fetching = true;
    try {
      const got = JSON.parse(await ET.json(api + "/columns?w=" + missing.join(",")));
      if (d !== data) return;  // a newer look arrived meanwhile: it fetches its own
      Object.assign(d.columns, got.columns);
      if (got.std_columns && d.std_columns) Object.assign(d.std_columns, got.std_columns);
      drawWeights(d);
    } finally {
      fetching = false;
      if (d !== data && data) drawWeights(data);  // the newer look's own columns
    }
  }

  function drawWeights(d) {
    const xs = d.games;
    if (charted === null) charted = d.names.length > MANY ? d.order.slice(0, CHARTED) : d.order;
    const missing = charted.filter(i => !(String(i) in d.columns));
    if (missing.length) fetchColumns(d, missing);
    const drawn = charted.filter(i => String(i) in d.columns);
    const free = d.fixed.filter(f => !f).length;
    $("weights-note").textContent = d.names.length > MANY
      ? charted.length + " of " + free + " tuned weights charted (first: the " + CHARTED +
        " that moved most since the start; tick others in the table)" : "";
    $("weights-title").textContent = d.population ? "Population mean over games" : "Weights over games (" +
      (d.terms ? d.terms.title + "'s " + d.terms.centre : "the recommendation") + ")";
    const series = drawn.map((i, k) => ({label: d.names[i], color: ET.color(k),
                                         values: d.columns[String(i)].map(v => value(d, i, v))}));
    Charts.draw("weights", scale + ":" + drawn.join(","), xs, series,
                {y: scale === "share" ? "% of range" : "value", digits: 1});
    show("weights-card", true);
    if (d.population && d.std_columns) {
      const s = drawn.map((i, k) => ({label: d.names[i], color: ET.color(k),
                                      values: d.std_columns[String(i)]}));
      Charts.draw("spread", "std:" + drawn.join(","), xs, s, {y: "std", digits: 1});
      $("spread-title").textContent = "Population deviation over games";
      $("spread-method").textContent = "Standard deviation of each charted weight across the " +
        "population: its convergence (mean above, deviation here).";
      show("spread-card", true);
    } else show("spread-card", false);
  }

  const STAT_LABELS = {c_k: "c_k (SPSA's perturbation)", R_k: "R_k (SPSA's a_k / c_k^2)",
                       step: "step (|theta change|)", sigma: "sigma (CMA-ES)",
                       replacement_rate: "replacement rate", loss_train: "training loss",
                       loss_val: "validation loss"};
  function drawStats(d) {
    const keys = Object.keys(d.stats).filter(k => d.stats[k].some(v => v != null) &&
      !["iteration", "k", "w_minus_l", "K"].includes(k));
    if (!keys.length) { show("stats-card", false); return; }
    const fit = d.strategy === "texel";
    const top = k => Math.max(...d.stats[k].filter(v => v != null).map(Math.abs));
    const big = Math.max(...keys.map(top));
    const series = keys.map((k, j) => ({label: STAT_LABELS[k] || k, color: ET.color(j + 3),
                                        values: d.stats[k],
                                        scale: top(k) < big / 20 ? "r" : "y"}));
    const step = d.terms ? d.terms.step : [];
    $("stats-title").textContent = fit ? "Errors by epoch" : step.length
      ? d.terms.title + "'s " + step.join(", ") + (keys.includes("step") ? " and step" : "")
      : "Strategy statistics";
    Charts.draw("stats", "stats:" + keys.join(","), fit ? d.generations : d.games, series,
                {x: fit ? "epoch" : "games", digits: 4});
    show("stats-card", true);
  }

  function drawWdl(d) {
    const played = d.wdl.slice(1).some(r => r[0] + r[1] + r[2] > 0);
    if (!played) { show("wdl-card", false); return; }
    const gens = d.generations.slice(1), w = d.wdl.slice(1);
    Charts.draw("wdl", "wdl", gens, [
      {label: "wins", color: "#1f8a4c", values: w.map(r => r[0])},
      {label: "draws", color: "#7b8698", values: w.map(r => r[1])},
      {label: "losses", color: "#c0392b", values: w.map(r => r[2])}], {x: "generation", digits: 0});
    show("wdl-card", true);
  }

  function genTable(d) {
    const n = d.generations.length, rows = [];
    for (let k = n - 1; k >= 1 && rows.length < 30; k--) {
      const w = d.wdl[k], p = d.pentanomial ? d.pentanomial[k] : null;
      rows.push('<tr data-generation="' + d.generations[k] + '"><td>' + d.generations[k] +
        '</td><td class="num">' + ET.num(d.games[k] - d.games[k - 1]) + '</td><td class="num">' +
        w[0] + '</td><td class="num">' + w[1] + '</td><td class="num">' + w[2] +
        '</td><td data-field="ptnml">' + (p ? "[" + p.join(", ") + "]" : "-") + "</td></tr>");
    }
    $("gentable").querySelector("tbody").innerHTML = rows.join("");
  }

  let pstView = "now";
  function heat(v, lim) {  // red above 0, blue below, white at 0
    if (v == null || !isFinite(v)) return "#d5d9e0";
    const t = Math.min(1, Math.abs(v) / (lim || 1));
    const c = v >= 0 ? [192, 57, 43] : [47, 111, 219];
    return "rgb(" + c.map(x => Math.round(255 + (x - 255) * t)).join(",") + ")";
  }
  function drawPst(d) {
    if (!d.pst) { show("pst-card", false); return; }
    const cell = 20, files = "abcdefgh";
    const val = i => i < 0 ? null : pstView === "start" ? d.start[i]
      : pstView === "change" ? d.now[i] - d.start[i] : d.now[i];
    $("pst").innerHTML = d.pst.map(t => {
      const vs = t.index.map(val);
      const lim = Math.max(1, ...vs.filter(v => v != null).map(Math.abs));
      let cells = "";
      for (let r = 7; r >= 0; r--) for (let f = 0; f < 8; f++) {
        const sq = r * 8 + f, v = vs[sq], x = 10 + f * cell, y = (7 - r) * cell;
        cells += '<rect x="' + x + '" y="' + y + '" width="' + cell + '" height="' + cell +
          '" fill="' + heat(v, lim) + '" data-square="' + files[f] + (r + 1) + '" data-value="' +
          (v == null ? "" : Math.round(v * 100) / 100) + '"><title>' + files[f] + (r + 1) + ": " +
          (v == null ? "no weight" : ET.num(v, 1)) + "</title></rect>" + (v == null ? "" :
          '<text x="' + (x + cell / 2) + '" y="' + (y + cell / 2 + 2.5) + '" text-anchor="middle">' +
          Math.round(v) + "</text>");
      }
      for (let k = 0; k < 8; k++)
        cells += '<text x="4" y="' + ((7 - k) * cell + cell / 2 + 2.5) + '" text-anchor="middle">' + (k + 1) +
          '</text><text x="' + (10 + k * cell + cell / 2) + '" y="' + (8 * cell + 8) + '" text-anchor="middle">' + files[k] + "</text>";
      return '<figure data-table="' + t.phase + "." + t.piece + '"><svg width="' + (10 + 8 * cell) +
        '" height="' + (8 * cell + 11) + '" viewBox="0 0 ' + (10 + 8 * cell) + " " + (8 * cell + 11) + '">' + cells +
        "</svg><figcaption>" + ET.esc(t.piece) + " (" + ET.esc(t.phase) + "), |max| " + ET.num(lim) + "</figcaption></figure>";
    }).join("");
    show("pst-card", true);
  }

  function table(d) {
    if (!d.names) { show("table-card", false); return; }
    const rows = d.names.map((name, i) => ({i: i, name: name, start: d.start[i], now: d.now[i],
      change: d.now[i] - d.start[i], std: d.std_now ? d.std_now[i] : null,
      lower: d.lower ? d.lower[i] : null, upper: d.upper ? d.upper[i] : null, fixed: d.fixed[i]}));
    const q = $("filter").value.trim().toLowerCase();
    const val = r => sortKey === "change" ? Math.abs(r.change) : r[sortKey];
    const shown = rows.filter(r => !q || r.name.toLowerCase().includes(q)).sort((a, b) => {
      const x = val(a), y = val(b);
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    $("wtable").querySelector("tbody").innerHTML = shown.map(r =>
      '<tr data-weight="' + ET.esc(r.name) + '"><td><input type="checkbox" data-i="' + r.i + '"' +
      (charted && charted.includes(r.i) ? " checked" : "") + (r.fixed ? " disabled" : "") + "></td>" +
      "<td>" + ET.esc(r.name) + (r.fixed ? ' <span class="muted">fixed</span>' : "") + "</td>" +
      '<td class="num">' + ET.num(r.start, 1) + '</td><td class="num" data-field="now">' + ET.num(r.now, 1) +
      '</td><td class="num">' + (r.change > 0 ? "+" : "") + ET.num(r.change, 1) + '</td><td class="num">' +
      ET.num(r.std, 1) + '</td><td class="num wide">' + ET.num(r.lower) + '</td><td class="num wide">' +
      ET.num(r.upper) + "</td></tr>").join("");
    document.querySelectorAll("#wtable th.sortable").forEach(th => {
      th.classList.toggle("sorted", th.dataset.key === sortKey);
      th.classList.toggle("asc", th.dataset.key === sortKey && asc);
    });
    show("table-card", true);
  }

  function drawStrength(s) {
    const xs = s.games || [];
    const note = s.note ? " " + s.note + "." : "";
    $("strength-method").textContent = (s.method ? "Method: " + s.method + " (" + s.matches +
      " mini-matches)." : "") + note + (s.checkpoints && s.checkpoints.length
      ? " Points: checkpoint matches against shannon on held-out openings (verify-curve.json)."
      : " Checkpoint matches against shannon (verify-curve.json, from evotune compare " +
        "--verify-every) are drawn here when the run has them.");
    if (!xs.length && !(s.checkpoints || []).length) {
      $("strength").innerHTML = '<p class="muted">No strength curve yet.</p>';
      delete Charts.all.strength;
      return;
    }
    if (!Charts.all.strength) $("strength").innerHTML = "";
    const lo = s.elo.map((v, i) => v - s.error[i]), hi = s.elo.map((v, i) => v + s.error[i]);
    const series = [
      {label: "Elo vs " + s.against, color: "#2f6fdb", values: s.elo, width: 2},
      {label: "95% low", color: "rgba(47,111,219,0.35)", values: lo, dash: [4, 4], width: 1},
      {label: "95% high", color: "rgba(47,111,219,0.35)", values: hi, dash: [4, 4], width: 1}];
    let x = xs.slice();
    if (s.checkpoints && s.checkpoints.length) {  // measured points, on their own x values
      const all = Array.from(new Set(xs.concat(s.checkpoints.map(c => c.games)))).sort((a, b) => a - b);
      const at = (arr) => all.map(v => { const k = xs.indexOf(v); return k < 0 ? null : arr[k]; });
      series[0].values = at(s.elo); series[1].values = at(lo); series[2].values = at(hi);
      const cp = all.map(v => { const c = s.checkpoints.find(c => c.games === v); return c ? c.elo : null; });
      series.push({label: "checkpoint match vs shannon", color: "#b26b00", values: cp, points: true, width: 0});
      x = all;
    }
    Charts.draw("strength", "strength:" + series.length, x, series,
                {y: "Elo", digits: 1, bands: [{series: [3, 2], fill: "rgba(47,111,219,0.10)"}]});
  }

  function training(d) {
    const recs = (d.status && d.status.records) || [];
    if (!recs.length) { show("loss-card", false); return; }
    const xs = recs.map(r => r.epoch);
    const series = [{label: "training loss", color: "#2f6fdb", values: recs.map(r => r.train_loss)}];
    if (recs.some(r => r.val_loss != null))
      series.push({label: "validation loss", color: "#d9534f", values: recs.map(r => r.val_loss)});
    Charts.draw("loss", "loss:" + series.length, xs, series, {x: "epoch", digits: 5});
    const lastRec = recs[recs.length - 1];
    const pps = lastRec.positions && lastRec.seconds ? ET.num(lastRec.positions / lastRec.seconds) + " positions/s; " : "";
    $("loss-note").textContent = pps + (d.status.checksum ? "net checksum " + d.status.checksum : "");
    show("loss-card", true);
  }

  function facts(d) {
    const f = d.fit, n = d.net, rows = [];
    const row = (k, v) => rows.push('<tr data-fact="' + k + '"><th>' + ET.esc(k) + "</th><td>" + v + "</td></tr>");
    if (f) {
      $("facts-title").textContent = "The fit";
      if (f.l2 != null) row("ridge (l2)", ET.esc(f.l2) + (f.l2_chosen_by_validation
        ? " (chosen by validation error of " + f.l2_tried.length + " tried: " + f.l2_tried.map(t =>
            ET.esc(t.l2) + " " + ET.num(t.validation, 6)).join(", ") + ")" : f.l2_tried ? " (given)" : ""));
      if (f.positions_read != null) row("positions", ET.num(f.positions_read) + " read, " +
        ET.num(f.train) + " training, " + ET.num(f.validation) + " validation");
      if (f.read_per_s != null) row("read and extracted", ET.num(f.read_per_s) + " positions/s");
      if (f.fitted_per_s != null) row("fitted", ET.num(f.fitted_per_s) + " positions/s (training positions x " +
        f.epochs + " epochs over the epochs' time)");
    }
    if (n) {
      $("facts-title").textContent = "The net";
      if (n.shape) { row("shape", ET.esc(n.shape)); row("net", ET.esc(n.describe)); row("SHA-256 of net.nnue", "<code>" + ET.esc(n.sha256) + "</code>"); }
      if (n.positions_per_s != null) row("positions/s", ET.num(n.positions_per_s) + " (epoch " + n.epoch + ")");
    }
    const absent = (f || n || {}).absent || [];
    $("facts").querySelector("tbody").innerHTML = rows.join("");
    $("facts-absent").textContent = absent.length ? "Not in the run's files yet: " + absent.join("; ") + "." : "";
    show("facts-card", !!(f || n));
  }

  function games(d) {
    const gs = d.latest_games || [];
    show("games-card", gs.length > 0);
    $("games").querySelector("tbody").innerHTML = gs.map(g => "<tr><td>" + g.generation + "</td><td>" +
      ET.esc(g.white) + "</td><td>" + ET.esc(g.black) + "</td><td>" + ET.esc(g.result) +
      '</td><td class="wide">' + ET.esc(g.termination) + '</td><td class="num">' + g.plies +
      '</td><td><a href="' + api + "/pgn/" + g.generation + '">gen ' + g.generation + "</a></td></tr>").join("");
  }

  function render(d) {
    data = d;
    figures(d.row);
    $("damaged").hidden = !(d.damaged || d.row.damaged);
    $("damaged").textContent = "damaged: " + (d.damaged || d.row.damaged || "");
    if (d.names && d.start) {
      drawWeights(d); drawStats(d); drawWdl(d);
      // below the charts: drawn after the charts are on screen (824 rows cost a frame or two)
      setTimeout(() => { if (d === data) { genTable(d); drawPst(d); table(d); } }, 0);
    }
    training(d);
    facts(d);
    games(d);
    show("check-card", !!d.final_check);
    if (d.final_check) $("check").textContent = d.final_check.join("\n");
    verification(d, kept);
  }

  let kept = [];  // the run's verification matches (verify-games/), polled beside the run
  function verification(d, ms) {
    const blocks = d.verify_blocks || [];
    show("verify-card", blocks.length > 0 || ms.length > 0);
    $("verify").innerHTML = blocks.map(b => '<pre class="block">' + ET.esc(b.join("\n")) + "</pre>").join("") +
      (ms.length ? '<table id="verify-matches"><thead><tr><th>match</th><th>A vs B</th><th>state</th>' +
        '<th class="num">games</th><th>score so far</th></tr></thead><tbody>' + ms.map(m =>
        '<tr data-match="' + ET.esc(m.id) + '"><td><a href="/match/' + m.id.split("/").map(encodeURIComponent).join("/") +
        '">' + ET.esc(m.id.split("/").pop()) + "</a></td>" + (m.damaged
          ? '<td colspan="4" class="damaged">damaged: ' + ET.esc(m.damaged) + "</td>"
          : "<td>" + ET.esc(m.a) + " vs " + ET.esc(m.b) + "</td><td>" + ET.badge(m.state) +
            '</td><td class="num">' + ET.num(m.games) + (m.planned ? " / " + ET.num(m.planned) : "") +
            "</td><td>" + ET.esc(m.result) + "</td>") + "</tr>").join("") + "</tbody></table>" : "");
  }

  document.querySelectorAll("input[name=scale]").forEach(r => r.addEventListener("change", () => {
    scale = r.value; if (data) drawWeights(data);
  }));
  $("filter").addEventListener("input", () => data && table(data));
  document.querySelectorAll("input[name=pst]").forEach(r => r.addEventListener("change", () => {
    pstView = r.value; if (data) drawPst(data);
  }));
  document.querySelectorAll("#wtable th.sortable").forEach(th => th.addEventListener("click", () => {
    if (sortKey === th.dataset.key) asc = !asc; else { sortKey = th.dataset.key; asc = th.dataset.key === "name"; }
    if (data) table(data);
  }));
  $("wtable").addEventListener("change", e => {
    const i = Number(e.target.dataset.i);
    if (!isFinite(i)) return;
    charted = e.target.checked ? charted.concat([i]) : charted.filter(j => j !== i);
    drawWeights(data);
  });

  ET.poll(async () => {
    const text = await ET.json(api);
    if (text !== last) { last = text; render(JSON.parse(text)); }
    const ms = JSON.parse(await ET.json(api + "/matches")).matches;
    if (JSON.stringify(ms) !== JSON.stringify(kept)) { kept = ms; if (data) verification(data, kept); }
    const st = await ET.json(api + "/strength");
    if (st !== lastStrength) { lastStrength = st; drawStrength(JSON.parse(st)); }
  });
})();
