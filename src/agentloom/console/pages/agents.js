// Managed agents (/v1/managed-agents): the list, and one agent with its recent runs.

import { get, all, query } from "../api.js";
import { h, clear, table, time, badge, code, pretty } from "../dom.js";

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
