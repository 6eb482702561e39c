// The request log's filters as parameters (src/agentloom/console/request_filters.js).
import { test } from "node:test";
import assert from "node:assert/strict";

import { logSource, rangeStart, statusParams } from "../../../src/agentloom/console/request_filters.js";

test("the status filter: errors=true|false, or one HTTP status, or nothing", () => {
  assert.deepEqual(statusParams(""), {});
  assert.deepEqual(statusParams("ok"), { errors: "false" });
  assert.deepEqual(statusParams("errors"), { errors: "true" });
  assert.deepEqual(statusParams("429"), { status: "429" });
});

test("a range starts its length before now; any time has no start", () => {
  assert.equal(rangeStart("24h", 1_000_000), 1_000_000 - 86400);
  assert.equal(rangeStart("1h", 10_000.5), 6400);
  assert.equal(rangeStart("", 1_000_000), undefined);
});

test("the organization's log for the admin key and without keys, else the project's", () => {
  assert.equal(logSource({ admin: true, keys: true }).base, "/v1/organization/requests");
  assert.deepEqual(logSource({ admin: false, keys: false }).options, { project: false });
  const own = logSource({ admin: false, keys: true });
  assert.equal(own.base, "/v1/requests");
  assert.equal(own.organization, false);
});
