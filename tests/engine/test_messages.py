"""How Responses items become the chat messages a backend is sent: ``ChatHistory`` and ``Head``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from pydantic import TypeAdapter

from agentloom.api.items import Message, StoredItem
from agentloom.engine.messages import ChatHistory, Head, to_chat_messages
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.inference.base import ChatMessage, FilePart, ImagePart, TextPart, ToolCall

ITEMS = TypeAdapter(list[StoredItem])


def items(*bodies: Mapping[str, object]) -> list[StoredItem]:
    return ITEMS.validate_python(list(bodies))


def user(content: object) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": content}


def assistant(text: str) -> dict[str, object]:
    return {"type": "message", "role": "assistant", "content": text}


def call(call_id: str, name: str = "get_time", arguments: str = "{}") -> dict[str, object]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def output(call_id: str, text: str) -> dict[str, object]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(text: str) -> dict[str, object]:
    return {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": text}],
    }


def rendered(bodies: Sequence[Mapping[str, object]], head: Head | None = None) -> list[ChatMessage]:
    history = ChatHistory()
    history.extend(items(*bodies), param="input")
    return history.render(head or Head())


# --- messages --------------------------------------------------------------------------------


def test_system_and_developer_messages_become_system_messages() -> None:
    messages = rendered(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use metric units."},
            user("Hi"),
        ]
    )

    assert messages == [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="system", content="Use metric units."),
        ChatMessage(role="user", content="Hi"),
    ]


def test_text_parts_of_a_user_message_are_joined() -> None:
    parts = [{"type": "input_text", "text": "Hello, "}, {"type": "input_text", "text": "there"}]

    assert rendered([user(parts)]) == [ChatMessage(role="user", content="Hello, there")]


def test_an_image_makes_the_user_message_a_list_of_parts() -> None:
    parts = [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "original"},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,AA"},
    ]

    [message] = rendered([user(parts)])

    assert message.content == (
        TextPart("What is this?"),
        ImagePart(url="https://example.com/a.png", detail="auto"),
        FilePart(filename="a.pdf", data="data:application/pdf;base64,AA"),
    )


def test_assistant_text_and_refusal_are_told_as_text() -> None:
    refused = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "Well. "},
            {"type": "refusal", "refusal": "No."},
        ],
    }

    assert rendered([user("Hi"), refused]) == [
        ChatMessage(role="user", content="Hi"),
        ChatMessage(role="assistant", content="Well. No."),
    ]


# --- tool calls ------------------------------------------------------------------------------


def test_a_function_call_and_its_output_are_an_assistant_then_a_tool_message() -> None:
    messages = rendered([user("Time?"), call("call_1"), output("call_1", "noon")])

    assert messages[1:] == [
        ChatMessage(role="assistant", tool_calls=(ToolCall("call_1", "get_time", "{}"),)),
        ChatMessage(role="tool", content="noon", tool_call_id="call_1"),
    ]


def test_consecutive_calls_and_the_reasoning_before_them_are_one_assistant_message() -> None:
    messages = rendered(
        [
            user("Weather and time?"),
            reasoning("Two lookups."),
            call("call_1", "get_weather", '{"city": "Oslo"}'),
            call("call_2"),
            output("call_1", "rain"),
            output("call_2", "noon"),
        ]
    )

    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool"]
    assert messages[1] == ChatMessage(
        role="assistant",
        tool_calls=(
            ToolCall("call_1", "get_weather", '{"city": "Oslo"}'),
            ToolCall("call_2", "get_time", "{}"),
        ),
        reasoning="Two lookups.",
    )
    assert [m.tool_call_id for m in messages[2:]] == ["call_1", "call_2"]


def test_assistant_text_before_calls_joins_their_message() -> None:
    messages = rendered([user("Time?"), assistant("Let me check."), call("call_1")])

    assert messages[1:] == [
        ChatMessage(
            role="assistant",
            content="Let me check.",
            tool_calls=(ToolCall("call_1", "get_time", "{}"),),
        )
    ]


def test_assistant_text_after_tool_calls_flushes_them() -> None:
    messages = rendered([user("Time?"), call("call_1"), assistant("Checking.")])

    assert messages[1:] == [
        ChatMessage(role="assistant", tool_calls=(ToolCall("call_1", "get_time", "{}"),)),
        ChatMessage(role="assistant", content="Checking."),
    ]


def test_reasoning_after_assistant_text_starts_a_new_assistant_message() -> None:
    messages = rendered([user("Hi"), assistant("Hello."), reasoning("Now a call."), call("c")])

    assert messages[1:] == [
        ChatMessage(role="assistant", content="Hello."),
        ChatMessage(
            role="assistant", tool_calls=(ToolCall("c", "get_time", "{}"),), reasoning="Now a call."
        ),
    ]


def test_a_custom_tool_call_is_shown_as_a_function_of_one_input() -> None:
    custom = {"type": "custom_tool_call", "call_id": "call_c", "name": "patch", "input": "diff"}
    answer = {"type": "custom_tool_call_output", "call_id": "call_c", "output": "applied"}

    messages = rendered([user("Fix it"), custom, answer])

    assert messages[1] == ChatMessage(
        role="assistant", tool_calls=(ToolCall("call_c", "patch", '{"input": "diff"}'),)
    )
    assert messages[2] == ChatMessage(role="tool", content="applied", tool_call_id="call_c")


def test_a_server_tool_item_is_replayed_as_its_call_and_answer() -> None:
    searched = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "news"},
    }

    messages = rendered([user("News?"), searched])

    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    [replayed_call] = messages[1].tool_calls
    assert replayed_call.name == "web_search"
    assert messages[2].tool_call_id == replayed_call.id


# --- outputs without their call --------------------------------------------------------------


def test_a_function_call_output_without_its_call_is_a_400_naming_input_i() -> None:
    history = ChatHistory()

    with pytest.raises(InvalidRequestError) as caught:
        history.extend(items(user("Hi"), output("call_nowhere", "x")), param="input")

    assert caught.value.param == "input[1]"
    assert caught.value.message == (
        "No tool call found for function call output with call_id call_nowhere."
    )


def test_a_custom_tool_output_without_its_call_names_its_kind() -> None:
    orphan = {"type": "custom_tool_call_output", "call_id": "call_c", "output": "x"}

    with pytest.raises(InvalidRequestError) as caught:
        ChatHistory().extend(items(orphan), param="input")

    assert caught.value.message == (
        "No tool call found for custom tool call output with call_id call_c."
    )
    assert caught.value.param == "input[0]"


def test_an_output_may_answer_a_call_of_the_earlier_history() -> None:
    history = ChatHistory()
    history.extend(items(user("Time?"), call("call_1")))  # accepted earlier

    history.extend(items(output("call_1", "noon")), param="input")

    assert history.render(Head())[-1] == ChatMessage(
        role="tool", content="noon", tool_call_id="call_1"
    )


def test_an_accepted_output_without_its_call_is_told_as_user_text() -> None:
    history = ChatHistory()
    history.extend(items(output("call_old", "42")))  # no param: an item accepted earlier

    assert history.render(Head()) == [
        ChatMessage(role="user", content="(Output of the earlier tool call call_old:)\n42")
    ]


def test_an_approval_response_without_its_request_is_a_400() -> None:
    answer = {"type": "mcp_approval_response", "approval_request_id": "mcpr_x", "approve": True}

    with pytest.raises(InvalidRequestError) as caught:
        ChatHistory().extend(items(user("Go"), answer), param="input")

    assert caught.value.param == "input[1].approval_request_id"


# --- input values that cannot be shown -------------------------------------------------------


def test_an_image_without_url_or_file_is_a_400_naming_its_part() -> None:
    parts = [{"type": "input_text", "text": "Look"}, {"type": "input_image"}]

    with pytest.raises(InvalidRequestError) as caught:
        rendered([user("Hi"), user(parts)])

    assert caught.value.param == "input[1].content[1]"


def test_a_file_id_not_resolved_is_not_found_for_new_input() -> None:
    parts = [{"type": "input_file", "file_id": "file_gone"}]

    with pytest.raises(NotFoundError) as caught:
        rendered([user(parts)])

    assert caught.value.param == "input[0].content[0].file_id"
    assert caught.value.message == "No such File object: file_gone"


def test_a_file_id_not_resolved_is_a_note_for_an_accepted_item() -> None:
    history = ChatHistory()
    history.extend(items(user([{"type": "input_file", "file_id": "file_gone"}])))

    assert history.render(Head()) == [
        ChatMessage(role="user", content="[file: file_gone: no longer available]\n")
    ]


def test_compaction_items_are_refused_without_a_reader() -> None:
    compaction = {"type": "compaction", "encrypted_content": "sealed"}

    with pytest.raises(InvalidRequestError) as caught:
        rendered([compaction])

    assert caught.value.message == "Compaction items are not accepted here."
    assert caught.value.param == "input[0]"


# --- head, render, copy ----------------------------------------------------------------------


def test_the_head_comes_first_instructions_then_media() -> None:
    media = Message.model_validate(
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}
    )

    messages = rendered([user("Hi")], Head("Be brief.", media))

    assert messages == [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content=(ImagePart(url="https://x/y.png"),)),
        ChatMessage(role="user", content="Hi"),
    ]
    assert Head().messages() == []


def test_render_shows_pending_assistant_output_without_changing_the_history() -> None:
    history = ChatHistory()
    history.extend(items(user("Hi"), assistant("Hello.")))

    first = history.render(Head())
    second = history.render(Head())

    assert (
        first
        == second
        == [
            ChatMessage(role="user", content="Hi"),
            ChatMessage(role="assistant", content="Hello."),
        ]
    )
    assert history.messages == [ChatMessage(role="user", content="Hi")]
    assert history.text == ["Hello."]


def test_a_copy_is_extended_without_changing_the_original() -> None:
    history = ChatHistory()
    history.extend(items(user("Hi"), call("call_1")))

    copy = history.copy()
    copy.extend(items(output("call_1", "noon")), param="input")

    assert len(copy.render(Head())) == 3
    assert history.render(Head()) == [
        ChatMessage(role="user", content="Hi"),
        ChatMessage(role="assistant", tool_calls=(ToolCall("call_1", "get_time", "{}"),)),
    ]


def test_to_chat_messages_names_only_the_new_input_in_errors() -> None:
    earlier = items(output("call_old", "42"))  # accepted: told as text
    new = items(output("call_new", "43"))

    assert to_chat_messages("Hi there", earlier, first_new=1) == [
        ChatMessage(role="system", content="Hi there"),
        ChatMessage(role="user", content="(Output of the earlier tool call call_old:)\n42"),
    ]
    with pytest.raises(InvalidRequestError) as caught:
        to_chat_messages(None, [*earlier, *new], first_new=1)

    assert caught.value.param == "input[0]"
