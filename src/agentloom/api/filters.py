"""Attribute filters (OpenAI's ``ComparisonFilter`` / ``CompoundFilter``), as used by vector
store search and the ``file_search`` tool.

A comparison tests one attribute: ``eq``/``ne`` take a string, number or boolean; ``gt``, ``gte``,
``lt`` and ``lte`` a number or a string (strings compare lexicographically, so ISO dates work);
``in``/``nin`` a list of strings and numbers. A compound filter joins filters with ``and``/``or``,
nested at most ``MAX_FILTER_DEPTH`` levels deep and holding at most ``MAX_FILTER_NODES`` filters
in all. How a filter is evaluated: ``agentloom.retrieval.filters``.

A request's ``filters`` (:data:`FilterParam`) may also be written in Llama Stack's shorthand,
``{key: {operator: value}}`` with the same operators: ``{"file_name": {"eq": "report.pdf"},
"created_at": {"gte": "2024-01-01"}}`` is the ``and`` of those two comparisons (one comparison
stands alone). It is read into the filters above as the request is validated
(:func:`from_shorthand`), so nothing past the request models sees it; an unknown operator is a
400 naming it.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias, get_args

from pydantic import (
    BeforeValidator,
    Field,
    StrictBool,
    StrictFloat,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from agentloom.api.wire import WireModel

__all__ = [
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_NODES",
    "ComparisonFilter",
    "CompoundFilter",
    "Filter",
    "FilterParam",
    "Scalar",
    "from_shorthand",
]

MAX_FILTER_DEPTH = 8
MAX_FILTER_NODES = 128

Scalar: TypeAlias = StrictStr | StrictFloat | StrictBool
ComparisonType = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"]
_ORDERED = frozenset({"gt", "gte", "lt", "lte"})
_LISTED = frozenset({"in", "nin"})


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_value(value: object) -> object:
    """One clear message instead of one per member of the value's union."""
    if isinstance(value, list):
        if not all(isinstance(item, str) or _is_number(item) for item in value):
            raise ValueError("a list value may only hold strings and numbers")
    elif not (isinstance(value, str | bool) or _is_number(value)):
        raise ValueError("the value must be a string, a number, a boolean or a list")
    return value


class ComparisonFilter(WireModel):
    type: ComparisonType
    key: str = Field(min_length=1)
    value: Scalar | list[StrictStr | StrictFloat]

    _value_shape = field_validator("value", mode="before")(_check_value)

    @model_validator(mode="after")
    def _value_fits_type(self) -> ComparisonFilter:
        listed = isinstance(self.value, list)
        if self.type in _LISTED and not listed:
            raise ValueError(f"a '{self.type}' filter needs a list value")
        if self.type not in _LISTED and listed:
            raise ValueError(f"a '{self.type}' filter needs a single value, not a list")
        if self.type in _ORDERED and isinstance(self.value, bool):
            raise ValueError(f"a '{self.type}' filter needs a number or a string value")
        return self


class CompoundFilter(WireModel):
    type: Literal["and", "or"]
    filters: list[Filter] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: object) -> object:
        """Checked on the raw input, before the children are validated: a tree too deep for
        pydantic's own recursion limit gets this message too."""
        levels, nodes = _extent(data)
        if levels > MAX_FILTER_DEPTH:
            raise ValueError(f"filters may be nested at most {MAX_FILTER_DEPTH} levels deep")
        if nodes > MAX_FILTER_NODES:
            raise ValueError(f"a filter may hold at most {MAX_FILTER_NODES} filters in all")
        return data


Filter: TypeAlias = Annotated[ComparisonFilter | CompoundFilter, Field(discriminator="type")]


def _extent(data: object) -> tuple[int, int]:
    """Levels and filters of a raw filter tree, counted until either passes its limit."""
    levels, nodes = 0, 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack and levels <= MAX_FILTER_DEPTH and nodes <= MAX_FILTER_NODES:
        node, level = stack.pop()
        levels, nodes = max(levels, level), nodes + 1
        children = node.get("filters") if isinstance(node, dict) else None
        if isinstance(children, list):
            stack += [(child, level + 1) for child in children]
    return levels, nodes


CompoundFilter.model_rebuild()


# --- the shorthand -------------------------------------------------------------------------------

OPERATORS: tuple[str, ...] = get_args(ComparisonType)
ShorthandValue: TypeAlias = Scalar | list[StrictStr | StrictFloat]
Shorthand: TypeAlias = dict[str, dict[ComparisonType, ShorthandValue]]
"""``{key: {operator: value}}``: how the request's JSON schema shows the shorthand."""


def from_shorthand(data: object) -> object:
    """A filter written ``{key: {operator: value}, ...}`` as the comparison (or the ``and`` of
    the comparisons) it means; any other filter as it is. A filter is shorthand when it has no
    string ``type`` (every OpenAI filter has one)."""
    if not isinstance(data, dict) or isinstance(data.get("type"), str):
        return data
    comparisons = [_comparison(key, conditions) for key, conditions in data.items()]
    flat = [comparison for group in comparisons for comparison in group]
    if not flat:
        raise ValueError(
            'a filter is {"type": ..., "key": ..., "value": ...}, {"type": "and" or "or", '
            '"filters": [...]} or {key: {operator: value}}; this one has no condition'
        )
    if len(flat) == 1:
        return flat[0]
    return CompoundFilter(type="and", filters=flat)


def _comparison(key: object, conditions: object) -> list[ComparisonFilter]:
    """``{operator: value, ...}`` of one key, each a comparison."""
    if not isinstance(conditions, dict) or not conditions:
        raise ValueError(
            f"the shorthand filter on '{key}' needs {{operator: value}}, e.g. "
            f'{{"{key}": {{"eq": ...}}}}; the operators are {", ".join(OPERATORS)}'
        )
    return [_one(key, operator, value) for operator, value in conditions.items()]


def _one(key: object, operator: object, value: object) -> ComparisonFilter:
    if operator not in OPERATORS:
        raise ValueError(
            f"unknown filter operator '{operator}' on '{key}'; "
            f"the operators are {', '.join(OPERATORS)}"
        )
    try:
        return ComparisonFilter.model_validate({"type": operator, "key": key, "value": value})
    except ValidationError as exc:
        why = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
        raise ValueError(f"'{key}': {{\"{operator}\": ...}}: {why}") from None


FilterParam: TypeAlias = Annotated[
    Filter, BeforeValidator(from_shorthand, json_schema_input_type=Filter | Shorthand)
]
"""The ``filters`` of a request: an OpenAI filter or Llama Stack's shorthand."""
