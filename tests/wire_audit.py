"""Every JSON body, SSE event and WebSocket frame the app sends, checked against the Open
Responses specification for what it defines (:mod:`tests.spec_oracle`: the Response, items,
content parts, streaming events, errors, and the SSE framing), and against the ``openai``
package's types for everything: it must parse, and it may hold ``null`` only where the spec
allows it (:mod:`tests.wire_nullability`).

:class:`WireAudit` wraps the app at the ASGI edge, so every test that talks to the app through
the ``http`` / ``client`` fixtures or a live socket checks the wire as a side effect; what it
finds fails the test at teardown. :func:`problems` checks one decoded object by hand.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from openai.types import (
    Batch,
    Completion,
    CreateEmbeddingResponse,
    FileDeleted,
    FileObject,
    Model,
    VectorStore,
    VectorStoreDeleted,
)
from openai.types.admin.organization import (
    AdminAPIKey,
    AdminAPIKeyCreateResponse,
    AdminAPIKeyDeleteResponse,
    AuditLogListResponse,
    Project,
    UsageCodeInterpreterSessionsResponse,
    UsageCompletionsResponse,
    UsageEmbeddingsResponse,
    UsageFileSearchCallsResponse,
    UsageWebSearchCallsResponse,
)
from openai.types.admin.organization.projects import (
    APIKeyDeleteResponse,
    ProjectAPIKey,
    ProjectHostedToolPermissions,
    ProjectModelPermissions,
    ProjectModelPermissionsDeleted,
    ProjectRateLimit,
    ProjectServiceAccount,
    ServiceAccountCreateResponse,
    ServiceAccountDeleteResponse,
)
from openai.types.admin.organization.projects.service_accounts import APIKeyCreateResponse
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.container_retrieve_response import ContainerRetrieveResponse
from openai.types.containers import FileRetrieveResponse as ContainerFile
from openai.types.conversations import Conversation, ConversationItem
from openai.types.conversations.conversation_deleted_resource import ConversationDeletedResource
from openai.types.responses import (
    CompactedResponse,
    InputTokenCountResponse,
    Response,
    ResponseItem,
    ResponseStreamEvent,
)
from openai.types.shared import ErrorObject
from openai.types.vector_store_search_response import VectorStoreSearchResponse
from openai.types.vector_stores import (
    VectorStoreFile,
    VectorStoreFileBatch,
    VectorStoreFileDeleted,
)
from openai.types.webhooks import (
    DeletedWebhookEndpoint,
    WebhookEndpoint,
    WebhookEndpointTestResult,
    WebhookEndpointWithSecret,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

from tests import spec_oracle
from tests.wire_nullability import nullable, required_fields
from tests.wire_people import PEOPLE_ELEMENTS, PEOPLE_OBJECTS

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

_BY_OBJECT: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(model)
    for name, model in {
        "response": Response,
        "response.compaction": CompactedResponse,
        "response.input_tokens": InputTokenCountResponse,
        "conversation": Conversation,
        "conversation.deleted": ConversationDeletedResource,
        "file": FileObject | FileDeleted,
        "vector_store": VectorStore,
        "vector_store.deleted": VectorStoreDeleted,
        "vector_store.file": VectorStoreFile,
        "vector_store.file.deleted": VectorStoreFileDeleted,
        "vector_store.files_batch": VectorStoreFileBatch,
        "container": ContainerRetrieveResponse,
        "container.file": ContainerFile,
        "model": Model,
        "organization.project": Project,
        "organization.project.service_account": ServiceAccountCreateResponse
        | ProjectServiceAccount,
        "organization.project.service_account.deleted": ServiceAccountDeleteResponse,
        "organization.project.service_account.api_key": APIKeyCreateResponse,
        "organization.project.api_key": ProjectAPIKey,
        "organization.project.api_key.deleted": APIKeyDeleteResponse,
        "project.model_permissions": ProjectModelPermissions,
        "project.model_permissions.deleted": ProjectModelPermissionsDeleted,
        "project.rate_limit": ProjectRateLimit,
        "organization.audit_log": AuditLogListResponse,
        "organization.admin_api_key": AdminAPIKeyCreateResponse | AdminAPIKey,
        "organization.admin_api_key.deleted": AdminAPIKeyDeleteResponse,
        "webhook_endpoint": WebhookEndpointWithSecret | WebhookEndpoint,
        "webhook_endpoint.deleted": DeletedWebhookEndpoint,
        "webhook_endpoint.test": WebhookEndpointTestResult,
        **PEOPLE_OBJECTS,
        "batch": Batch,
    }.items()
}
EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
_ELEMENT_TYPES: tuple[tuple[re.Pattern[str], TypeAdapter[Any]], ...] = (
    *PEOPLE_ELEMENTS,
    (re.compile(r"/v1/vector_stores/[^/]+/search$"), TypeAdapter(VectorStoreSearchResponse)),
    (re.compile(r"/v1/conversations/[^/]+/items(/[^/]+)?$"), TypeAdapter(ConversationItem)),
    (re.compile(r"/v1/(agents/)?responses/[^/]+/input_items$"), TypeAdapter(ResponseItem)),
    (re.compile(r"/v1/responses/compact$"), TypeAdapter(ConversationItem)),
    (re.compile(r"/hosted_tool_permissions$"), TypeAdapter(ProjectHostedToolPermissions)),
    (re.compile(r"/usage/completions$"), TypeAdapter(UsageCompletionsResponse)),
    (re.compile(r"/usage/embeddings$"), TypeAdapter(UsageEmbeddingsResponse)),
    (re.compile(r"/usage/file_search_calls$"), TypeAdapter(UsageFileSearchCallsResponse)),
    (re.compile(r"/usage/web_search_calls$"), TypeAdapter(UsageWebSearchCallsResponse)),
    (
        re.compile(r"/usage/code_interpreter_sessions$"),
        TypeAdapter(UsageCodeInterpreterSessionsResponse),
    ),
)
"""What the elements of a list (or a single item) on these paths are."""
_ITEMS = re.compile(r"/v1/(conversations/[^/]+/items(/[^/]+)?|responses/[^/]+/input_items)$")
"""The paths whose elements are items (the specification's ``ItemField``)."""

_PASSED: dict[str, TypeAdapter[Any]] = {
    "chat.completion": TypeAdapter(ChatCompletion),
    "chat.completion.chunk": TypeAdapter(ChatCompletionChunk),
    "text_completion": TypeAdapter(Completion),  # whole or a streamed chunk: the same type
}
"""Objects passed on from a backend as it sent them (Chat Completions): they must parse; their
``null`` s are the backend's."""

_ERROR: TypeAdapter[Any] = TypeAdapter(ErrorObject)
_EMBEDDINGS: TypeAdapter[Any] = TypeAdapter(CreateEmbeddingResponse)
_ITEM: TypeAdapter[Any] = TypeAdapter(ConversationItem)
_COMPACTED: TypeAdapter[Any] = TypeAdapter(CompactedResponse)

OWN_EVENTS = "managed_agent."
"""The ``object`` prefix of streamed events OpenAI has no type for."""

OWN_AUDIT_TYPES = frozenset({"resource.created", "resource.updated"})
"""Audit log entry types of agentloom's own (changes to a project's data; OpenAI logs only
``resource.deleted`` of the three): checked as that one."""

TOLERATED_ERROR_CODES = frozenset({"context_length_exceeded"})
"""``error.code`` values OpenAI sends in a failed response although the package's enum lacks
them (Codex reads ``context_length_exceeded`` to tell the user the context is full)."""


def problems(value: Any, path: str = "") -> list[str]:
    """What is wrong with one JSON value the app sent for ``path`` (empty: none)."""
    if not isinstance(value, dict):
        return []
    if set(value) == {"error"} and isinstance(value["error"], dict):
        return _check(_ERROR, value["error"], "error") + spec_oracle.error_problems(value["error"])
    kind = value.get("object")
    if kind == "list" and path.endswith("/v1/embeddings"):
        return _check(_EMBEDDINGS, _floats(value), "embeddings")
    if kind == "list" or (isinstance(kind, str) and kind.endswith(".page")):
        return _list_problems(value, path)
    if kind == "response.compaction":  # output holds the kept user messages too (OpenAI does)
        found = _check(_COMPACTED, {**value, "output": []}, kind)
        found += spec_oracle.object_problems(value, kind)
        return found + _elements(value["output"], path, "output")
    if isinstance(kind, str) and kind in _BY_OBJECT:
        return _check(_BY_OBJECT[kind], value, kind) + spec_oracle.object_problems(value, kind)
    if isinstance(kind, str) and kind in _PASSED:
        return _parses(_PASSED[kind], value, kind)
    return _elements([value], path, "item")


def _floats(answer: dict[str, Any]) -> dict[str, Any]:
    """An embeddings answer with its base64 vectors decoded, as the ``openai`` package does."""
    data = [
        {**item, "embedding": _decoded(item["embedding"])} if isinstance(item, dict) else item
        for item in answer.get("data", [])
    ]
    return {**answer, "data": data}


def _decoded(embedding: Any) -> Any:
    if not isinstance(embedding, str):
        return embedding
    raw = base64.b64decode(embedding)
    return [value for (value,) in struct.iter_unpack("<f", raw)]


def event_problems(value: Any, *, websocket: bool = False) -> list[str]:
    """What is wrong with one streamed event (SSE ``data:`` or WebSocket frame)."""
    found = spec_oracle.event_problems(value, websocket=websocket)
    return found + _package_event_problems(value)


def _package_event_problems(value: Any) -> list[str]:
    if isinstance(value, dict) and value.get("type") == "error" and "error" in value:
        return _check(_ERROR, value["error"], "error event")
    if isinstance(value, dict) and set(value) == {"error"}:  # a Chat Completions stream's
        return _check(_ERROR, value["error"], "error event")
    if isinstance(value, dict) and value.get("object") == "text_completion":
        # a streamed legacy chunk: ``finish_reason`` is null until the end (the SDK's type has
        # one model for both and builds chunks without validating)
        choices = [
            {**c, "finish_reason": c.get("finish_reason") or "stop"} for c in value["choices"]
        ]
        return _parses(_PASSED["text_completion"], {**value, "choices": choices}, "text_completion")
    if isinstance(value, dict) and value.get("object") in _PASSED:
        return _parses(_PASSED[value["object"]], value, value["object"])
    if isinstance(value, dict) and str(value.get("object")).startswith(OWN_EVENTS):
        return []  # agentloom's own (a managed agent's tool events): no OpenAI type holds them
    return _check(EVENT, value, f"event {value.get('type')}" if isinstance(value, dict) else "")


def item_problems(value: Any) -> list[str]:
    """What is wrong with one conversation item (any kind a response or a client makes)."""
    where = f"item {value.get('type')}" if isinstance(value, dict) else "item"
    return _check(_ITEM, value, where) + spec_oracle.item_problems(value, where)


def _list_problems(page: dict[str, Any], path: str) -> list[str]:
    """A list envelope: ``first_id`` / ``last_id`` are the ends of ``data``, null when empty
    (OpenAI's own empty lists), then each element."""
    data = page.get("data", [])
    found = []
    for end in ("first_id", "last_id"):
        if end in page and (page[end] is None) != (not data):
            found.append(f"list.{end} is {page[end]!r} with {len(data)} elements")
    return found + _elements(data, path, "data")


def _elements(elements: list[Any], path: str, where: str) -> list[str]:
    found: list[str] = []
    for index, element in enumerate(elements):
        at = f"{where}[{index}]"
        if isinstance(element, dict) and element.get("object") in _BY_OBJECT:
            found += _check(_BY_OBJECT[element["object"]], element, at)
            found += spec_oracle.object_problems(element, at)
            continue
        for pattern, adapter in _ELEMENT_TYPES:
            if pattern.search(path):
                found += _check(adapter, element, at)
                break
        if _ITEMS.search(path) or where == "output":
            found += spec_oracle.item_problems(element, at)
    return found  # agentloom's own objects (prompts, shields ...): no OpenAI type to hold them to


def _parses(adapter: TypeAdapter[Any], value: Any, where: str) -> list[str]:
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        return [f"{where}: does not parse: {exc.errors(include_url=False)[:3]}"]
    return []


def _check(adapter: TypeAdapter[Any], value: Any, where: str) -> list[str]:
    try:
        parsed = adapter.validate_python(_tolerated(value))
    except ValidationError as exc:
        return [f"{where}: does not parse: {exc.errors(include_url=False)[:3]}"]
    return [f"{where}{path}" for path in _nulls(parsed)]


def _tolerated(value: Any) -> Any:
    """``value`` with the tolerated error codes replaced by one the package's enum knows."""
    if isinstance(value, list):
        return [_tolerated(v) for v in value]
    if not isinstance(value, dict):
        return value
    copy = {key: _tolerated(v) for key, v in value.items()}
    error = copy.get("error")
    if isinstance(error, dict) and error.get("code") in TOLERATED_ERROR_CODES:
        copy["error"] = {**error, "code": "server_error"}
    if copy.get("object") == "organization.audit_log" and copy.get("type") in OWN_AUDIT_TYPES:
        copy["type"] = "resource.deleted"  # OpenAI's one of the three, same shape
    return copy


def _nulls(node: Any, path: str = "") -> list[str]:
    """Paths of the nulls in ``node`` (an ``openai`` model) that its type does not allow, and of
    the required fields it lacks."""
    found: list[str] = []
    if isinstance(node, BaseModel):
        for name in sorted(required_fields(type(node)) - node.model_fields_set):
            found.append(f"{path}.{name} is missing ({type(node).__name__})")
        for name in node.model_fields_set:
            value = getattr(node, name, None)
            if value is None and not nullable(type(node), name):
                found.append(f"{path}.{name} is null ({type(node).__name__})")
            found += _nulls(value, f"{path}.{name}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _nulls(value, f"{path}[{index}]")
    return found


_DONE = "data: [DONE]"
_RESPONSES_STREAM = re.compile(r"/v1/responses(/[^/]+)?$")
"""The streams the specification frames: each event's ``event:`` line is its ``type``, and the
stream ends with ``data: [DONE]``."""


def _record_problems(record: str, path: str) -> list[str]:
    """One SSE record: its ``data:`` event, and (on a Responses stream) its ``event:`` line."""
    fields = dict(line.split(": ", 1) for line in record.splitlines() if ": " in line)
    data = fields.get("data", "")
    if not data.startswith("{"):
        return []
    event = json.loads(data)
    found = event_problems(event)
    named = fields.get("event")
    if _RESPONSES_STREAM.search(path) and isinstance(event, dict) and named != event.get("type"):
        found.append(f"event line {named!r} is not the event's type {event.get('type')!r}")
    return found


@dataclass
class WireAudit:
    """ASGI middleware recording what is wrong with what ``app`` sends."""

    app: ASGIApp
    found: list[str] = field(default_factory=list)

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Send,
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(scope["path"], self.found)
        await self.app(scope, receive, exchange.wrap(send))
        exchange.finish()


@dataclass
class _Exchange:
    path: str
    found: list[str]
    media: str = ""
    body: bytearray = field(default_factory=bytearray)
    ended: bool = False  # the body's last message was sent (the stream was not cut short)

    def wrap(
        self, send: Callable[[Message], Awaitable[None]]
    ) -> Callable[[Message], Awaitable[None]]:
        async def audited(message: Message) -> None:
            self.see(message)
            await send(message)

        return audited

    def see(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = dict(message.get("headers", []))
            self.media = headers.get(b"content-type", b"").decode()
        elif kind == "http.response.body":
            self.body += message.get("body", b"")
            self.ended = not message.get("more_body", False)
        elif kind == "websocket.send" and message.get("text"):
            self._report(event_problems(json.loads(message["text"]), websocket=True))

    def finish(self) -> None:
        if self.media.startswith("application/json") and self.body:
            self._report(problems(json.loads(self.body), self.path))
        elif self.media.startswith("text/event-stream"):
            records = [r for r in self.body.decode().split("\n\n") if r.strip()]
            for record in records:
                self._report(_record_problems(record, self.path))
            if _RESPONSES_STREAM.search(self.path) and self.ended and records[-1:] != [_DONE]:
                self._report([f"the stream ends with {records[-1:]!r}, not {_DONE!r}"])

    def _report(self, found: list[str]) -> None:
        self.found += [f"{self.path}: {problem}" for problem in found]
