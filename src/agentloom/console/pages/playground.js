// Playground: one conversation with a model. Each turn streams (POST /v1/responses, stream: true)
// and is drawn as it arrives; follow-ups chain with previous_response_id (or a conversation);
// function calls are answered by hand with function_call_output items.

import { get, all, events, session } from "../api.js";
import { h, clear, field, check, badge } from "../dom.js";
import { newState, apply, pendingCalls } from "../stream.js";
import { items as drawItems, usage } from "../render.js";
import { python, curl } from "../snippet.js";

const EFFORTS = ["", "none", "minimal", "low", "medium", "high"];
const EXAMPLE_TOOLS = `[
  {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
      "type": "object",
      "properties": {"city": {"type": "string"}},
      "required": ["city"]
    }
  }
]`;

function controls(models, stores) {
  return {
    model: h("select", { name: "model" }, models.map((m) => h("option", { value: m.id }, m.id))),
    instructions: h("textarea", { name: "instructions", rows: 2, placeholder: "You are a helpful assistant." }),
    input: h("textarea", { name: "input", rows: 4, placeholder: "Ask something…" }),
    fileSearch: h("input", { type: "checkbox", name: "file_search" }),
    stores: h("select", { name: "vector_stores", multiple: true, size: Math.min(4, Math.max(2, stores.length)) },
      stores.map((s) => h("option", { value: s.id }, `${s.name || "(unnamed)"} · ${s.id}`))),
    webSearch: h("input", { type: "checkbox", name: "web_search" }),
    codeInterpreter: h("input", { type: "checkbox", name: "code_interpreter" }),
    functions: h("textarea", { name: "functions", rows: 6, class: "mono", placeholder: EXAMPLE_TOOLS }),
    effort: h("select", { name: "effort" }, EFFORTS.map((e) => h("option", { value: e }, e || "(model default)"))),
    store: h("input", { type: "checkbox", name: "store", checked: true }),
    background: h("input", { type: "checkbox", name: "background" }),
    conversation: h("input", { type: "text", name: "conversation", placeholder: "conv_… (optional)" }),
  };
}

function tools(c) {
  const chosen = [];
  if (c.fileSearch.checked) {
    const ids = [...c.stores.selectedOptions].map((o) => o.value);
    if (!ids.length) throw new Error("file_search needs at least one vector store.");
    chosen.push({ type: "file_search", vector_store_ids: ids });
  }
  if (c.webSearch.checked) chosen.push({ type: "web_search" });
  if (c.codeInterpreter.checked) chosen.push({ type: "code_interpreter", container: { type: "auto" } });
  const text = c.functions.value.trim();
  if (text) {
    let parsed;
    try { parsed = JSON.parse(text); } catch (error) { throw new Error(`Function tools are not JSON: ${error.message}`); }
    for (const tool of Array.isArray(parsed) ? parsed : [parsed]) chosen.push({ type: "function", ...tool });
  }
  return chosen;
}

// The body of a turn: the form's settings, the input, and the chain to the turn before.
function body(c, input, previous) {
  const sent = { model: c.model.value, input };
  if (c.instructions.value.trim()) sent.instructions = c.instructions.value.trim();
  const chosen = tools(c);
  if (chosen.length) sent.tools = chosen;
  if (c.effort.value) sent.reasoning = { effort: c.effort.value };
  if (!c.store.checked) sent.store = false;
  if (c.background.checked) sent.background = true;
  if (c.conversation.value.trim()) sent.conversation = c.conversation.value.trim();
  else if (previous) sent.previous_response_id = previous;
  sent.stream = true;
  return sent;
}

function userInput(input) {
  if (typeof input === "string") return h("div", { class: "user" }, h("strong", {}, "user"), h("div", { class: "text" }, input));
  return h("div", { class: "user" }, h("strong", {}, "function outputs"),
    input.map((i) => h("div", { class: "mono" }, `${i.call_id}: ${i.output}`)));
}

function drawTurn(view, state) {
  const r = state.response;
  clear(view.status, badge(state.status || "sending"),
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

function settingsForm(c, stores, { send, reset }) {
  const form = h("form", { class: "settings", onsubmit: (e) => {
    e.preventDefault();
    const input = c.input.value.trim();
    if (!input) { c.input.focus(); return; }
    c.input.value = "";
    send(input);
  } },
  field("Model", c.model),
  field("Instructions", c.instructions),
  h("fieldset", {}, h("legend", {}, "Server tools"),
    check("file_search", c.fileSearch), stores.length ? field("Vector stores", c.stores) : h("p", { class: "muted" }, "No vector stores yet."),
    check("web_search", c.webSearch), check("code_interpreter", c.codeInterpreter)),
  field("Function tools (JSON)", c.functions, "An array of tools (type defaults to function; an mcp tool works too). Function calls are answered by hand below the answer."),
  h("div", { class: "row" }, field("Reasoning effort", c.effort), check("store", c.store), check("background", c.background)),
  field("Conversation", c.conversation, "Empty: each turn chains to the one before with previous_response_id."),
  field("Input", c.input),
  h("div", { class: "row" }, h("button", { type: "submit" }, "Send"),
    h("button", { type: "button", class: "secondary", onclick: reset }, "New chat")));
  c.input.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit(); });
  return form;
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
    state.error = { message: error.message };
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
    try { sent = body(c, input, previous); } catch (error) { ctx.banner(error); return; }
    busy = true;
    snippets.show(sent);
    const view = turnView(input);
    transcript.append(view.turn);
    let state;
    try { state = await streamTurn(sent, view, ctx.signal); } catch { return; } finally { busy = false; }
    if (state.response && sent.store !== false) previous = state.response.id;
    const calls = pendingCalls(state);
    if (calls.length) view.turn.append(answerForm(calls, send));
    view.turn.scrollIntoView({ block: "end" });
  }

  const reset = () => { previous = null; transcript.replaceChildren(); };
  clear(root, h("h1", {}, "Playground"), h("div", { class: "playground" },
    settingsForm(c, stores, { send, reset }), h("div", { class: "chat" }, transcript, snippets.el)));
}

// One output field per pending function call; submitting sends them as the next turn's input.
function answerForm(calls, turn) {
  const outputs = calls.map((call) => h("textarea", { rows: 2, name: `output-${call.call_id}`, "data-call-id": call.call_id }));
  const form = h("form", { class: "answer card", onsubmit: (e) => {
    e.preventDefault();
    form.remove();
    turn(calls.map((call, i) => ({ type: "function_call_output", call_id: call.call_id, output: outputs[i].value })));
  } },
  h("h3", {}, "Answer the function calls"),
  calls.map((call, i) => field(`${call.name}(${call.arguments}) · ${call.call_id}`, outputs[i])),
  h("button", { type: "submit" }, "Submit outputs"));
  return form;
}
