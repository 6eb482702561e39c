"""The image and the compose stack built and started by a real container engine: run where
one answers (``docker info``), skipped with the reason otherwise;
``AGENTLOOM_REQUIRE_CONTAINER_ENGINE=1`` makes a missing engine a failure instead.

Building the image installs every dependency from the package index: minutes, not seconds, the
first time (the engine's layer cache makes a rebuild after a source change ~1 minute)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.ports import unused_port

ROOT = Path(__file__).parents[2]
IMAGE = "agentloom-server:test"
BUILD_TIMEOUT = 1800  # seconds: the first build downloads every dependency
READY_TIMEOUT = 180.0  # seconds for a container's health check to pass
ADMIN_KEY = "admin-key-for-the-engine-test"


@dataclass(frozen=True)
class Engine:
    cli: str  # docker, or podman (the same commands)

    def run(self, *args: str, timeout: float = 120, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [self.cli, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        assert done.returncode == 0, f"{self.cli} {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout.strip()


def _unavailable(cli: str | None) -> str | None:
    if cli is None:
        return "no container engine: neither docker nor podman is on PATH"
    done = subprocess.run([cli, "info"], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"no container engine answers `{cli} info` ({said})"
    return None


@pytest.fixture(scope="module")
def engine() -> Engine:
    cli = shutil.which("docker") or shutil.which("podman")
    reason = _unavailable(cli)
    if reason is not None:
        if os.environ.get("AGENTLOOM_REQUIRE_CONTAINER_ENGINE") == "1":
            pytest.fail(f"a container engine is required: {reason}")
        pytest.skip(reason)
    assert cli is not None
    return Engine(cli)


@pytest.fixture(scope="module")
def image(engine: Engine) -> str:
    engine.run("build", "--tag", IMAGE, str(ROOT), timeout=BUILD_TIMEOUT)
    return IMAGE


def _wait_healthy(engine: Engine, container: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while (status := engine.run("inspect", "--format", "{{.State.Health.Status}}", container)) != (
        "healthy"
    ):
        if status == "unhealthy" or time.monotonic() > deadline:
            raise AssertionError(f"{container} is {status}:\n{engine.run('logs', container)}")
        time.sleep(1)


@pytest.fixture
def container(engine: Engine, image: str) -> Iterator[tuple[str, int]]:
    port = unused_port()
    name = engine.run(
        "run", "--detach", "--publish", f"127.0.0.1:{port}:8321", "--env", "AGENTLOOM_AUTH=none",
        image,
    )  # fmt: skip
    try:
        yield name, port
    finally:
        subprocess.run([engine.cli, "rm", "--force", name], capture_output=True, check=False)


def test_the_image_serves_as_a_user_with_the_model_ready(
    engine: Engine, container: tuple[str, int]
) -> None:
    name, port = container
    _wait_healthy(engine, name)
    with httpx2.Client(base_url=f"http://127.0.0.1:{port}/v1", timeout=30) as http:
        models = [m["id"] for m in http.get("/models").json()["data"]]
        embedded = http.post("/embeddings", json={"model": "all-MiniLM-L6-v2", "input": "hi"})
    user = engine.run("exec", name, "id", "-u")
    engine.run("stop", name)
    logs = engine.run("logs", name)

    assert "all-MiniLM-L6-v2" in models
    assert len(embedded.json()["data"][0]["embedding"]) == 384
    assert "converting all-MiniLM-L6-v2" not in logs  # the image holds its ONNX graph
    assert user == "10001"
    assert "Application shutdown complete" in logs


def test_the_image_refuses_to_serve_without_auth_chosen(engine: Engine, image: str) -> None:
    done = subprocess.run(
        [engine.cli, "run", "--rm", image], capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0 without authentication" in done.stderr


def test_the_compose_stack_serves_through_the_proxy(engine: Engine, image: str) -> None:
    compose = ["compose", "--file", str(ROOT / "deploy/compose.yaml"), "--project-name"]
    compose.append("agentloom-test")
    if subprocess.run([engine.cli, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip(f"`{engine.cli} compose` is not installed")
    http_port = unused_port()
    env = os.environ | {
        "POSTGRES_PASSWORD": "postgres-password-for-the-engine-test",
        "AGENTLOOM_ADMIN_KEY": ADMIN_KEY,
        "AGENTLOOM_HTTP_PORT": str(http_port),
        "AGENTLOOM_HTTPS_PORT": str(unused_port()),
    }
    try:
        engine.run(*compose, "up", "--detach", "--build", "--wait", timeout=BUILD_TIMEOUT, env=env)
        listed = engine.run(*compose, "ps", "--format", "json", env=env)
        with httpx2.Client(base_url=f"http://127.0.0.1:{http_port}/v1", timeout=30) as http:
            health = [http.get("/health").status_code for _ in range(6)]
            unkeyed = http.get("/models")
            admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
            projects = http.get("/organization/projects", headers=admin)
    finally:
        subprocess.run(
            [engine.cli, *compose, "down", "--volumes", "--remove-orphans"],
            env=env, capture_output=True, timeout=300, check=False,
        )  # fmt: skip

    # one JSON object a line (compose >= 2.21), or one array (older)
    rows = (
        json.loads(listed)
        if listed.startswith("[")
        else [json.loads(line) for line in listed.splitlines() if line.strip()]
    )
    states = {row["Service"]: row.get("Health") or row["State"] for row in rows}
    assert states == {
        "postgres": "healthy",
        "agentloom-1": "healthy",
        "agentloom-2": "healthy",
        "proxy": "running",
    }
    assert health == [200] * 6
    assert unkeyed.status_code == 401  # AGENTLOOM_AUTH=keys
    assert projects.status_code == 200
