"""Pre-fetching linked pages (the ``native_openhands`` agent): a local HTTP server the test
starts, the MCP URL policy (loopback allowed here as the MCP tests allow it, private addresses
refused), size and time limits, and what reaches the scripted model."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentloom.agents import build_agent
from agentloom.agents.codeact import CodeActAgent
from agentloom.agents.url_prefetch import HEADING, FetchedPage, UrlPrefetch, urls_in
from agentloom.tools.mcp.policy import UrlPolicy
from tests.agents.code_agents import LIMITS, sandbox, scripted, texts

PAGE = (
    "<html><head><title>t</title><script>alert(1)</script></head>"
    "<body><h1>Zephyr X2</h1><p>Boils a litre in 90 seconds.</p></body></html>"
)
BIG = b"0123456789" * 10_000  # 100 kB
LOOPBACK = UrlPolicy(allow_loopback=True, allow_private=False, subject="linked page")


class _Site(BaseHTTPRequestHandler):
    release = threading.Event()
    hosts: list[str] = []

    def do_GET(self) -> None:
        _Site.hosts.append(self.headers.get("Host", ""))
        route = {
            "/page": lambda: self._send(200, "text/html; charset=utf-8", PAGE.encode()),
            "/notes.txt": lambda: self._send(200, "text/plain", b"plain notes\n"),
            "/big": lambda: self._send(200, "text/plain", BIG),
            "/image": lambda: self._send(200, "image/png", b"\x89PNG"),
            "/missing": lambda: self._send(404, "text/plain", b"no"),
            "/to-page": lambda: self._redirect("/page"),
            "/to-private": lambda: self._redirect("http://10.20.30.40/secret"),
            "/loop": lambda: self._redirect("/loop"),
            "/slow": self._slow,
        }.get(self.path)
        if route is None:
            self._send(404, "text/plain", b"unknown")
        else:
            route()

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, where: str) -> None:
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _slow(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b"first part ")
        self.wfile.flush()
        _Site.release.wait(30)  # the test's teardown lets it go

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def site() -> Iterator[str]:
    """The base URL of a local site on 127.0.0.1."""
    _Site.release.clear()
    _Site.hosts.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _Site.release.set()
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_urls_are_found_in_the_text_bare_domains_as_https() -> None:
    text = (
        "Compare https://a.example/x?y=1, (see http://b.example/p_(q)) and example.com/about. "
        "Also www.zephyr.io! Not file.py, not a@mail.com, again https://a.example/x?y=1."
    )

    assert urls_in(text, 10) == [
        "https://a.example/x?y=1",
        "http://b.example/p_(q)",
        "https://example.com/about",
        "https://www.zephyr.io",
    ]
    assert urls_in(text, 2) == ["https://a.example/x?y=1", "http://b.example/p_(q)"]
    assert urls_in("Summarize example.com", 3) == ["https://example.com"]
    assert urls_in("nothing here", 3) == []


async def test_the_model_reads_the_linked_pages_text_in_the_users_message(site: str) -> None:
    llm, model = scripted("It boils a litre in 90 seconds.")
    agent = CodeActAgent(llm, sandbox=sandbox(), limits=LIMITS, prefetch=UrlPrefetch(LOOPBACK))

    result = await agent.run(f"Summarize {site}/page and {site}/notes.txt")

    (request,) = model.requests
    user = texts(request)[-1]
    assert user == (
        f"Summarize {site}/page and {site}/notes.txt\n\n{HEADING}\n"
        f'<page url="{site}/page">\nZephyr X2\n\nBoils a litre in 90 seconds.\n</page>\n'
        f'<page url="{site}/notes.txt">\nplain notes\n</page>'
    )
    assert "alert" not in user
    assert result.content == "It boils a litre in 90 seconds."


async def test_the_table_agent_refuses_loopback_by_default_and_goes_on(site: str) -> None:
    llm, model = scripted("I could not read it.")
    agent = build_agent("native_openhands", llm)
    assert isinstance(agent, CodeActAgent)
    agent.sandbox, agent.limits = sandbox(), LIMITS

    await agent.run(f"Summarize {site}/page")

    user = texts(model.requests[0])[-1]
    assert (
        f'<page url="{site}/page" error="The linked page URL \'{site}/page\' is refused: ' in user
    )
    assert "loopback addresses are not allowed by the server's policy" in user
    assert _Site.hosts == []  # never connected


async def test_a_private_address_is_refused_before_any_connection(site: str) -> None:
    prefetch = UrlPrefetch(LOOPBACK)

    direct, redirected = await prefetch.fetch_all(["http://10.20.30.40/x", f"{site}/to-private"])

    assert direct.error is not None
    assert "private addresses are not allowed by the server's policy" in direct.error
    assert redirected.error is not None
    assert "'http://10.20.30.40/secret' is refused: private addresses" in redirected.error
    assert len(_Site.hosts) == 1  # the redirect only


async def test_an_oversized_page_is_cut_and_the_rest_not_read(site: str) -> None:
    (page,) = await UrlPrefetch(LOOPBACK, max_bytes=1000).fetch_all([f"{site}/big"])

    assert page.text == BIG[:1000].decode()
    assert page.cut
    assert page.render().endswith("\n[the page was longer; the rest was not read]\n</page>")
    (shown,) = await UrlPrefetch(LOOPBACK, max_chars=50).fetch_all([f"{site}/big"])
    assert len(shown.text) == 50
    assert shown.cut


async def test_a_slow_page_stops_at_the_deadline(site: str) -> None:
    (page,) = await UrlPrefetch(LOOPBACK, timeout=0.5).fetch_all([f"{site}/slow"])

    assert page == FetchedPage(f"{site}/slow", error="no complete answer within 0.5 s")


async def test_redirects_non_text_and_errors(site: str) -> None:
    prefetch = UrlPrefetch(LOOPBACK, max_redirects=2)
    urls = [f"{site}/to-page", f"{site}/image", f"{site}/missing", f"{site}/loop"]

    redirected, image, missing, loop = await prefetch.fetch_all(urls)

    assert redirected.text == "Zephyr X2\n\nBoils a litre in 90 seconds."
    assert redirected.url == f"{site}/to-page"
    assert image.error == "not text (image/png)"
    assert missing.error == "HTTP 404"
    assert loop.error == "more than 2 redirects"


async def test_the_connection_goes_to_the_checked_address_under_the_hosts_name(
    site: str,
) -> None:
    port = site.rsplit(":", 1)[1]

    (page,) = await UrlPrefetch(LOOPBACK).fetch_all([f"http://localhost:{port}/notes.txt"])

    assert page.text == "plain notes"
    assert _Site.hosts == [f"localhost:{port}"]


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        UrlPrefetch(timeout=0)
