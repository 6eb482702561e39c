"""The app's exception handlers, applied around the router at less cost per request.

Starlette's ``ExceptionMiddleware`` makes a ``Request`` and a wrapped app (a coroutine of its
own) for every HTTP request before anything fails; :class:`HandledErrors` does the same work
only when an exception comes: its handlers, found as Starlette finds them, answer it if the
answer has not started. WebSockets (and everything else) go through Starlette's own path.
:class:`App` is Starlette with this middleware in place of Starlette's.
"""

from __future__ import annotations

from typing import Any

from starlette._exception_handler import _lookup_exception_handler
from starlette._utils import is_async_callable
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.types import ASGIApp, ExceptionHandler, Message, Receive, Scope, Send

__all__ = ["App", "HandledErrors"]

_STARTED = "Caught handled exception, but response already started."  # Starlette's words


class HandledErrors(ExceptionMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        scope["starlette.exception_handlers"] = (self._exception_handlers, self._status_handlers)
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise
            if started:
                raise RuntimeError(
                    "Caught handled exception, but response already started."
                ) from exc
            request = Request(scope, receive, send)
            if is_async_callable(handler):
                response = await handler(request, exc)  # type: ignore[arg-type]
            else:
                response = await run_in_threadpool(handler, request, exc)
            if response is not None:
                await response(scope, receive, sending)
            exc.__traceback__ = None  # reused exception instances accumulate tracebacks

    def _handler(self, exc: Exception) -> ExceptionHandler | None:
        handler = None
        if isinstance(exc, HTTPException):
            handler = self._status_handlers.get(exc.status_code)
        return handler or _lookup_exception_handler(self._exception_handlers, exc)


class App(Starlette):
    """Starlette, its exception handlers applied by :class:`HandledErrors`."""

    def build_middleware_stack(self) -> ASGIApp:
        error_handler = None
        exception_handlers: dict[Any, ExceptionHandler] = {}
        for key, value in self.exception_handlers.items():
            if key in (500, Exception):
                error_handler = value
            else:
                exception_handlers[key] = value
        middleware = [Middleware(ServerErrorMiddleware, handler=error_handler, debug=self.debug)]
        if self.max_body_size is not None:
            limit = self.max_body_size
            middleware.append(Middleware(RequestBodyLimitMiddleware, max_body_size=limit))
        middleware += self.user_middleware
        middleware.append(Middleware(HandledErrors, handlers=exception_handlers, debug=self.debug))
        app: ASGIApp = self.router
        for cls, args, kwargs in reversed(middleware):
            app = cls(app, *args, **kwargs)
        return app
