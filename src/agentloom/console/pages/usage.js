// Usage: the request log summed up over time (requests, tokens, cost, errors and latency, and
// the totals per project, model and endpoint), filtered; for the admin key and a server without
// keys, every project's, with the organization's token usage report under it. A project's key
// sees its project's.

import { get, query } from "../api.js";
import { h, clear } from "../dom.js";
import { usageSection } from "../usage.js";
import { requestFilters } from "../request_filters.js";
import { groupsTable, usageCharts } from "../usage_charts.js";
import { span } from "../ticks.js";

const RANGES = ["1h", "24h", "7d", "30d"];

function intro(ctx, source) {
  if (!source.organization) return "Your project's requests, from the request log.";
  return ctx.keys ? "Every project's requests, from the request log (the admin key's view)."
    : "This server wants no keys: every request is the default project's, and its usage is here.";
}

export async function render(root, ctx) {
  const box = h("div", { class: "summary" }, h("p", { class: "muted" }, "Loading…"));
  const filters = await requestFilters(ctx, { ranges: RANGES, range: "24h", onApply: () => draw().catch(ctx.banner) });
  const { names } = filters;

  async function draw() {
    const asked = { ...span(filters.range(), Date.now() / 1000), ...filters.params() };
    const summary = await get(query(`${filters.source.base}/summary`, asked), filters.source.options);
    clear(box, usageCharts(summary), h("h3", {}, "By project, model and endpoint"), groupsTable(summary, names));
  }

  clear(root, h("h1", {}, "Usage"), h("p", { class: "muted" }, intro(ctx, filters.source)),
    h("section", { class: "request-usage", "aria-labelledby": "requests-h" },
      h("h2", { id: "requests-h" }, "Requests over time"), filters.form, box));
  await draw();
  if (filters.source.organization) root.append(await usageSection(names));
}
