// One logged request: every field of its row, and what it stored: a link to the stored
// response, or the chat completion kept (shown here, the console has no page of its own).

import { get, session } from "../api.js";
import { h, clear, time, code, pretty } from "../dom.js";
import { logSource } from "../request_filters.js";
import { logTabs, statusBadge } from "../log_tabs.js";
import { storedCompletion } from "../stored_completion.js";
import { dollars, millis } from "../ticks.js";

const dash = (value) => (value === null || value === undefined || value === "" ? "—" : String(value));

const isCompletion = (row) => (row.response_id || "").startsWith("chatcmpl");

// The stored response in its project: the admin key works in the row's project first.
function stored(row, ctx) {
  if (!row.response_id) return "—";
  if (isCompletion(row)) return h("span", {}, h("span", { class: "mono stored" }, row.response_id), " (below)");
  const open = async (event) => {
    event.preventDefault();
    if (ctx.admin && session.project !== row.project_id) { session.project = row.project_id; await ctx.refresh(); }
    location.hash = `#/logs/${row.response_id}`;
  };
  return h("a", { href: `#/logs/${row.response_id}`, class: "mono stored", onclick: open }, row.response_id);
}

function facts(row, ctx) {
  const rows = [
    ["Request id", h("span", { class: "mono" }, row.id)],
    ["Created", time(row.created_at)],
    ["Endpoint", row.endpoint],
    ["Status", statusBadge(row)],
    ["Error code", dash(row.error_code)],
    ["Project", row.project_id],
    ["API key", dash(row.api_key_id)],
    ["User", dash(row.user)],
    ["Model", dash(row.model)],
    ["Deployment", dash(row.deployment)],
    ["Input tokens", `${row.input_tokens} (${row.input_cached_tokens} cached)`],
    ["Output tokens", String(row.output_tokens)],
    ["Cost", dollars(row.cost)],
    ["Latency", millis(row.latency_ms)],
    ["Time to first token", millis(row.time_to_first_token_ms)],
    ["Batch", dash(row.batch_id)],
    [isCompletion(row) ? "Stored completion" : "Stored response", stored(row, ctx)],
  ];
  return h("dl", { class: "facts request" }, rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export async function render(root, ctx, id) {
  const { base, options } = logSource(ctx);
  const row = await get(`${base}/${encodeURIComponent(id)}`, options);
  clear(root, logTabs("requests"), h("p", {}, h("a", { href: "#/requests" }, "← Request log")),
    h("h1", {}, `${row.endpoint} request`), facts(row, ctx),
    h("details", {}, h("summary", {}, "As JSON"), code(pretty(row), "The logged request")));
  if (isCompletion(row)) root.append(await storedCompletion(row.response_id, row.project_id).catch((error) => h("p", { class: "muted" }, `The stored completion: ${error.message}`)));
}
