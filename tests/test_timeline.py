"""A response's timeline on its own: entries encoded in start order (the run first), times in
ms from the run's start, the cap on entries, the trace id only when there is one."""

from __future__ import annotations

import time
from typing import Any

from agentloom import json_codec
from agentloom.timeline import Entry, Timeline, milliseconds


def decoded(timeline: Timeline, **attributes: Any) -> dict[str, Any]:
    run = Entry("invoke_agent m", "response", timeline.started, time.perf_counter(), attributes)
    document = json_codec.loads(timeline.encode(run))
    assert isinstance(document, dict)
    return document


def test_entries_are_encoded_in_start_order_after_the_run() -> None:
    timeline = Timeline()
    outer = time.perf_counter()
    inner = time.perf_counter()
    timeline.add("guardrail pii", "guardrail", inner, {"verdict": "allowed"})  # ends first
    timeline.add("chat m", "model_call", outer, {"input_tokens": 3, "cached": False}, "Timeout")

    document = decoded(timeline, status="completed")

    assert set(document) == {"started_at", "duration_ms", "truncated", "spans"}
    run, chat, guardrail = document["spans"]
    assert (run["kind"], chat["kind"], guardrail["kind"]) == ("response", "model_call", "guardrail")
    assert run == {
        "name": "invoke_agent m",
        "kind": "response",
        "start_ms": 0.0,
        "duration_ms": document["duration_ms"],
        "status": "ok",
        "attributes": {"status": "completed"},
    }
    assert (chat["status"], chat["error"]) == ("error", "Timeout")
    assert chat["attributes"] == {"input_tokens": 3, "cached": False}
    assert "error" not in guardrail
    assert chat["start_ms"] <= guardrail["start_ms"]
    assert guardrail["start_ms"] + guardrail["duration_ms"] <= document["duration_ms"] + 0.002


def test_past_the_cap_entries_are_left_out_and_counted() -> None:
    timeline = Timeline(limit=3)
    for index in range(5):
        timeline.add(f"guardrail {index}", "guardrail", time.perf_counter(), {})

    document = decoded(timeline)

    assert document["truncated"] is True
    assert [span["name"] for span in document["spans"][1:]] == [f"guardrail {i}" for i in range(3)]
    assert document["spans"][0]["attributes"] == {"dropped_spans": 2}


def test_the_trace_id_is_there_only_when_known() -> None:
    timeline = Timeline()
    assert "trace_id" not in decoded(timeline)
    timeline.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    assert decoded(timeline)["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_milliseconds_keep_the_microsecond() -> None:
    assert milliseconds(0.0123456) == 12.345
    assert milliseconds(2.0) == 2000.0
