"""Rendering wire models as HTTP responses."""

from __future__ import annotations

from pydantic import BaseModel
from starlette.responses import Response


def json_response(model: BaseModel, status_code: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status_code, media_type="application/json")
