"""``calculator``: arithmetic evaluated from the expression's syntax tree, never with ``eval``.

Only numbers, ``+ - * / // % **``, unary signs, parentheses, and a fixed set of ``math``
functions and constants are accepted. Sizes are bounded before computing: an expression of at
most 500 characters, integers of at most 4,096 bits (so ``9**9**9`` is refused instead of
running for ever), ``factorial`` up to 1,000.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import TypeAlias

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.json_types import JSONObject

__all__ = ["CalculatorTool", "evaluate"]

Number: TypeAlias = int | float

MAX_LENGTH = 500
MAX_BITS = 4096
MAX_FACTORIAL = 1000

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _factorial(n: Number) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ToolError("factorial needs a non-negative integer")
    if n > MAX_FACTORIAL:
        raise ToolError(f"factorial is limited to n <= {MAX_FACTORIAL}")
    return math.factorial(n)


_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "hypot": math.hypot,
    "degrees": math.degrees,
    "radians": math.radians,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": _factorial,
}


def evaluate(expression: str) -> Number:
    """The value of an arithmetic ``expression``; :class:`ToolError` says why one is refused."""
    if len(expression) > MAX_LENGTH:
        raise ToolError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not a valid expression: {exc.msg}") from None
    try:
        return _checked(_eval(tree.body))
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("the result is too large") from None
    except (ValueError, TypeError) as exc:
        raise ToolError(f"math error: {exc}") from None


def _eval(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.Name):
        if node.id not in _CONSTANTS:
            raise ToolError(f"unknown name {node.id!r}; constants: {', '.join(_CONSTANTS)}")
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.Call):
        return _call(node)
    raise ToolError(f"unsupported syntax: {type(node).__name__}")


def _number(value: object) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"only numbers are allowed, not {value!r}")
    return _checked(value)


def _binary(node: ast.BinOp) -> Number:
    left, right = _eval(node.left), _eval(node.right)
    if isinstance(node.op, ast.Pow):
        return _checked(_power(left, right))
    if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int):
        _check_bits(left.bit_length() + right.bit_length())
    function = _BINARY.get(type(node.op))
    if function is None:
        raise ToolError(f"unsupported operator: {type(node.op).__name__}")
    return _checked(function(left, right))


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        _check_bits(math.ceil(exponent * math.log2(abs(base))))
    result = base**exponent
    if isinstance(result, complex):
        raise ToolError("the result is not a real number")
    return result


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
        raise ToolError(f"unknown function; available: {', '.join(_FUNCTIONS)}")
    if node.keywords:
        raise ToolError("functions take positional arguments only")
    arguments = [_eval(argument) for argument in node.args]
    return _checked(_FUNCTIONS[node.func.id](*arguments))


def _checked(value: Number) -> Number:
    if isinstance(value, int):
        _check_bits(value.bit_length())
    return value


def _check_bits(bits: int) -> None:
    if bits > MAX_BITS:
        raise ToolError(f"the result would be too large (over {MAX_BITS} bits)")


def format_number(value: Number) -> str:
    """Integers as they are; floats without a trailing ``.0`` when they are whole."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


class CalculatorTool(Tool):
    name = "calculator"
    description = (
        "Evaluate an arithmetic expression exactly, e.g. '(2 + 3) * 4 ** 2' or "
        "'sqrt(2) * sin(pi / 4)'. Supports + - * / // % **, parentheses, pi, e, tau and "
        f"the functions {', '.join(_FUNCTIONS)}."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "The expression to evaluate."}
        },
        "required": ["expression"],
        "additionalProperties": False,
    }

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        expression = arguments.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise ToolError("expression must be a non-empty string")
        return format_number(evaluate(expression))
