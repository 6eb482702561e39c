"""Responses passed through to a backend that serves the Responses API itself (``/v1/responses``
for a model its provider lists in ``responses``).

The client's request goes to the provider's ``POST /responses`` as it was sent, its ``model``
replaced by the backend's own id, under the caller's project: its model permissions and rate
limits (the catalog's ``resolve``), its usage recorded under the id the client used. agentloom's
own loop does not run. Unless ``store`` is false, the final response and the request's input
items are stored here under the backend's response id, so that retrieve, list, input items and
delete work on agentloom; a later ``previous_response_id`` is passed on as it is (the backend
keeps its own state). A streamed answer is relayed by :mod:`agentloom.responses.relay`.

What only agentloom can do is refused with a 400 naming the parameter: ``background``,
``conversation``, ``prompt``, ``guardrails``, ``max_infer_iters``, ``moderation``, the server's
default guardrails, and the tools agentloom runs against its own resources (``file_search``,
``code_interpreter``, ``mcp``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TypeGuard

from pydantic import ValidationError

from agentloom import json_codec
from agentloom.api.content import InputImage
from agentloom.api.items import StoredItem
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import Response
from agentloom.engine.guardrails import Guardrails
from agentloom.engine.items import ItemFinder, stored_items, user_message
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference.base import NativeResponses, Usage, native_responses_of
from agentloom.inference.catalog import ModelCatalog
from agentloom.responses.persist import item_rows, response_row
from agentloom.services.organization.usage import UsageLedger
from agentloom.storage.base import ResponseStore

log = logging.getLogger(__name__)

AGENTLOOM_TOOLS = frozenset({"file_search", "code_interpreter", "mcp"})


@frozen
class NativeCall:
    """One request on its way to the backend."""

    provider: NativeResponses
    body: dict[str, object]  # what the backend is sent
    model: str  # the id the client used, written back into answers
    renamed: bool  # the backend calls the model otherwise
    inputs: list[StoredItem] | None  # the request's input items to store; None: not stored

    def written_back(self, response: dict[str, object]) -> dict[str, object]:
        """``response`` (a Response object) as the client sees it: under the id it used."""
        if self.renamed and "model" in response:
            response["model"] = self.model
        return response


class ResponsesGateway:
    def __init__(
        self,
        catalog: ModelCatalog,
        store: ResponseStore,
        finder: ItemFinder,
        usage: UsageLedger | None,
        guardrails: Guardrails | None = None,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._finder = finder
        self._usage = usage
        self._guardrails = guardrails

    async def serves(self, request: CreateResponseRequest) -> bool:
        """Whether ``request`` goes to its model's backend instead of agentloom's loop."""
        return await self._catalog.passes_responses(request.model)

    async def call(self, request: CreateResponseRequest, raw: bytes) -> NativeCall:
        """The call ``request`` (read from ``raw``) makes, under the caller's project; its
        mistakes and what cannot be passed through are raised here."""
        resolved = await self._catalog.resolve(request.model)
        provider = native_responses_of(resolved.provider)
        if provider is None:
            raise _unpassable(request.model, "its provider has no Responses API")
        self._check(request)
        body = json_codec.loads(raw)
        assert isinstance(body, dict), "a parsed request body is a JSON object"
        backend_id = resolved.model.backend_id
        inputs = await self._inputs(request) if request.store else None
        sent = {**body, "model": backend_id}
        if b'"input_image"' in raw:
            sent["input"] = _image_urls_as_strings(body.get("input"))
        return NativeCall(provider, sent, request.model, backend_id != request.model, inputs)

    async def create(self, call: NativeCall) -> bytes:
        """The whole answer, as JSON, stored first (unless ``store`` is false)."""
        usage: Usage | None = None
        try:
            answer = await call.provider.respond(call.body)
            usage = usage_of(answer)
        finally:
            self.record(call, usage)
        answer = call.written_back(answer)
        await self.keep(call, answer)
        return json_codec.dumps(answer)

    async def open(self, call: NativeCall) -> tuple[list[str], AsyncIterator[list[str]]]:
        """The streamed answer's first read and the rest: a failure to start is raised here."""
        data = call.provider.respond_stream(call.body)
        try:
            first: list[str] = await anext(data, [])
        except BaseException:
            self.record(call, None)
            raise
        return first, data

    async def keep(self, call: NativeCall, response: dict[str, object]) -> None:
        """Store the final ``response`` and the request's input items (unless ``store`` is
        false). A response agentloom cannot read is answered but not stored, with a warning."""
        if call.inputs is None:
            return
        try:
            final = Response.model_validate(response)
        except ValidationError as exc:
            log.warning("a passed-through response was not stored: %s", exc.errors()[0]["msg"])
            return
        if any(item.id is None for item in final.output):
            log.warning("a passed-through response was not stored: an output item has no id")
            return
        outputs = item_rows(final.output)
        await self._store.save(response_row(final), item_rows(call.inputs), outputs, None)

    def record(self, call: NativeCall, usage: Usage | None) -> None:
        if self._usage is not None:
            self._usage.record_call(call.model, usage)

    def _check(self, request: CreateResponseRequest) -> None:
        model = request.model
        for param, used in (
            ("background", request.background),
            ("conversation", request.conversation is not None),
            ("prompt", request.prompt is not None),
            ("guardrails", bool(request.guardrails)),
            ("max_infer_iters", request.max_infer_iters is not None),
            ("moderation", request.moderation is not None),
        ):
            if used:
                raise _refused(param, model, "only agentloom's own loop does that")
        for index, tool in enumerate(request.tools):
            if tool.type in AGENTLOOM_TOOLS:
                raise _refused(f"tools[{index}]", model, f"'{tool.type}' runs in agentloom")
        if self._guardrails is not None and self._guardrails.safety.guardrails(None):
            raise _unpassable(model, "the server's guardrails cannot check what it answers")

    async def _inputs(self, request: CreateResponseRequest) -> list[StoredItem]:
        if isinstance(request.input, str):
            return [user_message(request.input)]
        return await stored_items(
            self._finder, request.input, param="input", for_conversation=False
        )


def _image_urls_as_strings(value: object) -> object:
    """``value`` (the request's input, as sent) with each ``input_image`` whose ``image_url`` is
    an object (``{"url", "detail"}``) in OpenAI's shape: the upstream is sent what is stored."""
    if isinstance(value, list):
        return [_image_urls_as_strings(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "input_image" and isinstance(value.get("image_url"), dict):
        return InputImage.model_validate(value).model_dump()
    return {key: _image_urls_as_strings(v) for key, v in value.items()}


def usage_of(response: dict[str, object]) -> Usage | None:
    """The usage a Response object reports (``None``: none, or not in OpenAI's shape)."""
    value = response.get("usage")
    if not isinstance(value, dict):
        return None
    inputs, outputs = value.get("input_tokens"), value.get("output_tokens")
    cached = _detail(value, "input_tokens_details", "cached_tokens")
    reasoning = _detail(value, "output_tokens_details", "reasoning_tokens")
    if not (_count(inputs) and _count(outputs) and _count(cached) and _count(reasoning)):
        return None
    return Usage(
        input_tokens=inputs, output_tokens=outputs, cached_tokens=cached, reasoning_tokens=reasoning
    )


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _detail(usage: dict[str, object], group: str, name: str) -> object:
    details = usage.get(group)
    return details.get(name, 0) if isinstance(details, dict) else 0


def _refused(param: str, model: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"'{param}' is not supported for the model '{model}', whose responses are passed"
        f" through to its provider's own Responses API ({why}).",
        param=param,
        code="unsupported_parameter",
    )


def _unpassable(model: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"The model '{model}' is configured to pass its responses through to its provider's"
        f" own Responses API, but {why}.",
        param="model",
        code="model_not_supported",
    )
