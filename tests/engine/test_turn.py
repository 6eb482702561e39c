"""One model call: the scripted model's chunks become output items and their stream events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TypeVar

from agentloom.api import events as ev
from agentloom.api.content import Annotation, FileCitation, OutputText, Refusal
from agentloom.api.items import FunctionCall, OutputMessage, Reasoning, ToolSearchCall
from agentloom.engine.client_calls import ClientCall
from agentloom.engine.reasoning import ReasoningOutput
from agentloom.engine.turn import CallPolicy, Sequencer, TurnResult, TurnStreamer
from agentloom.inference import base as inf
from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    finish,
    reasoning,
    refusal,
    text,
    tool_call,
    usage,
)

REQUEST = inf.ChatRequest(model="scripted", messages=(inf.ChatMessage(role="user", content="Hi"),))
OPEN = CallPolicy(offered=frozenset({"get_weather", "get_time"}))
E = TypeVar("E")


async def play(
    *parts: TurnPart,
    policy: CallPolicy = OPEN,
    first_output_index: int = 0,
    seq: Callable[[], int] | None = None,
    include_logprobs: bool = False,
    annotate: Callable[[str], list[Annotation]] | None = None,
    reasoning_output: ReasoningOutput | None = None,
    quiet: bool = False,
) -> tuple[list[ev.StreamEvent], TurnResult]:
    """Stream one scripted turn through a TurnStreamer: its events and its result."""
    model = ScriptedModel()
    model.add_turn(*parts)
    turn = TurnStreamer(
        seq or Sequencer(),
        first_output_index=first_output_index,
        policy=policy,
        include_logprobs=include_logprobs,
        annotate=annotate,
        reasoning=reasoning_output,
        quiet=quiet,
    )
    events = [event async for event in turn.run(model.stream(REQUEST))]
    return events, turn.result


def types(events: Sequence[ev.StreamEvent]) -> list[str]:
    return [event.type for event in events]


def of_type(events: Sequence[ev.StreamEvent], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def names(calls: Sequence[ClientCall]) -> list[str]:
    """The names of the client calls a turn handed on."""
    return [call.type if isinstance(call, ToolSearchCall) else call.name for call in calls]


# --- text ------------------------------------------------------------------------------------


async def test_text_deltas_and_done_events_carry_the_full_text() -> None:
    events, result = await play(text("Hello world", chunk_size=4))

    assert types(events) == [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    assert [d.delta for d in of_type(events, ev.OutputTextDelta)] == ["Hell", "o wo", "rld"]
    assert of_type(events, ev.OutputTextDone)[0].text == "Hello world"
    part = of_type(events, ev.ContentPartDone)[0].part
    assert isinstance(part, OutputText)
    assert part.text == "Hello world"
    done = of_type(events, ev.OutputItemDone)[0].item
    assert isinstance(done, OutputMessage)
    assert done.status == "completed"
    assert [p.text for p in done.content if isinstance(p, OutputText)] == ["Hello world"]
    assert result.items == [done]


async def test_the_added_message_is_in_progress_and_empty() -> None:
    events, result = await play("Hi")

    added = of_type(events, ev.OutputItemAdded)[0].item
    assert isinstance(added, OutputMessage)
    assert added.status == "in_progress"
    assert added.content == []
    assert added.id == result.items[0].id


async def test_sequence_numbers_run_on_from_the_sequencer_and_indexes_from_the_first() -> None:
    seq = Sequencer()
    seq(), seq()  # two events of the response came before this turn

    events, _ = await play("Hi", first_output_index=3, seq=seq)

    assert [event.sequence_number for event in events] == list(range(2, 2 + len(events)))
    assert {e.output_index for e in of_type(events, ev.OutputItemAdded)} == {3}
    assert {e.output_index for e in of_type(events, ev.OutputTextDelta)} == {3}


async def test_finish_and_usage_are_kept_in_the_result() -> None:
    _, result = await play("Hi", finish("length"), usage(7, 3, cached_tokens=2))

    assert result.finish == "length"
    assert result.usage == inf.Usage(7, 3, cached_tokens=2)
    assert result.output_chars == 2


async def test_logprobs_are_kept_when_included() -> None:
    logprob = inf.TokenLogprob(token="Hi", logprob=-0.5, bytes=(72, 105))
    chunks = [inf.TextDelta("Hi", logprobs=(logprob,))]

    events, result = await play(chunks, include_logprobs=True)

    assert [lp.token for lp in of_type(events, ev.OutputTextDelta)[0].logprobs] == ["Hi"]
    message = result.items[0]
    assert isinstance(message, OutputMessage)
    part = message.content[0]
    assert isinstance(part, OutputText)
    assert [(lp.token, lp.logprob, lp.bytes) for lp in part.logprobs] == [("Hi", -0.5, [72, 105])]


async def test_logprobs_are_left_out_of_the_item_unless_included() -> None:
    chunks = [inf.TextDelta("Hi", logprobs=(inf.TokenLogprob(token="Hi", logprob=-0.5),))]

    _, result = await play(chunks)

    message = result.items[0]
    assert isinstance(message, OutputMessage)
    part = message.content[0]
    assert isinstance(part, OutputText)
    assert part.logprobs == []


async def test_annotations_of_the_finished_text_come_before_its_done() -> None:
    def annotate(found: str) -> list[Annotation]:
        return [FileCitation(file_id="file_1", filename="a.txt", index=len(found))]

    events, result = await play(text("See [1]", chunk_size=3), annotate=annotate)

    kinds = types(events)
    assert kinds.index("response.output_text.annotation.added") < kinds.index(
        "response.output_text.done"
    )
    added = of_type(events, ev.OutputTextAnnotationAdded)[0]
    assert added.annotation == FileCitation(file_id="file_1", filename="a.txt", index=7)
    message = result.items[0]
    assert isinstance(message, OutputMessage)
    assert isinstance(message.content[0], OutputText)
    assert message.content[0].annotations == [added.annotation]


# --- refusal ---------------------------------------------------------------------------------


async def test_refusal_becomes_a_refusal_part() -> None:
    events, result = await play(refusal("I can't help", chunk_size=6))

    assert [d.delta for d in of_type(events, ev.RefusalDelta)] == ["I can'", "t help"]
    assert of_type(events, ev.RefusalDone)[0].refusal == "I can't help"
    message = result.items[0]
    assert isinstance(message, OutputMessage)
    assert message.content == [Refusal(refusal="I can't help")]


async def test_text_then_refusal_are_two_parts_of_one_message() -> None:
    events, result = await play("Well. ", refusal("No."))

    assert len(result.items) == 1
    message = result.items[0]
    assert isinstance(message, OutputMessage)
    assert [part.type for part in message.content] == ["output_text", "refusal"]
    assert [e.content_index for e in of_type(events, ev.ContentPartAdded)] == [0, 1]
    kinds = types(events)
    assert kinds.index("response.output_text.done") < kinds.index("response.refusal.delta")


# --- reasoning -------------------------------------------------------------------------------


async def test_reasoning_deltas_become_a_reasoning_item_before_the_message() -> None:
    events, result = await play(reasoning("Let me think.", chunk_size=5), "Answer")

    assert [d.delta for d in of_type(events, ev.ReasoningTextDelta)] == ["Let m", "e thi", "nk."]
    assert of_type(events, ev.ReasoningTextDone)[0].text == "Let me think."
    first, second = result.items
    assert isinstance(first, Reasoning)
    assert first.text() == "Let me think."
    assert first.status == "completed"
    assert first.encrypted_content is None
    assert isinstance(second, OutputMessage)
    assert [e.output_index for e in of_type(events, ev.OutputItemDone)] == [0, 1]
    kinds = types(events)
    assert kinds.index("response.reasoning_text.done") < kinds.index("response.output_text.delta")


async def test_reasoning_summary_is_streamed_when_asked_for() -> None:
    events, result = await play(
        reasoning("First thought.\n\nSecond thought."),
        reasoning_output=ReasoningOutput(summary="concise"),
    )

    reasoning_item = result.items[0]
    assert isinstance(reasoning_item, Reasoning)
    assert [s.text for s in reasoning_item.summary] == ["First thought.\n\nSecond thought."]
    done = of_type(events, ev.ReasoningSummaryTextDone)
    assert [e.text for e in done] == ["First thought.\n\nSecond thought."]
    assert types(events)[-1] == "response.output_item.done"


# --- a quiet turn (a collected reply) ---------------------------------------------------------


def _without_ids(result: TurnResult) -> list[dict[str, object]]:
    return [item.model_dump(exclude={"id"}) for item in result.items]


async def test_a_quiet_turn_makes_the_same_items_without_their_events() -> None:
    parts = (reasoning("Let me think."), "Hello ", refusal("No."), finish("stop"), usage(5, 4))
    loud_events, loud = await play(*parts, reasoning_output=ReasoningOutput(summary="concise"))
    events, quiet = await play(
        *parts, reasoning_output=ReasoningOutput(summary="concise"), quiet=True
    )

    assert loud_events
    assert events == []
    assert _without_ids(quiet) == _without_ids(loud)
    assert (quiet.finish, quiet.usage, quiet.output_chars) == (
        loud.finish,
        loud.usage,
        loud.output_chars,
    )


async def test_a_quiet_turn_still_tells_its_function_calls() -> None:
    events, result = await play(tool_call("get_time", {}, call_id="call_2"), quiet=True)

    assert names(result.calls) == ["get_time"]
    assert "response.function_call_arguments.done" in types(events)


# --- function calls --------------------------------------------------------------------------


async def test_parallel_tool_calls_become_function_call_items_in_order() -> None:
    events, result = await play(
        tool_call("get_weather", {"city": "Paris"}, call_id="call_1", chunk_size=4),
        tool_call("get_time", {}, call_id="call_2"),
    )

    assert list(zip(names(result.calls), [c.call_id for c in result.calls], strict=True)) == [
        ("get_weather", "call_1"),
        ("get_time", "call_2"),
    ]
    first = result.calls[0]
    assert isinstance(first, FunctionCall)
    assert first.arguments == '{"city": "Paris"}'
    assert first.status == "completed"
    assert result.items == result.calls
    assert result.finish == "tool_calls"
    deltas = [
        e.delta for e in of_type(events, ev.FunctionCallArgumentsDelta) if e.output_index == 0
    ]
    assert "".join(deltas) == '{"city": "Paris"}'
    done = of_type(events, ev.FunctionCallArgumentsDone)
    assert [(e.name, e.arguments, e.output_index) for e in done] == [
        ("get_weather", '{"city": "Paris"}', 0),
        ("get_time", "{}", 1),
    ]


async def test_single_call_policy_drops_the_second_call() -> None:
    policy = CallPolicy(offered=OPEN.offered, single_call=True)

    events, result = await play(tool_call("get_time"), tool_call("get_weather"), policy=policy)

    assert names(result.calls) == ["get_time"]
    assert result.rejected == []  # dropped, not reported to the model
    assert len(of_type(events, ev.OutputItemAdded)) == 1


async def test_a_call_of_a_tool_not_offered_is_rejected_without_events() -> None:
    events, result = await play(tool_call("rm_rf", {"path": "/"}, call_id="call_x", chunk_size=3))

    assert events == []
    assert result.items == []
    assert result.calls == []
    assert result.rejected == [inf.ToolCall(id="call_x", name="rm_rf", arguments='{"path": "/"}')]


async def test_a_call_of_a_server_tool_is_kept_to_run_without_events() -> None:
    policy = CallPolicy(offered=frozenset({"web_search"}), hosted=frozenset({"web_search"}))

    events, result = await play(
        tool_call("web_search", {"query": "news"}, call_id="call_w", chunk_size=5), policy=policy
    )

    assert events == []
    assert result.hosted == [
        inf.ToolCall(id="call_w", name="web_search", arguments='{"query": "news"}')
    ]
    assert result.calls == []


async def test_a_call_whose_name_comes_later_waits_for_it() -> None:
    chunks = [
        inf.ToolCallDelta(index=0, id="call_late", arguments='{"city"'),
        inf.ToolCallDelta(index=0, name="get_weather", arguments=': "Oslo"}'),
    ]

    _, result = await play(chunks)

    call = result.calls[0]
    assert isinstance(call, FunctionCall)
    assert (call.call_id, call.name, call.arguments) == (
        "call_late",
        "get_weather",
        '{"city": "Oslo"}',
    )


async def test_text_after_a_tool_call_closes_the_call_first() -> None:
    events, result = await play(tool_call("get_time", call_id="call_t"), "Done.")

    assert [item.type for item in result.items] == ["function_call", "message"]
    done = of_type(events, ev.OutputItemDone)
    assert [(e.item.type, e.output_index) for e in done] == [("function_call", 0), ("message", 1)]


async def test_close_ends_an_interrupted_turn_with_what_it_has() -> None:
    async def cut() -> AsyncIterator[inf.Chunk]:
        yield inf.TextDelta("Half a sent")

    turn = TurnStreamer(Sequencer(), first_output_index=0, policy=OPEN)
    events = [event async for event in turn.run(cut())]

    assert of_type(events, ev.OutputTextDone)[0].text == "Half a sent"
    assert turn.result.finish is None
    assert turn.result.usage is None
    assert turn.close() == []  # nothing is left open
