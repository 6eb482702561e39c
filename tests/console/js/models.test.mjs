// The models the console offers (src/agentloom/console/models.js) under node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { chatModels } from "../../../src/agentloom/console/models.js";

test("chat models only, each once: no embeddings, no provider/id twin", () => {
  const listed = [
    { id: "qwen3", owned_by: "default", kind: "chat" },
    { id: "default/qwen3", owned_by: "default", kind: "chat" },
    { id: "vllm/other", owned_by: "vllm", kind: "chat" }, // its id has a slash of its own: no twin
    { id: "org/model", owned_by: "router", kind: "chat" },
    { id: "all-MiniLM-L6-v2", owned_by: "agentloom", kind: "embeddings" },
    { id: "old-server-model", owned_by: "x" }, // no kind: a chat model
  ];
  assert.deepEqual(chatModels(listed).map((m) => m.id), ["qwen3", "vllm/other", "org/model", "old-server-model"]);
});
