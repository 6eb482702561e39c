"""The loop guard: identical repeats and ping-pong alternation are blocked."""

from __future__ import annotations

import pytest

from agentloom.agents.loop_guard import LoopGuard, call_key
from agentloom.llm.types import MessageToolCall


def call(name: str, arguments: str = "{}") -> MessageToolCall:
    return MessageToolCall("c", name, arguments)


def test_the_call_after_max_repeats_identical_calls_is_blocked() -> None:
    guard = LoopGuard(max_repeats=3)

    verdicts = [guard.check(call("search", '{"q": "x"}')) for _ in range(4)]

    assert verdicts[:3] == [None, None, None]
    assert verdicts[3] is not None
    assert "search was already called 3 times" in verdicts[3]


def test_identical_means_same_canonical_json() -> None:
    guard = LoopGuard(max_repeats=1)

    assert guard.check(call("f", '{"a": 1, "b": 2}')) is None
    assert guard.check(call("f", '{"b":2,"a":1}')) is not None
    assert guard.check(call("f", '{"a": 1, "b": 3}')) is None
    assert guard.check(call("g", '{"a": 1, "b": 2}')) is None


def test_blocked_calls_are_not_recorded_so_insisting_stays_blocked() -> None:
    guard = LoopGuard(max_repeats=1)
    guard.check(call("f"))

    assert guard.check(call("f")) is not None
    assert guard.check(call("f")) is not None


def test_ping_pong_is_blocked_when_it_completes_its_cycles() -> None:
    guard = LoopGuard(max_repeats=10, ping_pong_cycles=3)
    a, b = call("open", '{"door": 1}'), call("close", '{"door": 1}')

    verdicts = [guard.check(c) for c in (a, b, a, b, a, b)]

    assert verdicts[:5] == [None] * 5
    assert verdicts[5] is not None
    assert "alternating" in verdicts[5]


def test_three_calls_in_rotation_are_not_ping_pong() -> None:
    guard = LoopGuard(max_repeats=10, ping_pong_cycles=2)

    verdicts = [guard.check(call(name)) for name in "abcabcabc"]

    assert verdicts == [None] * 9


def test_reset_forgets_the_run() -> None:
    guard = LoopGuard(max_repeats=1)
    guard.check(call("f"))
    guard.reset()

    assert guard.check(call("f")) is None


def test_invalid_json_arguments_are_compared_as_text() -> None:
    assert call_key(call("f", "{oops")) == call_key(call("f", " {oops "))
    assert call_key(call("f", "{oops")) != call_key(call("f", "{oops2"))


@pytest.mark.parametrize(("repeats", "cycles"), [(0, 3), (3, 1)])
def test_limits_are_validated(repeats: int, cycles: int) -> None:
    with pytest.raises(ValueError, match="at least"):
        LoopGuard(max_repeats=repeats, ping_pong_cycles=cycles)


def test_after_a_ping_pong_both_calls_stay_blocked_for_the_run() -> None:
    guard = LoopGuard(max_repeats=10, ping_pong_cycles=2)
    a, b = call("a"), call("b")
    for c in (a, b, a):
        assert guard.check(c) is None
    assert guard.check(b) is not None

    assert guard.check(a) is not None
    assert guard.check(b) is not None
    assert guard.check(call("c")) is None
