"""``/v1/webhook_endpoints`` (the ``openai`` SDK's ``client.webhooks``) and
``/v1/webhook_event_types``; ``.../deliveries`` lists what was sent to an endpoint and what each
attempt got (agentloom's own)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.webhooks import (
    CreateWebhookEndpointRequest,
    DeletedWebhookEndpoint,
    RotateSecretRequest,
    TestWebhookRequest,
    UpdateWebhookEndpointRequest,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEndpointTestResult,
    WebhookEndpointWithSecret,
    WebhookEventTypeList,
)
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, LIMIT, ApiRoute, Op
from agentloom.services.jobs.webhooks import WebhooksService

ENDPOINT = "/v1/webhook_endpoints/{webhook_endpoint_id}"


def _webhooks(request: Request) -> WebhooksService:
    return runtime_of(request).webhooks


def _id(request: Request) -> str:
    value: str = request.path_params["webhook_endpoint_id"]
    return value


async def create(request: Request) -> Response:
    body = await parse_body(request, CreateWebhookEndpointRequest)
    return json_response(await _webhooks(request).create(body))


async def list_endpoints(request: Request) -> Response:
    params = request.query_params
    page = await _webhooks(request).list_endpoints(
        optional_param(params, "after"), limit_param(params)
    )
    return json_response(page)


async def retrieve(request: Request) -> Response:
    return json_response(await _webhooks(request).get(_id(request)))


async def update(request: Request) -> Response:
    body = await parse_body(request, UpdateWebhookEndpointRequest, empty="{}")
    return json_response(await _webhooks(request).update(_id(request), body))


async def delete(request: Request) -> Response:
    return json_response(await _webhooks(request).delete(_id(request)))


async def rotate_secret(request: Request) -> Response:
    body = await parse_body(request, RotateSecretRequest, empty="{}")
    return json_response(await _webhooks(request).rotate_secret(_id(request), body))


async def test(request: Request) -> Response:
    body = await parse_body(request, TestWebhookRequest)
    return json_response(await _webhooks(request).test(_id(request), body))


async def deliveries(request: Request) -> Response:
    params = request.query_params
    after, limit = optional_param(params, "after"), limit_param(params)
    return json_response(await _webhooks(request).deliveries(_id(request), after, limit))


async def event_types(request: Request) -> Response:
    return json_response(_webhooks(request).event_types())


routes = [
    ApiRoute(
        "/v1/webhook_endpoints",
        GET=Op(list_endpoints, returns=ListPage[WebhookEndpoint], query=(AFTER, LIMIT)),
        POST=Op(create, body=CreateWebhookEndpointRequest, returns=WebhookEndpointWithSecret),
    ),
    ApiRoute(
        ENDPOINT,
        GET=Op(retrieve, returns=WebhookEndpoint),
        POST=Op(
            update, body=UpdateWebhookEndpointRequest, empty_body=True, returns=WebhookEndpoint
        ),
        DELETE=Op(delete, returns=DeletedWebhookEndpoint),
    ),
    ApiRoute(
        ENDPOINT + "/rotate_secret",
        POST=Op(
            rotate_secret,
            body=RotateSecretRequest,
            empty_body=True,
            returns=WebhookEndpointWithSecret,
        ),
    ),
    ApiRoute(
        ENDPOINT + "/test",
        POST=Op(
            test,
            body=TestWebhookRequest,
            returns=WebhookEndpointTestResult,
            summary="Send a test event to the endpoint",
        ),
    ),
    ApiRoute(
        ENDPOINT + "/deliveries",
        GET=Op(
            deliveries,
            returns=ListPage[WebhookDelivery],
            query=(AFTER, LIMIT),
            summary="What was sent to the endpoint, and what each attempt got",
        ),
    ),
    ApiRoute("/v1/webhook_event_types", GET=Op(event_types, returns=WebhookEventTypeList)),
]
