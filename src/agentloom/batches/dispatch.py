"""One request of a batch, run in this process through the services its endpoint's route uses
(never over HTTP to the server itself), as the batch's project: its answer's status and body,
and the tokens it used.

A caller's mistake or an upstream failure is the request's answer, shaped as the route would
send it (:class:`ErrorShapes`, given by the server, which owns the mapping to HTTP): it goes to
the batch's error file and the batch goes on. A request that asks to stream is refused: a batch
collects its answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agentloom import json_codec
from agentloom.api.chat_completions import ChatCompletionRequest, CompletionRequest
from agentloom.api.embeddings import EmbeddingsRequest
from agentloom.api.limits import RequestLimits
from agentloom.api.requests import CreateResponseRequest
from agentloom.errors import AgentloomError, InternalError, InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference.base import CHAT_PATH, COMPLETIONS_PATH
from agentloom.responses.gateway import ResponsesGateway
from agentloom.responses.service import ResponsesService
from agentloom.services.gateway.chat import ChatGateway
from agentloom.services.gateway.embeddings import EmbeddingsService
from agentloom.storage.batch_api import Tokens

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
Body = dict[str, object]


class ErrorShapes(Protocol):
    """How the server answers an error (``agentloom.server.errors``)."""

    def answer(self, exc: AgentloomError) -> tuple[int, Body]:
        """The status and the JSON body the route would send for ``exc``."""
        ...

    def invalid(self, exc: ValidationError, data: object) -> AgentloomError:
        """A request body's validation failure, as the route states it."""
        ...


@frozen
class Answer:
    status: int
    body: Body
    tokens: Tokens


@frozen
class Services:
    """What the batch endpoints run on."""

    responses: ResponsesService
    native: ResponsesGateway  # /v1/responses passed through to a backend's own
    chat: ChatGateway
    embeddings: EmbeddingsService


class Dispatcher:
    def __init__(self, services: Services, limits: RequestLimits, shapes: ErrorShapes) -> None:
        self._services = services
        self._limits = limits
        self._shapes = shapes
        self._endpoints: dict[str, Callable[[Body], Awaitable[Body]]] = {
            "/v1/responses": self._response,
            "/v1/chat/completions": self._chat,
            "/v1/completions": self._completion,
            "/v1/embeddings": self._embeddings,
        }

    async def run(self, endpoint: str, body: Body) -> Answer:
        try:
            answer = await self._endpoints[endpoint](body)
        except AgentloomError as exc:
            return self._failed(exc)
        except Exception:  # as the HTTP edge does: logged, and the request's answer is a 500
            log.exception("a batch request to %s failed", endpoint)
            return self._failed(InternalError("The server had an error with this request."))
        return Answer(200, answer, tokens_of(answer.get("usage")))

    def _failed(self, exc: AgentloomError) -> Answer:
        status, body = self._shapes.answer(exc)
        return Answer(status, body, Tokens())

    def _parsed(self, model: type[M], body: Body) -> M:
        try:
            return model.model_validate(body, context=self._limits)
        except ValidationError as exc:
            raise self._shapes.invalid(exc, body) from None

    async def _response(self, body: Body) -> Body:
        request = _collected(self._parsed(CreateResponseRequest, body))
        if request.background:
            raise InvalidRequestError("A batch's requests do not run in the background.")
        native = self._services.native
        if await native.serves(request):
            call = await native.call(request, json_codec.dumps(body))
            return _object(await native.create(call))
        responses = self._services.responses
        prepared = await responses.prepare(request)
        try:
            return _object((await responses.collect_json(prepared)).encode())
        finally:
            await responses.discard(prepared)

    async def _chat(self, body: Body) -> Body:
        request = _collected(self._parsed(ChatCompletionRequest, body))
        return _object(await self._services.chat.complete(request, body, CHAT_PATH))

    async def _completion(self, body: Body) -> Body:
        request = _collected(self._parsed(CompletionRequest, body))
        return _object(await self._services.chat.complete(request, body, COMPLETIONS_PATH))

    async def _embeddings(self, body: Body) -> Body:
        request = self._parsed(EmbeddingsRequest, body)
        answer = await self._services.embeddings.create(request)
        return _object(answer.model_dump_json().encode())


R = TypeVar("R", CreateResponseRequest, ChatCompletionRequest, CompletionRequest)


def _collected(request: R) -> R:
    if request.stream:
        raise InvalidRequestError(
            "A batch's requests are not streamed; leave out 'stream'.", param="stream"
        )
    return request


def _object(answer: bytes) -> Body:
    value = json_codec.loads(answer)
    assert isinstance(value, dict), "an answer is a JSON object"
    return value


def tokens_of(usage: object) -> Tokens:
    """The tokens of a Responses, Chat Completions or Embeddings ``usage`` object."""
    if not isinstance(usage, dict):
        return Tokens()
    given = _count(usage, "input_tokens", "prompt_tokens")
    produced = _count(usage, "output_tokens", "completion_tokens")
    inputs = usage.get("input_tokens_details") or usage.get("prompt_tokens_details")
    outputs = usage.get("output_tokens_details") or usage.get("completion_tokens_details")
    cached = _count(inputs, "cached_tokens") if isinstance(inputs, dict) else 0
    reasoning = _count(outputs, "reasoning_tokens") if isinstance(outputs, dict) else 0
    return Tokens(given, cached, produced, reasoning)


def _count(usage: dict[str, object], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int):
            return value
    return 0
