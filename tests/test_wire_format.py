"""Every item kind, event type and resource object agentloom sends, built with only its required
fields (every optional one left to its default), checked against the ``openai`` package's types:
no ``null`` where the spec does not allow one, no required field missing.

The server's real traffic is checked the same way by :class:`tests.wire_audit.WireAudit` in
every test that talks to it; this walk makes sure no type is left out because no test made it.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agentloom.api import (
    compaction,
    containers,
    conversations,
    events,
    files,
    items,
    shell_items,
    token_count,
    vector_store_search,
    vector_stores,
)
from agentloom.api import response as response_api
from agentloom.api.events import StreamEvent
from agentloom.api.items import OutputItem, StoredItem
from agentloom.api.lists import ModelObject
from agentloom.api.wire import NULLABLE, WireModel
from tests.wire_audit import event_problems, item_problems, problems


def _members(union: object) -> list[type[BaseModel]]:
    """The model classes of a (possibly annotated, tagged) union."""
    if isinstance(union, type) and issubclass(union, BaseModel):
        return [union]
    if typing.get_origin(union) is typing.Annotated:
        return _members(typing.get_args(union)[0])
    return [m for arg in typing.get_args(union) for m in _members(arg)]


SAMPLES = {"purpose": "assistants", "max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}
"""Values for fields whose type admits more than the spec does."""


def _sample(annotation: Any) -> Any:
    """A value of ``annotation``: the first choice of each union and literal."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _sample(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in typing.get_args(annotation) if a is not type(None)))
    if origin is Literal:
        return typing.get_args(annotation)[0]
    if origin is list:
        return [_sample(typing.get_args(annotation)[0])]
    if origin is dict:
        return {"key": _sample(typing.get_args(annotation)[1])}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        # a nested item as the server sends it: with its id and status
        filled = ("id", "status")
        return _sparse(annotation, filled=filled).model_dump(mode="json", by_alias=True)
    return {str: "x", int: 1, float: 0.5, bool: True}.get(annotation, "x")


def _sparse(model: type[BaseModel], *, filled: tuple[str, ...] = ()) -> BaseModel:
    """``model`` with its required fields only, and those named in ``filled``."""
    required = {
        info.alias or name: SAMPLES.get(name, _sample(info.annotation))
        for name, info in model.model_fields.items()
        if info.is_required() or name in filled
    }
    return model.model_validate(required)


def _sent(model: type[BaseModel], *, filled: tuple[str, ...] = ()) -> Any:
    return json.loads(_sparse(model, filled=filled).model_dump_json())


def _name(model: type[BaseModel]) -> str:
    return model.__name__


EVENTS = _members(StreamEvent)
ITEMS = sorted({*_members(StoredItem), *_members(OutputItem)}, key=_name)
OBJECTS = [
    response_api.Response,
    compaction.CompactedResponse,
    token_count.InputTokenCount,
    conversations.Conversation,
    conversations.DeletedConversation,
    files.FileObject,
    files.FileDeleted,
    vector_stores.VectorStore,
    vector_stores.VectorStoreDeleted,
    vector_stores.VectorStoreFile,
    vector_stores.VectorStoreFileDeleted,
    vector_stores.VectorStoreFileBatch,
    containers.ContainerObject,
    containers.ContainerFileObject,
    ModelObject,
]


@pytest.mark.parametrize("event", EVENTS, ids=_name)
def test_every_event_type(event: type[BaseModel]) -> None:
    assert event_problems(_sent(event)) == []


@pytest.mark.parametrize("item", ITEMS, ids=_name)
def test_every_item_kind(item: type[BaseModel]) -> None:
    """As the server sends items: with the id and status it gives each (clients may omit them)."""
    assert item_problems(_sent(item, filled=("id", "status"))) == []


@pytest.mark.parametrize("model", OBJECTS, ids=_name)
def test_every_resource_object(model: type[BaseModel]) -> None:
    assert problems(_sent(model)) == []


def test_search_pages_keep_their_nullable_next_page() -> None:
    page = vector_store_search.SearchResultsPage(search_query=["q"], data=[], has_more=False)
    assert json.loads(page.model_dump_json())["next_page"] is None


def _defined(module: types.ModuleType) -> set[type[BaseModel]]:
    """The wire models ``module`` defines that carry a ``type`` tag of their own."""
    return {
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, WireModel)
        and value.__module__ == module.__name__
        and typing.get_origin(value.model_fields.get("type", _NO_TAG).annotation) is Literal
        and not value.__name__.startswith("_")
    }


_NO_TAG = FieldInfo(annotation=str)


def test_every_event_defined_is_in_the_stream_union() -> None:
    assert _defined(events) == set(EVENTS)


def test_every_item_kind_defined_is_walked() -> None:
    parts = {"McpCallError", "CodeInterpreterLogs", "CodeInterpreterImage", "WebSearchSource"}
    actions = {"WebSearchAction", "OpenPageAction", "FindInPageAction"}
    sent_only_by_clients = {"ItemReference"}
    shell_parts = {"ToolCaller", "ExitOutcome", "TimeoutOutcome", "LocalShellAction"}
    shell_parts |= {"CreateFile", "UpdateFile", "DeleteFile"}
    left_out = parts | actions | sent_only_by_clients | shell_parts
    defined = _defined(items) | _defined(shell_items)
    expected = {m for m in defined if m.__name__ not in left_out}
    assert expected == set(ITEMS)


class _Sample(WireModel):
    kept: typing.Annotated[str | None, NULLABLE] = None
    left_out: str | None = None
    valued: str | None = "v"


def test_none_is_left_out_unless_the_field_is_nullable() -> None:
    assert json.loads(_Sample().model_dump_json()) == {"kept": None, "valued": "v"}
    assert _Sample(left_out="x").model_dump() == {"kept": None, "left_out": "x", "valued": "v"}


def test_an_mcp_execution_error_stored_with_a_message_reads_as_content() -> None:
    """Responses stored before the error shape was checked still load, in the shape the
    ``openai`` types require."""
    from agentloom.api.items import McpCall

    stored = {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "s",
        "name": "n",
        "arguments": "{}",
        "error": {"type": "mcp_tool_execution_error", "message": "blocked"},
    }

    error = McpCall.model_validate(stored).error

    assert error is not None
    assert (error.content, error.message) == ([{"type": "text", "text": "blocked"}], None)
    assert item_problems(json.loads(McpCall.model_validate(stored).model_dump_json())) == []


def test_output_text_stored_with_null_logprobs_reads_as_empty() -> None:
    """Responses stored before the null rule held still load."""
    from agentloom.api.content import OutputText

    part = OutputText.model_validate_json('{"type": "output_text", "text": "hi", "logprobs": null}')

    assert part.logprobs == []
