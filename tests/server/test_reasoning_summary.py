"""Reasoning summaries (``reasoning: {"summary": ...}``): an extract of the reasoning text,
streamed with OpenAI's summary events, parsed here by the ``openai`` client."""

from __future__ import annotations

import openai
import pytest
from openai.types.responses import (
    ResponseReasoningItem,
    ResponseReasoningSummaryPartAddedEvent,
    ResponseReasoningSummaryPartDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningSummaryTextDoneEvent,
)
from openai.types.shared_params import Reasoning

from agentloom.engine.reasoning import SUMMARY_LIMITS, summary_extract
from agentloom.inference.scripted import ScriptedModel, reasoning, text
from agentloom.testing.backend import FakeBackend

FIRST = "**Weighing the options**"
SECOND = "The user asks for a haiku. Five, seven, five syllables; the theme is autumn."
THIRD = "Maple leaves fall. " * 40  # 720 characters: past what "auto" keeps
THOUGHT = f"{FIRST}\n\n{SECOND}\n\n{THIRD.strip()}"


def reasoning_item(output: list[object]) -> ResponseReasoningItem:
    (item,) = [i for i in output if isinstance(i, ResponseReasoningItem)]
    return item


# --- the extract ------------------------------------------------------------------------------


def test_whole_paragraphs_are_kept_while_they_fit() -> None:
    assert summary_extract(THOUGHT, SUMMARY_LIMITS["auto"]) == f"{FIRST}\n\n{SECOND}"
    assert summary_extract(THOUGHT, SUMMARY_LIMITS["detailed"]) == THOUGHT
    assert summary_extract("  \n\n ", 100) == ""


def test_a_long_first_paragraph_is_cut_at_a_word() -> None:
    cut = summary_extract(THIRD, 100)

    assert len(cut) <= 100
    assert cut.endswith("fall…")
    assert THIRD.startswith(cut.removesuffix("…"))


# --- on the wire ------------------------------------------------------------------------------


async def test_the_summary_is_streamed_in_openais_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning(THOUGHT, chunk_size=50), text("Leaves drift down."))

    stream = await client.responses.create(
        model=backend.model, input="A haiku?", reasoning=Reasoning(summary="auto"), stream=True
    )
    events = [event async for event in stream]

    kinds = [e.type for e in events]
    start = kinds.index("response.content_part.done")
    assert kinds[start + 1 : start + 6] == [
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
    ]
    added, delta, done, part_done = events[start + 1 : start + 5]
    assert isinstance(added, ResponseReasoningSummaryPartAddedEvent)
    assert isinstance(delta, ResponseReasoningSummaryTextDeltaEvent)
    assert isinstance(done, ResponseReasoningSummaryTextDoneEvent)
    assert isinstance(part_done, ResponseReasoningSummaryPartDoneEvent)
    item = reasoning_item(list(events[-1].response.output))  # type: ignore[union-attr]
    assert {e.item_id for e in (added, delta, done, part_done)} == {item.id}
    assert {e.summary_index for e in (added, delta, done, part_done)} == {0}
    assert (added.part.text, delta.delta, done.text) == ("", f"{FIRST}\n\n{SECOND}", delta.delta)
    assert part_done.part.text == done.text
    assert [s.text for s in item.summary] == [done.text]
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))


@pytest.mark.parametrize(
    ("level", "expected"),
    [("concise", [FIRST + "\n\n" + SECOND]), ("detailed", [THOUGHT]), (None, [])],
)
async def test_each_level_keeps_its_share(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    level: str | None,
    expected: list[str],
) -> None:
    scripted.add_turn(reasoning(THOUGHT), text("Leaves drift down."))
    asked = Reasoning(summary=level) if level else Reasoning()  # type: ignore[typeddict-item]

    response = await client.responses.create(model=backend.model, input="A haiku?", reasoning=asked)

    item = reasoning_item(list(response.output))
    assert [s.text for s in item.summary] == expected
    assert item.content is not None
    assert item.content[0].text == THOUGHT  # the reasoning itself is still given whole
    assert response.reasoning is not None
    assert response.reasoning.summary == level


async def test_no_reasoning_no_summary_events(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Leaves drift down."))

    stream = await client.responses.create(
        model=backend.model, input="A haiku?", reasoning=Reasoning(summary="auto"), stream=True
    )
    kinds = [event.type async for event in stream]

    assert not [k for k in kinds if "summary" in k]
