"""One error hierarchy for the whole package.

Caller mistakes, upstream (inference backend) failures and internal faults each have a class.
Nothing here knows about HTTP: ``agentloom.server.errors`` maps these classes to status codes and
to OpenAI's error envelope in one table. A message never holds a URL's credentials: they are
scrubbed here (:func:`agentloom.redact.redact_urls`), whoever wrote the message.
"""

from __future__ import annotations

from agentloom.redact import redact_urls


class AgentloomError(Exception):
    """Root of every error agentloom raises on purpose."""

    default_code: str | None = None

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        message = redact_urls(message)
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code if code is not None else self.default_code

    def stated(self) -> str:
        """The message as a client is told it (OpenAI's wording where clients parse it)."""
        return self.message


# --- caller mistakes -------------------------------------------------------------------------


class InvalidRequestError(AgentloomError):
    """The request is malformed or asks for something impossible."""


class AuthenticationError(AgentloomError):
    """No API key, or one that is wrong, revoked or expired."""

    default_code = "invalid_api_key"


class PermissionDeniedError(AgentloomError):
    """The caller is known but may not do this (a project key on an admin route, say)."""

    default_code = "insufficient_permissions"


class RateLimitedError(AgentloomError):
    """The project used up a rate limit of its own (requests or tokens per minute, requests per
    day); ``retry_after``: seconds until the window resets."""

    default_code = "rate_limit_exceeded"

    def __init__(self, message: str, *, retry_after: float, kind: str = "requests") -> None:
        super().__init__(f"{message} Please try again in {_wait(retry_after)}.")
        self.retry_after: float | None = retry_after
        self.kind = kind  # OpenAI's error type: "requests" or "tokens"


class InsufficientQuotaError(AgentloomError):
    """The project (or the organization) is over its hard spend limit for the month."""

    default_code = "insufficient_quota"


class NotFoundError(AgentloomError):
    """A referenced object (model, response, item ...) does not exist."""


class ConflictError(AgentloomError):
    """The request conflicts with the current state of an object."""


class ConversationLockedError(ConflictError):
    """A response is running on the conversation; it takes no other change until it ends."""

    default_code = "conversation_locked"


class DuplicateItemError(InvalidRequestError):
    """An item id that is already taken (item ids are unique, and never move between
    conversations)."""

    default_code = "duplicate_item"

    def __init__(self, item_id: str, *, param: str | None = None) -> None:
        super().__init__(
            f"Duplicate item found with id {item_id}. Remove duplicate items from your input "
            "and try again.",
            param=param,
        )
        self.item_id = item_id

    def at(self, param: str) -> DuplicateItemError:
        """The same error, naming where the duplicate was given."""
        return DuplicateItemError(self.item_id, param=param)


class PayloadTooLargeError(AgentloomError):
    """The request body is larger than the configured limit."""

    default_code = "request_too_large"


# --- upstream (inference backend) failures ---------------------------------------------------


class UpstreamError(AgentloomError):
    """The inference backend failed. ``status`` is the backend's HTTP status, if it gave one."""

    default_code = "server_error"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, param=param, code=code)
        self.status = status
        self.retry_after = retry_after


class UpstreamTimeoutError(UpstreamError):
    """The backend did not answer (or stopped streaming) within the configured timeout."""

    default_code = "server_error"


class UpstreamUnavailableError(UpstreamError):
    """The backend could not be reached (its connection refused, its host unknown): it is down,
    not the request wrong; try again once it is up."""

    default_code = "backend_unavailable"


class UpstreamRateLimitError(UpstreamError):
    """The backend answered 429."""

    default_code = "rate_limit_exceeded"

    def stated(self) -> str:
        """With the wait the backend asked for, the message ends with OpenAI's retry hint
        ("Please try again in 1.5s."), which clients such as Codex read to wait that long."""
        if self.retry_after is None or "try again in" in self.message.lower():
            return self.message
        end = "" if self.message.rstrip().endswith((".", "!", "?")) else "."
        return f"{self.message.rstrip()}{end} Please try again in {_wait(self.retry_after)}."


def _wait(seconds: float) -> str:
    """``50ms``, ``1.5s``, ``7s``: OpenAI's way of writing a wait."""
    if seconds < 1:
        return f"{max(1, round(seconds * 1000))}ms"
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"


class ContextLengthExceededError(UpstreamError):
    """The backend refused the request because the context is longer than the model's window."""

    default_code = "context_length_exceeded"


class UpstreamRequestError(UpstreamError):
    """The backend rejected the request as invalid (4xx other than 429 / context length)."""

    default_code = "invalid_prompt"


# --- internal faults -------------------------------------------------------------------------


class InternalError(AgentloomError):
    """A bug or an unexpected state inside agentloom."""

    default_code = "server_error"


class DatabaseUnavailableError(AgentloomError):
    """The database could not be reached, or the connection was lost while a write was in
    flight (so whether it took effect is unknown): try again shortly."""

    default_code = "database_unavailable"


class InsufficientStorageError(AgentloomError):
    """The storage for uploaded files is full: nothing was stored."""

    default_code = "insufficient_storage"
