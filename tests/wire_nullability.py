"""Which fields of OpenAI's wire format may be ``null``, as the ``openai`` package encodes it.

The package's response models write every field that may be missing or null as
``Optional[X] = None``, so they alone cannot tell a nullable field from an optional one. Two
things in the package do tell:

- its models list required fields first and optional ones after, each group in alphabetical
  order (``id`` leads): an ``Optional`` field in the required group is nullable;
- its request-side twins (``*Param`` TypedDicts, and ``ResponseCreateParams`` for ``Response``)
  write ``Optional[X]`` only for fields the spec declares nullable;
- what neither tells is not nullable: omit the field or give it a value.
"""

from __future__ import annotations

import importlib
import types
import typing
from functools import cache

from pydantic import BaseModel

from tests import spec_oracle

_TWINS: dict[str, tuple[str, str]] = {
    "openai.types.responses.response.Response": (
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsBase",
    ),
}


def admits_none(annotation: object) -> bool:
    if isinstance(annotation, typing.ForwardRef):
        return _text_admits_none(annotation.__forward_arg__)
    if isinstance(annotation, str):
        return _text_admits_none(annotation)
    if annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(admits_none(arg) for arg in typing.get_args(annotation))
    if origin in (typing.Annotated, typing.Required, typing.NotRequired):
        return admits_none(typing.get_args(annotation)[0])
    return False


def _text_admits_none(text: str) -> bool:
    """The same for an annotation still in source form (``Required[Optional[str]]``)."""
    text = text.strip()
    for wrapper in ("Required[", "NotRequired[", "Annotated["):
        if text.startswith(wrapper):
            return _text_admits_none(_top_level_args(text[len(wrapper) : -1])[0])
    if text.startswith("Optional[") or text == "None":
        return True
    if text.startswith("Union["):
        return any(_text_admits_none(arg) for arg in _top_level_args(text[6:-1]))
    return "|" in text and any(part.strip() == "None" for part in text.split("|"))


def _top_level_args(text: str) -> list[str]:
    args, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            args.append(text[start:index])
            start = index + 1
    return [*args, text[start:]]


_SPEC_SCHEMAS: dict[str, str] = {
    "Response": "ResponseResource",
    "ResponseUsage": "Usage",
    "Reasoning": "Reasoning",
    "ResponseReasoningItem": "ReasoningBody",
    "ResponseOutputMessage": "Message",
    "ResponseOutputText": "OutputTextContent",
    "ResponseFunctionToolCall": "FunctionCall",
    "FunctionTool": "FunctionTool",
    "ResponseCompactionItem": "CompactionBody",
    "ResponseFormatTextJSONSchemaConfig": "JsonSchemaResponseFormat",
}
"""The ``openai`` models whose wire shape the Open Responses specification defines: for their
fields it says, its word on ``null`` wins (:func:`tests.spec_oracle.nullable`)."""


@cache
def nullable(model: type[BaseModel], field: str) -> bool:
    """Whether ``field`` of the ``openai`` model may be ``null`` on the wire."""
    info = model.model_fields.get(field)
    if info is None:
        return False
    schema = _SPEC_SCHEMAS.get(model.__name__)
    spec = spec_oracle.nullable(schema, field) if schema else None
    if spec is not None:
        return spec
    if field in required_fields(model):  # required: null only if the type admits it
        return admits_none(info.annotation)
    twin = _twin(model)
    return twin is not None and field in twin and admits_none(twin[field])


def _twin(model: type[BaseModel]) -> dict[str, object] | None:
    """The annotations of the request-side twin of ``model``, if the package has one."""
    key = f"{model.__module__}.{model.__qualname__}"
    default = model.__module__.replace(".shared.", ".shared_params.", 1)
    if default == model.__module__:
        default += "_param"
    module_name, name = _TWINS.get(key, (default, ""))
    names = [name] if name else [f"{model.__name__}Param", model.__name__]
    for module in _modules(module_name, model.__module__):
        for candidate in names:
            twin = getattr(module, candidate, None)
            if isinstance(twin, type):
                return dict(twin.__annotations__)
    return None


def _modules(first: str, home: str) -> list[types.ModuleType]:
    """Where a twin may be: its own ``_param`` module, then (for output items, which are input
    items too) the input item params of the responses package."""
    found = []
    items = home.startswith(("openai.types.responses.", "openai.types.conversations."))
    for name in (first, *(_ITEM_PARAMS if items else ())):
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            continue
    return found


_ITEM_PARAMS = (
    "openai.types.responses.response_input_item_param",
    "openai.types.responses.response_input_param",
)


@cache
def required_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields ``model`` requires on the wire (present, if nullable then maybe ``null``):
    those listed before the alphabetical order restarts (``id`` leads, unordered)."""
    names = [name for name in model.model_fields if name != "id"]
    group = {"id"} & set(model.model_fields)
    previous = ""
    for name in names:
        if name < previous:
            break
        group.add(name)
        previous = name
    if len(group) == len(
        model.model_fields
    ):  # one ordered run: required and optional can't be told
        group = {n for n, info in model.model_fields.items() if not admits_none(info.annotation)}
    return frozenset(group)
