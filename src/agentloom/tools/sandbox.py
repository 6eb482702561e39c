"""The sandbox seam: run untrusted Python in a working directory, within limits.

Two implementations, in :data:`SANDBOXES`:

- ``bwrap`` (bubblewrap, Debian package ``bubblewrap``): new network, PID, IPC and UTS
  namespaces (no network but a private loopback), a fresh root holding only read-only ``/usr``
  and the Python runtime, a tmpfs ``/tmp``, and the working directory bound read-write at
  ``/mnt/data`` — the only writable place. Package directories (``packages``, default: the
  server's venv ``site-packages``) are bound read-only at ``/opt/packages/<n>`` and put on
  ``PYTHONPATH``, so nothing else of the tree they sit in becomes visible. When the server
  runs as root, the code runs as an unprivileged user (``uid``, default ``nobody``) with no
  capabilities, so the process limit counts that user only.
- ``subprocess``: the resource limits alone, no namespaces. The code sees the host's files
  (whatever its user may read) and the network; the package directories are on its
  ``PYTHONPATH`` where they are. Use it only where bubblewrap cannot run.

Both apply the same resource limits (address space, CPU seconds, processes, file size, open
files), a wall-clock timeout that kills the whole process tree, and a cap on the output read.

A bwrap sandbox may also be given ``binds`` (host paths shown inside, read-only unless marked
writable; the caller checks them: see :mod:`agentloom.agents.sandbox_policy`) and
``network=True`` (the host's network namespace, with the resolver and CA files of ``/etc``
read-only); the code interpreter uses neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import signal
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Literal, Protocol

from agentloom.frozen import frozen

SandboxKind = Literal["bwrap", "subprocess"]
MOUNT = "/mnt/data"  # where the working directory appears inside the bwrap sandbox
PACKAGES_MOUNT = "/opt/packages"  # package directory n appears at PACKAGES_MOUNT/n inside bwrap
NOBODY = 65534
MAX_LISTED_FILES = 1000
_CHUNK = 65536


@frozen
class Limits:
    wall_seconds: float = 30.0
    cpu_seconds: int = 30
    memory_bytes: int = 1 << 30  # address space
    processes: int = 64  # of the sandbox's user
    file_bytes: int = 100 << 20  # largest file the code may write
    open_files: int = 256
    output_bytes: int = 1 << 20  # stdout + stderr kept; past it the run is killed


@frozen
class Bind:
    """A host directory or file shown inside a bwrap sandbox at ``target``."""

    source: Path
    target: str
    writable: bool = False


# What a sandbox with network needs of /etc to resolve names and check certificates.
NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
)


@frozen
class RunResult:
    stdout: str
    stderr: str
    exit_code: int | None  # negative: killed by that signal; None: never started
    timed_out: bool = False
    truncated: bool = False  # the output passed the cap; the run was killed there
    files: tuple[str, ...] = ()  # what the working directory holds afterwards (relative paths)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.truncated


class Sandbox(Protocol):
    """Runs Python source in ``workdir`` (created by the caller) within ``limits``;
    :meth:`prepare` gives the command for a process the caller runs itself (the agents' REPL)."""

    @property
    def kind(self) -> SandboxKind: ...

    async def run(self, code: str, *, workdir: Path, limits: Limits) -> RunResult: ...

    def prepare(
        self, workdir: Path, limits: Limits, args: Sequence[str] = ...
    ) -> SandboxCommand: ...


class SandboxUnavailableError(RuntimeError):
    """The configured sandbox cannot run on this machine."""


@frozen
class SandboxCommand:
    """How to start the sandboxed interpreter: what :meth:`prepare` returns."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    preexec: Callable[[], None]


def _limiter(limits: Limits, uid: int | None) -> Callable[[], None]:
    """What the child runs before exec: its rlimits and, in the fallback, the user switch."""
    pairs = [
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ]

    def preexec() -> None:
        for which, value in pairs:
            hard = resource.getrlimit(which)[1]  # never more than this process has itself
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

    return preexec


def _python(configured: str) -> str:
    """The interpreter binary: the configured one, else the server's own (not the venv's
    link to it)."""
    return os.path.realpath(configured or sys.executable)


def default_packages(python: str = "") -> tuple[Path, ...]:
    """The package directories the code sees by default: the server's venv ``site-packages``
    when the server's own interpreter runs from a venv (and ``python`` is not another one)."""
    if python or sys.prefix == sys.base_prefix:
        return ()
    paths = sysconfig.get_paths()
    found = dict.fromkeys(Path(paths[key]) for key in ("purelib", "platlib"))
    return tuple(path for path in found if path.is_dir())


def _check_packages(packages: Sequence[Path]) -> tuple[Path, ...]:
    """The package directories, resolved; SandboxUnavailableError naming a missing one."""
    for path in packages:
        if not path.is_dir():
            raise SandboxUnavailableError(
                f"[code_interpreter] packages: {path} is not a directory on this server"
            )
    return tuple(path.resolve() for path in packages)


def _runs_as_root() -> bool:
    return os.geteuid() == 0


# The interpreter's flags: no user site; PYTHONPATH (the package directories) is honoured, so
# the environment is always the one built here (the sandboxes pass no other variable), and
# PYTHONSAFEPATH keeps the working directory off sys.path.
_FLAGS = ("-s", "-")


def _minimal_env(home: str, packages: Sequence[str] = ()) -> dict[str, str]:
    env = {"HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env["PYTHONSAFEPATH"] = "1"
    if packages:
        env["PYTHONPATH"] = os.pathsep.join(packages)
    return env


@frozen
class SubprocessSandbox:
    """Resource limits only — no filesystem or network isolation (see the module doc)."""

    uid: int = NOBODY  # used when the server runs as root
    python: str = ""  # the interpreter; default: the server's
    packages: tuple[Path, ...] = ()  # on PYTHONPATH, where they are

    @property
    def kind(self) -> SandboxKind:
        return "subprocess"

    def prepare(
        self, workdir: Path, limits: Limits, args: Sequence[str] = _FLAGS
    ) -> SandboxCommand:
        """The command running the interpreter with ``args`` in ``workdir`` (handed to the
        sandbox's user when the server is root): for callers running a long-lived process."""
        uid = self.uid if _runs_as_root() else None
        if uid is not None:
            os.chown(workdir, uid, uid)
        return SandboxCommand(
            argv=[_python(self.python), *args],
            cwd=workdir,
            env=_minimal_env(str(workdir), [str(path) for path in self.packages]),
            preexec=_limiter(limits, uid),
        )

    async def run(self, code: str, *, workdir: Path, limits: Limits) -> RunResult:
        command = self.prepare(workdir, limits)
        try:
            return await execute(command, code, workdir, limits)
        except PermissionError as exc:
            raise SandboxUnavailableError(
                f"the sandbox user (uid {self.uid}) cannot run {command.argv[0]}: set "
                "[code_interpreter] python to an interpreter every user may run, e.g. "
                "/usr/bin/python3"
            ) from exc


# Run first inside the bwrap sandbox when the server is root: drop to the unprivileged user
# (which clears every capability), enter the working directory (which may be private to that
# user), then run the interpreter with the remaining arguments (by default: the code read from
# stdin).
_DROP = (
    "import os,sys\n"
    "u=int(sys.argv[1]); os.setgroups([]); os.setresgid(u,u,u); os.setresuid(u,u,u)\n"
    f"os.chdir({MOUNT!r}); os.execv(sys.executable,[sys.executable,*sys.argv[2:]])\n"
)


@frozen
class BwrapSandbox:
    """Bubblewrap namespaces plus the resource limits (see the module doc)."""

    uid: int = NOBODY  # the user the code runs as when the server is root
    python: str = ""  # the interpreter; default: the server's (its prefix is bound read-only)
    packages: tuple[Path, ...] = ()  # bound read-only at PACKAGES_MOUNT/<n>, on PYTHONPATH
    binary: str = field(default_factory=lambda: shutil.which("bwrap") or "bwrap")
    network: bool = False  # the host's network (default: none, only a private loopback)
    binds: tuple[Bind, ...] = ()  # more host paths, bound last (checked by the caller)

    @property
    def kind(self) -> SandboxKind:
        return "bwrap"

    def prepare(
        self, workdir: Path, limits: Limits, args: Sequence[str] = _FLAGS
    ) -> SandboxCommand:
        """The command running the interpreter with ``args`` in the sandbox (``workdir`` at
        :data:`MOUNT`): for callers running a long-lived process."""
        root = _runs_as_root()
        if root:
            os.chown(workdir, self.uid, self.uid)
        python = _python(self.python)
        tail = ["-I", "-S", "-c", _DROP, str(self.uid), *args] if root else list(args)
        return SandboxCommand(
            argv=[*self._options(workdir, python, root), python, *tail],
            cwd=workdir,
            env=_minimal_env(MOUNT),
            preexec=_limiter(limits, None),
        )

    async def run(self, code: str, *, workdir: Path, limits: Limits) -> RunResult:
        command = self.prepare(workdir, limits)
        result = await execute(command, code, workdir, limits)
        return replace(result, exit_code=_signalled(result.exit_code))

    def _options(self, workdir: Path, python: str, root: bool) -> list[str]:
        return [
            self.binary,
            *_unshare(root, self.network),
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            *_env_options(self._mounted_packages()),
            *_system_mounts(),
            *_ro_bind(Path(python).parent.parent),  # the interpreter's prefix
            *self._package_mounts(),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--dir",
            "/mnt",
            "--bind",
            str(workdir.resolve()),
            MOUNT,
            *(_network_files() if self.network else []),
            *_binds(self.binds),
            "--chdir",
            "/" if root else MOUNT,  # as root, _DROP enters it once it is the user
        ]

    def _mounted_packages(self) -> list[str]:
        return [f"{PACKAGES_MOUNT}/{n}" for n in range(len(self.packages))]

    def _package_mounts(self) -> list[str]:
        """Each package directory read-only at its own neutral place: the tree it sits in
        (the project, its data directory) stays out of sight."""
        options: list[str] = []
        if self.packages:
            for folder in ("/opt", PACKAGES_MOUNT):
                options += ["--perms", "0755", "--dir", folder]
        for path, mount in zip(self.packages, self._mounted_packages(), strict=True):
            options += ["--ro-bind", str(path), mount]
        return options


def _unshare(root: bool, network: bool) -> list[str]:
    """Every namespace bwrap can make new, the network's unless ``network``."""
    if not root:
        return ["--unshare-all", *(["--share-net"] if network else [])]
    # privileged mode: namespaces without a user namespace, then drop (see _DROP)
    options = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    options += [] if network else ["--unshare-net"]
    options += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return options


def _network_files() -> list[str]:
    options: list[str] = []
    for path in NETWORK_FILES:
        if Path(path).exists():
            options += ["--ro-bind", path, path]
    return options


def _binds(binds: Sequence[Bind]) -> list[str]:
    """Each bind at its target, its missing parents made traversable first (see _ro_bind)."""
    options: list[str] = []
    for bind in binds:
        for parent in reversed(Path(bind.target).parents):
            if str(parent) != "/":
                options += ["--perms", "0755", "--dir", str(parent)]
        flag = "--bind" if bind.writable else "--ro-bind"
        options += [flag, str(bind.source), bind.target]
    return options


def _signalled(code: int | None) -> int | None:
    """bwrap reports a child killed by signal N as exit status 128 + N: make it -N, as for a
    direct child."""
    return 128 - code if code is not None and 128 < code <= 128 + 64 else code


def _env_options(packages: Sequence[str]) -> list[str]:
    options: list[str] = []
    for name, value in _minimal_env(MOUNT, packages).items():
        options += ["--setenv", name, value]
    return options


def _system_mounts() -> list[str]:
    """Read-only ``/usr`` (libc and friends) and the top-level links or folders into it."""
    options = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        path = Path(top)
        if path.is_symlink():
            options += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            options += ["--ro-bind", top, top]
    return options


def _ro_bind(path: Path) -> list[str]:
    """Bind ``path`` read-only at the same place; its parents are made traversable (bwrap
    would create them mode 0700, which the unprivileged user cannot enter)."""
    if path.is_relative_to("/usr"):
        return []
    parents = [p for p in reversed(path.parents) if str(p) != "/"]
    options: list[str] = []
    for parent in parents:
        options += ["--perms", "0755", "--dir", str(parent)]
    return [*options, "--ro-bind", str(path), str(path)]


async def spawn(command: SandboxCommand, *, limit: int = 2**16) -> asyncio.subprocess.Process:
    """Start ``command`` in a session of its own (so its whole group can be killed), with
    pipes on stdin, stdout and stderr; ``limit`` bounds one line read from its output."""
    return await asyncio.create_subprocess_exec(
        *command.argv,
        cwd=command.cwd,
        env=command.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=command.preexec,
        start_new_session=True,
        limit=limit,
    )


async def execute(command: SandboxCommand, code: str, workdir: Path, limits: Limits) -> RunResult:
    """Run ``command`` with ``code`` on its stdin; read its output up to the cap; kill its
    process group on timeout or overflow."""
    process = await spawn(command)
    capture = _Capture(limits.output_bytes, lambda: _kill(process))
    timed_out = False
    try:
        async with asyncio.timeout(limits.wall_seconds):
            await _communicate(process, code, capture)
    except TimeoutError:
        timed_out = True
    finally:
        _kill(process)
        await process.wait()
    files = await asyncio.to_thread(list_files, workdir)
    return RunResult(
        stdout=capture.text(0),
        stderr=capture.text(1),
        exit_code=process.returncode,
        timed_out=timed_out,
        truncated=capture.overflowed,
        files=files,
    )


async def _communicate(process: asyncio.subprocess.Process, code: str, capture: _Capture) -> None:
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(code.encode())
        await process.stdin.drain()
        process.stdin.close()
    await asyncio.gather(
        capture.read(process.stdout, 0), capture.read(process.stderr, 1), process.wait()
    )


class _Capture:
    """Both output streams, read in chunks against one shared byte budget."""

    def __init__(self, budget: int, on_overflow: Callable[[], None]) -> None:
        self._budget = budget
        self._parts: tuple[bytearray, bytearray] = (bytearray(), bytearray())
        self._on_overflow = on_overflow
        self.overflowed = False

    async def read(self, stream: asyncio.StreamReader, which: int) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self._budget - len(self._parts[0]) - len(self._parts[1])
            self._parts[which].extend(chunk[: max(room, 0)])
            if len(chunk) > room and not self.overflowed:
                self.overflowed = True
                self._on_overflow()

    def text(self, which: int) -> str:
        return self._parts[which].decode("utf-8", errors="replace")


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def list_files(workdir: Path) -> tuple[str, ...]:
    """Regular files under ``workdir`` (relative, sorted; links are not followed)."""
    found: list[str] = []
    for folder, dirs, names in os.walk(workdir):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                found.append(str(path.relative_to(workdir)))
            if len(found) >= MAX_LISTED_FILES:
                return tuple(found)
    return tuple(found)


SANDBOXES: dict[SandboxKind, Callable[[int, str, tuple[Path, ...]], Sandbox]] = {
    "bwrap": lambda uid, python, packages: BwrapSandbox(uid, python, packages),
    "subprocess": lambda uid, python, packages: SubprocessSandbox(uid, python, packages),
}


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


def build_sandbox(
    kind: SandboxKind, *, uid: int = NOBODY, python: str = "", packages: Sequence[Path] = ()
) -> Sandbox:
    """The configured sandbox. ``bwrap`` requires bubblewrap; ``subprocess`` allows the
    weaker fallback, used only when bubblewrap is missing. ``packages``: directories the code
    may import from (read-only); a missing one is a SandboxUnavailableError."""
    if kind == "bwrap" and not bwrap_available():
        raise SandboxUnavailableError(
            "code_interpreter needs bubblewrap ('bwrap'), which is not installed: install it "
            "(Debian/Ubuntu: apt-get install -y bubblewrap; `make install` does it as root), or "
            'set [code_interpreter] sandbox = "subprocess" to accept the weaker fallback.'
        )
    chosen: SandboxKind = "bwrap" if bwrap_available() else "subprocess"
    return SANDBOXES[chosen](uid, python, _check_packages(packages))
