// Managed agents (/v1/managed-agents): the list, and a form to create one (pages/agent.js shows
// one agent).

import { get, post, all } from "../api.js";
import { h, clear, table, time, badge } from "../dom.js";
import { createBody } from "../agent_config.js";
import { agentForm } from "./agent_form.js";

export async function render(root, ctx) {
  const [agents, models] = await Promise.all([all("/v1/managed-agents"), get("/v1/models").catch(() => ({ data: [] }))]);
  const create = agentForm(models.data, { creating: true, label: "Create agent", submit: async (values) => {
    ctx.banner(null);
    try {
      const made = await post("/v1/managed-agents", createBody(values));
      location.hash = `#/agents/${made.id}`;
    } catch (error) { ctx.banner(error); }
  } });
  clear(root, h("h1", {}, "Managed agents"), table([
    ["Created", (a) => time(a.created_at)],
    ["Agent", (a) => h("a", { href: `#/agents/${a.id}`, class: "mono" }, a.id)],
    ["Name", (a) => a.name],
    ["Type", (a) => a.agent_type],
    ["Status", (a) => badge(a.status)],
    ["Schedule", (a) => (a.schedule ? (a.schedule.cron || `every ${a.schedule.every} s`) : "—")],
    ["Runs", (a) => String(a.total_runs)],
    ["Tokens", (a) => String(a.total_tokens)],
  ], agents, "No managed agents."),
  h("details", { class: "create" }, h("summary", {}, "New agent"), create));
}
