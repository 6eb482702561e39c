// A managed agent's live work, in its own stream format (agent_stream.js): a message whose reply
// streams (POST .../messages with stream: true), and a run followed as it goes
// (GET .../runs/{run_id}?stream=true, resumed after the last frame seen when cut short).

import { get, post, namedEvents } from "../api.js";
import { h, clear, field, badge, code, pretty } from "../dom.js";
import { newAgentState, applyAgent } from "../agent_stream.js";

const RESUMES = 5;

export function drawReply(box, state) {
  clear(box,
    state.reasoning ? h("details", { class: "item reasoning", open: true }, h("summary", {}, "reasoning"), h("div", { class: "text" }, state.reasoning)) : null,
    state.calls.map((c) => h("article", { class: "item tool-call", "data-call": c.id },
      h("header", {}, h("strong", {}, `${c.name} · ${c.id}`), c.success === null ? badge("in_progress") : badge(c.success ? "completed" : "failed")),
      code(pretty(c.arguments || ""), "arguments"), c.result === null ? null : code(String(c.result), "result"))),
    h("div", { class: "text reply" }, state.text),
    state.error ? h("p", { class: "error", role: "alert" }, state.error.message || "The turn failed.") : null,
    state.done && state.usage ? h("p", { class: "muted" }, `${state.usage.total_tokens} tokens`) : null);
}

// A message to the agent, its reply streamed (stream: true) and drawn as it arrives; "Queue"
// stores it for the next run instead. changed() after either.
export function messageBox(id, ctx, changed) {
  const content = h("textarea", { name: "content", rows: 2, required: true, placeholder: "Ask the agent…" });
  const reply = h("div", { class: "agent-reply", "aria-live": "polite" });
  const queue = h("button", { type: "button", class: "secondary", onclick: async () => {
    if (!content.reportValidity()) return;
    try { await post(`/v1/managed-agents/${id}/messages`, { content: content.value.trim() }); content.value = ""; changed(); } catch (error) { ctx.banner(error); }
  } }, "Queue for the next run");
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
    changed();
  } }, field("Message", content), h("div", { class: "row" }, h("button", { type: "submit" }, "Send"), queue), reply);
  return h("section", { "aria-labelledby": "message-h" }, h("h2", { id: "message-h" }, "Send a message"), form);
}

// Follows a run's stream into `box` until [DONE]; the frames seen are counted to resume after.
async function followRun(path, box, ctx) {
  const state = newAgentState();
  let seen = 0;
  for (let attempt = 0; !state.done && attempt < RESUMES; attempt += 1) {
    const after = seen ? `&starting_after=${seen - 1}` : "";
    try {
      for await (const frame of namedEvents("GET", `${path}?stream=true${after}`, undefined, { signal: ctx.signal })) {
        seen += 1;
        drawReply(box, applyAgent(state, frame));
      }
      return state; // [DONE], or the stream's end: the run is over
    } catch (error) {
      if (ctx.signal.aborted || error.status) throw error; // left, or the server said no
    }
  }
  return state;
}

// "Run now": POST .../run, then its frames as they come (with a button that cancels it), then
// the run as it ended.
export function runPanel(id, ctx, changed) {
  const status = h("span", { class: "run-status", "aria-live": "polite" });
  const box = h("div", { class: "agent-reply" });
  let going = null; // the path of the run being followed
  const stop = h("button", { type: "button", class: "secondary", hidden: true, onclick: async () => {
    stop.disabled = true;
    try { if (going) await post(`${going}/cancel`); } catch (error) { ctx.banner(error); }
  } }, "Cancel run");
  const button = h("button", { type: "button", onclick: async () => {
    button.disabled = true;
    try {
      const run = await post(`/v1/managed-agents/${id}/run`);
      const path = `/v1/managed-agents/${id}/runs/${run.id}`;
      going = path;
      stop.hidden = false;
      stop.disabled = false;
      panel.dataset.status = "streaming";
      clear(status, badge(run.status), " ", h("span", { class: "mono" }, run.id));
      await followRun(path, box, ctx);
      stop.hidden = true;
      going = null;
      const ended = await get(path);
      panel.dataset.status = ended.status || "done";
      clear(status, badge(ended.status), " ", h("span", { class: "mono" }, run.id), ended.error ? ` ${ended.error.message}` : "");
      changed();
    } catch (error) { if (!ctx.signal.aborted) ctx.banner(error); }
    stop.hidden = true;
    button.disabled = false;
  } }, "Run now");
  const panel = h("div", { class: "card run" }, h("div", { class: "row" }, button, stop, status), box);
  return h("section", { "aria-labelledby": "run-h" }, h("h2", { id: "run-h" }, "Run"),
    h("p", { class: "muted" }, "A run takes the queued messages (or the agent's task) as a durable job on the server; its work streams here as it goes."),
    panel);
}
