"""The calculator: arithmetic from the syntax tree, with everything else refused."""

from __future__ import annotations

import pytest

from agentloom.agents import AgentContext, ToolError
from agentloom.agents.tools.calculator import CalculatorTool, evaluate, format_number


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("7 / 2", "3.5"),
        ("7 // 2", "3"),
        ("-7 % 3", "2"),
        ("2 ** 10", "1024"),
        ("-(3 - 5)", "2"),
        ("+4", "4"),
        ("sqrt(16)", "4"),
        ("round(pi, 3)", "3.142"),
        ("abs(-2.5) + max(1, 7, 3) - min(4, 2)", "7.5"),
        ("log(e)", "1"),
        ("log(8, 2)", "3"),
        ("factorial(5)", "120"),
        ("2 ** 0.5", "1.4142135623730951"),
        ("1e3 + 1", "1001"),
        ("2 ** 100", str(2**100)),
    ],
)
def test_arithmetic(expression: str, expected: str) -> None:
    assert format_number(evaluate(expression)) == expected


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("9**9**9", "too large"),
        ("10 ** 5000", "too large"),
        ("2 ** 4000 * 2 ** 4000", "too large"),
        ("factorial(100000)", "limited"),
        ("exp(10000)", "too large"),
        ("1 / 0", "division by zero"),
        ("sqrt(-1)", "math error"),
        ("(-8) ** 0.5", "not a real number"),
        ("__import__('os').system('echo hi')", "unknown function"),
        ("open('/etc/passwd')", "unknown function"),
        ("x + 1", "unknown name 'x'"),
        ("'a' * 3", "only numbers"),
        ("True + 1", "only numbers"),
        ("[1, 2]", "unsupported syntax: List"),
        ("(1).real", "unsupported syntax: Attribute"),
        ("lambda: 1", "unsupported syntax: Lambda"),
        ("1 << 3", "unsupported operator: LShift"),
        ("round(2.5, ndigits=1)", "positional"),
        ("2 +", "not a valid expression"),
        ("1" * 501, "longer than 500"),
    ],
)
def test_refusals(expression: str, problem: str) -> None:
    with pytest.raises(ToolError, match=problem):
        evaluate(expression)


async def test_the_tool_validates_its_argument() -> None:
    tool = CalculatorTool()

    assert await tool.call({"expression": "6 * 7"}, AgentContext()) == "42"
    with pytest.raises(ToolError, match="non-empty string"):
        await tool.call({"expression": 42}, AgentContext())
    assert tool.spec().parameters["required"] == ["expression"]
