// One managed agent: its state and configuration, edited (PATCH) or deleted (a confirming second
// click); a message streamed or queued, a run started and followed live (pages/agent_live.js);
// its messages a page at a time, and its recent runs.

import { get, del, call, query } from "../api.js";
import { h, clear, table, time, badge, code, pretty } from "../dom.js";
import { updateBody, valuesOf } from "../agent_config.js";
import { pager } from "../pager.js";
import { agentForm } from "./agent_form.js";
import { messageBox, runPanel } from "./agent_live.js";

const PAGE = 10;

function deleteButton(id, ctx) {
  const button = h("button", { type: "button", class: "danger", onclick: async () => {
    if (button.dataset.armed !== "yes") { button.dataset.armed = "yes"; button.textContent = "Confirm delete"; return; }
    try { await del(`/v1/managed-agents/${id}`); location.hash = "#/agents"; } catch (error) { ctx.banner(error); }
  } }, "Delete agent");
  return button;
}

function editor(agent, models, ctx, reload) {
  const form = agentForm(models, { values: valuesOf(agent), label: "Save changes", submit: async (values) => {
    ctx.banner(null);
    try { await call("PATCH", `/v1/managed-agents/${agent.id}`, updateBody(values, agent)); await reload(); } catch (error) { ctx.banner(error); }
  } });
  return h("details", { class: "edit" }, h("summary", {}, "Edit"), form);
}

const MESSAGE_COLUMNS = [
  ["Created", (m) => time(m.created_at)],
  ["From", (m) => (m.direction === "user_to_agent" ? "user" : "agent")],
  ["Content", (m) => h("div", { class: "text" }, m.content)],
  ["Status", (m) => badge(m.status)],
  ["Run", (m) => (m.run_id ? h("span", { class: "mono" }, m.run_id) : "—")],
];

// The conversation, newest first, PAGE at a time.
function messagesSection(id, ctx) {
  const box = h("div", { class: "messages" });
  const pages = pager(box, (after) => get(query(`/v1/managed-agents/${id}/messages`, { limit: PAGE, order: "desc", after })),
    (page) => table(MESSAGE_COLUMNS, page.data, "No messages yet."), ctx.banner);
  return { el: h("section", { "aria-labelledby": "messages-h" }, h("h2", { id: "messages-h" }, "Messages"), box), reset: pages.reset };
}

const RUN_COLUMNS = [
  ["Created", (r) => time(r.created_at)],
  ["Run", (r) => h("span", { class: "mono" }, r.id)],
  ["Trigger", (r) => (typeof r.trigger === "string" ? r.trigger : pretty(r.trigger))],
  ["Status", (r) => badge(r.status)],
  ["Reply", (r) => (r.reply_id ? h("a", { href: `#/logs/${r.reply_id}` }, r.reply_id) : "—")],
  ["Error", (r) => (r.error ? r.error.message : "")],
];

export async function render(root, ctx, id) {
  const [agent, models] = await Promise.all([get(`/v1/managed-agents/${id}`), get("/v1/models").catch(() => ({ data: [] }))]);
  const messages = messagesSection(id, ctx);
  const runs = h("div", { class: "runs" });
  const changed = async () => {
    const [page] = await Promise.all([get(query(`/v1/managed-agents/${id}/runs`, { limit: 20 })), messages.reset()]);
    clear(runs, table(RUN_COLUMNS, page.data, "No runs yet."));
  };
  const reload = () => render(root, ctx, id);
  clear(root, h("p", {}, h("a", { href: "#/agents" }, "← Managed agents")),
    h("h1", {}, agent.name),
    h("p", {}, badge(agent.status), " ", h("span", { class: "mono muted" }, agent.id), ` · ${agent.agent_type}`,
      agent.schedule ? ` · next scheduled run ${new Date(agent.schedule.next_run_at * 1000).toLocaleString()}` : ""),
    h("div", { class: "row" }, editor(agent, models.data, ctx, reload), deleteButton(id, ctx)),
    h("h2", {}, "Configuration"), code(pretty(agent.config)),
    agent.summary_memory ? [h("h2", {}, "Memory"), h("div", { class: "text" }, agent.summary_memory)] : null,
    messageBox(id, ctx, () => changed().catch(ctx.banner)),
    runPanel(id, ctx, () => changed().catch(ctx.banner)),
    messages.el,
    h("section", { "aria-labelledby": "runs-h" }, h("h2", { id: "runs-h" }, "Recent runs"), runs));
  await changed();
}
