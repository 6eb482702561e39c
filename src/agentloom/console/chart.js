// A chart over time as SVG, no chart library: stacked bars (and lines) a bucket, a y axis with
// value ticks and grid lines, an x axis with time ticks (UTC), a bucket's values on hover
// (<title>), a legend, and a caption with the totals.

import { h } from "./dom.js";
import { niceTicks, timeLabel, timeTicks, timeTitle } from "./ticks.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 640;
const H = 190;
const PAD = { left: 52, right: 10, top: 10, bottom: 34 };

export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  el.append(...children);
  return el;
}

function highest(buckets, series) {
  const bars = series.filter((s) => s.kind !== "line");
  const lines = series.filter((s) => s.kind === "line");
  return Math.max(0, ...buckets.map((b) => bars.reduce((sum, s) => sum + (s.value(b) || 0), 0)),
    ...buckets.flatMap((b) => lines.map((s) => s.value(b) || 0)));
}

function yAxis(ticks, y, format) {
  return svg("g", { class: "axis y" }, ...ticks.map((tick) => svg("g", {},
    svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(tick), y2: y(tick), class: tick ? "grid" : "baseline" }),
    svg("text", { x: PAD.left - 6, y: y(tick) + 3, "text-anchor": "end", class: "tick" }, format(tick)))));
}

function xAxis(buckets, width, x, slot) {
  const ticks = timeTicks(buckets.length).map((i) => svg("g", {},
    svg("line", { x1: x(i) + slot / 2, x2: x(i) + slot / 2, y1: H - PAD.bottom, y2: H - PAD.bottom + 4, class: "baseline" }),
    svg("text", { x: x(i) + slot / 2, y: H - PAD.bottom + 15, "text-anchor": "middle", class: "tick" }, timeLabel(buckets[i].start_time, width))));
  const title = svg("text", { x: W - PAD.right, y: H - 3, "text-anchor": "end", class: "axis-title" }, width === "1d" ? "day (UTC)" : "time (UTC)");
  return svg("g", { class: "axis x" }, svg("line", { x1: PAD.left, x2: PAD.left, y1: PAD.top, y2: H - PAD.bottom, class: "baseline" }), ...ticks, title);
}

function hover(bucket, width, series, format) {
  const values = series.map((s) => `${s.name}: ${format(s.value(bucket) || 0)}`);
  return `${timeTitle(bucket.start_time, width)} — ${values.join(", ")}`;
}

function bars(buckets, width, series, format, { x, y, slot }) {
  const stacked = series.filter((s) => s.kind !== "line");
  return buckets.map((bucket, i) => {
    let base = 0;
    const rects = stacked.map((s, k) => {
      const value = s.value(bucket) || 0;
      const top = y(base + value);
      const rect = svg("rect", { x: x(i) + slot * 0.1, y: top, width: Math.max(1, slot * 0.8), height: y(base) - top, class: `bar s${k} ${s.class || ""}` });
      base += value;
      return rect;
    });
    const hit = svg("rect", { x: x(i), y: PAD.top, width: slot, height: H - PAD.top - PAD.bottom, class: "hit" });
    return svg("g", { class: "bucket" }, svg("title", {}, hover(bucket, width, series, format)), hit, ...rects);
  });
}

// A line's points: a dot a bucket that has a value (none where it is null: no requests).
function lines(buckets, series, { x, y, slot }) {
  return series.filter((s) => s.kind === "line").flatMap((s) => buckets.map((b, i) => {
    const value = s.value(b);
    return value === null || value === undefined ? null : svg("circle", { cx: x(i) + slot / 2, cy: y(value), r: 2.5, class: "point" });
  }).filter(Boolean));
}

function legend(series) {
  return h("p", { class: "legend" }, series.map((s, k) =>
    h("span", { class: "key" }, h("span", { class: `swatch ${s.kind === "line" ? "line" : `s${k} ${s.class || ""}`}`, "aria-hidden": "true" }), s.name)));
}

// A figure: `title`, `totals` (text under it), the chart of `series` ([{name, value(bucket),
// kind: "bar" | "line", class}]: bars stacked, a line's values as dots) over `buckets` (the summary's) of `width` ("1m", "1h", "1d").
export function timeChart({ title, totals, buckets, width, series, format = String }) {
  const ticks = niceTicks(highest(buckets, series));
  const top = ticks[ticks.length - 1];
  const plotH = H - PAD.top - PAD.bottom;
  const slot = (W - PAD.left - PAD.right) / Math.max(1, buckets.length);
  const at = { x: (i) => PAD.left + i * slot, y: (v) => PAD.top + plotH - (plotH * v) / top, slot };
  const chart = svg("svg", { class: "chart time", role: "img", "aria-label": `${title}: ${totals}`, viewBox: `0 0 ${W} ${H}` },
    yAxis(ticks, at.y, format), xAxis(buckets, width, at.x, slot),
    ...bars(buckets, width, series, format, at), ...lines(buckets, series, at));
  return h("figure", { class: "chart-box", "data-chart": title },
    h("figcaption", {}, h("strong", {}, title), " ", h("span", { class: "muted totals" }, totals)),
    chart, legend(series));
}
