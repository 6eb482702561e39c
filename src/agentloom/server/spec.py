"""What the OpenAPI document says of each route, declared beside the route itself.

A route module lists its routes as :class:`ApiRoute` s: a path and, for each method, an
:class:`Op` naming the handler and what it takes and gives — the wire model of its JSON body
(or the fields of its multipart upload), its query parameters, the wire model of its answer and,
when it can stream, the events of its ``text/event-stream``. :mod:`agentloom.server.openapi`
builds ``GET /openapi.json`` from these, with the schemas pydantic makes of the very models the
server validates and renders with. A route that is not an :class:`ApiRoute` is missing from the
document, and a test fails (``tests/server/test_openapi.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal

from pydantic import BaseModel
from starlette.routing import Route

from agentloom.api.errors import ErrorEnvelope
from agentloom.api.requests import KNOWN_INCLUDES
from agentloom.frozen import frozen
from agentloom.server.query import MAX_UNIX_SECONDS
from agentloom.server.routes.methods import Endpoint, by_method, endpoint_app

JsonSchema = dict[str, Any]
BINARY: JsonSchema = {"type": "string", "format": "binary"}


@frozen
class Param:
    """A query (or header) parameter, with its JSON schema."""

    name: str
    schema: JsonSchema
    description: str = ""
    required: bool = False
    where: Literal["query", "header"] = "query"


@frozen
class Upload:
    """A ``multipart/form-data`` body: a ``file`` part and the fields of ``fields`` (a nested
    object's fields are sent as ``name[field]``, as the ``openai`` SDK sends them)."""

    fields: type[BaseModel] | None = None


@frozen
class Link:
    """An OpenAPI link from an operation's 200 to the operation (its ``operationId``) the answer
    leads to, with where each of its parameters comes from (a runtime expression:
    ``$response.body#/id``, ``$request.path.project_id``). Clients and fuzzers follow them
    (Schemathesis' stateful phase: a project made, then its rate limits set)."""

    operation: str
    parameters: Mapping[str, str]


@frozen
class Op:
    """One method of a route: its handler and what the document says of it.

    ``returns``: the type of the JSON body of a 200 (a wire model, or any type pydantic reads:
    ``dict[str, Any]`` for a body passed through from a backend). ``body``: the wire model of a
    JSON request body (``empty_body``: the body may be left out). ``upload``: a multipart body
    (with ``body`` too, either is taken). ``stream``: the type of each event's ``data`` when the
    operation can answer with ``text/event-stream``. ``content``: a 200 that is not JSON, by
    media type. ``headers``: response headers of a 200, by name (their schemas). ``links``: the
    operations a 200 leads to, by name. ``open``: no API key needed, even with keys on.
    ``errors``: the envelope of its error answers (Anthropic's on its Messages API)."""

    handler: Endpoint
    returns: Any = None
    body: type[BaseModel] | None = None
    empty_body: bool = False
    upload: Upload | None = None
    query: tuple[Param, ...] = ()
    stream: Any = None
    content: Mapping[str, JsonSchema] | None = None
    headers: Mapping[str, JsonSchema] = field(default_factory=dict)
    links: Mapping[str, Link] = field(default_factory=dict)
    summary: str | None = None
    description: str | None = None
    open: bool = False
    errors: type[BaseModel] = ErrorEnvelope  # the error answers' envelope (OpenAI's)


@frozen
class Alias:
    """What makes a route an alias: the path it is an alias of (``/v1/responses``) and whose
    path the alias is (``Llama Stack``: its clients call ``/v1/agents/responses``)."""

    of: str
    by: str

    @property
    def suffix(self) -> str:
        """What its operation ids end with: ``_llama_stack``."""
        return "_" + "_".join(self.by.lower().split())


class ApiRoute(Route):
    """A Starlette route whose methods each have an :class:`Op`. Several methods share one
    endpoint (:func:`by_method`), so a 405 names them all in ``Allow``."""

    def __init__(self, path: str, *, alias: Alias | None = None, **operations: Op) -> None:
        handlers = {method: op.handler for method, op in operations.items()}
        super().__init__(path, by_method(**handlers), methods=list(operations))
        self.app = endpoint_app(self.endpoint)
        self.operations: dict[str, Op] = operations
        self.alias = alias

    def aliased(self, path: str, *, by: str) -> ApiRoute:
        """This route's operations at another path (``by``'s path for them): the same
        handlers, so the same authentication, tenancy, answers and errors. The document lists
        it as an operation of its own, which says what it is an alias of."""
        return ApiRoute(path, alias=Alias(self.path, by), **self.operations)


class PageRoute(Route):
    """A route of the console (:mod:`agentloom.server.routes.console`): pages and their assets
    for a browser, no API operation, so the OpenAPI document leaves it out (its description
    says where the console is). ``GET`` (``HEAD`` answered as ``GET``) unless ``method`` says
    otherwise (signing out is a ``POST``)."""

    def __init__(self, path: str, handler: Endpoint, *, method: str = "GET") -> None:
        super().__init__(path, by_method(**{method: handler}), methods=[method])
        self.app = endpoint_app(self.endpoint)


# --- parameters shared by list endpoints ---------------------------------------------------------

AFTER = Param("after", {"type": "string"}, "Start the page after the object with this id.")
BEFORE = Param("before", {"type": "string"}, "End the page before the object with this id.")
ORDER = Param(
    "order", {"type": "string", "enum": ["asc", "desc"]}, "Sort by creation time (default desc)."
)
ORDER_ASC = Param(
    "order", {"type": "string", "enum": ["asc", "desc"]}, "Sort by creation time (default asc)."
)
INCLUDE = Param(
    "include",
    {"type": "array", "items": {"type": "string", "enum": sorted(KNOWN_INCLUDES)}},
    "Extra fields to include (stored objects keep what was computed when they were made).",
)


def limit(default: int = 20, maximum: int = 100) -> Param:
    """``limit``: how many objects a page holds."""
    return Param(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": maximum, "default": default},
        f"How many objects a page holds, 1 to {maximum} (default {default}).",
    )


def unix_seconds(name: str, description: str, *, required: bool = False) -> Param:
    """A time as whole unix seconds (read by :func:`agentloom.server.query.unix_seconds_param`)."""
    schema = {"type": "integer", "minimum": 0, "maximum": MAX_UNIX_SECONDS}
    return Param(name, schema, description, required=required)


LIMIT = limit()
PAGE = (AFTER, LIMIT, ORDER)
