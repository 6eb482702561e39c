// The playground's request body (src/agentloom/console/request.js) under node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { requestBody, textFormat, toolsOf, approvalResponse } from "../../../src/agentloom/console/request.js";

const blank = {
  model: "m", instructions: "", fileSearch: false, vectorStores: [], webSearch: false, codeInterpreter: false,
  mcp: { on: false, label: "", url: "", allowed: "", approval: "always" }, functions: "", toolChoice: "",
  temperature: "", outputSchema: "", effort: "", store: true, background: false, conversation: "",
};

test("a plain turn sends the model, the input and stream only, chained to the turn before", () => {
  assert.deepEqual(requestBody(blank, "Hi", null), { model: "m", input: "Hi", stream: true });
  assert.equal(requestBody(blank, "Hi", "resp_1").previous_response_id, "resp_1");
  assert.equal(requestBody({ ...blank, conversation: "conv_1" }, "Hi", "resp_1").previous_response_id, undefined);
});

test("an MCP server becomes an mcp tool, its allowed tools a list", () => {
  const mcp = { on: true, label: "calc", url: "http://x/mcp", allowed: " add, ,distance ", approval: "never" };
  assert.deepEqual(toolsOf({ ...blank, mcp }), [
    { type: "mcp", server_label: "calc", server_url: "http://x/mcp", require_approval: "never", allowed_tools: ["add", "distance"] },
  ]);
  assert.equal(toolsOf({ ...blank, mcp: { ...mcp, allowed: "" } })[0].allowed_tools, undefined);
  assert.throws(() => toolsOf({ ...blank, mcp: { ...mcp, url: "" } }), /label and a URL/);
});

test("tool_choice, temperature and structured output", () => {
  const sent = requestBody({ ...blank, toolChoice: "required", temperature: "0.3", outputSchema: '{"type": "object"}' }, "Hi");
  assert.equal(sent.tool_choice, "required");
  assert.equal(sent.temperature, 0.3);
  assert.deepEqual(sent.text, { format: { type: "json_schema", name: "output", schema: { type: "object" }, strict: true } });
  assert.equal(requestBody({ ...blank, temperature: "0" }, "Hi").temperature, 0);
  assert.throws(() => requestBody({ ...blank, temperature: "3" }, "Hi"), /0 to 2/);
});

test("a named schema keeps its name and strictness; bad JSON says which box", () => {
  assert.deepEqual(textFormat('{"name": "city", "schema": {"type": "object"}, "strict": false}'),
    { type: "json_schema", name: "city", schema: { type: "object" }, strict: false });
  assert.equal(textFormat("  "), null);
  assert.throws(() => textFormat("{nope"), /output schema is not JSON/);
  assert.throws(() => textFormat("[1]"), /must be a JSON object/);
  assert.throws(() => toolsOf({ ...blank, functions: "[" }), /Function tools is not JSON/);
});

test("an approval answers its request by id", () => {
  assert.deepEqual(approvalResponse({ id: "mcpr_1" }, false), { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: false });
});

test("the results of file_search and the outputs of code_interpreter are included", () => {
  const sent = requestBody({ ...blank, fileSearch: true, vectorStores: ["vs_1"], codeInterpreter: true }, "Hi");
  assert.deepEqual(sent.include, ["file_search_call.results", "code_interpreter_call.outputs"]);
  assert.throws(() => requestBody({ ...blank, fileSearch: true }, "Hi"), /at least one vector store/);
});
