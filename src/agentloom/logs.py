"""The server's logs: text for a terminal, or one JSON object a line (``--log-format json``).

Every record carries what it was logged for, from the context of the work that logged it: the
request id (``x-request-id``), the project, the response id, and the trace and span ids when
tracing is on. Records hold no secrets (keys, tokens, headers are never logged; a URL's
credentials are scrubbed from every line, whoever logged it) and no prompt or answer text,
unless ``[logging] content = true`` asks for the text of each ended response.

``agentloom.access`` logs one line per HTTP request (method, route, status, milliseconds) when
asked (``--access-log``); ``agentloom.responses`` one line per ended response (model, status,
tokens, milliseconds).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Final, Literal

from agentloom import tenancy, tracing
from agentloom.api.items import Message, StoredItem
from agentloom.api.response import Response
from agentloom.redact import redact_urls

__all__ = [
    "ACCESS",
    "RESPONSES",
    "JsonFormatter",
    "LogFormat",
    "TextFormatter",
    "access",
    "configure",
    "request_id",
    "response_ended",
    "set_request_id",
    "set_response_id",
]

LogFormat = Literal["text", "json"]
ACCESS: Final = logging.getLogger("agentloom.access")
RESPONSES: Final = logging.getLogger("agentloom.responses")
TEXT_FORMAT: Final = "%(levelname)s %(name)s: %(message)s"

_request_id: ContextVar[str | None] = ContextVar("agentloom_request_id", default=None)
_response_id: ContextVar[str | None] = ContextVar("agentloom_response_id", default=None)
# what every LogRecord has: anything else on a record was given as `extra` and is logged
_STANDARD: Final = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def set_request_id(value: str) -> None:
    _request_id.set(value)


def request_id() -> str | None:
    return _request_id.get()


def set_response_id(value: str) -> None:
    """The response the current work runs (a request's, or a background job's)."""
    _response_id.set(value)


def response_ended(
    response: Response,
    model_calls: int,
    started: float,
    inputs: Sequence[StoredItem] | None = None,
) -> None:
    """The line of one ended response; ``inputs``: its new input items, whose text is logged
    with the answer's (``[logging] content``)."""
    usage = response.usage
    extra: dict[str, object] = {
        "model": response.model,
        "status": response.status,
        "model_calls": model_calls,
        "input_tokens": usage.input_tokens if usage is not None else 0,
        "output_tokens": usage.output_tokens if usage is not None else 0,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if response.error is not None:
        extra["error_code"] = response.error.code
    if inputs is not None:
        extra["input_text"] = [
            {"role": item.role, "text": item.text()} for item in inputs if isinstance(item, Message)
        ]
        extra["output_text"] = response.output_text()
    RESPONSES.info(
        "response %s %s (%s, %d ms)",
        response.id,
        response.status,
        response.model,
        extra["duration_ms"],
        extra=extra,
    )


def access(method: str, path: str, status: int, seconds: float) -> None:
    """The line of one HTTP request answered (``agentloom.access``, when asked for)."""
    milliseconds = round(seconds * 1000, 1)
    extra = {"method": method, "path": path, "status": status, "duration_ms": milliseconds}
    ACCESS.info("%s %s %d (%s ms)", method, path, status, milliseconds, extra=extra)


class TextFormatter(logging.Formatter):
    """``TEXT_FORMAT``, URL credentials scrubbed."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        return redact_urls(super().format(record))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact_urls(self._line(record))

    def _line(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_context())
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def _context() -> dict[str, str]:
    found: dict[str, str] = {}
    request = _request_id.get()
    if request is not None:
        found["request_id"] = request
    found["project"] = tenancy.current_project()
    response = _response_id.get()
    if response is not None:
        found["response_id"] = response
    active = tracing.active()
    ids = active.ids() if active is not None else None
    if ids is not None:
        found["trace_id"], found["span_id"] = ids
    return found


def _timestamp(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


# uvicorn's start-up lines, which ``agentloom serve``'s banner says better (server/banner.py)
_UVICORN_STARTUP = (
    "Started server process",
    "Waiting for application startup",
    "Application startup complete",
    "Uvicorn running on",
    "Started parent process",
)


class UvicornStartupFilter(logging.Filter):
    """Demotes uvicorn's start-up lines to debug (shown only when debug lines are)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not str(record.msg).startswith(_UVICORN_STARTUP):
            return True
        if not logging.getLogger().isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def configure(level: str, log_format: LogFormat = "text", *, access: bool = False) -> None:
    """The process's logging: ``level`` for everything, lines in ``log_format`` on stderr;
    ``access``: a line per HTTP request."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    startup = logging.getLogger("uvicorn.error")
    startup.filters[:] = [f for f in startup.filters if not isinstance(f, UvicornStartupFilter)]
    startup.addFilter(UvicornStartupFilter())
    for chatty in ("httpx", "httpx2", "openai"):  # one INFO line per upstream request otherwise
        logging.getLogger(chatty).setLevel(max(logging.WARNING, root.level))
    # a WARNING for each malformed multipart body a client sends (answered with a 400 anyway):
    # any client could fill the log at will
    logging.getLogger("python_multipart").setLevel(max(logging.ERROR, root.level))
    ACCESS.setLevel(logging.INFO if access else logging.WARNING)
