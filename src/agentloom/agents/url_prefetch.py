"""Pre-fetching the pages a user's message links to, so the model reads them without a tool.

:meth:`UrlPrefetch.inline` finds the URLs in the last user message (``http(s)://...``, and bare
``www.`` or ``name.com``-style domains, read as ``https://``; at most ``max_urls``), fetches
each and appends their text to that message::

    Summarize https://example.com/post

    Pages linked in this message, fetched before you were asked:
    <page url="https://example.com/post">
    The post's visible text ...
    </page>

Every address is checked by the same :class:`~agentloom.tools.mcp.policy.UrlPolicy` as MCP
server URLs (cloud metadata and link-local always refused; loopback and, by default here,
private addresses refused), and the connection goes to the address that was checked (a host
that resolves elsewhere a moment later is not reached). Redirects are followed by hand, each
hop checked, at most ``max_redirects``. A page is read up to ``max_bytes`` (the rest is not
downloaded; the text says it was cut) within ``timeout`` seconds for the whole fetch, and at
most ``max_chars`` of its text is shown. HTML becomes its visible text; other text types are
shown as they are; anything else is not read. A page that cannot be fetched is named in the
message with the reason, and the run goes on.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin, urlsplit, urlunsplit

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.llm.types import Message
from agentloom.retrieval.html import html_text
from agentloom.text import clip
from agentloom.tools.mcp.policy import IPAddress, UrlPolicy

if TYPE_CHECKING:
    import httpx2

__all__ = ["PREFETCH_POLICY", "FetchedPage", "UrlPrefetch", "urls_in"]

PREFETCH_POLICY: Final = UrlPolicy(allow_private=False, subject="linked page")
HEADING: Final = "Pages linked in this message, fetched before you were asked:"
_TEXT_TYPES: Final = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w@/.-])((?:www\.)?(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|edu|gov|co|app)"
    r"(?:/[^\s<>\"'`]*)?)(?![\w-])",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?)]}'\""


def urls_in(text: str, limit: int) -> list[str]:
    """The first ``limit`` distinct URLs in ``text``, in order; bare domains as ``https://``."""
    found: list[tuple[int, str]] = [(m.start(), _trimmed(m.group())) for m in _URL.finditer(text)]
    spans = [m.span() for m in _URL.finditer(text)]
    for match in _BARE.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            found.append((match.start(), "https://" + _trimmed(match.group(1))))
    ordered = [url for _, url in sorted(found)]
    return list(dict.fromkeys(ordered))[:limit]


def _trimmed(url: str) -> str:
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


@frozen
class FetchedPage:
    """A linked page's text, or why it was not read (``error``)."""

    url: str
    text: str = ""
    error: str | None = None
    cut: bool = False

    def render(self) -> str:
        if self.error is not None:
            return f'<page url="{self.url}" error="{self.error}"/>'
        note = "\n[the page was longer; the rest was not read]" if self.cut else ""
        return f'<page url="{self.url}">\n{self.text}{note}\n</page>'


@frozen
class UrlPrefetch:
    """How linked pages are fetched (see the module doc)."""

    policy: UrlPolicy = field(default_factory=lambda: PREFETCH_POLICY)
    max_urls: int = 3
    max_bytes: int = 1_000_000
    max_chars: int = 20_000
    timeout: float = 10.0
    max_redirects: int = 3

    def __post_init__(self) -> None:
        if self.max_urls < 0 or self.max_bytes < 1 or self.max_chars < 1 or self.timeout <= 0:
            raise ValueError("max_urls, max_bytes, max_chars and timeout must be positive")

    async def inline(self, messages: list[Message]) -> list[FetchedPage]:
        """Fetch the pages the last user message links to and append them to it."""
        at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), -1)
        content = messages[at].content if at >= 0 else None
        urls = urls_in(content, self.max_urls) if isinstance(content, str) else []
        if not urls:
            return []
        pages = await self.fetch_all(urls)
        shown = "\n".join(page.render() for page in pages)
        messages[at] = replace(messages[at], content=f"{content}\n\n{HEADING}\n{shown}")
        return pages

    async def fetch_all(self, urls: Sequence[str]) -> list[FetchedPage]:
        import httpx2

        limits = httpx2.Timeout(self.timeout)
        async with httpx2.AsyncClient(
            follow_redirects=False, trust_env=False, timeout=limits
        ) as client:
            return list(await asyncio.gather(*(self.fetch(client, url) for url in urls)))

    async def fetch(self, client: httpx2.AsyncClient, url: str) -> FetchedPage:
        import httpx2

        try:
            async with asyncio.timeout(self.timeout):
                return await self._follow(client, url)
        except TimeoutError:
            return FetchedPage(url, error=f"no complete answer within {self.timeout:g} s")
        except InvalidRequestError as exc:
            return FetchedPage(url, error=exc.message.replace('"', "'"))
        except httpx2.HTTPError as exc:
            return FetchedPage(url, error=f"{type(exc).__name__}: {exc}".replace('"', "'"))

    async def _follow(self, client: httpx2.AsyncClient, url: str) -> FetchedPage:
        current = url
        for _ in range(self.max_redirects + 1):
            addresses = await self.policy.allowed_addresses(current, param="input")
            response = await _connect(client, current, addresses)
            try:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    current = urljoin(current, location)
                    continue
                return await self._read(url, response)
            finally:
                await response.aclose()
        return FetchedPage(url, error=f"more than {self.max_redirects} redirects")

    async def _read(self, url: str, response: httpx2.Response) -> FetchedPage:
        if response.status_code >= 400:
            return FetchedPage(url, error=f"HTTP {response.status_code}")
        kind = response.headers.get("content-type", "text/plain").split(";")[0].strip().lower()
        if not kind.startswith(_TEXT_TYPES):
            return FetchedPage(url, error=f"not text ({kind})")
        body, cut = bytearray(), False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                body, cut = body[: self.max_bytes], True
                break
        text = body.decode(response.encoding or "utf-8", errors="replace")
        shown = html_text(text) if "html" in kind else text.strip()
        return FetchedPage(url, clip(shown, self.max_chars), cut=cut or len(shown) > self.max_chars)


async def _connect(
    client: httpx2.AsyncClient, url: str, addresses: Sequence[IPAddress]
) -> httpx2.Response:
    """The response of the first of ``addresses`` that takes the connection."""
    import httpx2

    for address in addresses[:-1]:
        try:
            return await client.send(_pinned(client, url, address), stream=True)
        except httpx2.ConnectError:
            continue
    return await client.send(_pinned(client, url, addresses[-1]), stream=True)


def _pinned(client: httpx2.AsyncClient, url: str, address: IPAddress) -> httpx2.Request:
    """A GET of ``url`` sent to ``address``: the Host header and TLS name stay the URL's."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    literal = f"[{address}]" if isinstance(address, ipaddress.IPv6Address) else str(address)
    netloc = f"{literal}:{parts.port}" if parts.port else literal
    target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    named = f"{host}:{parts.port}" if parts.port else host
    headers = {"Host": named, "Accept": "text/html, text/plain;q=0.9, */*;q=0.5"}
    extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
    return client.build_request("GET", target, headers=headers, extensions=extensions)
