"""A lost database connection: how it is recognised, and kept from failing the next caller.

PostgreSQL connections die under a running server: an administrator's
``pg_terminate_backend``, a restart or failover of the database, a network blip. The pools
keep their connections without pinging them on checkout (a round trip per use), so:

* a pooled SQLAlchemy connection whose socket is already closed is swapped for a fresh one at
  checkout (:func:`guard_pool`: asyncpg knows it is closed, no round trip asked);
* an error that says the connection is gone (closed, terminated by the server, or left in a
  state asyncpg cannot use) discards it and refreshes the pool, which the same event usually
  killed all of (:func:`guard_pool`, :func:`connection_lost`);
* the runner retries what cannot have taken effect and reports the rest as
  :class:`~agentloom.errors.DatabaseUnavailableError` (:mod:`agentloom.storage.runner`).

:data:`DATABASE_FAULTS` is what the server's background loops catch to log a passing database
fault and try again in their next round, instead of stopping.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import event, exc
from sqlalchemy.engine import ExceptionContext

from agentloom.errors import DatabaseUnavailableError

__all__ = ["DATABASE_FAULTS", "connection_lost", "driver_words", "guard_pool", "never_sent"]

DATABASE_FAULTS: Final[tuple[type[Exception], ...]] = (
    exc.DBAPIError,
    OSError,
    DatabaseUnavailableError,
)
"""What a passing database fault raises out of a store."""

# The server ended the session (57P01-57P03: terminated, crashed, starting or stopping), the
# connection failed (class 08), or the server has no connection left to give (53300).
_SERVER_ENDED: Final = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.exceptions.InternalClientError,  # the protocol is stuck mid-operation
    OSError,  # refused, reset, timed out (TimeoutError is an OSError)
)
# asyncpg's own words for a connection (or pool) it can no longer use.
_UNUSABLE: Final = ("closed", "closing", "another operation is in progress")

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


def connection_lost(error: BaseException) -> bool:
    """Whether ``error`` (or what it wraps) says the connection is gone or unusable."""
    return any(_lost(cause) for cause in _causes(error))


def never_sent(error: BaseException) -> bool:
    """Whether ``error`` says the statement was refused before anything reached the server:
    the connection was already closed, or its protocol was still busy (so running it again
    cannot apply it twice)."""
    for cause in _causes(error):
        if isinstance(cause, asyncpg.exceptions.InternalClientError):
            return True
        if isinstance(cause, asyncpg.InterfaceError) and str(cause) == "connection is closed":
            return True
    return False


def _lost(error: BaseException) -> bool:
    if isinstance(error, _SERVER_ENDED):
        return True
    if isinstance(error, asyncpg.exceptions.ObjectNotInPrerequisiteStateError):
        return "not currently accepting connections" in str(error)  # ALLOW_CONNECTIONS false
    if isinstance(error, asyncpg.InterfaceError):
        message = str(error)
        return any(words in message for words in _UNUSABLE)
    return False


def driver_words(error: BaseException) -> str:
    """The innermost error's class and message: the driver's own words, without the SQL and
    parameters SQLAlchemy adds to its wrapper."""
    *_, innermost = _causes(error)
    return f"{type(innermost).__name__}: {innermost}"


def _causes(error: BaseException) -> Iterator[BaseException]:
    """``error``, then what it wraps: SQLAlchemy's ``orig`` and the ``__cause__`` chain."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        wrapped = getattr(current, "orig", None)
        current = wrapped if isinstance(wrapped, BaseException) else current.__cause__


def guard_pool(engine: AsyncEngine) -> None:
    """Swap closed connections at checkout, and discard the connection (and the connections
    pooled before it) on an error that says it was lost."""
    event.listen(engine.sync_engine, "checkout", _refuse_closed)
    event.listen(engine.sync_engine, "handle_error", _mark_lost)


def _refuse_closed(dbapi_connection: Any, _record: object, _proxy: object) -> None:
    """A pooled connection whose socket closed while it waited: SQLAlchemy's pool discards it
    and checks out (or opens) another on :class:`~sqlalchemy.exc.DisconnectionError`."""
    if dbapi_connection.driver_connection.is_closed():
        raise exc.DisconnectionError("the pooled connection was closed by the server")


def _mark_lost(context: ExceptionContext) -> None:
    if not context.is_disconnect and connection_lost(context.original_exception):
        context.is_disconnect = True  # invalidated, and the pool refreshed
