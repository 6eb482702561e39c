// One stored response: its settings, input and output items, usage, timing, its trace as a
// waterfall, and for a background response still running, its live progress and a cancel button.

import { get, post, all, events } from "../api.js";
import { h, clear, time, seconds, badge, code, pretty } from "../dom.js";
import { items as drawItems, usage } from "../render.js";
import { newState, apply } from "../stream.js";
import { waterfall, sdkWaterfall, ms } from "../waterfall.js";

const RUNNING = new Set(["queued", "in_progress"]);
const RESUMES = 5;

// Milliseconds from the trace when there is one (created/completed are whole seconds).
function duration(r, traced) {
  if (traced) return h("span", { title: "from the trace" }, ms(traced.duration_ms));
  return seconds(r.created_at, r.completed_at);
}

function facts(r, traced) {
  const rows = [
    ["Status", badge(r.status)],
    ["Model", r.model],
    ["Created", time(r.created_at)],
    ["Completed", time(r.completed_at)],
    ["Duration", duration(r, traced)],
    ["Background", r.background ? "yes" : "no"],
    ["Previous", r.previous_response_id ? h("a", { href: `#/logs/${r.previous_response_id}` }, r.previous_response_id) : "—"],
    ["Conversation", r.conversation?.id ? h("a", { href: `#/conversations/${r.conversation.id}` }, r.conversation.id) : "—"],
    ["Usage", usage(r.usage)],
    ["Reasoning effort", r.reasoning?.effort || "—"],
    ["Tools", (r.tools || []).map((t) => t.name || t.type).join(", ") || "—"],
    ["Metadata", Object.keys(r.metadata || {}).length ? code(pretty(r.metadata)) : "—"],
  ];
  if (r.instructions) rows.push(["Instructions", h("div", { class: "text" }, typeof r.instructions === "string" ? r.instructions : pretty(r.instructions))]);
  if (r.error) rows.push(["Error", h("span", { class: "error" }, `${r.error.code}: ${r.error.message}`)]);
  if (r.incomplete_details) rows.push(["Incomplete", r.incomplete_details.reason]);
  return h("dl", { class: "facts" }, rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

// The trace ({trace, el}: its waterfall), or what stood in its way (trace null).
async function trace(id) {
  try {
    const found = await get(`/v1/responses/${id}/trace`);
    return { trace: found, el: waterfall(found) };
  } catch (error) {
    if (error.status === 404) return { trace: null, el: h("p", { class: "muted no-trace" }, "No trace recorded for this response.") };
    return { trace: null, el: h("p", { class: "error" }, `The trace could not be read: ${error.message}`) };
  }
}

// The Agents SDK's traces with a span of this response (what its exporter sent to
// /v1/traces/ingest), each with its spans; none (or unreadable) draws nothing.
async function sdkTraces(id) {
  try {
    const listed = await get(`/v1/traces?response_id=${encodeURIComponent(id)}&limit=5`);
    const traces = await Promise.all(listed.data.map((t) => get(`/v1/traces/${encodeURIComponent(t.id)}`)));
    if (!traces.length) return null;
    return h("section", { "aria-labelledby": "sdk-trace-h", class: "trace sdk-trace" },
      h("h2", { id: "sdk-trace-h" }, "Agents SDK trace"), traces.map(sdkWaterfall));
  } catch {
    return null;
  }
}

// Follows a running background response's stream, redrawing `output` as events arrive; a
// stream cut short is resumed after the last event seen (starting_after), a few times at most.
async function follow(r, output, liveStatus, ctx, done) {
  const state = newState();
  state.response = r;
  state.status = r.status;
  for (let attempt = 0; !state.done && attempt < RESUMES; attempt += 1) {
    const after = state.lastSequence >= 0 ? `&starting_after=${state.lastSequence}` : "";
    try {
      for await (const event of events("GET", `/v1/responses/${r.id}?stream=true${after}`, undefined, { signal: ctx.signal })) {
        apply(state, event);
        clear(liveStatus, badge(state.status), ` ${state.lastSequence + 1} events`);
        clear(output, drawItems(state.items));
      }
    } catch (error) {
      if (ctx.signal.aborted) return;
      if (error.status) { ctx.banner(error); return; } // the server said no: no use asking again
    }
  }
  if (!ctx.signal.aborted) done();
}

export async function render(root, ctx, id) {
  const r = await get(`/v1/responses/${id}`);
  const [input, traced, sdk] = await Promise.all([all(`/v1/responses/${id}/input_items`, { order: "asc" }).catch(() => null), trace(id), sdkTraces(id)]);
  const output = h("div", { class: "output" }, drawItems(r.output || []));
  const live = h("div", { class: "live" });
  clear(root,
    h("p", {}, h("a", { href: "#/logs" }, "← Logs")),
    h("h1", { class: "mono" }, r.id),
    live,
    facts(r, traced.trace),
    h("section", { "aria-labelledby": "input-h" }, h("h2", { id: "input-h" }, "Input"),
      input ? drawItems(input) : h("p", { class: "muted" }, "The input items could not be read.")),
    h("section", { "aria-labelledby": "output-h" }, h("h2", { id: "output-h" }, "Output"), output),
    h("section", { "aria-labelledby": "trace-h", class: "trace" }, h("h2", { id: "trace-h" }, "Trace"), traced.el),
    sdk);
  if (r.background && RUNNING.has(r.status)) {
    const liveStatus = h("span", { "aria-live": "polite" }, badge(r.status));
    const cancel = h("button", { type: "button", class: "danger", onclick: async () => {
      cancel.disabled = true;
      try { await post(`/v1/responses/${id}/cancel`); } catch (error) { ctx.banner(error); cancel.disabled = false; }
    } }, "Cancel");
    clear(live, h("div", { class: "card row" }, h("strong", {}, "Running in the background:"), liveStatus, cancel));
    follow(r, output, liveStatus, ctx, () => render(root, ctx, id).catch(ctx.banner));
  }
}
