"""The layers of ``src/agentloom`` (docs/architecture.md): which package may import which.

Every import is read from the source (those inside functions too), so a lazy import cannot hide
a dependency. The packages form no cycle, and the few rules below hold.
"""

from __future__ import annotations

import ast
import graphlib
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "agentloom"
WEB = ("starlette", "fastapi", "uvicorn", "httptools", "h11")

# package -> what it must never import (its own layer's rule)
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "engine": ("services", "responses", "server", "cli", "agents"),
    "tools": ("engine", "services", "responses", "server", "cli"),
    "storage": ("engine", "services", "responses", "server", "cli", "tools", "inference"),
    "inference": ("engine", "services", "responses", "server", "cli", "tools", "storage"),
    "retrieval": ("engine", "services", "responses", "server", "cli", "tools"),
    "safety": ("engine", "services", "responses", "server", "cli"),
    "services": ("responses", "server", "cli"),
    "responses": ("server", "cli"),
    "batches": ("server", "cli"),
    "api": ("engine", "services", "responses", "server", "storage", "inference", "tools"),
}
# the feature groups of services/ that another group may use (every other pair is kept apart)
SERVICE_USES: dict[str, set[str]] = {
    "services.vector_stores": {"services", "services.jobs"},  # files; ingestion runs as jobs
    "services.gateway": {"services.organization"},  # usage and rate limits
    "services.managed_agents": {"services.jobs", "services.organization"},
    "services.jobs": set(),
    "services.organization": set(),
    "services": set(),
}
OUTSIDE_THE_WEB = ("engine", "tools", "storage", "inference", "retrieval", "safety", "services")


def _package(module: str) -> str | None:
    """The package ``module`` belongs to: a top-level one, or a feature group of services/."""
    parts = module.split(".")
    if parts[0] != "agentloom" or len(parts) < 2:
        return None
    if parts[1] == "services" and len(parts) > 2 and (ROOT / "services" / parts[2]).is_dir():
        return f"services.{parts[2]}"
    return parts[1]


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Package -> the packages it imports; package -> the outside modules it imports."""
    inside: dict[str, set[str]] = defaultdict(set)
    outside: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        me = _package(".".join(path.relative_to(SRC).with_suffix("").parts))
        assert me is not None
        for module in _imports(path):
            other = _package(module)
            if other is None:
                outside[me].add(module.split(".")[0])
            elif other != me and not (me == "services" and other.startswith("services.")):
                inside[me].add(other)
    return inside, outside


GRAPH, EXTERNAL = _graph()


def _family(package: str) -> str:
    return package.split(".")[0]


def test_the_packages_form_no_cycle() -> None:
    try:
        tuple(graphlib.TopologicalSorter(GRAPH).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"a cycle between packages: {' -> '.join(exc.args[1])}")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(package: str) -> None:
    members = [p for p in GRAPH if _family(p) == package] or [package]
    wrong = {
        (member, other)
        for member in members
        for other in GRAPH.get(member, set())
        if _family(other) in FORBIDDEN[package] and _family(other) != package
    }
    assert not wrong, f"{package} must not import: {sorted(wrong)}"


@pytest.mark.parametrize("group", sorted(SERVICE_USES))
def test_feature_groups_of_services_stay_apart(group: str) -> None:
    used = {p for p in GRAPH.get(group, set()) if _family(p) == "services"}
    assert used <= SERVICE_USES[group], f"{group} uses {sorted(used - SERVICE_USES[group])}"


def test_every_feature_group_has_a_rule() -> None:
    groups = {p for p in GRAPH if p.startswith("services.")}
    assert groups <= set(SERVICE_USES), f"no rule for {sorted(groups - set(SERVICE_USES))}"


@pytest.mark.parametrize("package", OUTSIDE_THE_WEB)
def test_below_the_server_nothing_imports_the_web_framework(package: str) -> None:
    members = [p for p in EXTERNAL if _family(p) == package]
    found = {(m, lib) for m in members for lib in EXTERNAL[m] if lib in WEB}
    assert not found, f"{package} imports the web framework: {sorted(found)}"
