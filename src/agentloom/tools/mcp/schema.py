"""MCP tool input schemas made acceptable to model backends: ``$ref``/``$defs`` inlined,
no-argument tools given ``properties``, non-object schemas wrapped in an object."""

from __future__ import annotations

from collections.abc import Mapping

from agentloom.json_types import JSONObject, JSONValue

WRAPPED = "input"  # the property a non-object schema is wrapped in
_MAX_DEPTH = 32


def normalise(schema: Mapping[str, object]) -> tuple[JSONObject, bool]:
    """The schema to offer, and whether the arguments are wrapped in ``{"input": ...}``."""
    defs = {**_mapping(schema.get("definitions")), **_mapping(schema.get("$defs"))}
    body = _inline(schema, defs, 0)
    assert isinstance(body, dict)
    body.pop("$defs", None)
    body.pop("definitions", None)
    if "type" not in body and ("properties" in body or not body):
        body["type"] = "object"
    if body.get("type") != "object":
        return {"type": "object", "properties": {WRAPPED: body}, "required": [WRAPPED]}, True
    body.setdefault("properties", {})
    return body, False


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def _inline(value: object, defs: Mapping[str, object], depth: int) -> JSONValue:
    if isinstance(value, Mapping):
        ref = value.get("$ref")
        if isinstance(ref, str) and depth < _MAX_DEPTH:
            target = defs.get(ref.rsplit("/", 1)[-1])
            if target is not None:
                rest = {k: v for k, v in value.items() if k != "$ref"}
                return _inline({**_mapping(target), **rest}, defs, depth + 1)
        if isinstance(ref, str):
            return {}  # unresolved or too deep: any value
        return {str(k): _inline(v, defs, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_inline(v, defs, depth + 1) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
