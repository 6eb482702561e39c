"""What a sandboxed agent may see: host paths checked against an allowlist, and its settings.

A mount is a host path the sandboxed agent sees at the same path, read-only unless it asks to
write. :func:`check_mounts` accepts it only if

- it is absolute, written without ``..``, and exists;
- its real path (every symlink resolved) lies under an allowed root's real path, and a
  writable mount lies under a root that allows writing;
- no component of its real path matches a blocked name (``.ssh``, ``*.pem`` ...): a second
  line of defence, it does not look inside a mounted directory;
- it does not cover the sandbox's own places (``/usr``, ``/proc``, ``/mnt/data`` ...).

Anything else is a :class:`MountRefusedError` (an ``InvalidRequestError``) naming the path and
the rule. No roots, no mounts: the default allowlist refuses every path.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Literal, NoReturn

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.tools.sandbox import MOUNT, PACKAGES_MOUNT, Limits

__all__ = [
    "BLOCKED_NAMES",
    "AllowedRoot",
    "CheckedMount",
    "ModelAccess",
    "Mount",
    "MountAllowlist",
    "MountRefusedError",
    "RunnerName",
    "SandboxSpec",
    "check_mounts",
]

RunnerName = Literal["bwrap", "docker", "podman"]
ModelAccess = Literal["proxy", "direct"]

# Names (fnmatch patterns) no component of a mounted path may have: keys, credentials, tokens.
BLOCKED_NAMES: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".env",
    ".env.*",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "credentials*",
    "secrets*",
    "shadow",
    "gshadow",
)
# The sandbox's own places: a mount may not cover (or sit inside) any of them.
SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/proc", "/dev", "/etc")
RESERVED: tuple[str, ...] = (*SYSTEM, MOUNT, PACKAGES_MOUNT)
# Default limits of a sandboxed run: its wall clock is the whole run's.
SANDBOX_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=600, memory_bytes=2 << 30)


class MountRefusedError(InvalidRequestError):
    """A mount the allowlist does not allow."""


@frozen
class Mount:
    """A host path to show inside the sandbox (at the same path)."""

    path: str | Path
    writable: bool = False


@frozen
class AllowedRoot:
    """A host directory under which mounts are allowed (writable ones only if ``writable``)."""

    path: str | Path
    writable: bool = False


@frozen
class MountAllowlist:
    roots: tuple[AllowedRoot, ...] = ()
    blocked: tuple[str, ...] = BLOCKED_NAMES


@frozen
class CheckedMount:
    """A mount that passed the allowlist: its real path, shown inside at that same path."""

    source: Path
    writable: bool = False

    @property
    def target(self) -> str:
        return str(self.source)


@frozen
class SandboxSpec:
    """How a ``sandboxed`` agent runs: the inner agent (a name of the agent table, its tools by
    name), the runner, what it may see (``mounts`` under ``allowlist``; ``workspace``, one of
    them, is where its file tools work), whether it has a network, how it reaches the model
    and its limits.

    ``model_access``: ``proxy`` (default) sends each model call over the runner's stdin/stdout
    to this process, which makes it: the sandbox needs no network and never holds the API key.
    ``direct`` (needs ``allow_network``) gives the child the endpoint and the API key (in the
    payload on its stdin, never in its environment or arguments) and it calls the model itself.
    """

    agent: str = "orchestrator"
    tools: tuple[str, ...] = ()
    runner: RunnerName = "bwrap"
    mounts: tuple[Mount, ...] = ()
    allowlist: MountAllowlist = field(default_factory=MountAllowlist)
    workspace: str | Path | None = None  # one of the mounts; default: the scratch directory
    allow_network: bool = False
    model_access: ModelAccess = "proxy"
    limits: Limits = SANDBOX_LIMITS
    max_model_calls: int = 100  # proxied calls a run may make (a runaway child spends no more)
    image: str = "agentloom-server:local"  # docker / podman: an image with agentloom installed
    max_concurrent: int = 5  # docker / podman: containers of the agent's runner at once


def check_mounts(mounts: Sequence[Mount], allowlist: MountAllowlist) -> tuple[CheckedMount, ...]:
    """Each mount checked (see the module doc); :class:`MountRefusedError` on the first refusal."""
    roots = [(_real_root(root.path), root.writable) for root in allowlist.roots]
    return tuple(_check(mount, roots, allowlist.blocked) for mount in mounts)


def _check(mount: Mount, roots: list[tuple[Path, bool]], blocked: Sequence[str]) -> CheckedMount:
    given = Path(mount.path)
    real = _real_path(given)
    if not roots:
        _refuse(given, "no mount roots are allowed (the allowlist is empty)")
    allowing = [writable for root, writable in roots if real.is_relative_to(root)]
    if not allowing:
        _refuse(given, f"{real} is not under an allowed root")
    if mount.writable and not any(allowing):
        _refuse(given, "it asks to be writable, but no allowed root containing it is writable")
    for part in real.parts[1:]:
        matched = next((pattern for pattern in blocked if fnmatch.fnmatch(part, pattern)), None)
        if matched is not None:
            _refuse(given, f"{part!r} matches the blocked name {matched!r}")
    for place in RESERVED:
        if real == Path(place) or real.is_relative_to(place) or Path(place).is_relative_to(real):
            _refuse(given, f"it would cover the sandbox's own {place}")
    return CheckedMount(real, mount.writable)


def _real_path(given: Path) -> Path:
    if not given.is_absolute():
        _refuse(given, "a mount must be an absolute path")
    if ".." in given.parts:
        _refuse(given, "a mount may not contain '..'")
    try:
        return given.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a symlink loop
        _refuse(given, "it does not exist")


def _real_root(path: str | Path) -> Path:
    root = Path(path)
    if not root.is_absolute():
        raise MountRefusedError(f"allowed mount root {str(root)!r} is not an absolute path")
    return root.resolve()


def _refuse(given: Path, why: str) -> NoReturn:
    raise MountRefusedError(f"mount {str(given)!r} refused: {why}", param="mounts")
