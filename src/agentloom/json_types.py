"""JSON as typed data: what a JSON document decodes to, for the few places that hold free-form
JSON (tool arguments and schemas, agent state, REPL variables)."""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
JSONObject: TypeAlias = dict[str, JSONValue]
