/* evotune serve: the page of one match or verification match (its block, score and LLR), polled. */
"use strict";
(function () {
  const mid = location.pathname.replace(/^\/match\//, "").split("/").map(decodeURIComponent).join("/");
  const api = "/api/match/" + mid.split("/").map(encodeURIComponent).join("/");
  const $ = id => document.getElementById(id);
  const show = (id, on) => { $(id).hidden = !on; };
  let last = "";
  $("title").textContent = mid;
  document.title = mid + " - evotune";

  function figures(r) {
    const f = [["state", ET.badge(r.state)], ["kind", ET.esc(r.kind) + (r.run
                 ? ' of <a href="/run/' + encodeURIComponent(r.run) + '">' + ET.esc(r.run) + "</a>" : "")],
               ["A vs B", ET.esc(r.a) + " vs " + ET.esc(r.b)],
               ["games", ET.num(r.games) + (r.planned ? " / " + ET.num(r.planned) : "")],
               ["result", ET.esc(r.result)]];
    $("figures").innerHTML = f.map(([k, v]) => "<div><b>" + v + "</b><span>" + k + "</span></div>").join("");
    $("state").innerHTML = ET.badge(r.state);
  }

  function render(d) {
    const r = d.row;
    if (!r.damaged) figures(r);
    $("damaged").hidden = !d.damaged;
    $("damaged").textContent = "damaged: " + (d.damaged || "");
    show("block-card", !!d.block);
    if (d.block) {
      $("block").textContent = d.block.join("\n");
      $("block-method").textContent = (r.state === "finished"
        ? "The match's result (result.json), as evotune match printed it."
        : "The games kept so far (games.jsonl), as evotune match prints its interim block.");
    }
    const s = d.running;
    show("score-card", !!(s && s.games.length));
    if (s && s.games.length) {
      const lo = s.elo.map((v, i) => v == null || s.error[i] == null ? null : v - s.error[i]);
      const hi = s.elo.map((v, i) => v == null || s.error[i] == null ? null : v + s.error[i]);
      Charts.draw("score", "score", s.games, [
        {label: "Elo of A", color: "#2f6fdb", values: s.elo, width: 2},
        {label: "95% low", color: "rgba(47,111,219,0.35)", values: lo, dash: [4, 4], width: 1},
        {label: "95% high", color: "rgba(47,111,219,0.35)", values: hi, dash: [4, 4], width: 1}],
        {y: "Elo", digits: 1, bands: [{series: [3, 2], fill: "rgba(47,111,219,0.10)"}]});
    }
    const sprt = s && s.lower != null && s.llr.some(v => v != null);
    show("llr-card", !!sprt);
    if (sprt) {
      Charts.draw("llr", "llr", s.games, [
        {label: "LLR", color: "#1f8a4c", values: s.llr, width: 2},
        {label: "H1 bound", color: "#c0392b", values: s.games.map(() => s.upper), dash: [6, 4], width: 1},
        {label: "H0 bound", color: "#7b8698", values: s.games.map(() => s.lower), dash: [6, 4], width: 1}],
        {y: "LLR", digits: 2});
      $("llr-method").textContent = "GSPRT [" + s.elo0 + ", " + s.elo1 + "] (logistic Elo) on the " +
        "pentanomial pairs, fishtest's LLR: H1 at " + ET.num(s.upper, 2) + ", H0 at " + ET.num(s.lower, 2) + ".";
    }
    const gs = d.latest_games || [];
    show("games-card", gs.length > 0);
    $("games").querySelector("tbody").innerHTML = gs.map(g => "<tr><td>" + ET.esc(g.key.join(".")) +
      "</td><td>" + ET.esc(g.white) + "</td><td>" + ET.esc(g.black) + "</td><td>" + ET.esc(g.result) +
      '</td><td class="wide">' + ET.esc(g.termination) + '</td><td class="num">' + g.plies + "</td></tr>").join("");
  }

  ET.poll(async () => {
    const text = await ET.json(api);
    if (text !== last) { last = text; render(JSON.parse(text)); }
  });
})();
