"""What a response's own trace (:mod:`agentloom.timeline`) costs on the hot path: recording its
entries at the loop's hooks and encoding the timeline once for the final write, timed alone.

    PYTHONPATH=src python -m bench.trace_cost

Two shapes: a plain stored response (one model call) and a response with a guardrail, a server
tool call and two model calls (five guardrail checks). Prints microseconds per response.
"""

from __future__ import annotations

import time
import timeit

from agentloom.api.response import Response, ResponseUsage
from agentloom.engine import spans
from agentloom.engine.turn import TurnResult
from agentloom.inference import base as inf
from agentloom.timeline import Timeline

MODEL = "llama3.2"
RESULT = TurnResult(usage=inf.Usage(input_tokens=12, output_tokens=34), finish="stop")
RESPONSE = Response.model_validate(
    {
        "id": "resp_" + "0" * 48,
        "created_at": int(time.time()),
        "model": MODEL,
        "status": "completed",
        "output": [],
        "usage": ResponseUsage.of(12, 34).model_dump(),
    }
)


def plain() -> str:
    timeline = Timeline()
    call = spans.ModelCall(MODEL, "ollama", timeline)
    call.first_output = time.perf_counter()
    call.record(RESULT)
    return spans.run_trace(timeline, RESPONSE)


def with_tools() -> str:
    timeline = Timeline()
    for role in ("user", "assistant", "tool", "assistant", "assistant"):
        started = time.perf_counter()
        attributes = {"shield": "pii", "role": role, "verdict": "allowed"}
        timeline.add("guardrail pii", "guardrail", started, dict(attributes))
    for _ in range(2):
        call = spans.ModelCall(MODEL, "ollama", timeline)
        call.first_output = time.perf_counter()
        call.record(RESULT)
    attributes = {"tool_type": "mcp", "call_id": "call_1", "outcome": "completed"}
    timeline.add("execute_tool lookup", "tool_call", time.perf_counter(), dict(attributes))
    return spans.run_trace(timeline, RESPONSE)


def main() -> None:
    for name, shape in (("plain stored response", plain), ("guardrail + tool", with_tools)):
        runs = 20_000
        best = min(timeit.repeat(shape, number=runs, repeat=5)) / runs
        size = len(shape())
        print(f"{name}: {best * 1e6:.1f} us a response, {size} bytes stored")


if __name__ == "__main__":
    main()
