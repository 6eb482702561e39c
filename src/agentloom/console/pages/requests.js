// The request log: every request of the traffic (responses, chat completions, embeddings,
// moderations, managed agents' messages ...), newest first, filtered by the server, a page at a
// time ("Older" follows the page's last row); each row opens the request's detail.

import { get, query } from "../api.js";
import { h, clear, table, time } from "../dom.js";
import { pager } from "../pager.js";
import { requestFilters, rangeStart } from "../request_filters.js";
import { logTabs, statusBadge } from "../log_tabs.js";
import { dollars, millis } from "../ticks.js";

const PAGE = 20;
const RANGES = ["", "1h", "24h", "7d", "30d"];

function columns(organization, names) {
  return [
    ["Created", (r) => time(r.created_at)],
    ["Request", (r) => h("a", { href: `#/requests/${encodeURIComponent(r.id)}`, class: "mono" }, r.id)],
    organization ? ["Project", (r) => h("span", { title: r.project_id }, names.get(r.project_id) || r.project_id)] : null,
    ["Endpoint", (r) => h("span", { class: "kind endpoint" }, r.endpoint)],
    ["Model", (r) => r.model || "—"],
    ["Status", statusBadge],
    ["Tokens in / out", (r) => `${r.input_tokens} / ${r.output_tokens}`],
    ["Cost", (r) => dollars(r.cost)],
    ["Latency", (r) => millis(r.latency_ms)],
    ["Error", (r) => r.error_code || ""],
  ].filter(Boolean);
}

export async function render(root, ctx) {
  const results = h("div", { class: "results requests" });
  let pages = null;
  const filters = await requestFilters(ctx, { ranges: RANGES, range: "", onApply: () => pages.reset().catch(ctx.banner) });
  const { base, options, organization } = filters.source;
  const fetchPage = (after) => get(query(base, { limit: PAGE, after, created_after: rangeStart(filters.range(), Date.now() / 1000), ...filters.params() }), options);
  pages = pager(results, fetchPage, (page) => table(columns(organization, filters.names), page.data, "No logged requests match."), ctx.banner);
  clear(root, logTabs("requests"), h("h1", {}, "Request log"),
    h("p", { class: "muted" }, organization ? "Every project's requests of every kind, newest first (a request shows here about a second after its answer)."
      : "Your project's requests of every kind, newest first (a request shows here about a second after its answer)."),
    filters.form, results);
  await pages.reset();
}
