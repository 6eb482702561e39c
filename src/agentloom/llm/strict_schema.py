"""A function tool's JSON schema made strict-compatible, as OpenAI's structured outputs want it.

In strict mode every object lists all its properties in ``required`` and says
``additionalProperties: false``, down through nested objects, array items, ``anyOf`` branches and
``$defs``. A property that was optional becomes nullable, as OpenAI documents it: the model
sends ``null`` for it (``"type": "string"`` becomes ``["string", "null"]``; an ``enum`` gains
``null``; a ``$ref`` or ``const`` becomes ``anyOf`` with ``{"type": "null"}``). A single-entry
``allOf`` is inlined.

What strict mode cannot express is refused with :class:`StrictSchemaError` (for a tool that asks
to be strict; one left to the path's default is then sent as it is, :func:`sent_strict`), naming
the place in the schema: an open ``additionalProperties`` (``true`` or a schema), a nested
object without ``properties`` (it takes any keys), ``patternProperties`` and the other keywords
structured outputs do not support (:data:`UNSUPPORTED`), a schema with no type. ``FunctionTool(...,
strict=False)`` sends such a schema as it is.

The model then sends ``null`` for an optional property it leaves out; :func:`drop_added_nulls`
takes those out of the call's arguments again, so a tool sees what its own schema promised.
"""

from __future__ import annotations

import json
import logging
from typing import Final

from agentloom.errors import InvalidRequestError
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.types import FunctionTool

__all__ = ["UNSUPPORTED", "StrictSchemaError", "drop_added_nulls", "sent_strict", "strict_schema"]

log = logging.getLogger(__name__)

UNSUPPORTED: Final = (
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
)
_TYPED: Final = ("type", "anyOf", "$ref", "enum", "const")
_NULL: Final[JSONObject] = {"type": "null"}


class StrictSchemaError(InvalidRequestError):
    """A tool's schema cannot be made strict-compatible."""


def strict_schema(schema: JSONObject, *, tool: str) -> JSONObject:
    """``schema`` (a tool's ``parameters``) made strict-compatible; a new object, ``schema`` is
    left as it is. :class:`StrictSchemaError` when strict mode cannot express it."""
    return _Walk(tool).root(schema)


class _Walk:
    def __init__(self, tool: str) -> None:
        self.tool = tool

    def fail(self, path: str, why: str) -> StrictSchemaError:
        return StrictSchemaError(
            f"tool {self.tool!r} cannot be strict: {path} {why}; make the schema strict-"
            "compatible or pass FunctionTool(..., strict=False) to send it as it is",
            param=f"tools.{self.tool}.{path}",
        )

    def root(self, schema: JSONObject) -> JSONObject:
        if not _is_object(schema):
            raise self.fail("parameters", 'must be an object schema ("type": "object")')
        return self.node(schema, "parameters", root=True)

    def node(self, value: JSONValue, path: str, *, root: bool = False) -> JSONObject:
        if not isinstance(value, dict):
            raise self.fail(path, f"is {value!r}, not a schema object")
        for key in UNSUPPORTED:
            if key in value:
                raise self.fail(path, f"uses {key!r}, which strict mode does not support")
        schema = self.inlined(value, path)
        if not any(key in schema for key in _TYPED):
            raise self.fail(path, "has no type")
        out = dict(schema)
        if _is_object(schema):
            out.update(self.object(schema, path, root))
        if "items" in schema:
            out["items"] = self.node(schema["items"], f"{path}.items")
        if "anyOf" in schema:
            branches = enumerate(_list(schema["anyOf"]))
            out["anyOf"] = [self.node(s, f"{path}.anyOf[{i}]") for i, s in branches]
        for defs in ("$defs", "definitions"):
            if defs in schema:
                named = self.mapping(schema[defs], f"{path}.{defs}")
                out[defs] = {name: self.node(s, f"{path}.{defs}.{name}") for name, s in named}
        return out

    def mapping(self, value: JSONValue, path: str) -> list[tuple[str, JSONValue]]:
        if not isinstance(value, dict):
            raise self.fail(path, "is not an object")
        return list(value.items())

    def inlined(self, schema: JSONObject, path: str) -> JSONObject:
        """``schema`` with a single-entry ``allOf`` merged into it."""
        if "allOf" not in schema:
            return schema
        parts = _list(schema["allOf"])
        if len(parts) != 1 or not isinstance(parts[0], dict):
            raise self.fail(path, "uses 'allOf' with several schemas, which strict mode cannot")
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return self.inlined({**parts[0], **rest}, path)

    def object(self, schema: JSONObject, path: str, root: bool) -> JSONObject:
        extra = schema.get("additionalProperties")
        if extra is True or isinstance(extra, dict):
            raise self.fail(path, "takes additional properties (additionalProperties is open)")
        if "properties" not in schema and not root:
            raise self.fail(path, "is an object without properties, which takes any keys")
        properties = self.mapping(schema.get("properties", {}), f"{path}.properties")
        required = set(_list(schema.get("required", [])))
        strict: JSONObject = {}
        for name, sub in properties:
            where = f"{path}.properties.{name}"
            made = self.node(sub, where)
            strict[name] = made if name in required else self.nullable(made, where)
        return {"properties": strict, "required": list(strict), "additionalProperties": False}

    def nullable(self, schema: JSONObject, path: str) -> JSONObject:
        """``schema`` also admitting ``null`` (how strict mode spells an optional property)."""
        kind = schema.get("type")
        out = dict(schema)
        if isinstance(kind, str | list):
            kinds: list[JSONValue] = [kind] if isinstance(kind, str) else list(kind)
            if "null" in kinds:
                return schema
            out["type"] = [*kinds, "null"]
            if "enum" in schema and None not in _list(schema["enum"]):
                out["enum"] = [*_list(schema["enum"]), None]
            return out
        if "anyOf" in schema:
            branches = _list(schema["anyOf"])
            out["anyOf"] = branches if _NULL in branches else [*branches, _NULL]
            return out
        if "enum" in schema and "$ref" not in schema and "const" not in schema:
            values = _list(schema["enum"])
            out["enum"] = values if None in values else [*values, None]
            return out
        if "$ref" in schema or "const" in schema:
            described: JSONObject = {k: schema[k] for k in ("description", "title") if k in schema}
            bare = {k: v for k, v in schema.items() if k not in described}
            return {"anyOf": [bare, _NULL], **described}
        raise self.fail(path, "has no type to make nullable")


def _is_object(schema: JSONObject) -> bool:
    kind = schema.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema
    )


def _list(value: JSONValue) -> list[JSONValue]:
    return value if isinstance(value, list) else []


# --- the answer ------------------------------------------------------------------------------


def drop_added_nulls(arguments: str, schema: JSONObject) -> str:
    """A strict tool call's ``arguments`` with the ``null`` s strict mode made the model send
    for properties ``schema`` (the tool's own, before :func:`strict_schema`) has optional and
    not nullable, left out: the tool sees them absent, as its schema says. The string is
    returned unchanged when there are none (or it is not JSON)."""
    try:
        value: JSONValue = json.loads(arguments)
    except json.JSONDecodeError:
        return arguments
    cleaned, changed = _cleaned(value, schema, schema)
    return json.dumps(cleaned, ensure_ascii=False) if changed else arguments


def _cleaned(value: JSONValue, schema: JSONObject, root: JSONObject) -> tuple[JSONValue, bool]:
    schema = _resolved(schema, root)
    properties, items = schema.get("properties"), schema.get("items")
    if isinstance(value, dict) and isinstance(properties, dict):
        required = set(_list(schema.get("required", [])))
        out: JSONObject = {}
        changed = False
        for key, item in value.items():
            sub = properties.get(key)
            if not isinstance(sub, dict):
                out[key] = item
            elif item is None and key not in required and not _admits_null(sub, root):
                changed = True
            else:
                out[key], inner = _cleaned(item, sub, root)
                changed = changed or inner
        return out, changed
    if isinstance(value, list) and isinstance(items, dict):
        pairs = [_cleaned(item, items, root) for item in value]
        return [item for item, _ in pairs], any(changed for _, changed in pairs)
    return value, False


def _resolved(schema: JSONObject, root: JSONObject) -> JSONObject:
    """``schema`` with a local ``$ref`` followed and a single-entry ``allOf`` inlined."""
    for _ in range(32):  # a cycle of references ends here
        ref = schema.get("$ref")
        parts = _list(schema.get("allOf", []))
        if isinstance(ref, str) and ref.startswith("#/"):
            target: JSONValue = root
            for name in ref[2:].split("/"):
                target = target.get(name) if isinstance(target, dict) else None
            if not isinstance(target, dict):
                return schema
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        elif len(parts) == 1 and isinstance(parts[0], dict):
            schema = {**parts[0], **{k: v for k, v in schema.items() if k != "allOf"}}
        else:
            return schema
    return schema


def _admits_null(schema: JSONObject, root: JSONObject) -> bool:
    schema = _resolved(schema, root)
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in _list(schema.get("enum", [])) or ("const" in schema and schema["const"] is None):
        return True
    branches = _list(schema.get("anyOf", [])) + _list(schema.get("oneOf", []))
    return any(isinstance(b, dict) and _admits_null(b, root) for b in branches)


# --- a tool as a path sends it ---------------------------------------------------------------

_WARNED: set[str] = set()  # tools already reported as sent non-strict


def sent_strict(tool: FunctionTool, *, default: bool) -> JSONObject | None:
    """The strict schema ``tool`` is sent with, or ``None`` when it is sent as it is.

    ``strict=True`` makes it strict or raises :class:`StrictSchemaError`; ``strict=False``
    sends it as it is; ``None`` takes the path's ``default``, and a schema that cannot be made
    strict is then sent as it is (with a warning, once per tool name) rather than failing a
    tool its author never asked to be strict (an MCP server's, say).
    """
    if tool.strict is False or (tool.strict is None and not default):
        return None
    if tool.strict:
        return strict_schema(tool.parameters, tool=tool.name)
    try:
        return strict_schema(tool.parameters, tool=tool.name)
    except StrictSchemaError as exc:
        if tool.name not in _WARNED:
            _WARNED.add(tool.name)
            log.warning("%s; it is sent non-strict", exc.message.split("; make the")[0])
        return None
