/* evotune serve: line charts with uPlot (shipped in the package), redrawn in place. */
"use strict";
const Charts = {
  all: {},
  height() { return window.innerWidth < 700 ? 220 : 280; },
  // id: the element; key: what makes the series (a new key rebuilds the chart);
  // xs: x values; series: [{label, values, color, dash, width, points, show}]; o: {x, y, band}
  draw(id, key, xs, series, o) {
    o = o || {};
    const el = document.getElementById(id);
    const data = [xs].concat(series.map(s => s.values));
    const have = Charts.all[id];
    if (have && have.key === key) { have.u.setData(data); return have.u; }
    if (have) have.u.destroy();
    const single = xs.length <= 1;
    const opts = {
      width: Math.max(el.clientWidth, 240), height: Charts.height(),
      scales: {x: {time: false}},
      legend: {live: true},
      cursor: {drag: {x: true, y: false}},
      series: [{label: o.x || "games", value: (u, v) => v == null ? "-" : ET.num(v)}].concat(
        series.map(s => ({label: s.scale === "r" ? s.label + " (right axis)" : s.label, stroke: s.color, width: s.width || 1.5,
                          dash: s.dash, show: s.show !== false, scale: s.scale || "y",
                          value: (u, v) => v == null ? "-" : ET.num(v, o.digits == null ? 1 : o.digits),
                          points: {show: single || !!s.points, size: single ? 8 : 5}}))),
      axes: [{label: o.x || "games", values: (u, ticks) => ticks.map(t => ET.num(t)),
              incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000,
                      1e5, 2e5, 5e5, 1e6]},
             {label: o.y || "", size: 56}].concat(series.some(s => s.scale === "r")
               ? [{scale: "r", side: 1, grid: {show: false}, size: 56}]
               : []),
    };
    if (o.bands) opts.bands = o.bands;
    const u = new uPlot(opts, data, el);
    Charts.all[id] = {key: key, u: u};
    return u;
  },
  resize() {
    for (const id in Charts.all) {
      const el = document.getElementById(id);
      Charts.all[id].u.setSize({width: Math.max(el.clientWidth, 240), height: Charts.height()});
    }
  },
};
window.addEventListener("resize", () => { clearTimeout(Charts._t); Charts._t = setTimeout(Charts.resize, 150); });
