"""``/v1/mcp_connectors`` (agentloom extensions): a project's MCP connectors configured, listed,
read and deleted (:mod:`agentloom.services.mcp_connectors`); credentials are never shown."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.mcp_connectors import McpConnector, McpConnectorDeleted, McpConnectorRequest
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op
from agentloom.services.mcp_connectors import McpConnectors


def _connectors(request: Request) -> McpConnectors:
    connectors = runtime_of(request).mcp_connectors
    if connectors is None:
        raise InvalidRequestError("This server keeps no MCP connectors.")
    return connectors


def _id(request: Request) -> str:
    return str(request.path_params["connector_id"])


async def configure(request: Request) -> Response:
    body = await parse_body(request, McpConnectorRequest)
    return json_response(await _connectors(request).configure(body))


async def list_connectors(request: Request) -> Response:
    found = await _connectors(request).list()
    return json_response(ListPage[McpConnector].of(found, has_more=False))


async def retrieve(request: Request) -> Response:
    return json_response(await _connectors(request).get(_id(request)))


async def delete(request: Request) -> Response:
    return json_response(await _connectors(request).delete(_id(request)))


routes = [
    ApiRoute(
        "/v1/mcp_connectors",
        GET=Op(list_connectors, returns=ListPage[McpConnector]),
        POST=Op(
            configure,
            body=McpConnectorRequest,
            returns=McpConnector,
            summary="Configure an MCP connector (its id again replaces it)",
        ),
    ),
    ApiRoute(
        "/v1/mcp_connectors/{connector_id}",
        GET=Op(retrieve, returns=McpConnector),
        DELETE=Op(delete, returns=McpConnectorDeleted),
    ),
]
