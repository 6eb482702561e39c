"""The sandboxed agent's runners, probed from inside: a script run through the runner's own
command (in place of the child module) reports what it can see, write and reach.

bubblewrap is the real thing here (required in CI); Docker and Podman run only where an engine
answers, and otherwise only their command line is checked."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentloom.agents.sandbox_policy import CheckedMount, SandboxSpec
from agentloom.agents.sandbox_runners import (
    CHILD_MODULE,
    BwrapRunner,
    ContainerRunner,
    RunnerJob,
    build_runner,
    engine_answers,
)
from agentloom.errors import InvalidRequestError
from agentloom.json_types import JSONObject
from agentloom.tools.sandbox import Limits, execute

LIMITS = Limits(wall_seconds=20.0, cpu_seconds=20, memory_bytes=1 << 30, output_bytes=64 << 10)

PROBE = """
import json, os, socket, sys
report = {"env": sorted(os.environ), "cwd": os.getcwd(), "uid": os.getuid()}
def can_read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return type(e).__name__
def can_write(path):
    try:
        with open(path, "w") as f:
            f.write("written inside")
        return True
    except OSError as e:
        return type(e).__name__
def connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return True
    except OSError as e:
        return type(e).__name__
args = json.loads(sys.stdin.readline())
report["read"] = {p: can_read(p) for p in args["read"]}
report["exists"] = {p: os.path.exists(p) for p in args["exists"]}
report["write"] = {p: can_write(p) for p in args["write"]}
report["connects"] = connects(args["port"])
import agentloom
report["agentloom"] = agentloom.__file__
print(json.dumps(report))
"""


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    """A TCP port on the host's loopback that accepts connections."""

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A read-only mount, a writable one, and a sibling of theirs that is not mounted."""
    found = {name: tmp_path / name for name in ("scratch", "shown", "writable", "hidden")}
    for path in found.values():
        path.mkdir()
    (found["shown"] / "data.txt").write_text("visible")
    (found["hidden"] / "secret.txt").write_text("not for the sandbox")
    for path in (tmp_path, found["shown"]):  # as root, the sandbox's user must get in
        path.chmod(0o755)
    found["writable"].chmod(0o777)
    return found


async def _probe(runner: BwrapRunner, job: RunnerJob, args: JSONObject) -> JSONObject:
    command = runner.prepare(job)
    result = await execute(command, json.dumps(args) + "\n", job.workdir, LIMITS)
    assert result.ok, result
    report: JSONObject = json.loads(result.stdout)
    return report


def _job(places: dict[str, Path], *, network: bool = False) -> RunnerJob:
    mounts = (CheckedMount(places["shown"]), CheckedMount(places["writable"], writable=True))
    return RunnerJob(
        name="probe",
        workdir=places["scratch"],
        mounts=mounts,
        network=network,
        limits=LIMITS,
        args=("-s", "-c", PROBE),
    )


INVISIBLE = ["/work", "/root/.ssh", "/etc/passwd", "/home"]  # host places never shown


def _args(places: dict[str, Path], port: int) -> JSONObject:
    return {
        "read": [str(places["shown"] / "data.txt"), str(places["hidden"] / "secret.txt")],
        "exists": [str(places["hidden"]), *INVISIBLE],
        "write": [str(places["shown"] / "new.txt"), str(places["writable"] / "out.txt")],
        "port": port,
    }


@pytest.mark.usefixtures("requires_sandbox")
async def test_bwrap_shows_only_the_mounts_read_only_unless_writable(
    places: dict[str, Path], listener: int
) -> None:
    report = await _probe(BwrapRunner(), _job(places), _args(places, listener))
    shown, hidden = places["shown"], places["hidden"]
    assert report["read"] == {
        str(shown / "data.txt"): "visible",
        str(hidden / "secret.txt"): "FileNotFoundError",
    }
    assert report["exists"] == dict.fromkeys([str(hidden), *INVISIBLE], False)
    writable = places["writable"] / "out.txt"
    assert report["write"] == {str(shown / "new.txt"): "OSError", str(writable): True}
    assert writable.read_text() == "written inside"
    assert not (shown / "new.txt").exists()
    assert report["cwd"] == "/mnt/data"
    assert report["agentloom"].startswith("/opt/packages/")  # bound read-only, imported


@pytest.mark.usefixtures("requires_sandbox")
async def test_bwrap_has_no_network_unless_allowed(places: dict[str, Path], listener: int) -> None:
    closed = await _probe(BwrapRunner(), _job(places), _args(places, listener))
    opened = await _probe(BwrapRunner(), _job(places, network=True), _args(places, listener))
    assert closed["connects"] == "ConnectionRefusedError"  # its own empty loopback
    assert opened["connects"] is True  # the host's loopback


@pytest.mark.usefixtures("requires_sandbox")
async def test_bwrap_passes_no_environment_of_this_process(
    places: dict[str, Path], listener: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLOOM_API_KEY", "sk-not-for-the-sandbox")
    report = await _probe(BwrapRunner(), _job(places), _args(places, listener))
    allowed = {"HOME", "PATH", "PWD", "LANG", "LC_ALL", "PYTHONSAFEPATH", "PYTHONPATH"}
    assert set(report["env"]) <= allowed
    if os.geteuid() == 0:
        assert report["uid"] == 65534  # as root, the child runs as nobody


def test_the_container_command_isolates_and_carries_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLOOM_API_KEY", "sk-not-for-the-container")
    runner = ContainerRunner("docker", "agentloom-server:local", "/usr/bin/docker")
    mounts = (CheckedMount(tmp_path / "a"), CheckedMount(tmp_path / "b", writable=True))
    command = runner.prepare(RunnerJob("run-1", tmp_path, mounts, limits=LIMITS))
    argv = " ".join(command.argv)
    assert "--network none" in argv
    assert "--cap-drop ALL" in argv
    assert "--read-only" in argv
    assert f"type=bind,source={tmp_path}/a,target={tmp_path}/a,readonly" in argv
    assert f"type=bind,source={tmp_path}/b,target={tmp_path}/b --" in argv + " --"
    assert argv.endswith(f"agentloom-server:local -s -m {CHILD_MODULE}")
    assert "sk-not" not in argv
    assert "sk-not" not in json.dumps(command.env)
    assert "AGENTLOOM_API_KEY" not in command.env
    networked = runner.prepare(RunnerJob("run-2", tmp_path, network=True, limits=LIMITS))
    assert "--network bridge" in " ".join(networked.argv)


def test_a_mount_a_container_engine_cannot_take_is_refused(tmp_path: Path) -> None:
    runner = ContainerRunner("podman", "img", "/usr/bin/podman")
    job = RunnerJob("run", tmp_path, (CheckedMount(tmp_path / "a,b"),), limits=LIMITS)
    with pytest.raises(InvalidRequestError, match="a ',' in its path"):
        runner.prepare(job)


@pytest.mark.skipif(shutil.which("podman") is not None, reason="podman is installed here")
def test_a_missing_engine_names_what_to_install() -> None:
    with pytest.raises(InvalidRequestError, match="podman runner needs the podman CLI"):
        build_runner(SandboxSpec(runner="podman"))


@pytest.mark.parametrize("engine", ["docker", "podman"])
async def test_a_container_engine_that_answers_runs_the_probe(
    engine: str, places: dict[str, Path], listener: int
) -> None:
    if not await engine_answers(engine):  # type: ignore[arg-type]
        pytest.skip(f"no {engine} engine answers here")
    image = os.environ.get("AGENTLOOM_SANDBOX_IMAGE", "agentloom-server:local")
    runner = build_runner(SandboxSpec(runner=engine, image=image))  # type: ignore[arg-type]
    job = _job(places)
    command = runner.prepare(job)
    args = json.dumps(_args(places, listener)) + "\n"
    result = await execute(command, args, job.workdir, LIMITS)
    await runner.stop(job)
    if not result.ok and "Unable to find image" in result.stderr:
        pytest.skip(f"the image {image} is not built here")
    report = json.loads(result.stdout)
    assert report["read"][str(places["hidden"] / "secret.txt")] == "FileNotFoundError"
    assert report["connects"] == "ConnectionRefusedError"  # no network
