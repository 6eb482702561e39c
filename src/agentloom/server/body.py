"""Request bodies: size-limited, shape-checked, parsed straight from bytes into a wire model.

Every body (and every WebSocket frame) goes through :func:`screen` first: its nesting and size
are checked from the raw bytes (:mod:`agentloom.server.json_shape`), and a number JSON has not
(``NaN``, ``Infinity``) is refused by path (:mod:`agentloom.server.json_numbers`); then it is
validated with the server's ``[limits]`` as context (:mod:`agentloom.api.limits`). A body
larger than :data:`OFF_LOOP_BYTES` is checked and validated in a worker thread, so a large
request does not hold up the event loop (and every other request) while it is parsed.
"""

from __future__ import annotations

from typing import TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request

from agentloom.api.limits import RequestLimits
from agentloom.errors import InvalidRequestError, PayloadTooLargeError
from agentloom.offload import off_loop
from agentloom.server.errors import validation_error
from agentloom.server.json_numbers import check_finite
from agentloom.server.json_shape import check_shape
from agentloom.server.runtime import runtime_of

M = TypeVar("M", bound=BaseModel)

OFF_LOOP_BYTES = 64 * 1024


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body (at most ``limit`` bytes), from the request's messages as
    ``Request.stream`` reads them, without an async generator of its own: the body is read
    once, by this."""
    declared = request.headers.get("content-length")
    if declared is not None and declared_over(declared, limit):
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await request.receive()
        kind = message["type"]
        if kind == "http.disconnect":
            raise ClientDisconnect()
        if kind != "http.request":
            continue
        chunk: bytes = message.get("body", b"")
        more = message.get("more_body", False)
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def parse_body(request: Request, model: type[M], *, empty: str | None = None) -> M:
    """The body as ``model``; an empty body is a 400, or reads as ``empty`` when given."""
    raw = await _body(request, empty)
    return await decode(raw, model, runtime_of(request).settings.limits)


async def parse_body_and_raw(request: Request, model: type[M]) -> tuple[M, bytes]:
    """:func:`parse_body`, and the raw bytes it was read from (passed on when a backend is to
    answer the request itself)."""
    raw = await _body(request)
    return await decode(raw, model, runtime_of(request).settings.limits), raw


async def parse_passed_body(request: Request, model: type[M]) -> tuple[M, dict[str, object]]:
    """A body that is passed on (to a backend) as it came: read as ``model`` to check what the
    server acts on, and kept whole, as plain JSON, to pass on."""
    raw = await _body(request)
    limits = runtime_of(request).settings.limits
    return await off_loop(len(raw) >= OFF_LOOP_BYTES, _passed, raw, model, limits)


async def _body(request: Request, empty: str | None = None) -> bytes:
    """The body's bytes within the size limit; an empty body is a 400 unless ``empty`` stands
    in for it."""
    raw = await read_body(request, runtime_of(request).settings.server.max_body_bytes)
    if raw.strip():
        return raw
    if empty is None:
        raise InvalidRequestError("The request body is empty; a JSON object is expected.")
    return empty.encode()


def screen(raw: bytes, limits: RequestLimits) -> None:
    """Refuse ``raw`` before it is parsed when it is nested too deep or holds too many values
    for ``limits``, or holds a number that is not JSON: every body and every frame."""
    check_shape(raw, limits)
    check_finite(raw)


def _passed(raw: bytes, model: type[M], limits: RequestLimits) -> tuple[M, dict[str, object]]:
    screen(raw, limits)
    data = _decoded(raw)
    if not isinstance(data, dict):
        raise InvalidRequestError("The request body is not a JSON object.")
    try:
        return model.model_validate(data, context=limits), data
    except ValidationError as exc:
        raise validation_error(exc, data) from None


async def decode(raw: bytes, model: type[M], limits: RequestLimits) -> M:
    """``raw`` validated as ``model`` within ``limits`` (in a worker thread when large)."""
    return await off_loop(len(raw) >= OFF_LOOP_BYTES, _decode, raw, model, limits)


def _decode(raw: bytes, model: type[M], limits: RequestLimits) -> M:
    screen(raw, limits)
    try:
        return model.model_validate_json(raw, context=limits)
    except ValidationError as exc:
        raise validation_error(exc, _decoded(raw)) from None


def _decoded(raw: bytes) -> object:
    """The body as plain data, for naming the parameter an error is about (shape-checked
    already: bounded in depth and size)."""
    try:
        return pydantic_core.from_json(raw)
    except ValueError:
        return None


def declared_over(declared: str, limit: int) -> bool:
    """Whether a ``Content-Length`` says more than ``limit`` bytes (one that is no number is
    left to the body's own size)."""
    digits = declared.strip()
    if not (digits.isascii() and digits.isdigit()):
        return False
    return len(digits) > len(str(limit)) or int(digits) > limit


def _too_large(limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"The request body is larger than the limit of {limit} bytes.")
