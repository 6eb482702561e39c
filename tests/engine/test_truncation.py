"""``truncation: "auto"``: which messages go first, and what is never dropped."""

from __future__ import annotations

from agentloom.engine import truncation
from agentloom.inference.base import ChatMessage, ToolCall


def msg(role: str, content: str = "x") -> ChatMessage:
    return ChatMessage(role=role, content=content)  # type: ignore[arg-type]


def roles(messages: list[ChatMessage] | None) -> list[str]:
    assert messages is not None
    return [f"{m.role}:{m.content}" for m in messages]


CALL = ToolCall(id="call_1", name="f", arguments="{}")
CONVERSATION = [
    msg("system", "rules"),
    msg("user", "1"),
    ChatMessage(role="assistant", content=None, tool_calls=(CALL,)),
    ChatMessage(role="tool", content="result", tool_call_id="call_1"),
    msg("assistant", "a1"),
    msg("user", "2"),
    msg("assistant", "a2"),
    msg("user", "3"),
]


def test_the_oldest_turn_goes_whole_with_its_tool_call_and_result() -> None:
    shorter = truncation.drop_oldest_turn(CONVERSATION)

    assert roles(shorter) == ["system:rules", "user:2", "assistant:a2", "user:3"]


def test_system_messages_and_the_last_turn_stay() -> None:
    messages = list(CONVERSATION)
    while (shorter := truncation.drop_oldest_turn(messages)) is not None:
        messages = shorter

    assert roles(messages) == ["system:rules", "user:3"]


def test_assistant_messages_before_the_only_user_turn_can_go() -> None:
    messages = [msg("system"), msg("assistant", "old"), msg("user", "now")]

    assert roles(truncation.drop_oldest_turn(messages)) == ["system:x", "user:now"]
    assert truncation.drop_oldest_turn([msg("user")]) is None
    assert truncation.drop_oldest_turn([msg("system")]) is None


def test_estimate_counts_text_tool_calls_and_reasoning() -> None:
    text = msg("user", "a" * 400)
    call = ChatMessage(role="assistant", content=None, tool_calls=(CALL,), reasoning="r" * 40)

    assert truncation.estimate_tokens([text]) == 100 + truncation.MESSAGE_OVERHEAD_TOKENS
    assert truncation.estimate_tokens([call]) == (1 + 2 + 40) // 4 + 4


def test_fit_to_window_drops_just_enough() -> None:
    long = [msg("user", "u" * 400), msg("assistant", "a" * 400), msg("user", "last")]

    assert roles(truncation.fit_to_window(long, window=1000, reserve=0)) == roles(long)
    assert roles(truncation.fit_to_window(long, window=50, reserve=0)) == ["user:last"]
    assert truncation.fit_to_window(long, window=4, reserve=0) is None
    assert truncation.fit_to_window(long, window=60, reserve=57) is None
