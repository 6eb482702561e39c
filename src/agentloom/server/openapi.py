"""The OpenAPI 3.1 document of the HTTP API, built from the app's routes.

Each route is an :class:`~agentloom.server.spec.ApiRoute` naming, per method, the wire models it
reads and answers with (:mod:`agentloom.server.spec`). The schemas are pydantic's JSON Schema
(2020-12, which OpenAPI 3.1 uses as it is) of those very models, made in one pass so that every
model is one entry of ``components/schemas``, named by ``$ref``: a request model in validation
mode, an answer in serialization mode (a model read and written differently gets ``-Input`` and
``-Output`` entries). Every operation's ``default`` answer is the error envelope.

``python -m agentloom.server.openapi`` prints the document (no server needed).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import TypeAdapter
from starlette.convertors import IntegerConvertor
from starlette.routing import BaseRoute, Route, WebSocketRoute

import agentloom
from agentloom.api.errors import ErrorEnvelope
from agentloom.server.spec import Alias, ApiRoute, JsonSchema, Link, Op, PageRoute, Param, Upload

Mode = Literal["validation", "serialization"]

REF = "#/components/schemas/{model}"
_CONVERTOR = re.compile(r"\{(\w+)(?::\w+)?\}")
_HIDDEN_METHODS = frozenset({"HEAD"})  # answered as GET: not listed
BEARER = "ApiKey"

DESCRIPTION = """\
An open, self-hostable OpenAI-compatible API: the Responses API and what it builds on
(conversations, prompts, files, vector stores, containers), Chat Completions and Embeddings
passed to the model's backend, the Admin API (projects, keys, usage, audit logs), webhooks and
moderation.

**Authentication.** With `[auth] mode = "keys"` every `/v1` route but `/v1/health` and
`/v1/health/ready` needs `Authorization: Bearer <key>`: a project key works in its project, the
admin key manages the organization (`/v1/organization/...`) and works in a project named by the
`OpenAI-Project` header. A server without keys ignores the header. `/openapi.json` and `/docs`
are always open.

**Errors.** Every error is a JSON body `{"error": {"message", "type", "param", "code"}}` with an
HTTP status of 400, 401, 403, 404, 405, 409, 413, 429 or, for a fault of the server or its
backend, 500, 502, 503 (`backend_unavailable`, `database_unavailable`), 504 or 507.

**Streaming.** An operation with `stream: true` answers with `text/event-stream`: each event's
`event:` line is its type and its `data:` line its JSON, and the stream ends with
`data: [DONE]`.

**WebSocket mode.** `GET /v1/responses` upgraded to a WebSocket (`ws://HOST/v1/responses`)
takes `{"type": "response.create", ...}` frames (the body of `POST /v1/responses`) and sends
each response's events as JSON text frames; OpenAPI does not describe WebSockets, so it is not
among the paths (see docs/websocket.md).

**Console.** `GET /console/` is a web console for people (a playground, logs, files, vector
stores, admin) made of static pages that use only this API; `/` leads there. Its pages are not
operations of the API, so they are not among the paths (see docs/console.md).
"""


def document(routes: Iterable[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI document of ``routes`` (those that are not :class:`ApiRoute` are left out:
    :func:`undocumented` names them)."""
    documented = [route for route in routes if isinstance(route, ApiRoute)]
    ops = [op for route in documented for op in route.operations.values()]
    schemas = _Schemas(ops)
    paths: dict[str, dict[str, Any]] = {}
    for route in documented:
        item = paths.setdefault(_path(route.path), {})
        params = _path_params(route)
        handlers = [op.handler for op in route.operations.values()]
        for method, op in route.operations.items():
            if method not in _HIDDEN_METHODS:
                shared = handlers.count(op.handler) > 1  # one handler for several methods
                operation = _operation(op, params, schemas, method if shared else "")
                item[method.lower()] = _aliased(operation, method, route.alias)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "agentloom",
            "version": agentloom.__version__,
            "description": DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "security": [{BEARER: []}],
        "tags": [{"name": name} for name in sorted({_tag(op) for op in ops})],
        "paths": paths,
        "components": {
            "schemas": schemas.components,
            "securitySchemes": {
                BEARER: {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key (project or admin) or, with [auth.jwt], a JWT. "
                    "Needed only when the server runs with keys.",
                }
            },
            "headers": {
                "RequestId": {
                    "description": "The request's id: the client's x-request-id or "
                    "x-client-request-id when sane, else a new req_... id.",
                    "schema": {"type": "string"},
                }
            },
        },
    }


def document_bytes(routes: Iterable[BaseRoute], *, indent: int | None = None) -> bytes:
    return json.dumps(document(routes), ensure_ascii=False, indent=indent).encode()


def undocumented(routes: Iterable[BaseRoute]) -> list[str]:
    """``METHOD path`` of every HTTP route (or method) without an OpenAPI entry. WebSocket
    routes are not HTTP operations, nor are the console's pages; the document's description
    covers them."""
    missing: list[str] = []
    for route in routes:
        if isinstance(route, WebSocketRoute | PageRoute):
            continue
        if not isinstance(route, ApiRoute):
            methods = sorted(getattr(route, "methods", None) or {"?"})
            missing += [f"{m} {getattr(route, 'path', route)}" for m in methods]
            continue
        covered = set(route.operations) | _HIDDEN_METHODS
        missing += [f"{m} {route.path}" for m in sorted((route.methods or set()) - covered)]
    return missing


# --- one operation -------------------------------------------------------------------------------


def _operation(
    op: Op, path_params: list[JsonSchema], schemas: _Schemas, method: str
) -> dict[str, Any]:
    name = op.handler.__name__
    suffix = f"_{method.lower()}" if method else ""
    operation: dict[str, Any] = {
        "operationId": f"{_tag(op)}_{name}{suffix}",
        "summary": op.summary or name.replace("_", " ").capitalize(),
        "tags": [_tag(op)],
    }
    if op.description:
        operation["description"] = op.description
    parameters = path_params + [_param(p) for p in op.query]
    if parameters:
        operation["parameters"] = parameters
    body = _request_body(op, schemas)
    if body:
        operation["requestBody"] = body
    operation["responses"] = {"200": _success(op, schemas), "default": _error(op, schemas)}
    if op.open:
        operation["security"] = []
    return operation


def _aliased(operation: dict[str, Any], method: str, alias: Alias | None) -> dict[str, Any]:
    """An alias's operation: its own id, and a description that says what it is."""
    if alias is None:
        return operation
    said = f"{alias.by}'s path for `{method} {_path(alias.of)}`: the same operation."
    return {
        **operation,
        "operationId": operation["operationId"] + alias.suffix,
        "summary": f"{operation['summary']} ({alias.by}'s path)",
        "description": f"{said}\n\n{operation.get('description', '')}".strip(),
    }


def _tag(op: Op) -> str:
    """The route module the handler lives in: ``responses``, ``files``, ``organization`` ..."""
    return op.handler.__module__.rsplit(".", 1)[-1]


def _path(path: str) -> str:
    """Starlette's ``{model_id:path}`` as OpenAPI's ``{model_id}``."""
    return _CONVERTOR.sub(r"{\1}", path)


def _path_params(route: Route) -> list[JsonSchema]:
    params = []
    for name, convertor in route.param_convertors.items():
        integer = isinstance(convertor, IntegerConvertor)
        params.append(
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "integer" if integer else "string"},
            }
        )
    return params


def _param(param: Param) -> JsonSchema:
    described: JsonSchema = {"name": param.name, "in": param.where, "schema": param.schema}
    if param.required:
        described["required"] = True
    if param.description:
        described["description"] = param.description
    if param.schema.get("type") == "array":
        described["style"], described["explode"] = "form", True  # include=a&include=b
    if param.schema.get("type") == "object":
        described["style"], described["explode"] = "deepObject", True  # metadata[key]=value
    return described


def _request_body(op: Op, schemas: _Schemas) -> JsonSchema | None:
    content: dict[str, Any] = {}
    if op.body is not None:
        content["application/json"] = {"schema": schemas.of(op.body, "validation")}
    if op.upload is not None:
        content["multipart/form-data"] = {"schema": schemas.form(op.upload)}
    if not content:
        return None
    return {"required": not op.empty_body, "content": content}


def _success(op: Op, schemas: _Schemas) -> JsonSchema:
    content: dict[str, Any] = {}
    if op.returns is not None:
        content["application/json"] = {"schema": schemas.of(op.returns, "serialization")}
    if op.stream is not None:
        content["text/event-stream"] = {"schema": _event(schemas.of(op.stream, "serialization"))}
    for media_type, schema in (op.content or {}).items():
        content[media_type] = {"schema": schema}
    headers: dict[str, Any] = {"x-request-id": {"$ref": "#/components/headers/RequestId"}}
    headers.update({name: {"schema": schema} for name, schema in op.headers.items()})
    success: JsonSchema = {"description": "OK", "headers": headers, "content": content}
    if op.links:
        success["links"] = {name: _link(link) for name, link in op.links.items()}
    return success


def _link(link: Link) -> JsonSchema:
    return {"operationId": link.operation, "parameters": dict(link.parameters)}


def _error(op: Op, schemas: _Schemas) -> JsonSchema:
    envelope = "OpenAI's" if op.errors is ErrorEnvelope else "its API's"
    return {
        "description": f"An error, in {envelope} envelope.",
        "headers": {"x-request-id": {"$ref": "#/components/headers/RequestId"}},
        "content": {"application/json": {"schema": schemas.of(op.errors, "serialization")}},
    }


def _event(data: JsonSchema) -> JsonSchema:
    """One server-sent event (as OpenAPI 3.1 tools read a stream: each event an object of its
    fields): ``data`` holds JSON of the ``data`` schema, or ``[DONE]`` at the end."""
    return {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string"},
            "data": {"type": "string"},
            "id": {"type": "string"},
        },
        "if": {"properties": {"data": {"const": "[DONE]"}}},
        "else": {
            "properties": {
                "data": {"contentMediaType": "application/json", "contentSchema": data},
            }
        },
    }


# --- schemas -------------------------------------------------------------------------------------


class _Schemas:
    """The JSON schemas of every type the operations name, made by pydantic in one pass: each
    model once in ``components/schemas``, referred to by ``$ref``."""

    def __init__(self, ops: Sequence[Op]) -> None:
        wanted: dict[tuple[Any, Mode], TypeAdapter[Any]] = {}
        for kind, mode in _types(ops):
            if (kind, mode) not in wanted:
                wanted[(kind, mode)] = TypeAdapter(kind)
        inputs = [(kind, mode, adapter) for (kind, mode), adapter in wanted.items()]
        made, defs = TypeAdapter.json_schemas(inputs, ref_template=REF)
        names = _names(defs.get("$defs", {}))
        self._made: dict[tuple[Any, Mode], JsonSchema] = _renamed(dict(made), names)
        self.components: dict[str, JsonSchema] = {
            names[key]: _renamed(schema, names)
            for key, schema in sorted(defs.get("$defs", {}).items(), key=lambda kv: names[kv[0]])
        }

    def of(self, kind: Any, mode: Mode) -> JsonSchema:
        return self._made[(kind, mode)]

    def form(self, upload: Upload) -> JsonSchema:
        """A multipart body: the ``file`` part and the fields (nested objects flattened)."""
        properties: dict[str, Any] = {
            "file": {
                "type": "string",
                "format": "binary",
                "contentMediaType": "application/octet-stream",
                "description": "The file, with its filename.",
            }
        }
        required = ["file"]
        if upload.fields is not None:
            fields = self._resolved(self.of(upload.fields, "validation"))
            for name, schema in fields.get("properties", {}).items():
                nested = self._object(schema)
                if nested is None:
                    properties[name] = schema
                    continue
                for inner, inner_schema in nested.get("properties", {}).items():
                    properties[f"{name}[{inner}]"] = inner_schema
            required += list(fields.get("required", []))
        return {"type": "object", "required": required, "properties": properties}

    def _resolved(self, schema: JsonSchema) -> JsonSchema:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.components[ref.rsplit("/", 1)[-1]]
        return schema

    def _object(self, schema: JsonSchema) -> JsonSchema | None:
        """The object schema a field holds (``X`` or ``X | None``), if it holds one."""
        options = schema.get("anyOf", [schema])
        for option in options:
            resolved = self._resolved(option)
            if resolved.get("type") == "object" and "properties" in resolved:
                return resolved
        return None


def _names(defs: dict[str, JsonSchema]) -> dict[str, str]:
    """Plainer names than pydantic's keys: a page of a generic ``ListPage`` by its title
    (``PromptList``), a model pydantic named by its module and name (two models share the
    name) as ``module.Name``."""
    names: dict[str, str] = {}
    for key, schema in defs.items():
        title = schema.get("title")
        if key.startswith("ListPage_") and isinstance(title, str):
            names[key] = title
        elif key.startswith("agentloom__api__"):
            names[key] = key.removeprefix("agentloom__api__").replace("__", ".")
        else:
            names[key] = key
    assert len(set(names.values())) == len(names), "two schemas under one name"
    return names


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with its ``$ref`` s to components renamed."""
    if isinstance(value, dict):
        return {
            k: REF.format(model=names[v.rsplit("/", 1)[-1]])
            if k == "$ref" and isinstance(v, str)
            else _renamed(v, names)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    return value


def _types(ops: Sequence[Op]) -> Iterable[tuple[Any, Mode]]:
    yield ErrorEnvelope, "serialization"
    for op in ops:
        if op.errors is not ErrorEnvelope:
            yield op.errors, "serialization"
        if op.returns is not None:
            yield op.returns, "serialization"
        if op.stream is not None:
            yield op.stream, "serialization"
        if op.body is not None:
            yield op.body, "validation"
        if op.upload is not None and op.upload.fields is not None:
            yield op.upload.fields, "validation"


def _main() -> None:  # pragma: no cover - a convenience for generating clients
    from agentloom.config import Settings
    from agentloom.server.app import create_app

    sys.stdout.write(document_bytes(create_app(Settings()).routes, indent=2).decode() + "\n")


if __name__ == "__main__":  # pragma: no cover
    _main()
