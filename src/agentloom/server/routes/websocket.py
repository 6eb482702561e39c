"""WebSocket mode: ``ws://HOST/v1/responses``, one persistent connection for many responses.

The client sends ``{"type": "response.create", ...create body...}`` frames; each response streams
back as the events SSE carries (one JSON text frame each, same order and sequence numbers),
ending with its terminal event. One response runs at a time on a connection. Frames keep being
read while it streams, so a second ``response.create`` is refused without disturbing it, and a
client that goes away cancels it (the engine stores it ``cancelled``, as for SSE).

The connection keeps the chain of its latest response (OpenAI keeps only the latest), so
``store: false`` + ``previous_response_id`` continues it without the store; a continuation that
fails evicts it. A mistake is answered with an ``error`` frame in OpenAI's ``ResponseWsError``
shape, with the status and error the same mistake gets over HTTP. Only the age limit
(``server.websocket_max_age``) closes the connection, after the running response finished.
"""

from __future__ import annotations

import asyncio
import json
import logging

import anyio
from anyio.abc import TaskGroup
from pydantic import TypeAdapter, ValidationError
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from agentloom.api import events as ev
from agentloom.api.limits import RequestLimits
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import Response
from agentloom.auth.actor import current_principal
from agentloom.engine.prepare import LocalChain, Prepared
from agentloom.errors import (
    AgentloomError,
    ConflictError,
    InvalidRequestError,
    PayloadTooLargeError,
)
from agentloom.ids import new_id
from agentloom.offload import off_loop
from agentloom.request_entry import CLIENT_CLOSED, RequestEntry, current_entry, logging_request
from agentloom.server.body import OFF_LOOP_BYTES, screen
from agentloom.server.errors import envelope, status_and_type, validation_error
from agentloom.server.runtime import Runtime, runtime_of
from agentloom.tenancy import current_project

log = logging.getLogger(__name__)

LIMIT_CODE = "websocket_connection_limit_reached"
CLOSE_REASON = "connection age limit reached: open a new connection to continue"
_TERMINAL = (ev.ResponseCompleted, ev.ResponseIncomplete, ev.ResponseFailed)
_OBJECT: TypeAdapter[dict[str, object]] = TypeAdapter(dict[str, object])

# Create-body fields that mean nothing on a WebSocket, each refused with the reason.
_REFUSED_FIELDS = {
    "stream": "Responses over WebSocket always stream: do not send 'stream'.",
    "stream_options": "'stream_options' cannot be used over WebSocket.",
    "background": "Background mode is not available over WebSocket.",
    "stream_id": (
        "WebSocket lanes ('stream_id') are not supported by this server: one response runs at "
        "a time on a connection."
    ),
}
_STEER = (
    "'response.steer' is not supported by this server: wait for the response's terminal event, "
    "then continue it with a new 'response.create' naming it in 'previous_response_id'."
)


async def responses_socket(websocket: WebSocket) -> None:
    runtime = runtime_of(websocket)
    await websocket.accept()
    try:
        async with anyio.create_task_group() as tasks:
            connection = _Connection(websocket, runtime, tasks)
            tasks.start_soon(connection.age_limit)
            await connection.receive_all()
            tasks.cancel_scope.cancel()  # the client left: its running response is cancelled
    except* WebSocketDisconnect:
        pass  # the client left while a frame was being sent to it: the same, seen from a send


class _Connection:
    """One client's socket: its frames, its running response, its latest chain, its age."""

    def __init__(self, websocket: WebSocket, runtime: Runtime, tasks: TaskGroup) -> None:
        self._ws = websocket
        self._responses = runtime.responses
        self._usage = runtime.usage
        self._budgets = runtime.budgets
        self._tasks = tasks
        self._max_body = runtime.settings.server.max_body_bytes
        self._limits = runtime.settings.limits
        self._max_age = runtime.settings.server.websocket_max_age
        self._local: LocalChain | None = None  # the latest response's chain
        self._busy: object | None = None  # a response is prepared or runs (until its end)
        self._expired = False
        self._closed = False
        # Frames, and the close, one at a time (asyncio's lock: free when uncontended, and
        # taken for every event).
        self._lock = asyncio.Lock()

    async def receive_all(self) -> None:
        """Answer the client's frames until it goes away."""
        while True:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            await self._answer(text if text is not None else message.get("bytes") or b"")

    async def age_limit(self) -> None:
        await anyio.sleep(self._max_age)
        self._expired = True
        if self._busy is None:
            await self._close_for_age()  # else the running response closes when it ends

    # --- a frame -----------------------------------------------------------------------------

    async def _answer(self, raw: str | bytes) -> None:
        """One frame: a request of the traffic, logged and held to the spend limits as an
        HTTP ``POST /v1/responses`` is (its row goes to the log when its response ends)."""
        with logging_request(_opened()) as entry:
            data: dict[str, object] | None = None
            try:
                self._budgets.check(entry.project_id)
                large = len(raw) >= OFF_LOOP_BYTES
                data = await off_loop(large, decode_frame, raw, self._max_body, self._limits)
                await self._start(await off_loop(large, create_request, data, raw, self._limits))
            except AgentloomError as exc:
                self._evict(data)
                entry.status, kind = status_and_type(exc)
                entry.error_code = exc.code or kind
                self._logged(entry)
                await self._send(error_frame(exc))
                await self._after()
            except Exception as exc:  # the edge's last resort, like the app's 500 handler
                log.exception("unhandled error on a WebSocket /v1/responses frame", exc_info=exc)
                entry.error_code = "server_error"
                self._logged(entry)
                await self._send(_internal_error_frame())
                await self._after()

    def _logged(self, entry: RequestEntry) -> None:
        entry.ended(entry.status)
        self._usage.log(entry)

    async def _start(self, request: CreateResponseRequest) -> None:
        if self._expired:
            raise self._limit_reached()
        if self._busy is not None:
            raise ConflictError(
                "A response is already in flight on this connection: wait for its terminal "
                "event before sending another 'response.create'.",
                code="response_already_in_flight",
            )
        busy = self._busy = object()
        try:
            prepared = await self._responses.prepare(request, local=self._local)
        except BaseException:
            self._busy = None
            raise
        self._tasks.start_soon(self._run, prepared, busy)

    def _evict(self, data: dict[str, object] | None) -> None:
        """A refused continuation of the latest response evicts its chain."""
        if data is None or self._local is None or data.get("type") != "response.create":
            return
        if data.get("previous_response_id") == self._local.response_id:
            self._local = None

    # --- a response --------------------------------------------------------------------------

    async def _run(self, prepared: Prepared, busy: object) -> None:
        entry = current_entry()  # the frame's (the task runs in a copy of its context)
        assert entry is not None, "started by _answer"
        entry.status = 200
        try:
            await self._stream(prepared)
        except WebSocketDisconnect:
            entry.status = CLIENT_CLOSED
            raise
        except Exception as exc:  # the edge's last resort, like the app's 500 handler
            log.exception("unhandled error in a WebSocket /v1/responses stream", exc_info=exc)
            entry.status, entry.error_code = 500, "server_error"
            if self._busy is busy:  # it failed before its terminal event
                self._local, self._busy = None, None
                await self._send(_internal_error_frame())
        finally:
            self._logged(entry)
            await self._responses.discard(prepared)  # a run cancelled before it began
        await self._after()

    async def _stream(self, prepared: Prepared) -> None:
        events = self._responses.stream(prepared)
        try:
            async for event in events:
                if isinstance(event, _TERMINAL):
                    await self._end(prepared, event.response, event.model_dump_json())
                else:
                    await self._send(event.model_dump_json())
        finally:
            await events.aclose()  # a failed send leaves it at a yield: finalise it now

    async def _end(self, prepared: Prepared, response: Response, frame: str) -> None:
        """The terminal event (the response is stored by now). The connection takes the next
        ``response.create`` from before this frame is sent: a client continuing at once is not
        refused as in flight."""
        entry = current_entry()
        if entry is not None and response.error is not None:
            entry.error_code = response.error.code
        async with self._lock:
            self._keep(prepared, response)
            self._busy = None
            await self._send_now(frame)

    def _keep(self, prepared: Prepared, response: Response) -> None:
        """Keep the latest response's chain. A failed response leaves nothing to continue; one
        run on a conversation is continued from the store, as over HTTP (its chain there is its
        own input and output, not the conversation)."""
        if response.status == "failed" or prepared.hold is not None:
            self._local = None
        else:
            self._local = self._responses.local_chain(prepared, response)

    # --- sending and closing -----------------------------------------------------------------

    async def _send(self, frame: str) -> None:
        async with self._lock:
            await self._send_now(frame)

    async def _send_now(self, frame: str) -> None:
        if not self._closed:
            await self._ws.send_text(frame)

    async def _after(self) -> None:
        """Once nothing runs any more, a connection past its age closes."""
        if self._expired and self._busy is None:
            await self._close_for_age()

    async def _close_for_age(self) -> None:
        async with self._lock:
            if self._closed:
                return
            await self._send_now(error_frame(self._limit_reached()))
            self._closed = True
            await self._ws.close(1000, CLOSE_REASON)
        self._tasks.cancel_scope.cancel()

    def _limit_reached(self) -> InvalidRequestError:
        return InvalidRequestError(
            f"Responses WebSocket connection limit reached ({self._max_age:g} seconds). Create "
            "a new WebSocket connection to continue.",
            code=LIMIT_CODE,
        )


# --- frames ------------------------------------------------------------------------------------


def _opened() -> RequestEntry:
    """A frame's request log entry, as the connection's project and key."""
    entry = RequestEntry.opened(new_id("req"), "responses")
    entry.project_id = current_project()
    principal = current_principal()
    entry.key_id = None if principal is None else principal.key_id
    return entry


def decode_frame(raw: str | bytes, limit: int, limits: RequestLimits) -> dict[str, object]:
    """A frame as a JSON object, within the body size limit and ``[limits]``."""
    encoded = raw if isinstance(raw, bytes) else raw.encode()
    if len(encoded) > limit:
        raise PayloadTooLargeError(f"The frame is larger than the limit of {limit} bytes.")
    screen(encoded, limits)
    try:
        return _OBJECT.validate_json(raw)
    except ValidationError as exc:
        if exc.errors(include_url=False)[0]["type"] == "json_invalid":
            raise validation_error(exc) from None  # the same invalid_json error as over HTTP
        raise InvalidRequestError(
            'Each frame must be a JSON object: {"type": "response.create", ...}.',
            code="invalid_value",
        ) from None


def create_request(
    data: dict[str, object], raw: str | bytes, limits: RequestLimits
) -> CreateResponseRequest:
    """The request a ``response.create`` frame carries, validated as the HTTP body is."""
    _check_type(data.get("type"))
    for field, reason in _REFUSED_FIELDS.items():
        if field in data:
            raise InvalidRequestError(reason, param=field, code="unsupported_parameter")
    if data.get("generate") is False:
        raise InvalidRequestError(
            "Warm-up requests ('generate': false) are not supported by this server.",
            param="generate",
            code="unsupported_parameter",
        )
    try:
        return CreateResponseRequest.model_validate_json(raw, context=limits)
    except ValidationError as exc:
        raise validation_error(exc, data) from None


def _check_type(kind: object) -> None:
    if kind == "response.create":
        return
    if kind is None:
        raise InvalidRequestError(
            "Missing required parameter: 'type'.", param="type", code="missing_required_parameter"
        )
    if kind == "response.steer":
        raise InvalidRequestError(_STEER, param="type", code="unsupported_event_type")
    raise InvalidRequestError(
        f"Invalid value for 'type': {json.dumps(kind)}. The client event this server accepts "
        "is 'response.create'.",
        param="type",
        code="invalid_value",
    )


def error_frame(exc: AgentloomError) -> str:
    """An ``error`` frame: the HTTP status and OpenAI error envelope of ``exc``. The
    specification requires a code in every frame: one HTTP leaves null is the error's type."""
    status, kind = status_and_type(exc)
    body = envelope(exc.stated(), type=kind, param=exc.param, code=exc.code or kind)
    return json.dumps({"type": "error", "status": status, **body})


def _internal_error_frame() -> str:
    message = "The server had an error while processing your request."
    body = envelope(message, type="server_error", code="server_error")
    return json.dumps({"type": "error", "status": 500, **body})


routes = [WebSocketRoute("/v1/responses", responses_socket)]
