"""``GET /openapi.json`` and ``GET /docs``: the document covers every route, is valid OpenAPI
3.1, is made from the wire models the server validates and answers with, and is open (with
keys on too); the page is self-contained (nothing from another host)."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import httpx2
import pytest
from openapi_spec_validator import validate
from pydantic import TypeAdapter
from starlette.applications import Starlette
from starlette.routing import Route, WebSocketRoute

from agentloom.api.errors import ErrorEnvelope
from agentloom.api.requests import CreateResponseRequest
from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document, undocumented
from agentloom.server.spec import ApiRoute

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
