"""One send per reply: the writes a connection makes in one step of the event loop leave together.

uvicorn writes an answer's status line and headers, then its body, as two writes, so a whole
JSON answer costs two ``send`` system calls (and on loopback, two wake-ups of the client). The
protocol here wraps the connection's transport so that a write is held until the current step
of the event loop ends and leaves with the writes made after it in the same step, joined; a
complete answer leaves at once: a Starlette ``Response`` (start, then body) goes out in one
call, without waiting for the loop's next turn (under load, a turn of the loop runs many
requests' steps). Nothing waits longer than the step: a stream's headers leave at once even if
its first event takes seconds, and a stream's events that are ready together leave together.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["CoalescingHttpToolsProtocol", "CoalescingTransport"]


class CoalescingTransport(asyncio.Transport):
    """``transport``, its writes of one event-loop step joined into one."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes | bytearray | memoryview] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is None:
            self._held = [data]
            self._loop.call_soon(self.flush)
        else:
            self._held.append(data)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        """Send what is held now."""
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a :class:`CoalescingTransport` (``uvicorn.run(...,
    http=CoalescingHttpToolsProtocol)``)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods
        super().connection_made(CoalescingTransport(cast(asyncio.Transport, transport), self.loop))

    def on_response_complete(self) -> None:
        cast(CoalescingTransport, self.transport).flush()  # the whole answer is here: send it
        super().on_response_complete()
