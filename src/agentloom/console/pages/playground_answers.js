// What the playground's user answers after a turn: the function calls' outputs (typed by hand)
// and the MCP tool calls waiting for approval. Each answer is the next turn's input.

import { h, field, code, pretty } from "../dom.js";
import { approvalResponse } from "../request.js";

// One output field per pending function call; submitting sends them as function_call_output items.
export function answerForm(calls, turn) {
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

// Approve or deny each pending MCP call; the choices go as mcp_approval_response items once all
// are made.
export function approvalForm(requests, turn) {
  const choices = new Map();
  const box = h("div", { class: "approval card", role: "group", "aria-label": "Approvals" }, h("h3", {}, "Approve the MCP tool calls"),
    requests.map((request) => approvalRow(request, (approve) => {
      choices.set(request.id, approvalResponse(request, approve));
      if (choices.size < requests.length) return;
      box.remove();
      turn(requests.map((r) => choices.get(r.id)));
    })));
  return box;
}

function approvalRow(request, decide) {
  const row = h("div", { class: "approval-request", "data-request-id": request.id },
    h("strong", {}, `${request.server_label}.${request.name}`), code(pretty(request.arguments || "{}"), "arguments"));
  const buttons = h("div", { class: "row" },
    h("button", { type: "button", onclick: () => choose(true) }, "Approve"),
    h("button", { type: "button", class: "danger", onclick: () => choose(false) }, "Deny"));
  const choose = (approve) => { buttons.replaceChildren(h("span", { class: "muted" }, approve ? "approved" : "denied")); decide(approve); };
  row.append(buttons);
  return row;
}
