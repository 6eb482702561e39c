"""The error envelope every error answer carries: ``{"error": {message, type, param, code}}``,
as OpenAI sends it (``param`` and ``code`` are ``null`` when there is none)."""

from __future__ import annotations

from agentloom.api.wire import Nullable, WireModel


class ErrorDetail(WireModel):
    message: str
    type: str
    param: Nullable[str]
    code: Nullable[str]


class ErrorEnvelope(WireModel):
    error: ErrorDetail
