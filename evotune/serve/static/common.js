/* evotune serve: what both pages share (fetching, formatting, the live indicator). */
"use strict";
const ET = {
  POLL_MS: 2000,
  async json(url) {
    const r = await fetch(url, {cache: "no-cache", credentials: "same-origin"});
    if (!r.ok) {
      let msg = r.status + " " + r.statusText;
      try { msg = (await r.json()).error || msg; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
    return r.text();
  },
  esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g,
      c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  },
  num(v, digits) {
    if (v == null || !isFinite(v)) return "-";
    return Number(v).toLocaleString("en-US", {maximumFractionDigits: digits == null ? 0 : digits,
                                              minimumFractionDigits: digits == null ? 0 : digits});
  },
  clock(s) {
    if (s == null || !isFinite(s)) return "-";
    s = Math.round(s);
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600),
          m = Math.floor(s % 3600 / 60), sec = s % 60;
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + String(m).padStart(2, "0") + "m";
    if (m) return m + "m " + String(sec).padStart(2, "0") + "s";
    return sec + "s";
  },
  badge(state) {
    return '<span class="badge ' + ET.esc(state) + '">' + ET.esc(state) + "</span>";
  },
  live(ok, text) {
    const el = document.getElementById("live");
    if (!el) return;
    el.textContent = text || (ok ? "live, updated " + new Date().toLocaleTimeString() : "no answer");
    el.classList.toggle("stale", !ok);
  },
  poll(fn) {
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try { await fn(); ET.live(true); }
      catch (e) { ET.live(false, "not updated: " + e.message); }
      finally { busy = false; }
    };
    tick();
    return setInterval(tick, ET.POLL_MS);
  },
  palette: ["#2f6fdb", "#d9534f", "#1f8a4c", "#b26b00", "#7d3cc8", "#0f8f9b", "#c2185b",
            "#5d6d1e", "#795548", "#455a64", "#e67e22", "#16a085"],
  color(i) { return ET.palette[i % ET.palette.length]; },
};
