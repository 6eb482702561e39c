"""``GET /metrics`` of a server with ``--workers 2`` is the whole server's: whichever worker
answers a scrape, the requests counted are every worker's."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from agentloom.metrics_shared import DIRECTORY_ENV
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, _wait_for, agentloom_serve

REQUESTS = 60


def _answered(http: httpx2.Client) -> float:
    """Responses created (POST /v1/responses answered 200), as one scrape counts them."""
    text = http.get("/metrics").text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if (
                sample.name == "agentloom_http_requests_total"
                and labels.get("route") == "/v1/responses"
                and labels.get("method") == "POST"
            ):
                return float(sample.value)
    return 0.0


def _create(base_url: str, model: str) -> int:
    """One response, on a connection of its own (so that either worker may take it)."""
    body = {"model": model, "input": "Hello"}
    return httpx2.post(f"{base_url}/responses", json=body, timeout=WAIT).status_code


def _published(pid: int) -> dict[int, float]:
    """Each worker's own count of responses created, from the files they publish (the
    directory read from a worker's environment): proof that both took requests."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    environ = Path(f"/proc/{children[0]}/environ").read_bytes().split(b"\0")
    prefix = f"{DIRECTORY_ENV}=".encode()
    directory = Path(next(v for v in environ if v.startswith(prefix))[len(prefix) :].decode())
    counts = {}
    for path in directory.glob("*.json"):
        body = json.loads(path.read_text())
        rows = body["families"]["agentloom_http_requests"]
        counts[body["pid"]] = sum(
            value[0] for labels, value in rows if labels[:2] == ["POST", "/v1/responses"]
        )
    return counts


def test_a_scrape_counts_every_workers_requests(backend: FakeBackend, tmp_path: Path) -> None:
    env = _env(f"sqlite:///{tmp_path / 'db.sqlite'}", backend)
    with agentloom_serve(env, tmp_path / "server.log", "--workers", "2") as server:
        _wait_for(lambda: server.output().count("is ready") == 2)
        root = server.base_url.removesuffix("/v1")
        with ThreadPoolExecutor(4) as pool:
            codes = list(
                pool.map(lambda _: _create(server.base_url, backend.model), range(REQUESTS))
            )
        assert codes == [200] * REQUESTS
        # each scrape is answered by either worker; the published values are at most ~1 s old
        with httpx2.Client(base_url=root, timeout=WAIT, headers={"connection": "close"}) as http:
            deadline = time.monotonic() + WAIT
            while _answered(http) < REQUESTS and time.monotonic() < deadline:
                time.sleep(0.2)
            scrapes = [_answered(http) for _ in range(8)]
            each = _published(server.process.pid)
    assert scrapes == [REQUESTS] * 8, server.output()
    assert len(each) == 2, each
    assert all(count > 0 for count in each.values()), each  # both workers took requests
    assert sum(each.values()) == REQUESTS
