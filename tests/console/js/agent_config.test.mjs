// A managed agent's create/update body (src/agentloom/console/agent_config.js) under node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { createBody, updateBody, valuesOf } from "../../../src/agentloom/console/agent_config.js";

const form = {
  name: "sums", agentType: "orchestrator", template: "", model: "m", instructions: "Be brief.",
  tools: ["calculator"], otherTools: " mcp:docs, ,calculator ", maxTurns: "4", scheduleKind: "", scheduleValue: "",
};

test("a new agent: its type, configuration and template", () => {
  assert.deepEqual(createBody(form), {
    name: "sums", agent_type: "orchestrator",
    config: { model: "m", tools: ["calculator", "mcp:docs"], instructions: "Be brief.", max_turns: 4 },
  });
  assert.equal(createBody({ ...form, template: "researcher" }).template_id, "researcher");
  assert.equal("agent_type" in createBody({ ...form, agentType: "" }), false); // the server's default
  assert.throws(() => createBody({ ...form, name: "" }), /needs a name/);
});

test("a schedule: seconds or a five-field cron, else a plain error", () => {
  assert.deepEqual(createBody({ ...form, scheduleKind: "interval", scheduleValue: "60" }).config.schedule, { type: "interval", every: 60 });
  assert.deepEqual(createBody({ ...form, scheduleKind: "cron", scheduleValue: "*/5 * * * *" }).config.schedule, { type: "cron", cron: "*/5 * * * *" });
  assert.throws(() => createBody({ ...form, scheduleKind: "interval", scheduleValue: "0.5" }), /at least 1/);
  assert.throws(() => createBody({ ...form, scheduleKind: "cron", scheduleValue: "* *" }), /five fields/);
  assert.throws(() => createBody({ ...form, maxTurns: "101" }), /1 to 100/);
});

test("an edit replaces the form's keys and keeps the configuration's others", () => {
  const agent = {
    name: "sums", agent_type: "orchestrator",
    config: { model: "m", tools: ["think"], system_prompt: "old", max_turns: 10, task: "count", temperature: null,
      schedule: { type: "interval", every: 30 }, schedule_type: "interval", schedule_value: 30 },
  };
  const values = valuesOf(agent);
  assert.equal(values.instructions, "old");
  assert.equal(values.scheduleKind, "interval");
  assert.equal(values.scheduleValue, "30");
  const sent = updateBody({ ...values, scheduleKind: "", instructions: "new" }, agent);
  assert.deepEqual(sent.config, { model: "m", tools: ["think"], max_turns: 10, task: "count", instructions: "new" });
});

test("OpenJarvis's form of a schedule is kept by an edit, as a schedule", () => {
  const agent = { name: "tick", agent_type: "operative", config: { tools: [], schedule_type: "cron", schedule_value: "0 * * * *" } };
  assert.deepEqual(updateBody(valuesOf(agent), agent).config.schedule, { type: "cron", cron: "0 * * * *" });
  const manual = { ...agent, config: { tools: [], schedule_type: "manual" } };
  assert.equal(updateBody(valuesOf(manual), manual).config.schedule, undefined);
});
