"""A URL's credentials (``http://user:s3cretpw@host/``) never reach an error body or the log,
with a real ``agentloom serve`` process: the inference backend's URL (one provider up, one
down and failing its discovery), an MCP server URL refused by the policy and one that cannot be
reached, a webhook endpoint URL refused twice over. Each of these quoted the password before.
"""

from __future__ import annotations

from pathlib import Path

import httpx2

from agentloom.testing.backend import FakeBackend
from tests.faults.support import served
from tests.inference.support import closed_port_url

SECRET = "s3cretpw"


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://user:{SECRET}@", 1)


async def test_no_credentials_in_error_bodies_or_the_log(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    down = closed_port_url()
    config = f"""
[mcp]
allow_loopback = true

[[providers]]
name = "down"
base_url = "{_with_userinfo(down)}"
"""
    env = {"AGENTLOOM_INFERENCE_BASE_URL": _with_userinfo(backend.base_url)}
    bodies: list[str] = []
    with served(backend, database_url, tmp_path, config=config, env=env) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=10) as http:
            # the backend that is down: a 503 naming its URL, credentials left out
            reply = await http.post("/responses", json={"model": "missing", "input": "Hi"})
            assert reply.status_code == 503
            assert f"http://***@{down.removeprefix('http://')}" in reply.text
            bodies.append(reply.text)

            # an MCP server URL the policy refuses, and one that cannot be reached
            refused = {"type": "mcp", "server_label": "x", "require_approval": "never"}
            metadata = {**refused, "server_url": f"http://user:{SECRET}@169.254.169.254/mcp"}
            reply = await http.post(
                "/responses", json={"model": backend.model, "input": "Hi", "tools": [metadata]}
            )
            assert reply.status_code == 400
            assert "http://***@169.254.169.254/mcp" in reply.text
            bodies.append(reply.text)
            unreachable = {**refused, "server_url": _with_userinfo(down.replace("/v1", "/mcp"))}
            reply = await http.post(
                "/responses",
                json={"model": backend.model, "input": "Hi", "tools": [unreachable]},
            )
            assert reply.status_code == 200, reply.text
            listing = reply.json()["output"][0]
            assert listing["error"]  # the listing failed, its error told (the tool echoed as sent)
            bodies.append(listing["error"])

            # a webhook endpoint refused by the policy, and for plain http
            for url in (
                f"https://user:{SECRET}@169.254.169.254/hook",
                f"http://user:{SECRET}@example.com/hook",
            ):
                hook = {"name": "hook", "url": url, "event_types": ["response.completed"]}
                reply = await http.post("/webhook_endpoints", json=hook)
                assert reply.status_code == 400, reply.text
                assert "***@" in reply.text
                bodies.append(reply.text)
            readiness = await http.get("/health/ready")
            bodies.append(readiness.text)
    for body in bodies:
        assert SECRET not in body, body
    log = server.output()
    assert "model discovery failed for provider 'down'" in log  # the URL was logged: redacted
    assert SECRET not in log
