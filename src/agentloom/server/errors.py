"""Errors at the HTTP edge: one table from exception class to status and OpenAI error type."""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from agentloom import errors
from agentloom.api.anthropic import AnthropicError, AnthropicErrorDetail
from agentloom.api.errors import ErrorDetail, ErrorEnvelope
from agentloom.api.limits import TOO_LONG
from agentloom.request_entry import CLIENT_CLOSED, current_entry
from agentloom.server.request_id import headers_for

log = logging.getLogger(__name__)

# Most specific first: the first matching class wins.
ERROR_TABLE: tuple[tuple[type[errors.AgentloomError], int, str], ...] = (
    (errors.InvalidRequestError, 400, "invalid_request_error"),
    (errors.AuthenticationError, 401, "invalid_request_error"),
    (errors.PermissionDeniedError, 403, "invalid_request_error"),
    (errors.RateLimitedError, 429, "requests"),
    (errors.InsufficientQuotaError, 429, "insufficient_quota"),
    (errors.NotFoundError, 404, "invalid_request_error"),
    (errors.ConflictError, 409, "invalid_request_error"),
    (errors.PayloadTooLargeError, 413, "invalid_request_error"),
    (errors.UpstreamRateLimitError, 429, "rate_limit_error"),
    (errors.ContextLengthExceededError, 400, "invalid_request_error"),
    (errors.UpstreamRequestError, 400, "invalid_request_error"),
    (errors.UpstreamTimeoutError, 504, "server_error"),
    (errors.UpstreamUnavailableError, 503, "server_error"),
    (errors.UpstreamError, 502, "server_error"),
    (errors.DatabaseUnavailableError, 503, "server_error"),
    (errors.InsufficientStorageError, 507, "server_error"),
    (errors.InternalError, 500, "server_error"),
)

INTERNAL_MESSAGE = "The server had an error while processing your request."

# nginx's status for a request whose client went away: no client reads it, the access log and
# the metrics do

_HTTP_MESSAGES = {
    404: ("Not found: no route matches this path.", "not_found"),
    405: ("Method not allowed for this path.", "method_not_allowed"),
}


def envelope(
    message: str, *, type: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error envelope (:class:`~agentloom.api.errors.ErrorEnvelope`, the model the
    OpenAPI document gives for every error answer)."""
    detail = ErrorDetail(message=message, type=type, param=param, code=code)
    return ErrorEnvelope(error=detail).model_dump()


def status_and_type(exc: errors.AgentloomError) -> tuple[int, str]:
    for cls, status, kind in ERROR_TABLE:
        if isinstance(exc, cls):
            return status, kind
    return 500, "server_error"


def error_body(exc: errors.AgentloomError) -> bytes:
    """The error's JSON envelope, as a stream reports it (``{"error": {...}}``)."""
    _, kind = status_and_type(exc)
    body = envelope(exc.stated(), type=kind, param=exc.param, code=exc.code)
    return json.dumps(body).encode()


class HttpErrorShapes:
    """The answers above, for what answers without a route: a batch's requests
    (:class:`agentloom.batches.dispatch.ErrorShapes`)."""

    def answer(self, exc: errors.AgentloomError) -> tuple[int, dict[str, object]]:
        status, kind = _noted(exc)
        return status, envelope(exc.stated(), type=kind, param=exc.param, code=exc.code)

    def invalid(self, exc: ValidationError, data: object) -> errors.AgentloomError:
        return validation_error(exc, data)


def _noted(exc: errors.AgentloomError) -> tuple[int, str]:
    """The error's status and type, its code noted on the running request's log entry (the
    row says why)."""
    status, kind = status_and_type(exc)
    entry = current_entry()
    if entry is not None:
        entry.error_code = exc.code or kind
    return status, kind


def error_response(exc: errors.AgentloomError) -> JSONResponse:
    status, kind = _noted(exc)
    if isinstance(exc, errors.RateLimitedError):
        kind = exc.kind
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, errors.UpstreamRateLimitError | errors.RateLimitedError) and retry_after:
        headers["retry-after"] = str(max(1, round(retry_after)))
    body = envelope(exc.stated(), type=kind, param=exc.param, code=exc.code)
    return JSONResponse(body, status_code=status, headers=headers)


def anthropic_error_response(exc: errors.AgentloomError) -> JSONResponse:
    """The error in Anthropic's envelope, for its Messages API (``{"type": "error", "error":
    {"type", "message"}}``), with the same status as OpenAI's."""
    status, _ = status_and_type(exc)
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, errors.UpstreamRateLimitError | errors.RateLimitedError) and retry_after:
        headers["retry-after"] = str(max(1, round(retry_after)))
    return JSONResponse(anthropic_error_body(exc), status_code=status, headers=headers)


def anthropic_error_body(exc: errors.AgentloomError) -> dict[str, Any]:
    status, _ = status_and_type(exc)
    detail = AnthropicErrorDetail(type=anthropic_error_type(status), message=exc.stated())
    return AnthropicError(error=detail).model_dump()


def anthropic_error_type(status: int) -> str:
    """Anthropic's error type for a status (its 529 ``overloaded_error`` is our 503)."""
    if status in _ANTHROPIC_TYPES:
        return _ANTHROPIC_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}
# The API families that answer errors in another envelope than OpenAI's, by path: the edge's
# refusals and every handler's errors on these paths take it.
DIALECTS = {
    "/v1/messages": anthropic_error_response,
    "/v1/messages/count_tokens": anthropic_error_response,
}


def error_response_for(exc: errors.AgentloomError, path: str) -> JSONResponse:
    """The error as the API family of ``path`` answers errors (OpenAI's, but for
    :data:`DIALECTS`)."""
    return DIALECTS.get(path, error_response)(exc)


def validation_error(exc: ValidationError, data: object = None) -> errors.InvalidRequestError:
    """The first problem of a pydantic validation error, as OpenAI states it. ``data`` is the
    decoded body, used to tell union tags in the error's location from field names."""
    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return errors.InvalidRequestError(
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)",
            code="invalid_json",
        )
    param = param_path(first["loc"], data)
    if first["type"] == "missing":
        return errors.InvalidRequestError(
            f"Missing required parameter: '{param}'.",
            param=param,
            code="missing_required_parameter",
        )
    if first["type"] in (TOO_LONG, "too_long"):
        return _too_long(param, first.get("ctx") or {})
    message = f"Invalid value for '{param}': {first['msg']}." if param else first["msg"]
    return errors.InvalidRequestError(message, param=param or None, code="invalid_value")


def _too_long(param: str, ctx: dict[str, object]) -> errors.InvalidRequestError:
    """An over-long array, in OpenAI's words."""
    most = ctx.get("most", ctx.get("max_length"))
    length = ctx.get("length", ctx.get("actual_length"))
    return errors.InvalidRequestError(
        f"Invalid '{param}': array too long. Expected an array with maximum length {most}, but "
        f"got an array with length {length} instead.",
        param=param or None,
        code=TOO_LONG,
    )


def param_path(loc: tuple[int | str, ...], data: object = None) -> str:
    """``('input', '~items', 0, 'content')`` -> ``input[0].content``; union tags are dropped.

    A union discriminated by ``type`` puts the tag in the location (``content[0].input_text.text``):
    walking ``data`` (the decoded body) alongside tells such a tag from a field name.
    """
    path = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
        elif isinstance(node, dict) and part not in node and node.get("type") == part:
            continue  # the tag of a union discriminated by ``type``
        elif _is_field(part):
            path += f".{part}" if path else part
            node = node.get(part) if isinstance(node, dict) else None
    return path


def _is_field(part: str) -> bool:
    if part.startswith("~") or not part or part[0].isupper():
        return False
    return not any(ch in part for ch in "[]()-,:") and part not in {"str", "int", "float", "bool"}


async def handle_agentloom_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.AgentloomError)
    return error_response_for(exc, request.url.path)


async def handle_http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message, code = _HTTP_MESSAGES.get(exc.status_code, (str(exc.detail), "http_error"))
    body = envelope(message, type="invalid_request_error", code=code)
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def handle_client_disconnect(request: Request, exc: Exception) -> Response:
    """A client gone before its request's body was read: one line at debug level, no traceback
    (any client can cause it at will, it is no fault of the server's)."""
    assert isinstance(exc, ClientDisconnect)
    log.debug("client disconnected during its request: %s %s", request.method, request.url.path)
    return Response(status_code=CLIENT_CLOSED)


async def handle_unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    entry = current_entry()
    if entry is not None:
        entry.error_code = "server_error"
    body = envelope(INTERNAL_MESSAGE, type="server_error")
    return JSONResponse(body, status_code=500, headers=headers_for(request.scope))
