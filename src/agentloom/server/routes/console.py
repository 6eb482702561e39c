"""The console: ``GET /console/`` and its static assets, ``/`` and ``/console`` leading there.

The console (:mod:`agentloom.console`) is plain ES modules, a style sheet and one page, run by the
browser against the public ``/v1`` API with the key its user signs in with; the assets carry no
data, so these routes are open, like ``/docs``. They are served from a table made once, at
import, of the files in the package: a request names an entry of the table, never a file, so no
path reaches the filesystem. Each asset has an ``ETag`` (a browser revalidates, and gets a 304
while it is unchanged) and a gzipped copy for browsers that take one. The page's
Content-Security-Policy allows scripts, styles and connections to this server only.
"""

from __future__ import annotations

import gzip
import hashlib
from importlib import resources
from importlib.abc import Traversable
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agentloom.errors import NotFoundError
from agentloom.frozen import frozen
from agentloom.server.spec import PageRoute

PREFIX: Final = "/console/"
INDEX: Final = "index.html"
MEDIA_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",  # kept, and revalidated by ETag on each use
    "Vary": "Accept-Encoding",
}


@frozen
class Asset:
    body: bytes
    gzipped: bytes
    media_type: str
    etag: str


def _asset(data: bytes, media_type: str) -> Asset:
    etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
    return Asset(data, gzip.compress(data, compresslevel=9, mtime=0), media_type, etag)


def _walk(folder: Traversable, prefix: str = "") -> dict[str, Asset]:
    found: dict[str, Asset] = {}
    for entry in folder.iterdir():
        name = prefix + entry.name
        if entry.is_dir():
            found |= _walk(entry, name + "/")
            continue
        media_type = MEDIA_TYPES.get("." + entry.name.rpartition(".")[2])
        if media_type is not None:
            found[name] = _asset(entry.read_bytes(), media_type)
    return found


ASSETS: Final = _walk(resources.files("agentloom.console"))


def _takes_gzip(request: Request) -> bool:
    accepted = request.headers.get("accept-encoding", "")
    return any(part.split(";")[0].strip() == "gzip" for part in accepted.split(","))


def serve(asset: Asset, request: Request) -> Response:
    headers = {**HEADERS, "ETag": asset.etag}
    if asset.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    if _takes_gzip(request):
        headers["Content-Encoding"] = "gzip"
        return Response(asset.gzipped, media_type=asset.media_type, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


async def console_asset(request: Request) -> Response:
    name = request.path_params["asset"] or INDEX
    asset = ASSETS.get(name)
    if asset is None:
        raise NotFoundError(f"The console has no file '{name}'.")
    return serve(asset, request)


async def to_console(request: Request) -> Response:
    return RedirectResponse(PREFIX, status_code=307)


routes = [
    PageRoute("/", to_console),
    PageRoute("/console", to_console),
    PageRoute(PREFIX + "{asset:path}", console_asset),
]
