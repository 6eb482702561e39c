// The charts' numbers (src/agentloom/console/ticks.js) under node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { niceStep, niceTicks, short, dollars, millis, timeLabel, timeTitle, timeTicks, span } from "../../../src/agentloom/console/ticks.js";

test("y ticks are round steps from 0 up to the first at or above the highest value", () => {
  assert.deepEqual(niceTicks(0), [0, 1]);
  assert.deepEqual(niceTicks(1), [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(niceTicks(4), [0, 1, 2, 3, 4]);
  assert.deepEqual(niceTicks(7), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(95), [0, 25, 50, 75, 100]);
  assert.deepEqual(niceTicks(1234), [0, 500, 1000, 1500]);
  assert.deepEqual(niceTicks(0.031), [0, 0.01, 0.02, 0.03, 0.04]);
  assert.deepEqual(niceTicks(100), [0, 25, 50, 75, 100]);
});

test("a step is 1, 2, 2.5 or 5 times a power of ten", () => {
  assert.equal(niceStep(10, 4), 2.5);
  assert.equal(niceStep(30, 4), 10);
  assert.equal(niceStep(0.9, 4), 0.25);
  assert.equal(niceStep(-3), 1);
  assert.equal(niceStep(Number.NaN), 1);
});

test("values are written short", () => {
  assert.equal(short(950), "950");
  assert.equal(short(1000), "1k");
  assert.equal(short(1250), "1.3k");
  assert.equal(short(3_400_000), "3.4M");
  assert.equal(short(2.5), "2.5");
  assert.equal(short(0.123456), "0.123");
  assert.equal(dollars(0), "$0");
  assert.equal(dollars(1.5), "$1.50");
  assert.equal(dollars(0.000123456), "$0.000123");
  assert.equal(millis(850.4), "850 ms");
  assert.equal(millis(1250), "1.3 s");
  assert.equal(millis(2000), "2 s");
  assert.equal(millis(null), "—");
});

test("time labels are UTC: hours and minutes, or the day", () => {
  const at = Date.UTC(2026, 11, 1, 14, 5) / 1000;
  assert.equal(timeLabel(at, "1h"), "14:05");
  assert.equal(timeLabel(at, "1m"), "14:05");
  assert.equal(timeLabel(at, "1d"), "12-01");
  assert.equal(timeTitle(at, "1h"), "2026-12-01 14:05 UTC");
  assert.equal(timeTitle(at, "1d"), "2026-12-01");
});

test("x ticks: at most six, evenly spaced, from the first bucket", () => {
  assert.deepEqual(timeTicks(0), []);
  assert.deepEqual(timeTicks(1), [0]);
  assert.deepEqual(timeTicks(5), [0, 1, 2, 3, 4]);
  assert.deepEqual(timeTicks(24), [0, 4, 8, 12, 16, 20]);
  assert.deepEqual(timeTicks(60), [0, 10, 20, 30, 40, 50]);
  assert.deepEqual(timeTicks(7, 3), [0, 3, 6]);
  assert.ok(timeTicks(1440).length <= 6);
});

test("a range is a span of whole buckets ending at the bucket after now", () => {
  const now = Date.UTC(2026, 11, 1, 14, 5, 30) / 1000;
  assert.deepEqual(span("24h", now), { start_time: now - 30 - 5 * 60 + 3600 - 86400, bucket_width: "1h" });
  assert.deepEqual(span("1h", now), { start_time: now + 30 - 3600, bucket_width: "1m" });
  const day = span("7d", now);
  assert.equal(day.bucket_width, "1d");
  assert.equal(day.start_time % 86400, 0);
  assert.deepEqual(span("nonsense", now), span("24h", now));
});
