"""``GET /openapi.json`` (the API's OpenAPI 3.1 document) and ``GET /docs`` (a page showing it).

Both are open, with keys on too, like ``/v1/health``: they tell the shape of the API, which is
the same for every agentloom of this version (it is in the source), and nothing of any project
or of the server's configuration. The document is built from the app's routes on the first
request and kept (:mod:`agentloom.server.openapi`). The page is one self-contained file: its
script and style are inline, it loads nothing but ``openapi.json`` from this server, and its
Content-Security-Policy allows nothing else (the script and style by their hashes).
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from agentloom.server.openapi import document_bytes
from agentloom.server.spec import ApiRoute, Op

_PAGE = resources.files("agentloom.server").joinpath("docs.html").read_text(encoding="utf-8")


def _hashes(tag: str) -> str:
    blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", _PAGE, flags=re.DOTALL)
    digests = (base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in blocks)
    return " ".join(f"'sha256-{d}'" for d in digests)


_PAGE_HEADERS = {
    "Content-Security-Policy": (
        f"default-src 'none'; script-src {_hashes('script')}; style-src {_hashes('style')}; "
        "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _document(routes: list[BaseRoute], state: Any) -> bytes:
    made: bytes | None = getattr(state, "openapi_document", None)
    if made is None:
        made = document_bytes(routes)
        state.openapi_document = made
    return made


async def openapi_document(request: Request) -> Response:
    return Response(_document(request.app.routes, request.app.state), media_type="application/json")


async def docs_page(request: Request) -> Response:
    return Response(_PAGE, media_type="text/html", headers=_PAGE_HEADERS)


routes = [
    ApiRoute(
        "/openapi.json",
        GET=Op(
            openapi_document,
            returns=dict[str, Any],
            open=True,
            summary="The OpenAPI 3.1 document of this API",
        ),
    ),
    ApiRoute(
        "/docs",
        GET=Op(
            docs_page,
            content={"text/html": {"type": "string"}},
            open=True,
            summary="A page showing the OpenAPI document",
        ),
    ),
]
