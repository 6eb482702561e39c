"""``GET /openapi.json`` and ``GET /docs``: the document covers every route, is valid OpenAPI
3.1, is made from the wire models the server validates and answers with, and is open (with
keys on too); the page is self-contained (nothing from another host)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from pydantic import TypeAdapter
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from starlette.applications import Starlette
from starlette.routing import Route, WebSocketRoute

from agentloom.api.errors import ErrorEnvelope
from agentloom.api.requests import CreateResponseRequest
from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document, undocumented
from agentloom.server.spec import ApiRoute
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL

ROOT = "http://agentloom.test"


def test_every_route_has_an_openapi_entry(settings: Settings) -> None:
    app = create_app(settings)

    assert undocumented(app.routes) == []
    paths = document(app.routes)["paths"]
    for route in app.routes:
        if isinstance(route, ApiRoute):
            path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
            assert set(paths[path]) == {m.lower() for m in route.operations}, route.path
    # WebSocket mode is no HTTP operation: the description tells of it instead
    sockets = [r.path for r in app.routes if isinstance(r, WebSocketRoute)]
    assert sockets == ["/v1/responses"]
    assert "ws://HOST/v1/responses" in document(app.routes)["info"]["description"]


def test_a_plain_route_is_named_as_undocumented() -> None:
    async def endpoint(request: Any) -> Any:
        raise NotImplementedError

    plain = Route("/v1/new_thing", endpoint, methods=["GET", "POST"])

    assert undocumented([plain]) == [
        "GET /v1/new_thing",
        "HEAD /v1/new_thing",
        "POST /v1/new_thing",
    ]


async def test_the_served_document_is_valid_openapi_3_1(
    http: httpx2.AsyncClient, app: Starlette
) -> None:
    reply = await http.get(f"{ROOT}/openapi.json")

    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    served = reply.json()
    validate(served)  # OpenAPI 3.1, its schemas JSON Schema 2020-12
    assert served["openapi"] == "3.1.0"
    assert served == document(app.routes)
    again = await http.get(f"{ROOT}/openapi.json")
    assert again.content == reply.content  # built once, then kept
    ids = [op["operationId"] for item in served["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids)) >= 100


def test_llama_stack_paths_are_documented_as_aliases(settings: Settings) -> None:
    paths = document(create_app(settings).routes)["paths"]
    aliased = {p: ops for p, ops in paths.items() if p.startswith("/v1/agents/responses")}

    assert {p: sorted(ops) for p, ops in aliased.items()} == {
        "/v1/agents/responses": ["get", "post"],
        "/v1/agents/responses/{response_id}": ["delete", "get"],
        "/v1/agents/responses/{response_id}/input_items": ["get"],
    }
    for path, ops in aliased.items():
        home = paths[path.replace("/agents", "")]
        for method, op in ops.items():
            assert op["operationId"] == home[method]["operationId"] + "_llama_stack"
            said = f"Llama Stack's path for `{method.upper()} {path.replace('/agents', '')}`"
            assert op["description"].startswith(said)
            own = ("operationId", "summary", "description")
            assert _without(op, own) == _without(home[method], own)  # the same operation


def _without(op: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in op.items() if key not in keys}


def test_schemas_are_the_wire_models(settings: Settings) -> None:
    doc = document(create_app(settings).routes)
    schemas = doc["components"]["schemas"]
    create = doc["paths"]["/v1/responses"]["post"]

    body = create["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/CreateResponseRequest"}
    assert set(schemas["CreateResponseRequest"]["properties"]) == set(
        TypeAdapter(CreateResponseRequest).json_schema()["properties"]
    )
    answer = create["responses"]["200"]["content"]
    assert answer["application/json"]["schema"] == {"$ref": "#/components/schemas/Response"}
    event = answer["text/event-stream"]["schema"]
    streamed = event["else"]["properties"]["data"]["contentSchema"]
    assert {"$ref": "#/components/schemas/ResponseCompleted"} in streamed["anyOf"]
    error = create["responses"]["default"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert schemas["ErrorEnvelope"]["required"] == ["error"]
    # a page of a generic list is named for what it lists
    listed = doc["paths"]["/v1/prompts"]["get"]["responses"]["200"]["content"]
    assert listed["application/json"]["schema"] == {"$ref": "#/components/schemas/PromptList"}


def test_uploads_are_multipart_with_the_forms_fields(settings: Settings) -> None:
    doc = document(create_app(settings).routes)

    upload = doc["paths"]["/v1/files"]["post"]["requestBody"]["content"]
    form = upload["multipart/form-data"]["schema"]
    assert form["required"] == ["file", "purpose"]
    assert {"file", "purpose", "expires_after[anchor]", "expires_after[seconds]"} == set(
        form["properties"]
    )
    either = doc["paths"]["/v1/containers/{container_id}/files"]["post"]["requestBody"]
    assert set(either["content"]) == {"application/json", "multipart/form-data"}


def test_every_link_leads_to_an_operation_and_fills_its_parameters(settings: Settings) -> None:
    doc = document(create_app(settings).routes)
    operations = {
        op["operationId"]: {p["name"] for p in op.get("parameters", [])}
        for item in doc["paths"].values()
        for op in item.values()
    }
    links = {
        name: link
        for item in doc["paths"].values()
        for op in item.values()
        for name, link in op["responses"]["200"].get("links", {}).items()
    }

    assert set(links) == {"rate_limits", "update"}  # a project's, then one of its limits
    for link in links.values():
        assert set(link["parameters"]) <= operations[link["operationId"]], link
        assert all(
            v.startswith(("$response.body#/", "$request.path."))
            for v in link["parameters"].values()
        )


async def test_an_error_answer_is_the_documented_envelope(http: httpx2.AsyncClient) -> None:
    reply = await http.post("/responses", content=b"{not json")

    assert reply.status_code == 400
    ErrorEnvelope.model_validate_json(reply.content)
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}


async def test_the_docs_page_is_self_contained(http: httpx2.AsyncClient) -> None:
    reply = await http.get(f"{ROOT}/docs")

    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/html")
    page = reply.text
    assert re.findall(r"https?://", page, flags=re.IGNORECASE) == []  # no other host
    assert re.findall(r"<(?:script|link|img|iframe)[^>]*(?:src|href)=", page) == []
    assert 'fetch("openapi.json")' in page
    policy = reply.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    (script,) = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy  # the inline script runs; nothing else would


@pytest.mark.parametrize("path", ["/openapi.json", "/docs"])
async def test_the_document_and_page_are_open_with_keys_on(
    raw: httpx2.AsyncClient, path: str
) -> None:
    assert (await raw.get(f"{ROOT}{path}")).status_code == 200
    assert (await raw.get("/models")).status_code == 401  # the API itself is not


# --- what the server answers is what the document says ------------------------------------------


def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of ``schema`` whose ``#/components/...`` refs resolve in ``doc``."""
    registry: Registry[Any] = Registry().with_resource(
        "urn:openapi", Resource.from_contents(doc, default_specification=DRAFT202012)
    )
    rooted = json.loads(json.dumps(schema).replace('"#/components/', '"urn:openapi#/components/'))
    return Draft202012Validator(rooted, registry=registry)


def conforms(doc: dict[str, Any], method: str, path: str, reply: httpx2.Response) -> int:
    """Check ``reply`` against what the document says ``method path`` answers with its status
    (each event of a stream); the number of JSON values checked."""
    answers = doc["paths"][path][method.lower()]["responses"]
    answer = answers.get(str(reply.status_code), answers["default"])
    media = reply.headers["content-type"].split(";")[0].strip()
    content = answer["content"]
    assert media in content or "*/*" in content, (path, media, list(content))
    schema = content.get(media, content.get("*/*"))["schema"]
    if media == "text/event-stream":
        data_schema = schema["else"]["properties"]["data"]["contentSchema"]
        events = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        for data in events[:-1]:
            _validator(doc, data_schema).validate(json.loads(data))
        return len(events) - 1
    if media == "application/json":
        _validator(doc, schema).validate(reply.json())
        return 1
    return 0


async def test_what_the_server_answers_is_what_the_document_says(
    http: httpx2.AsyncClient, app: Starlette, backend: FakeBackend
) -> None:
    """The success paths, which random requests rarely reach (they name no served model)."""
    doc = document(app.routes)
    model = backend.model
    checked: list[str] = []

    async def call(method: str, path: str, template: str | None = None, **kw: Any) -> Any:
        reply = await http.request(method, path, **kw)
        assert reply.status_code == 200, (method, path, reply.text)
        template = (template or path).split("?")[0]
        assert conforms(doc, method, "/v1" + template, reply) >= 0
        checked.append(f"{method} {template}")
        return reply.json() if "json" in reply.headers["content-type"] else reply.text

    created = await call("POST", "/responses", json={"model": model, "input": "hi"})
    rid = created["id"]
    await call("POST", "/responses", json={"model": model, "input": "hi", "stream": True})
    await call("GET", f"/responses/{rid}", "/responses/{response_id}")
    await call("GET", f"/responses/{rid}/input_items", "/responses/{response_id}/input_items")
    await call("GET", f"/responses/{rid}/trace", "/responses/{response_id}/trace")
    await call("GET", "/responses")
    await call("POST", "/responses/input_tokens", json={"model": model, "input": "hi"})
    background = await call(
        "POST", "/responses", json={"model": model, "input": "hi", "background": True}
    )
    await call("GET", f"/responses/{background['id']}?stream=true", "/responses/{response_id}")
    await call("DELETE", f"/responses/{rid}", "/responses/{response_id}")
    messages = [{"role": "user", "content": "hi"}]
    await call("POST", "/chat/completions", json={"model": model, "messages": messages})
    await call(
        "POST", "/chat/completions", json={"model": model, "messages": messages, "stream": True}
    )
    await call("POST", "/embeddings", json={"model": FAKE_EMBEDDING_MODEL, "input": ["a", "b"]})
    conversation = await call("POST", "/conversations", json={"items": messages})
    items = f"/conversations/{conversation['id']}/items"
    await call("GET", items, "/conversations/{conversation_id}/items")
    uploaded = await call(
        "POST", "/files", files={"file": ("a.txt", b"kettles boil")}, data={"purpose": "assistants"}
    )
    await call("GET", "/files")
    await call("GET", f"/files/{uploaded['id']}/content", "/files/{file_id}/content")
    store = await call("POST", "/vector_stores", json={"name": "s", "file_ids": [uploaded["id"]]})
    await call("GET", "/vector_stores")
    await call(
        "POST",
        f"/vector_stores/{store['id']}/search",
        "/vector_stores/{vector_store_id}/search",
        json={"query": "kettle"},
    )
    await call("POST", "/prompts", json={"prompt": "Be {{x}}."})
    await call("GET", "/prompts")
    await call("POST", "/organization/projects", json={"name": "p"})
    await call("GET", "/organization/projects")
    await call("GET", "/organization/usage/completions?start_time=0&bucket_width=1d&limit=2")
    await call("GET", "/organization/audit_logs")
    await call("GET", "/models")
    await call("GET", "/health")
    await call("GET", "/health/ready")
    await call("GET", "/webhook_event_types")
    await call("GET", "/shields")

    assert len(checked) == 32


def test_a_json_schema_text_format_is_documented_as_it_is_echoed(settings: Settings) -> None:
    """Found by checking answers against the document: a serializer typed ``dict[str, object]``
    made the echoed ``text.format`` any object (so every format matched it)."""
    schemas = document(create_app(settings).routes)["components"]["schemas"]

    echoed = schemas["TextFormatJsonSchema"]  # one schema: read and echoed alike
    assert "TextFormatJsonSchema-Output" not in schemas
    assert echoed["properties"]["type"]["const"] == "json_schema"
    assert "schema" in echoed["properties"]
    assert "schema_" not in echoed["properties"]
