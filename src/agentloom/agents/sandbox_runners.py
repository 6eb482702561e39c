"""Where a sandboxed agent's child runs: one small seam, three runners in :data:`RUNNERS`.

A :class:`Runner` turns a :class:`RunnerJob` (a scratch directory, checked mounts, network or
not, limits) into the command that starts the child (``python -m`` :data:`CHILD_MODULE`) with
its stdin and stdout as the channel, and stops what the command leaves behind.

- ``bwrap``: the code sandbox of :mod:`agentloom.tools.sandbox` (namespaces, a fresh root with
  read-only ``/usr`` and the interpreter, the scratch directory at ``/mnt/data``, rlimits; as
  root, an unprivileged user). The agentloom package and the server's ``site-packages`` are
  bound read-only for the child to import; mounts are bound at their own paths.
- ``docker`` / ``podman``: ``run --rm -i`` of an image with agentloom installed (default: the
  project's ``agentloom-server:local``), no network unless allowed, every capability dropped,
  a read-only root, the scratch directory at ``/mnt/data``, the mounts at their own paths. Used
  when the engine answers; its limits are the engine's (memory, processes).

Each runner has :class:`RunSlots`: how many of its runs may be going at once. A container
runner allows ``max_concurrent`` (default 5, the spec's) containers at a time, and a run past
that waits for a slot until its own deadline (the spec's wall clock); bubblewrap runs are not
bounded unless a ``max_concurrent`` is given. Agents sharing a runner share its slots.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import field
from pathlib import Path
from typing import Literal, Protocol

import agentloom
from agentloom.agents.sandbox_policy import CheckedMount, RunnerName, SandboxSpec
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.tools.sandbox import (
    MOUNT,
    Bind,
    BwrapSandbox,
    Limits,
    SandboxCommand,
    bwrap_available,
    default_packages,
)

__all__ = [
    "CHILD_MODULE",
    "RUNNERS",
    "BwrapRunner",
    "ContainerRunner",
    "NoFreeSlot",
    "RunSlots",
    "Runner",
    "RunnerJob",
    "build_runner",
    "engine_answers",
]

CHILD_MODULE = "agentloom.agents._sandboxed_child"
CHILD_ARGS = ("-s", "-m", CHILD_MODULE)
Engine = Literal["docker", "podman"]
# What an engine's CLI may need of this process's environment (never anything else: the
# child's secrets travel on its stdin).
_ENGINE_ENV: tuple[str, ...] = ("PATH", "HOME", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG")
_ENGINE_ENV += ("CONTAINER_HOST", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME")


@frozen
class RunnerJob:
    """One run: ``name`` is unique to it (the container's name); ``args`` the interpreter's."""

    name: str
    workdir: Path
    mounts: tuple[CheckedMount, ...] = ()
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    args: tuple[str, ...] = CHILD_ARGS


class NoFreeSlot(Exception):
    """No slot of a runner was free before the run's deadline."""

    def __init__(self, limit: int | None) -> None:
        super().__init__(f"all {limit} slots stayed taken")
        self.limit = limit


class RunSlots:
    """At most ``limit`` runs at a time (``None``: no bound). One event loop uses them."""

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            raise InvalidRequestError(
                f"max_concurrent must be at least 1, not {limit}", param="max_concurrent"
            )
        self.limit = limit
        self._free = asyncio.Semaphore(limit) if limit is not None else None
        self.running = 0

    @asynccontextmanager
    async def hold(self, deadline: float) -> AsyncIterator[None]:
        """A slot for the block; :class:`NoFreeSlot` when none is free by ``deadline`` (the
        event loop's clock)."""
        if self._free is not None:
            try:
                async with asyncio.timeout_at(deadline):
                    await self._free.acquire()
            except TimeoutError:
                raise NoFreeSlot(self.limit) from None
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            if self._free is not None:
                self._free.release()


class Runner(Protocol):
    @property
    def name(self) -> RunnerName: ...

    @property
    def slots(self) -> RunSlots:
        """How many runs may be going at once (shared by the agents using this runner)."""
        ...

    def prepare(self, job: RunnerJob) -> SandboxCommand:
        """The command starting the child, its stdin and stdout the channel."""
        ...

    async def stop(self, job: RunnerJob) -> None:
        """Stop whatever of the run outlives the command's process group."""
        ...


def agentloom_packages() -> tuple[Path, ...]:
    """What the child imports from: the directory holding this agentloom package first, then
    the server's ``site-packages`` (each once)."""
    source = Path(agentloom.__file__).resolve().parent.parent
    found = dict.fromkeys(path.resolve() for path in (source, *default_packages()))
    return tuple(found)


@frozen
class BwrapRunner:
    python: str = ""  # the interpreter; default: this process's
    max_concurrent: int | None = None  # runs at once; None: no bound
    slots: RunSlots = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", RunSlots(self.max_concurrent))

    @property
    def name(self) -> RunnerName:
        return "bwrap"

    def prepare(self, job: RunnerJob) -> SandboxCommand:
        binds = tuple(Bind(m.source, m.target, m.writable) for m in job.mounts)
        sandbox = BwrapSandbox(
            python=self.python, packages=agentloom_packages(), network=job.network, binds=binds
        )
        return sandbox.prepare(job.workdir, job.limits, job.args)

    async def stop(self, job: RunnerJob) -> None:
        return None  # killing the command's group ends bwrap; --die-with-parent the rest


@frozen
class ContainerRunner:
    engine: Engine
    image: str
    binary: str
    max_concurrent: int = 5  # containers running at once; more wait for a slot
    slots: RunSlots = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", RunSlots(self.max_concurrent))

    @property
    def name(self) -> RunnerName:
        return self.engine

    def prepare(self, job: RunnerJob) -> SandboxCommand:
        argv = [self.binary, "run", "--rm", "--interactive", "--name", job.name]
        argv += ["--label", "agentloom.sandbox"]
        argv += ["--network", "bridge" if job.network else "none"]
        argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only"]
        argv += ["--tmpfs", "/tmp", "--pids-limit", str(job.limits.processes)]
        argv += ["--memory", str(job.limits.memory_bytes), *self._user()]
        argv += _mount_flags(job.workdir, MOUNT, writable=True)
        for mount in job.mounts:
            argv += _mount_flags(mount.source, mount.target, writable=mount.writable)
        argv += ["--workdir", MOUNT, "--env", f"HOME={MOUNT}", "--entrypoint", "python"]
        argv += [self.image, *job.args]
        env = {name: os.environ[name] for name in _ENGINE_ENV if name in os.environ}
        return SandboxCommand(argv=argv, cwd=job.workdir, env=env, preexec=_nothing)

    async def stop(self, job: RunnerJob) -> None:
        """Remove the container (killing the CLI does not stop it)."""
        process = await asyncio.create_subprocess_exec(
            self.binary,
            "rm",
            "--force",
            job.name,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await process.wait()

    def _user(self) -> list[str]:
        """The container runs as this process's user (it owns the scratch directory)."""
        user = ["--user", f"{os.getuid()}:{os.getgid()}"]
        if self.engine == "podman" and os.geteuid() != 0:
            user += ["--userns", "keep-id"]
        return user


def _mount_flags(source: Path, target: str, *, writable: bool) -> list[str]:
    for path in (str(source), target):
        if "," in path or "\n" in path:
            raise InvalidRequestError(
                f"mount {path!r} cannot be given to a container engine (a ',' in its path)",
                param="mounts",
            )
    flags = f"type=bind,source={source},target={target}"
    return ["--mount", flags if writable else f"{flags},readonly"]


def _nothing() -> None:
    return None


def _bwrap(spec: SandboxSpec) -> Runner:
    if not bwrap_available():
        raise InvalidRequestError(
            "the sandboxed agent's bwrap runner needs bubblewrap, which is not installed: "
            "install it (Debian/Ubuntu: apt-get install -y bubblewrap), or pick the docker or "
            "podman runner"
        )
    return BwrapRunner()


def _container(engine: Engine) -> Callable[[SandboxSpec], Runner]:
    def build(spec: SandboxSpec) -> Runner:
        binary = shutil.which(engine)
        if binary is None:
            raise InvalidRequestError(
                f"the sandboxed agent's {engine} runner needs the {engine} CLI and a running "
                f"engine; {engine} is not installed (or pick the bwrap runner)"
            )
        return ContainerRunner(engine, spec.image, binary, spec.max_concurrent)

    return build


RUNNERS: dict[RunnerName, Callable[[SandboxSpec], Runner]] = {
    "bwrap": _bwrap,
    "docker": _container("docker"),
    "podman": _container("podman"),
}


def build_runner(spec: SandboxSpec) -> Runner:
    """The spec's runner; ``InvalidRequestError`` naming what to install when it cannot run."""
    return RUNNERS[spec.runner](spec)


async def engine_answers(engine: Engine, timeout: float = 10.0) -> bool:  # noqa: ASYNC109
    """Whether ``engine`` is installed and its engine answers ``info`` within ``timeout``."""
    binary = shutil.which(engine)
    if binary is None:
        return False
    process = await asyncio.create_subprocess_exec(
        binary, "info", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        async with asyncio.timeout(timeout):
            return await process.wait() == 0
    except TimeoutError:
        process.kill()
        await process.wait()
        return False
