// Managed agents (/v1/managed-agents): the list, and one agent with its recent runs and a message
// box whose reply streams in the agent's own format (agent_stream.js).

import { get, all, query, namedEvents } from "../api.js";
import { h, clear, field, table, time, badge, code, pretty } from "../dom.js";
import { newAgentState, applyAgent } from "../agent_stream.js";

function drawReply(box, state) {
  clear(box,
    state.reasoning ? h("details", { class: "item reasoning", open: true }, h("summary", {}, "reasoning"), h("div", { class: "text" }, state.reasoning)) : null,
    state.calls.map((c) => h("article", { class: "item tool-call", "data-call": c.id },
      h("header", {}, h("strong", {}, `${c.name} · ${c.id}`), c.success === null ? badge("in_progress") : badge(c.success ? "completed" : "failed")),
      code(pretty(c.arguments || ""), "arguments"), c.result === null ? null : code(String(c.result), "result"))),
    h("div", { class: "text reply" }, state.text),
    state.error ? h("p", { class: "error", role: "alert" }, state.error.message || "The turn failed.") : null,
    state.done && state.usage ? h("p", { class: "muted" }, `${state.usage.total_tokens} tokens`) : null);
}

// A message to the agent, its reply streamed (stream: true) and drawn as it arrives.
function messageBox(id, ctx) {
  const content = h("textarea", { name: "content", rows: 2, required: true, placeholder: "Ask the agent…" });
  const reply = h("div", { class: "agent-reply", "aria-live": "polite" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const state = newAgentState();
    form.dataset.status = "streaming";
    try {
      const sent = { content: content.value.trim(), stream: true };
      content.value = "";
      for await (const frame of namedEvents("POST", `/v1/managed-agents/${id}/messages`, sent, { signal: ctx.signal })) drawReply(reply, applyAgent(state, frame));
    } catch (error) { if (!ctx.signal.aborted) ctx.banner(error); }
    form.dataset.status = state.error ? "failed" : "done";
  } }, field("Message", content), h("button", { type: "submit" }, "Send"), reply);
  return h("section", { "aria-labelledby": "message-h" }, h("h2", { id: "message-h" }, "Send a message"), form);
}

export async function render(root, ctx, id) {
  if (!id) {
    clear(root, h("h1", {}, "Managed agents"), table([
      ["Created", (a) => time(a.created_at)],
      ["Agent", (a) => h("a", { href: `#/agents/${a.id}`, class: "mono" }, a.id)],
      ["Name", (a) => a.name],
      ["Type", (a) => a.agent_type],
      ["Status", (a) => badge(a.status)],
      ["Runs", (a) => String(a.total_runs)],
      ["Tokens", (a) => String(a.total_tokens)],
    ], await all("/v1/managed-agents"), "No managed agents."));
    return;
  }
  const [agent, runs] = await Promise.all([get(`/v1/managed-agents/${id}`), get(query(`/v1/managed-agents/${id}/runs`, { limit: 20 }))]);
  clear(root, h("p", {}, h("a", { href: "#/agents" }, "← Managed agents")),
    h("h1", {}, agent.name), h("p", {}, badge(agent.status), " ", h("span", { class: "mono muted" }, agent.id), ` · ${agent.agent_type}`),
    messageBox(id, ctx),
    h("h2", {}, "Configuration"), code(pretty(agent.config)),
    agent.summary_memory ? [h("h2", {}, "Memory"), h("div", { class: "text" }, agent.summary_memory)] : null,
    h("h2", {}, "Recent runs"), table([
      ["Created", (r) => time(r.created_at)],
      ["Run", (r) => h("span", { class: "mono" }, r.id)],
      ["Trigger", (r) => (typeof r.trigger === "string" ? r.trigger : pretty(r.trigger))],
      ["Status", (r) => badge(r.status)],
      ["Reply", (r) => (r.reply_id ? h("a", { href: `#/logs/${r.reply_id}` }, r.reply_id) : "—")],
      ["Error", (r) => (r.error ? r.error.message : "")],
    ], runs.data, "No runs yet."));
}
