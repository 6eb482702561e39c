// The request log's summary drawn: charts over time of requests, tokens, cost, errors and
// latency, and a table of the totals per project, model and endpoint.

import { h, table } from "./dom.js";
import { timeChart } from "./chart.js";
import { dollars, millis, short } from "./ticks.js";

const count = (n) => n.toLocaleString("en-US");

function percent(part, whole) {
  return whole ? ` (${Math.round((100 * part) / whole)}%)` : "";
}

// [title, totals text, series, format] of each chart.
function specs(t) {
  return [
    ["Requests", `${count(t.requests)} in all`,
      [{ name: "requests", value: (b) => b.requests }], short],
    ["Tokens", `${count(t.input_tokens)} in (${count(t.input_cached_tokens)} cached) · ${count(t.output_tokens)} out`,
      [{ name: "input", value: (b) => b.input_tokens }, { name: "output", value: (b) => b.output_tokens }], short],
    ["Cost", `${dollars(t.cost)} in all`,
      [{ name: "cost", value: (b) => b.cost }], dollars],
    ["Errors", `${count(t.errors)} in all${percent(t.errors, t.requests)}`,
      [{ name: "errors", value: (b) => b.errors, class: "bad" }], short],
    ["Latency", `p50 ${millis(t.latency_ms_p50)} · p95 ${millis(t.latency_ms_p95)} · mean ${millis(t.latency_ms_mean)} · max ${millis(t.latency_ms_max)}`,
      [{ name: "p50", value: (b) => b.latency_ms_p50 }, { name: "p95", value: (b) => b.latency_ms_p95, kind: "line" }], millis],
  ];
}

export function usageCharts(summary) {
  return h("div", { class: "charts" }, specs(summary.totals).map(([title, totals, series, format]) =>
    timeChart({ title, totals, buckets: summary.buckets, width: summary.bucket_width, series, format })));
}

export function groupsTable(summary, names) {
  return table([
    ["Project", (g) => names.get(g.project_id) || g.project_id],
    ["Model", (g) => g.model || "—"],
    ["Endpoint", (g) => g.endpoint],
    ["Requests", (g) => count(g.requests)],
    ["Errors", (g) => count(g.errors)],
    ["Input tokens", (g) => count(g.input_tokens)],
    ["Output tokens", (g) => count(g.output_tokens)],
    ["Cost", (g) => dollars(g.cost)],
    ["p50 latency", (g) => millis(g.latency_ms_p50)],
    ["p95 latency", (g) => millis(g.latency_ms_p95)],
  ], summary.groups, "No requests in this range.");
}
