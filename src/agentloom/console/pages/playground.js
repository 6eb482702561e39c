// Playground: one conversation with a model. Each turn streams (POST /v1/responses, stream: true)
// and is drawn as it arrives; follow-ups chain with previous_response_id (or a conversation);
// function calls are answered by hand with function_call_output items, MCP calls waiting for
// approval with mcp_approval_response items (pages/playground_answers.js).

import { get, all, events, session } from "../api.js";
import { h, clear, badge } from "../dom.js";
import { newState, apply, pendingCalls, pendingApprovals } from "../stream.js";
import { items as drawItems, usage } from "../render.js";
import { python, curl } from "../snippet.js";
import { requestBody } from "../request.js";
import { controls, settingsForm, composer, settingsOf } from "./playground_form.js";
import { answerForm, approvalForm } from "./playground_answers.js";

const ANSWERS = {
  function_call_output: (i) => `${i.call_id}: ${i.output}`,
  mcp_approval_response: (i) => `${i.approval_request_id}: ${i.approve ? "approved" : "denied"}`,
};

function userInput(input) {
  if (typeof input === "string") return h("div", { class: "user" }, h("strong", {}, "user"), h("div", { class: "text" }, input));
  const title = input[0]?.type === "mcp_approval_response" ? "approvals" : "function outputs";
  return h("div", { class: "user" }, h("strong", {}, title), input.map((i) => h("div", { class: "mono" }, ANSWERS[i.type](i))));
}

function drawTurn(view, state) {
  const r = state.response;
  clear(view.status, badge(state.status || (state.done ? "failed" : "sending")),
    r ? h("a", { href: `#/logs/${r.id}` }, r.id) : null,
    state.done && r?.usage ? usage(r.usage) : null);
  clear(view.output, drawItems(state.items),
    state.error ? h("p", { class: "error", role: "alert" }, state.error.message || "The response failed.") : null);
  view.turn.dataset.status = state.done ? state.status : "streaming";
}

// The "equivalent code" panel: show(body) writes the Python and curl of what was sent.
function snippetsPanel() {
  const py = h("code", { class: "python" });
  const sh = h("code", { class: "curl" });
  const el = h("details", { class: "snippets" }, h("summary", {}, "Equivalent code"),
    h("h3", {}, "openai (Python)"), h("pre", { class: "code" }, py), h("h3", {}, "curl"), h("pre", { class: "code" }, sh));
  const show = (sent) => {
    py.textContent = python(sent, `${location.origin}/v1`);
    sh.textContent = curl(sent, `${location.origin}/v1`, session.project);
  };
  return { el, show };
}

// Streams one turn into `view`, redrawn at most once a frame; the accumulated state at the end.
async function streamTurn(sent, view, signal) {
  const state = newState();
  let frame = 0;
  const redraw = () => { frame = 0; drawTurn(view, state); };
  try {
    for await (const event of events("POST", "/v1/responses", sent, { signal })) {
      apply(state, event);
      frame ||= requestAnimationFrame(redraw);
    }
  } catch (error) {
    if (signal.aborted) throw error;
    state.error = { message: error.message, code: error.code };
    state.status = "failed";
    state.done = true;
  }
  if (!state.done) { // the stream ended without the response's end (the connection dropped)
    state.error = { message: "The stream ended before the response did: see its log entry." };
    state.status = state.response ? "incomplete" : "failed";
    state.done = true;
  }
  cancelAnimationFrame(frame);
  drawTurn(view, state);
  return state;
}

function turnView(input) {
  const view = { status: h("div", { class: "turn-status" }), output: h("div", { class: "output" }) };
  view.turn = h("div", { class: "turn", "data-status": "streaming" }, userInput(input), view.output, view.status);
  return view;
}

export async function render(root, ctx) {
  const [models, stores] = await Promise.all([get("/v1/models"), all("/v1/vector_stores").catch(() => [])]);
  const c = controls(models.data, stores);
  const transcript = h("section", { class: "transcript", "aria-label": "Conversation", "aria-live": "polite" });
  const snippets = snippetsPanel();
  let previous = null;
  let busy = false;

  async function send(input) {
    if (busy) return;
    ctx.banner(null);
    let sent;
    try { sent = requestBody(settingsOf(c), input, previous); } catch (error) { ctx.banner(error); return; }
    busy = true;
    snippets.show(sent);
    const view = turnView(input);
    transcript.append(view.turn);
    let state;
    try { state = await streamTurn(sent, view, ctx.signal); } catch { return; } finally { busy = false; }
    if (state.response && sent.store !== false) previous = state.response.id;
    const calls = pendingCalls(state);
    if (calls.length) view.turn.append(answerForm(calls, send));
    const approvals = pendingApprovals(state);
    if (approvals.length) view.turn.append(approvalForm(approvals, send));
    view.turn.scrollIntoView({ block: "end" });
  }

  const reset = () => { previous = null; transcript.replaceChildren(); c.input.focus(); };
  clear(root, h("div", { class: "playground" },
    h("div", { class: "chat" }, h("h1", {}, "Playground"), transcript, composer(c, { send, reset })),
    h("aside", { class: "playground-side", "aria-label": "Settings and code" }, settingsForm(c, stores), snippets.el)));
}
