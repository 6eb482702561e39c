// Usage reports (/v1/organization/usage/completions) as an SVG bar chart of tokens a day and a
// table of totals per project and model. No chart library: a few rectangles.

import { get, query } from "./api.js";
import { h, table } from "./dom.js";

const DAYS = 14;

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  el.append(...children);
  return el;
}

function tokens(result) {
  return (result.input_tokens || 0) + (result.output_tokens || 0);
}

export function usageChart(buckets) {
  const totals = buckets.map((b) => b.results.reduce((sum, r) => sum + tokens(r), 0));
  const most = Math.max(1, ...totals);
  const width = 28;
  const height = 120;
  const bars = buckets.map((b, i) => {
    const tall = Math.round((height * totals[i]) / most);
    const day = new Date(b.start_time * 1000).toISOString().slice(5, 10);
    return svg("g", {},
      svg("title", {}, `${day}: ${totals[i]} tokens`),
      svg("rect", { x: i * width + 4, y: height - tall, width: width - 8, height: tall, class: "bar" }),
      svg("text", { x: i * width + width / 2, y: height + 14, "text-anchor": "middle", class: "tick" }, day.slice(3)));
  });
  return svg("svg", { class: "chart", role: "img", "aria-label": `Tokens a day, most ${most}`, viewBox: `0 0 ${Math.max(1, buckets.length) * width} ${height + 20}` }, ...bars);
}

export function usageRows(buckets, names) {
  const rows = new Map();
  for (const result of buckets.flatMap((b) => b.results)) {
    const key = `${result.project_id}\u0000${result.model}`;
    const row = rows.get(key) || { project: result.project_id, model: result.model, requests: 0, input: 0, output: 0 };
    row.requests += result.num_model_requests || 0;
    row.input += result.input_tokens || 0;
    row.output += result.output_tokens || 0;
    rows.set(key, row);
  }
  return table([
    ["Project", (r) => names.get(r.project) || r.project || "—"],
    ["Model", (r) => r.model || "—"],
    ["Requests", (r) => String(r.requests)],
    ["Input tokens", (r) => String(r.input)],
    ["Output tokens", (r) => String(r.output)],
  ], [...rows.values()], "No usage in this period.");
}

// The section of the last DAYS days' token usage, per project and model (`names`: project id
// to its name).
export async function usageSection(names) {
  const today = Math.floor(Date.now() / 86_400_000) * 86400; // days start at 00:00 UTC
  const start = today - (DAYS - 1) * 86400;
  const path = query("/v1/organization/usage/completions", { start_time: start, bucket_width: "1d", limit: DAYS + 1, group_by: ["project_id", "model"] });
  const page = await get(path, { project: false }); // the organization's route: in no project
  const used = page.data.some((bucket) => bucket.results.length);
  return h("section", { class: "usage", "aria-labelledby": "usage-h" }, h("h2", { id: "usage-h" }, `Token usage, last ${DAYS} days`),
    used ? usageChart(page.data) : null, usageRows(page.data, names));
}
