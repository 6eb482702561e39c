"""The request log's row of one request, filled in while the request runs.

The edge (:mod:`agentloom.server.edge`) opens an entry for each request of the traffic it logs
(:func:`logged_endpoint`) and hands it to the request log when the answer has been sent (a
stream included). What runs the request writes what it learns into the entry found here,
without passing it around: the usage ledger the model, tokens and cost
(:mod:`agentloom.services.organization.usage`), a model call its deployment and first token,
the error handler its code. Work a request starts inherits the entry (asyncio copies the
context into new tasks); work that runs elsewhere (a background response's job) has none.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Final

from agentloom.errors import NotFoundError
from agentloom.tenancy import DEFAULT_PROJECT

__all__ = [
    "CLIENT_CLOSED",
    "RequestEntry",
    "current_entry",
    "logged_endpoint",
    "logging_request",
    "model_not_found",
]

CLIENT_CLOSED: Final = 499  # nginx's status for a request whose caller went away first

# The paths of the traffic logged (POST), by the endpoint name a row carries.
_LOGGED: Final = {
    "/v1/responses": "responses",
    "/v1/agents/responses": "responses",
    "/v1/chat/completions": "chat.completions",
    "/v1/completions": "completions",
    "/v1/embeddings": "embeddings",
    "/v1/moderations": "moderations",
    "/v1/messages": "messages",  # Anthropic's Messages API
}
_MANAGED: Final = "/v1/managed-agents/"
MANAGED_MESSAGES: Final = "managed_agents.messages"


def logged_endpoint(method: str, path: str) -> str | None:
    """The endpoint a request is logged as (``None``: it is not logged)."""
    if method != "POST":
        return None
    name = _LOGGED.get(path)
    if name is None and path.startswith(_MANAGED) and path.endswith("/messages"):
        return MANAGED_MESSAGES
    return name


@dataclass(slots=True)
class RequestEntry:
    """One request: who asked, for what, what it used and cost, how it ended."""

    id: str  # the request's x-request-id
    endpoint: str
    created_at: float  # unix seconds
    started: float  # time.perf_counter() when it came in
    project_id: str = DEFAULT_PROJECT
    key_id: str | None = None
    user: str | None = None
    model: str | None = None
    deployment: str | None = None  # the provider that served it
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: int = 0  # nano-dollars
    latency_ms: float = 0.0
    first_token_ms: float | None = None
    status: int = 500
    error_code: str | None = None
    response_id: str | None = None  # the stored response, or chat completion (store: true)
    batch_id: str | None = None  # a request of a batch: the batch

    @classmethod
    def opened(cls, request_id: str, endpoint: str) -> RequestEntry:
        return cls(request_id, endpoint, time.time(), time.perf_counter())

    def first_output(self, at: float) -> None:
        """The first token came at ``at`` (a ``perf_counter`` reading); later ones do not
        count."""
        if self.first_token_ms is None:
            self.first_token_ms = (at - self.started) * 1000

    def ended(self, status: int) -> None:
        self.status = status
        self.latency_ms = (time.perf_counter() - self.started) * 1000


_ENTRY: ContextVar[RequestEntry | None] = ContextVar("agentloom_request_entry", default=None)


def current_entry() -> RequestEntry | None:
    """The running request's entry, when its traffic is logged."""
    return _ENTRY.get()


def logging_request(entry: RequestEntry) -> AbstractContextManager[RequestEntry]:
    """Run the block (and the tasks it starts) as the request ``entry`` logs."""
    return _Logging(entry)


class _Logging(AbstractContextManager[RequestEntry]):
    """:func:`logging_request`'s block: an object, not a generator (every logged request
    enters one)."""

    __slots__ = ("_entry", "_token")

    def __init__(self, entry: RequestEntry) -> None:
        self._entry = entry
        self._token: Token[RequestEntry | None] | None = None

    def __enter__(self) -> RequestEntry:
        self._token = _ENTRY.set(self._entry)
        return self._entry

    def __exit__(self, *_: object) -> None:
        assert self._token is not None, "entered first"
        _ENTRY.reset(self._token)


def model_not_found(name: str) -> NotFoundError:
    """The error for a model that is not there (or not the caller's); the running request's
    log entry keeps the name asked for, so the log can be filtered by it."""
    entry = _ENTRY.get()
    if entry is not None and entry.model is None:
        entry.model = name
    return NotFoundError(
        f"The model '{name}' does not exist or you do not have access to it.",
        param="model",
        code="model_not_found",
    )
