"""Request bodies: size-limited, parsed straight from bytes into a wire model."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from agentloom.errors import InvalidRequestError, PayloadTooLargeError
from agentloom.server.errors import validation_error

M = TypeVar("M", bound=BaseModel)


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def parse_body(
    request: Request, model: type[M], limit: int, *, empty: str | None = None
) -> M:
    """The body as ``model``; an empty body is a 400, or reads as ``empty`` when given."""
    raw = await read_body(request, limit)
    if not raw.strip():
        if empty is None:
            raise InvalidRequestError("The request body is empty; a JSON object is expected.")
        raw = empty.encode()
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise validation_error(exc, _decoded(raw)) from None


def _decoded(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _too_large(limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"The request body is larger than the limit of {limit} bytes.")
