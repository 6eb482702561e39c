"""Whether the ``agentloom`` package that Python would import is this distribution's.

The name ``agentloom`` on PyPI belongs to an unrelated project (an agentic workflow
orchestrator) that installs a top-level ``agentloom`` package and an ``agentloom`` command too.
Installed in one environment, the two write the same files (``agentloom/__init__.py``,
``agentloom/cli/main.py``, ``agentloom/config.py`` ...): whichever was installed last owns them,
and uninstalling either deletes them for both. Nothing of the package can be trusted then, so
this check reads only metadata and files, and runs before anything of ``agentloom`` is imported.

It finds three things, each told as a sentence that names the fix:

- a distribution known to ship an ``agentloom`` package of its own (``RIVALS``) lists files in
  it: it is installed here;
- a file this distribution installed is missing or holds other bytes than its record says;
- Python would import ``agentloom`` from elsewhere than where this distribution put it.

An editable install or a source checkout has no package files in its record: only the first
finding applies to it.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from importlib.metadata import Distribution, PackagePath
from pathlib import Path
from typing import Final

__all__ = ["DISTRIBUTION", "PACKAGE", "RIVALS", "problems"]

DISTRIBUTION: Final = "agentloom-server"
PACKAGE: Final = "agentloom"
RIVALS: Final = ("agentloom",)  # distributions known to ship a top-level `agentloom` package
_NAMED: Final = 3  # files named in a finding
_REINSTALL: Final = f"pip install --force-reinstall --no-deps {DISTRIBUTION}"


def problems(path: Sequence[str] | None = None) -> list[str]:
    """What makes the ``agentloom`` package on ``path`` (default: ``sys.path``) not this
    distribution's; empty when it is."""
    search = list(sys.path if path is None else path)
    found = [claim for name in RIVALS if (claim := _claimed(name, search)) is not None]
    ours = _distribution(DISTRIBUTION, search)
    if ours is not None:
        found += _not_as_installed(ours, PathFinder.find_spec(PACKAGE, search))
    return found


def _not_as_installed(ours: Distribution, spec: ModuleSpec | None) -> list[str]:
    files = _package_files(ours)
    return _altered(ours, files) + _shadowed(ours, files, spec)


def _distribution(name: str, search: list[str]) -> Distribution | None:
    return next(iter(Distribution.discover(name=name, path=search)), None)


def _package_files(distribution: Distribution) -> list[PackagePath]:
    return [f for f in distribution.files or () if f.parts[:1] == (PACKAGE,)]


def _claimed(name: str, search: list[str]) -> str | None:
    rival = _distribution(name, search)
    if rival is None or not _package_files(rival):
        return None  # absent, or an editable install of this project under its old name
    summary = rival.metadata["Summary"] or "no summary"
    return (
        f"the distribution {rival.metadata['Name']} {rival.version} ({summary}) is installed "
        f"in this environment and ships its own `{PACKAGE}` package and `{PACKAGE}` command, "
        f"in the same place as {DISTRIBUTION}'s: the two cannot share one environment. "
        f"Install {DISTRIBUTION} in an environment of its own (`pipx install {DISTRIBUTION}`), "
        f"or remove the other one (`pip uninstall {name}`) and then repair this one "
        f"(`{_REINSTALL}`)."
    )


def _altered(distribution: Distribution, files: Iterable[PackagePath]) -> list[str]:
    changed = [str(f) for f in files if f.hash is not None and not _intact(distribution, f)]
    if not changed:
        return []
    named = ", ".join(changed[:_NAMED]) + (", ..." if len(changed) > _NAMED else "")
    return [
        f"{len(changed)} files that {DISTRIBUTION} {distribution.version} installed are missing "
        f"or were written over ({named}), most likely by another distribution that ships an "
        f"`{PACKAGE}` package (the unrelated `agentloom` on PyPI does). Repair: `{_REINSTALL}`."
    ]


def _intact(distribution: Distribution, file: PackagePath) -> bool:
    assert file.hash is not None
    try:
        content = Path(str(distribution.locate_file(file))).read_bytes()
    except OSError:
        return False
    digest = hashlib.new(file.hash.mode, content).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == file.hash.value


def _shadowed(
    distribution: Distribution, files: Iterable[PackagePath], spec: ModuleSpec | None
) -> list[str]:
    init = next((f for f in files if f.parts == (PACKAGE, "__init__.py")), None)
    if init is None:
        return []  # an editable install: Python finds the package through its .pth file
    expected = Path(str(distribution.locate_file(init))).resolve()
    origin = spec.origin if spec is not None else None
    if not expected.exists() or (origin is not None and Path(origin).resolve() == expected):
        return []  # a missing file is told by _altered
    return [
        f"Python imports `{PACKAGE}` from {origin or 'nowhere'}, not from {expected} where "
        f"{DISTRIBUTION} installed it: something earlier on sys.path (PYTHONPATH, the current "
        f"directory) shadows it. Remove it, or run {DISTRIBUTION} from its own environment."
    ]
