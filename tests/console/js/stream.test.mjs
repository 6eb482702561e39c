// The console's pure modules under node's own test runner (run by tests/console/test_js_units.py).
import { test } from "node:test";
import assert from "node:assert/strict";

import { newState, apply, pendingCalls, pendingApprovals, outputText } from "../../../src/agentloom/console/stream.js";
import { SSEParser } from "../../../src/agentloom/console/sse.js";
import { newAgentState, applyAgent } from "../../../src/agentloom/console/agent_stream.js";
import { python, curl, pythonValue } from "../../../src/agentloom/console/snippet.js";

const response = (status, output = []) => ({ id: "resp_1", status, output, model: "m" });

function play(events) {
  const state = newState();
  events.forEach((event, i) => apply(state, { sequence_number: i, ...event }));
  return state;
}

test("text deltas accumulate into the message, and the final response wins", () => {
  const state = play([
    { type: "response.created", response: response("in_progress") },
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [] } },
    { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel" },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "lo" },
  ]);
  assert.equal(outputText(state), "Hello");
  assert.equal(state.status, "in_progress");
  assert.equal(state.done, false);
  assert.equal(state.lastSequence, 4);
  const final = { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Hello!", annotations: [] }] };
  apply(state, { type: "response.completed", sequence_number: 5, response: response("completed", [final]) });
  assert.equal(outputText(state), "Hello!");
  assert.equal(state.done, true);
  assert.deepEqual(pendingCalls(state), []);
});

test("reasoning, function-call arguments and annotations stream into their items", () => {
  const state = play([
    { type: "response.created", response: response("in_progress") },
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [], content: [] } },
    { type: "response.reasoning_text.delta", item_id: "rs_1", output_index: 0, content_index: 0, delta: "think" },
    { type: "response.reasoning_text.delta", item_id: "rs_1", output_index: 0, content_index: 0, delta: "ing" },
    { type: "response.output_item.added", output_index: 1, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "" } },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: "{\"a\":" },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: " 1}" },
    { type: "response.output_item.added", output_index: 2, item: { type: "message", id: "msg_1", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 2, content_index: 0, delta: "see" },
    { type: "response.output_text.annotation.added", item_id: "msg_1", output_index: 2, content_index: 0, annotation_index: 0, annotation: { type: "file_citation", file_id: "file_1" } },
  ]);
  assert.equal(state.items[0].content[0].text, "thinking");
  assert.equal(state.items[0].content[0].type, "reasoning_text");
  assert.equal(state.items[1].arguments, "{\"a\": 1}");
  assert.deepEqual(state.items[2].content[0].annotations, [{ type: "file_citation", file_id: "file_1" }]);
});

test("a completed response with function calls leaves them pending for the client", () => {
  const call = { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}", status: "completed" };
  const state = play([
    { type: "response.created", response: response("in_progress") },
    { type: "response.output_item.added", output_index: 0, item: { ...call, arguments: "" } },
    { type: "response.output_item.done", output_index: 0, item: call },
    { type: "response.completed", response: response("completed", [call]) },
  ]);
  assert.deepEqual(pendingCalls(state).map((c) => c.call_id), ["call_1"]);
});

test("server tool progress sets the call's status; an error event ends the stream", () => {
  const state = play([
    { type: "response.output_item.added", output_index: 0, item: { type: "file_search_call", id: "fs_1", queries: [] } },
    { type: "response.file_search_call.searching", item_id: "fs_1", output_index: 0 },
  ]);
  assert.equal(state.items[0].status, "searching");
  apply(state, { type: "response.file_search_call.completed", item_id: "fs_1", output_index: 0 });
  assert.equal(state.items[0].status, "completed");
  apply(state, { type: "error", message: "boom", code: "server_error" });
  assert.deepEqual(state.error, { message: "boom", code: "server_error" });
  assert.equal(state.done, true);
  assert.equal(state.status, "failed");
});

test("events for an item the client never saw added are ignored", () => {
  const state = play([{ type: "response.output_text.delta", item_id: "msg_x", output_index: 3, delta: "x" }]);
  assert.deepEqual(state.items, []);
});

test("the SSE parser frames events across chunk boundaries", () => {
  const parser = new SSEParser();
  assert.deepEqual(parser.push("event: a\ndata: {\"x\""), []);
  assert.deepEqual(parser.push(":1}\n\n: comment\n\r\ndata: [DONE]\n\n"), [
    { event: "a", data: "{\"x\":1}", id: null },
    { event: "message", data: "[DONE]", id: null },
  ]);
});

test("the equivalent code says what was sent", () => {
  const body = { model: "m", input: "hi", tools: [{ type: "web_search" }], store: false, stream: true };
  const py = python(body, "http://h/v1");
  assert.match(py, /client\.responses\.create\(\n {4}model="m",\n {4}input="hi",/);
  assert.match(py, /store=False,/);
  assert.match(py, /for event in stream:/);
  assert.equal(pythonValue({ a: [null, true] }), "{\n    \"a\": [\n        None,\n        True,\n    ],\n}");
  const sh = curl({ model: "m", input: "it's" }, "http://h/v1", "proj_1");
  assert.match(sh, /^curl 'http:\/\/h\/v1\/responses'/);
  assert.match(sh, /-H 'OpenAI-Project: proj_1'/);
  assert.match(sh, /"input": "it'\\''s"/);
});

test("the approval requests of a completed response wait for an answer", () => {
  const request = { type: "mcp_approval_request", id: "mcpr_1", server_label: "calc", name: "add", arguments: "{}" };
  const state = play([
    { type: "response.created", response: response("in_progress") },
    { type: "response.output_item.added", output_index: 0, item: request },
  ]);
  assert.deepEqual(pendingApprovals(state), []); // not before the response is done
  apply(state, { type: "response.completed", response: response("completed", [request]) });
  assert.deepEqual(pendingApprovals(state).map((item) => item.id), ["mcpr_1"]);
});

test("a managed agent's stream: text, a tool call with its result, the usage at the end", () => {
  const state = newAgentState();
  const frames = [
    { event: "tool_calls", data: { tool_calls: [{ id: "call_1", type: "function", function: { name: "calculator", arguments: '{"expression": "17 * 23"}' } }] } },
    { event: "tool_result", data: { tool_call_id: "call_1", tool: "calculator", result: "391", success: true, latency: 0.2 } },
    { event: "message", data: { choices: [{ index: 0, delta: { content: "17 * 23" }, finish_reason: null }] } },
    { event: "message", data: { choices: [{ index: 0, delta: { content: " = 391." }, finish_reason: null }] } },
  ];
  frames.forEach((frame) => applyAgent(state, frame));
  assert.equal(state.text, "17 * 23 = 391.");
  assert.deepEqual(state.calls.map((c) => [c.name, c.result, c.success]), [["calculator", "391", true]]);
  assert.equal(state.done, false);
  applyAgent(state, { event: "message", data: { choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { total_tokens: 9 } } });
  assert.deepEqual([state.done, state.usage.total_tokens], [true, 9]);
  applyAgent(state, { event: "message", data: { error: { message: "down" } } });
  assert.equal(state.error.message, "down");
});
