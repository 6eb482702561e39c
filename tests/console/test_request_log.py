"""The console's Usage and request log over the request log, in Chromium: traffic of several
kinds (responses, chat completions, embeddings, a failing request) drawn as charts with axes and
values and filtered on the server; the log's rows of each kind, filtered, paged, a request's
detail and its stored response; keys off, the admin key (every project) and a project's key
(its own rows, no project filter) (issue 40, item 7)."""

from __future__ import annotations

import time
from typing import Any

import httpx2
import pytest
from playwright.sync_api import expect

from agentloom.config import Settings
from agentloom.testing.backend import FakeBackend
from tests.console.test_admin import sign_in
from tests.plugins.server import FAKE_EMBEDDING_MODEL
from tests.plugins.tenants import ADMIN

ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}


@pytest.fixture
def console_settings(console_settings: Settings) -> Settings:
    """The conftest's, the usage ledger (and the request log) written every 0.1 s."""
    server = console_settings.server.model_copy(update={"usage_flush_interval": 0.1})
    return console_settings.model_copy(update={"server": server})


def traffic(base: str, model: str, headers: dict[str, str] | None = None) -> None:
    """A response, a chat completion (stored), an embedding and a response of a model that is
    not."""
    sent = {"headers": headers or {}, "timeout": 10}
    assert httpx2.post(f"{base}/responses", json={"model": model, "input": "Hi"}, **sent).is_success
    chat = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "store": True}
    assert httpx2.post(f"{base}/chat/completions", json=chat, **sent).is_success
    embed = {"model": FAKE_EMBEDDING_MODEL, "input": "text"}
    assert httpx2.post(f"{base}/embeddings", json=embed, **sent).is_success
    bad = {"model": "no-such-model", "input": "Hi"}
    assert httpx2.post(f"{base}/responses", json=bad, **sent).status_code == 404


def logged(origin: str, count: int, headers: dict[str, str] | None = None) -> None:
    """Wait until the log holds ``count`` rows (written about every 0.1 s here)."""
    for _ in range(100):
        reply = httpx2.get(
            f"{origin}/v1/organization/requests", params={"limit": 100}, headers=headers or {}
        )
        if len(reply.json()["data"]) >= count:
            return
        time.sleep(0.05)
    raise AssertionError("the request log never held the traffic")


def chart(page: Any, title: str) -> Any:
    return page.locator(f"figure[data-chart={title}]")


def test_usage_charts_the_traffic_and_filters_it_on_the_server(
    page: Any, origin: str, backend: FakeBackend, shoot: Any
) -> None:
    traffic(f"{origin}/v1", backend.model)
    logged(origin, 4)
    page.goto(f"{origin}/console/#/usage")
    usage = page.locator("section.request-usage")
    expect(usage.locator("figure.chart-box")).to_have_count(5)
    expect(chart(page, "Requests").locator(".totals")).to_have_text("4 in all")
    expect(chart(page, "Errors").locator(".totals")).to_have_text("1 in all (25%)")
    expect(chart(page, "Cost")).to_be_visible()
    expect(chart(page, "Latency").locator(".totals")).to_contain_text("p95")
    requests = chart(page, "Requests")
    expect(requests.locator(".axis.y text.tick").first).to_have_text("0")  # values on the y axis
    expect(requests.locator(".axis.x text.tick")).to_have_count(6)  # 24 hours, a tick every 4
    expect(requests.locator(".axis.x text.tick").first).to_have_text(_hour_label())
    expect(chart(page, "Tokens").locator(".legend")).to_contain_text("input")
    busy = requests.locator("g.bucket").filter(has=page.locator("rect.bar[height]")).last
    expect(busy.locator("title")).to_contain_text("requests: 4")
    expect(usage.locator("tbody tr")).to_have_count(4)  # per project, model and endpoint
    shoot("usage-requests")

    usage.get_by_label("Endpoint").select_option("embeddings")
    with page.expect_request(lambda r: "endpoints=embeddings" in r.url):
        usage.get_by_role("button", name="Filter").click()
    expect(chart(page, "Requests").locator(".totals")).to_have_text("1 in all")
    expect(usage.locator("tbody tr")).to_have_count(1)
    expect(usage.locator("tbody tr")).to_contain_text("embeddings")

    usage.get_by_label("Endpoint").select_option("")
    usage.get_by_label("Status").select_option("errors")
    with page.expect_request(lambda r: "errors=true" in r.url):
        usage.get_by_role("button", name="Filter").click()
    expect(chart(page, "Requests").locator(".totals")).to_have_text("1 in all")
    expect(usage.locator("tbody tr")).to_contain_text("responses")
    usage.get_by_label("Time range").select_option("7d")
    usage.get_by_role("button", name="Filter").click()
    expect(chart(page, "Requests").locator(".axis-title")).to_have_text("day (UTC)")
    expect(page.locator("section.usage")).to_be_visible()  # the token usage report, still
    shoot("usage-requests-errors")


def _hour_label() -> str:
    """The first x tick of the last 24 hours: the hour 23 hours before this one (UTC)."""
    hour = int(time.time()) // 3600 * 3600 + 3600 - 86400
    return time.strftime("%H:%M", time.gmtime(hour))


def test_the_request_log_shows_every_kind_filters_pages_and_opens_a_request(
    page: Any, origin: str, backend: FakeBackend, shoot: Any
) -> None:
    traffic(f"{origin}/v1", backend.model)
    for _ in range(17):  # past a page of 20
        httpx2.post(f"{origin}/v1/moderations", json={"input": "hello"}, timeout=10)
    logged(origin, 21)
    page.goto(f"{origin}/console/#/logs")
    page.get_by_role("link", name="Every request").click()
    expect(page.get_by_role("heading", name="Request log")).to_be_visible()
    rows = page.locator(".results tbody tr")
    expect(rows).to_have_count(20)
    page.get_by_role("button", name="Older →").click()
    expect(rows).to_have_count(1)
    expect(rows.locator(".endpoint")).to_have_text("responses")  # the oldest: the first sent
    page.get_by_role("button", name="← Newer").click()
    expect(rows).to_have_count(20)

    page.get_by_label("Status").select_option("ok")
    page.get_by_label("Endpoint").select_option("moderations")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(17)
    for kind in ("embeddings", "chat.completions"):
        page.get_by_label("Endpoint").select_option(kind)
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(1)
        expect(rows.locator(".endpoint")).to_have_text(kind)
    rows.get_by_role("link").click()
    kept = page.locator("section.stored-completion")
    expect(page.locator("dl.request")).to_contain_text("Stored completion")
    expect(kept.locator(".message")).to_have_count(2)  # the user's message and the answer
    expect(kept.locator(".message").first).to_contain_text("Hi")
    shoot("request-detail-chat")
    page.get_by_role("link", name="← Request log").click()
    page.get_by_label("Endpoint").select_option("responses")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)  # the filters start again: the ok response and the failed
    shoot("request-log")
    page.get_by_label("Status").select_option("errors")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.locator(".badge")).to_have_text("404")
    rows.get_by_role("link").click()
    facts = page.locator("dl.request")
    expect(page.get_by_role("heading", name="responses request")).to_be_visible()
    expect(facts).to_contain_text("model_not_found")
    shoot("request-detail")

    page.get_by_role("link", name="← Request log").click()
    page.get_by_label("Endpoint").select_option("responses")
    page.get_by_label("Status").select_option("ok")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    rows.get_by_role("link").click()
    expect(facts).to_contain_text(backend.model)
    stored = facts.locator("a.stored")
    response_id = stored.inner_text()
    assert response_id.startswith("resp_")
    stored.click()
    expect(page).to_have_url(f"{origin}/console/#/logs/{response_id}")
    expect(page.locator("main")).to_contain_text(response_id)


def test_keys_on_the_admin_sees_every_project_and_a_project_key_its_own(
    page: Any, keyed_origin: str, backend: FakeBackend, shoot: Any
) -> None:
    projects = f"{keyed_origin}/v1/organization/projects"
    keys: dict[str, str] = {}
    for name in ("alpha", "beta"):
        made = httpx2.post(projects, json={"name": name}, headers=ADMIN_HEADERS).json()
        account = httpx2.post(
            f"{projects}/{made['id']}/service_accounts", json={"name": "ci"}, headers=ADMIN_HEADERS
        ).json()
        keys[name] = account["api_key"]["value"]
        traffic(f"{keyed_origin}/v1", backend.model, {"authorization": f"Bearer {keys[name]}"})
    logged(keyed_origin, 8, ADMIN_HEADERS)

    page.goto(f"{keyed_origin}/console/")
    sign_in(page, ADMIN)
    page.get_by_role("link", name="Usage").click()
    usage = page.locator("section.request-usage")
    expect(chart(page, "Requests").locator(".totals")).to_have_text("8 in all")
    expect(usage.get_by_label("Project").locator("option")).to_have_count(4)  # all, default, 2
    usage.get_by_label("Project").select_option(label=_label(usage, "beta"))
    usage.get_by_role("button", name="Filter").click()
    expect(chart(page, "Requests").locator(".totals")).to_have_text("4 in all")
    expect(usage.locator("tbody tr").first).to_contain_text("beta")
    page.get_by_role("link", name="Request log").click()
    expect(page.locator(".results tbody tr")).to_have_count(8)
    expect(page.locator(".results tbody")).to_contain_text("alpha")  # projects by name
    page.get_by_label("Endpoint").select_option("chat.completions")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".results tbody tr")).to_have_count(2)
    shoot("request-log-admin")
    page.locator(".results tbody tr").first.get_by_role("link").click()
    expect(page.locator("section.stored-completion .message")).to_have_count(2)  # in its project
    page.get_by_role("link", name="← Request log").click()
    page.get_by_label("Endpoint").select_option("responses")
    page.get_by_label("Status").select_option("ok")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".results tbody tr")).to_have_count(2)
    page.locator(".results tbody tr").first.get_by_role("link").click()
    project = page.locator("dl.request dd").nth(5).inner_text()
    stored = page.locator("dl.request a.stored")
    response_id = stored.inner_text()
    stored.click()  # the admin key works in the row's project to open it
    expect(page).to_have_url(f"{keyed_origin}/console/#/logs/{response_id}")
    expect(page.locator("main")).to_contain_text(response_id)
    expect(page.get_by_label("Project", exact=True)).to_have_value(project)

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, keys["alpha"])
    page.get_by_role("link", name="Usage").click()
    usage = page.locator("section.request-usage")
    expect(chart(page, "Requests").locator(".totals")).to_have_text("4 in all")
    expect(usage.get_by_label("Project")).to_have_count(0)  # its own project only
    expect(page.locator("section.usage")).to_have_count(0)  # the organization's report: not
    page.get_by_role("link", name="Request log").click()
    rows = page.locator(".results tbody tr")
    expect(rows).to_have_count(4)
    page.get_by_label("Endpoint").select_option("embeddings")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    rows.get_by_role("link").click()
    expect(page.locator("dl.request")).to_contain_text(FAKE_EMBEDDING_MODEL)
    shoot("request-detail-project-key")


def _label(usage: Any, name: str) -> str:
    found: str = usage.get_by_label("Project").locator("option", has_text=name).inner_text()
    return found
