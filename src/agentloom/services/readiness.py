"""Readiness: whether this server can do its work now (``GET /v1/health/ready``).

Each part the server depends on is probed at once, every probe bounded by
:data:`PROBE_TIMEOUT`: the database (a ``SELECT 1``), each inference backend (its model list,
:meth:`~agentloom.inference.catalog.ModelCatalog.probe`), the job runner (its background duty
runs), and, where configured, each declared MCP server and web search source (a connection
opened to its host: no call is made, none is paid for; a stdio server's command is found).

The verdict: ``not_ready`` (503, a load balancer sends nothing here) when the database or the
job runner is down or no backend can be reached; ``degraded`` (200) when only some backends,
MCP servers or search sources are down; ``ready`` (200) when all are up.

The endpoint is open, and each round of probes reaches out to every part: callers that ask
while a round runs share the next one (:class:`ReadinessRounds`), so a flood of requests
probes no faster than one round at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Final, Literal, TypeAlias
from urllib.parse import urlsplit

from agentloom.config import McpServerSettings, SearchSourceSettings, WebSearchSettings
from agentloom.frozen import frozen
from agentloom.inference.catalog import ModelCatalog
from agentloom.redact import redact_url, redact_urls
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.database import Database

__all__ = [
    "PROBE_TIMEOUT",
    "CheckKind",
    "Checked",
    "Probe",
    "ReadinessRounds",
    "Verdict",
    "backend_probes",
    "checked",
    "database_probe",
    "mcp_probes",
    "verdict",
    "web_search_probes",
]

PROBE_TIMEOUT: Final = 5.0  # seconds any one probe may take
CheckKind: TypeAlias = Literal["database", "backend", "job_runner", "mcp_server", "web_search"]
Verdict: TypeAlias = Literal["ready", "degraded", "not_ready"]
ESSENTIAL: Final[frozenset[CheckKind]] = frozenset({"database", "job_runner"})
# the public APIs a search source without base_url reaches (tools/web/providers.py)
SEARCH_APIS: Final = {"tavily": "https://api.tavily.com", "brave": "https://api.search.brave.com"}


@frozen
class Probe:
    kind: CheckKind
    name: str
    run: Callable[[], Awaitable[str | None]]  # why the part is down; ``None``: it is up


@frozen
class Checked:
    kind: CheckKind
    name: str
    error: str | None = None  # ``None``: up


async def checked(probes: Sequence[Probe], within: float = PROBE_TIMEOUT) -> list[Checked]:
    """Every probe run at once, each for at most ``within`` seconds."""
    errors = await asyncio.gather(*(_bounded(probe, within) for probe in probes))
    return [Checked(p.kind, p.name, e) for p, e in zip(probes, errors, strict=True)]


class ReadinessRounds:
    """One round of probes at a time. A caller is answered by a round that started after it
    asked: its own, or one started by another caller that waited with it."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._started = 0  # rounds started
        self._last: tuple[int, list[Checked]] | None = None  # the last round ended, and its number

    async def checked(self, probes: Callable[[], Sequence[Probe]]) -> list[Checked]:
        asked = self._started
        async with self._lock:
            if self._last is not None and self._last[0] > asked:
                return self._last[1]
            self._started += 1
            number = self._started
            found = await checked(probes())
            self._last = (number, found)
            return found


def verdict(checks: Iterable[Checked]) -> Verdict:
    checks = list(checks)
    if any(c.error is not None and c.kind in ESSENTIAL for c in checks):
        return "not_ready"
    backends = [c for c in checks if c.kind == "backend"]
    if backends and all(c.error is not None for c in backends):
        return "not_ready"
    return "degraded" if any(c.error is not None for c in checks) else "ready"


async def _bounded(probe: Probe, within: float) -> str | None:
    try:
        async with asyncio.timeout(within):
            found = await probe.run()
    except TimeoutError:
        return f"no answer within {within:g}s"
    return None if found is None else redact_urls(found)


# --- the probes ------------------------------------------------------------------------------


def database_probe(database: Database) -> Probe:
    async def run() -> str | None:
        try:
            await database.runner.fetch("SELECT 1")
        except DATABASE_FAULTS as exc:
            return f"the database cannot be reached: {exc}"
        return None

    return Probe("database", database.dialect, run)


def backend_probes(catalog: ModelCatalog) -> list[Probe]:
    def probe(name: str) -> Probe:
        return Probe("backend", name, lambda: catalog.probe(name))

    return [probe(name) for name in catalog.providers()]


def mcp_probes(servers: Iterable[McpServerSettings]) -> list[Probe]:
    return [Probe("mcp_server", server.label, _mcp_reached(server)) for server in servers]


def web_search_probes(settings: WebSearchSettings) -> list[Probe]:
    sources = {"live": settings.live, "offline": settings.offline}
    return [
        Probe("web_search", f"{use} ({source.provider})", _reached(_search_url(source)))
        for use, source in sources.items()
        if source is not None
    ]


def _search_url(source: SearchSourceSettings) -> str:
    return source.base_url or SEARCH_APIS[source.provider]


def _mcp_reached(server: McpServerSettings) -> Callable[[], Awaitable[str | None]]:
    if server.url is not None:
        return _reached(server.url)
    command = server.command or ""

    async def found() -> str | None:
        if shutil.which(command) is None:
            return f"its command {command!r} is not found"
        return None

    return found


def _reached(url: str) -> Callable[[], Awaitable[str | None]]:
    """Whether a connection opens to ``url``'s host and port (nothing is sent)."""

    async def run() -> str | None:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.open_connection(parts.hostname, port)
        except OSError as exc:
            return f"could not connect to {redact_url(url)}: {exc}"
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return None

    return run
