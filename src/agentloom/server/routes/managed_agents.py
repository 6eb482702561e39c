"""``/v1/managed-agents``: agents that live on the server (OpenJarvis's API): create, list,
retrieve, update, delete; messages (queued, or answered at once with the reply streamed); runs
(durable jobs, followed like a background response); the agent's state and task list."""

from __future__ import annotations

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.managed_agent_stream import AgentStreamData
from agentloom.api.managed_agents import (
    AgentMessage,
    AgentMessagePage,
    AgentRun,
    AgentState,
    AgentTask,
    AgentTaskList,
    CreateManagedAgentRequest,
    CreateTaskRequest,
    DeletedAgentTask,
    DeletedManagedAgent,
    ManagedAgent,
    ManagedAgentPage,
    SendMessageRequest,
    UpdateManagedAgentRequest,
    UpdateTaskRequest,
)
from agentloom.server.body import parse_body
from agentloom.server.query import (
    MAX_SEQUENCE,
    limit_param,
    optional_param,
    order_param,
    starting_after_param,
)
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import PAGE, ApiRoute, Op, Param
from agentloom.server.sse import EventStream, encode_frames
from agentloom.services.managed_agents.wiring import ManagedAgentServices

AGENT = "/v1/managed-agents/{managed_agent_id}"


def _managed(request: Request) -> ManagedAgentServices:
    return runtime_of(request).managed


def _agent_id(request: Request) -> str:
    value: str = request.path_params["managed_agent_id"]
    return value


# --- agents ----------------------------------------------------------------------------------


async def create_agent(request: Request) -> Response:
    body = await parse_body(request, CreateManagedAgentRequest)
    return json_response(await _managed(request).agents.create(body))


async def list_agents(request: Request) -> Response:
    params = request.query_params
    agents = _managed(request).agents
    page = await agents.list(
        optional_param(params, "after"), limit_param(params), order_param(params)
    )
    return json_response(page)


async def retrieve_agent(request: Request) -> Response:
    return json_response(await _managed(request).agents.get(_agent_id(request)))


async def update_agent(request: Request) -> Response:
    body = await parse_body(request, UpdateManagedAgentRequest, empty="{}")
    return json_response(await _managed(request).agents.update(_agent_id(request), body))


async def delete_agent(request: Request) -> Response:
    return json_response(await _managed(request).agents.delete(_agent_id(request)))


async def agent_state(request: Request) -> Response:
    return json_response(await _managed(request).agents.state(_agent_id(request)))


# --- messages --------------------------------------------------------------------------------


async def send_message(request: Request) -> Response:
    body = await parse_body(request, SendMessageRequest)
    messages = _managed(request).messages
    if body.stream:
        turn = await messages.stream(_agent_id(request), body)
        # a client gone before the stream started never runs it: release what it holds
        return EventStream(encode_frames(turn.frames), background=BackgroundTask(turn.release))
    return json_response(await messages.queue(_agent_id(request), body))


async def list_messages(request: Request) -> Response:
    params = request.query_params
    page = await _managed(request).messages.list(
        _agent_id(request),
        optional_param(params, "after"),
        limit_param(params),
        order_param(params),
    )
    return json_response(page)


# --- runs ------------------------------------------------------------------------------------


async def run_agent(request: Request) -> Response:
    return json_response(await _managed(request).runs.start(_agent_id(request)))


async def list_runs(request: Request) -> Response:
    params = request.query_params
    runs, has_more = await _managed(request).runs.page(
        _agent_id(request),
        optional_param(params, "after"),
        limit_param(params),
        order_param(params),
    )
    return json_response(ListPage.of(runs, has_more=has_more))


async def retrieve_run(request: Request) -> Response:
    runs = _managed(request).runs
    run_id: str = request.path_params["run_id"]
    run = await runs.get(_agent_id(request), run_id)  # a 404 before any stream
    if request.query_params.get("stream") in ("true", "1"):
        after = starting_after_param(request.query_params, "a frame's number")
        return EventStream(encode_frames(runs.follow(_agent_id(request), run_id, after)))
    return json_response(run)


async def cancel_run(request: Request) -> Response:
    run_id: str = request.path_params["run_id"]
    return json_response(await _managed(request).runs.cancel(_agent_id(request), run_id))


# --- tasks -----------------------------------------------------------------------------------


def _task_id(request: Request) -> str:
    value: str = request.path_params["task_id"]
    return value


async def create_task(request: Request) -> Response:
    body = await parse_body(request, CreateTaskRequest)
    return json_response(await _managed(request).tasks.create(_agent_id(request), body))


async def list_tasks(request: Request) -> Response:
    status = optional_param(request.query_params, "status")
    return json_response(await _managed(request).tasks.list(_agent_id(request), status))


async def retrieve_task(request: Request) -> Response:
    tasks = _managed(request).tasks
    return json_response(await tasks.get(_agent_id(request), _task_id(request)))


async def update_task(request: Request) -> Response:
    body = await parse_body(request, UpdateTaskRequest, empty="{}")
    tasks = _managed(request).tasks
    return json_response(await tasks.update(_agent_id(request), _task_id(request), body))


async def delete_task(request: Request) -> Response:
    tasks = _managed(request).tasks
    return json_response(await tasks.delete(_agent_id(request), _task_id(request)))


_FOLLOW = (
    Param("stream", {"type": "boolean"}, "Stream the run's frames: stored ones, then live."),
    Param(
        "starting_after",
        {"type": "integer", "minimum": 0, "maximum": MAX_SEQUENCE},
        "With stream: start after the frame with this number (0 is the first).",
    ),
)
_STATUS = Param("status", {"type": "string"}, "Only tasks with this status.")
_STREAMED = "With `stream: true` the reply streams as the model writes it (see the docs)."
_UPDATE = "`config` replaces the whole configuration."

routes = [
    ApiRoute(
        "/v1/managed-agents",
        GET=Op(list_agents, returns=ManagedAgentPage, query=PAGE),
        POST=Op(create_agent, body=CreateManagedAgentRequest, returns=ManagedAgent),
    ),
    ApiRoute(
        AGENT,
        GET=Op(retrieve_agent, returns=ManagedAgent),
        PATCH=Op(
            update_agent,
            body=UpdateManagedAgentRequest,
            empty_body=True,
            returns=ManagedAgent,
            description=_UPDATE,
        ),
        POST=Op(
            update_agent,
            body=UpdateManagedAgentRequest,
            empty_body=True,
            returns=ManagedAgent,
            description=_UPDATE,
        ),
        DELETE=Op(delete_agent, returns=DeletedManagedAgent),
    ),
    ApiRoute(
        AGENT + "/messages",
        GET=Op(list_messages, returns=AgentMessagePage, query=PAGE),
        POST=Op(
            send_message,
            body=SendMessageRequest,
            returns=AgentMessage,
            stream=AgentStreamData,
            description=_STREAMED,
        ),
    ),
    ApiRoute(
        AGENT + "/run",
        POST=Op(run_agent, returns=AgentRun, summary="Run the agent over its queued messages"),
    ),
    ApiRoute(AGENT + "/runs", GET=Op(list_runs, returns=ListPage[AgentRun], query=PAGE)),
    ApiRoute(
        AGENT + "/runs/{run_id}",
        GET=Op(retrieve_run, returns=AgentRun, stream=AgentStreamData, query=_FOLLOW),
    ),
    ApiRoute(
        AGENT + "/runs/{run_id}/cancel",
        POST=Op(
            cancel_run,
            returns=AgentRun,
            summary="Stop a queued or running run (an ended one is returned as it is)",
        ),
    ),
    ApiRoute(AGENT + "/state", GET=Op(agent_state, returns=AgentState)),
    ApiRoute(
        AGENT + "/tasks",
        GET=Op(list_tasks, returns=AgentTaskList, query=(_STATUS,)),
        POST=Op(create_task, body=CreateTaskRequest, returns=AgentTask),
    ),
    ApiRoute(
        AGENT + "/tasks/{task_id}",
        GET=Op(retrieve_task, returns=AgentTask),
        PATCH=Op(update_task, body=UpdateTaskRequest, empty_body=True, returns=AgentTask),
        POST=Op(update_task, body=UpdateTaskRequest, empty_body=True, returns=AgentTask),
        DELETE=Op(delete_task, returns=DeletedAgentTask),
    ),
]
