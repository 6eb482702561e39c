"""The output guard on its own: a model call's chunks through a real rules shield."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

import pytest

from agentloom.engine.output_guard import OutputGuard, StreamWindow
from agentloom.inference import base as inf
from agentloom.safety.base import Role
from agentloom.safety.rules import RulesShield
from agentloom.safety.service import REFUSAL, Decision, GuardedShield, SafetyService, combine
from agentloom.safety.settings import RulesShieldSettings

EMAIL = "bob@example.com"
SERVICE = SafetyService(
    [GuardedShield(RulesShield(RulesShieldSettings(id="pii", detectors=["email"])), 1.0)]
)


class Model:
    """A model call's chunks, remembering how far it was read and whether it was closed."""

    def __init__(self, chunks: Sequence[inf.Chunk]) -> None:
        self.chunks = chunks
        self.read = 0
        self.closed = False

    async def stream(self) -> AsyncGenerator[inf.Chunk, None]:
        try:
            for chunk in self.chunks:
                self.read += 1
                yield chunk
        finally:
            self.closed = True


async def check(texts: Sequence[tuple[str, Role]]) -> Decision:
    return combine(await SERVICE.check_all(["pii"], texts))


async def run(guard: OutputGuard, model: Model) -> list[inf.Chunk]:
    return [chunk async for chunk in guard.run(model.stream())]


def pieces(text: str, size: int) -> list[inf.TextDelta]:
    return [inf.TextDelta(text[i : i + size]) for i in range(0, len(text), size)]


async def test_a_violation_closes_the_model_stream_and_ends_with_a_refusal() -> None:
    model = Model([*pieces("x" * 30 + EMAIL + "y" * 200, 5), inf.Finish("stop")])
    blocked: list[bool] = []
    guard = OutputGuard(check, StreamWindow(20, 16), on_block=lambda: blocked.append(True))

    out = await run(guard, model)

    assert out[-2:] == [inf.RefusalDelta(REFUSAL), inf.Finish("stop")]
    released = "".join(c.text for c in out if isinstance(c, inf.TextDelta))
    assert "bob" not in released
    assert guard.blocked is not None
    assert guard.blocked.categories == ("pii.email",)
    assert blocked == [True]
    assert model.closed
    assert model.read < len(model.chunks)  # it stopped reading


async def test_chunks_come_out_whole_and_in_order_across_segments() -> None:
    chunks: list[inf.Chunk] = [
        inf.ReasoningDelta("think " * 3),
        *pieces("word " * 40, 7),
        inf.ToolCallDelta(0, id="c1", name="f", arguments='{"a":'),
        inf.ToolCallDelta(0, arguments=" 1}"),
        inf.Usage(1, 2),
        inf.Finish("tool_calls"),
    ]
    model = Model(chunks)

    out = await run(OutputGuard(check, StreamWindow(10, 8)), model)

    assert out == chunks
    assert model.closed


async def test_only_function_calls_handed_to_the_client_are_checked() -> None:
    hosted_call = [inf.ToolCallDelta(0, id="c1", name="search", arguments=f'"{EMAIL}"')]
    client_call = [inf.ToolCallDelta(0, id="c2", name="mail", arguments=f'"{EMAIL}"')]
    hosted = frozenset({"search"})

    passed = await run(OutputGuard(check, StreamWindow(), hosted=hosted), Model(hosted_call))
    refused = await run(OutputGuard(check, StreamWindow(), hosted=hosted), Model(client_call))

    assert passed == hosted_call
    assert refused == [inf.RefusalDelta(REFUSAL), inf.Finish("stop")]


def test_the_window_must_make_sense() -> None:
    with pytest.raises(ValueError, match="batch_chars"):
        StreamWindow(0, 10)
    with pytest.raises(ValueError, match="overlap_chars"):
        StreamWindow(10, -1)
