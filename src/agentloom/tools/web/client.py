"""The HTTP exchange every search provider makes: one JSON request, one JSON answer.

Failures leave as :mod:`agentloom.errors` upstream errors naming the provider, never an HTTP
type; keys travel in headers or bodies and never appear in a message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Final

import httpx2

from agentloom.errors import UpstreamError, UpstreamTimeoutError
from agentloom.tls import client_context
from agentloom.upstream import Failure, upstream_error

_CONNECT_TIMEOUT: Final = 10.0
_MAX_BODY: Final = 4 * 1024 * 1024


class JSONClient:
    """Requests to one provider at ``base_url``."""

    def __init__(
        self, name: str, base_url: str, *, timeout: float, headers: Mapping[str, str]
    ) -> None:
        self.name = name
        self._timeout = timeout
        self._client = httpx2.AsyncClient(
            verify=client_context(),
            base_url=base_url.rstrip("/") + "/",
            headers=dict(headers),
            timeout=httpx2.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT)),
            follow_redirects=True,
        )

    async def get(
        self,
        path: str,
        params: Mapping[str, str | int],
        headers: Mapping[str, str] | None = None,
    ) -> object:
        return await self._send("GET", path, params=params, headers=headers)

    async def post(self, path: str, body: Mapping[str, object]) -> object:
        return await self._send("POST", path, body=body)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> object:
        try:
            async with asyncio.timeout(self._timeout):  # the whole exchange, not each read
                response = await self._client.request(
                    method,
                    path,
                    params=dict(params or {}),
                    json=None if body is None else dict(body),
                    headers=dict(headers or {}),
                )
        except (httpx2.TimeoutException, TimeoutError) as exc:
            raise UpstreamTimeoutError(
                f"{self.name} did not answer within {self._timeout:g} s ([web_search] timeout)"
            ) from exc
        except httpx2.HTTPError as exc:
            raise UpstreamError(
                f"could not reach {self.name}: {exc or type(exc).__name__}"
            ) from exc
        if response.status_code >= 400:
            failure = Failure.of_http(response.status_code, response.headers, response.content)
            raise upstream_error(self.name, failure)
        try:
            return json.loads(response.content[:_MAX_BODY])
        except ValueError as exc:
            raise UpstreamError(f"{self.name} sent an answer that is not JSON") from exc


def field(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a JSON object, else ``None``."""
    return value.get(key) if isinstance(value, dict) else None


def text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
