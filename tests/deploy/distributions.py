"""Distributions made by hand for the installation checks: installed into a directory (as pip
leaves them: the files and a ``.dist-info`` with its RECORD) or packed as a wheel."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Mapping
from pathlib import Path

# What the unrelated `agentloom` on PyPI installs where ours does too (0.4.0; names only).
RIVAL_SUMMARY = "Production-ready agentic workflow orchestrator."
RIVAL_FILES = {
    "agentloom/__init__.py": "from agentloom.core.graph import WorkflowGraph\n",
    "agentloom/cli/__init__.py": '"""CLI entry point."""\n',
    "agentloom/cli/main.py": "app = None\n",
    "agentloom/core/__init__.py": "",
    "agentloom/core/graph.py": "class WorkflowGraph: ...\n",
}


def _hashed(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _dist_info(name: str, version: str, summary: str, scripts: Mapping[str, str]) -> dict[str, str]:
    folder = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {summary}\n"
    wheel = "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = "".join(f"{k} = {v}\n" for k, v in scripts.items())
    info = {f"{folder}/METADATA": meta, f"{folder}/WHEEL": wheel}
    if entries:
        info[f"{folder}/entry_points.txt"] = f"[console_scripts]\n{entries}"
    return info


def _record(files: Mapping[str, str], record: str) -> str:
    lines = [_hashed(path, text.encode()) for path, text in files.items()]
    return "\n".join([*lines, f"{record},,"]) + "\n"


def install(
    site: Path, name: str, version: str, files: Mapping[str, str], summary: str = "tests"
) -> None:
    """``files`` written into ``site`` over whatever is there, with ``name``'s metadata."""
    everything = {**files, **_dist_info(name, version, summary, {})}
    record = f"{name.replace('-', '_')}-{version}.dist-info/RECORD"
    for path, text in {**everything, record: _record(everything, record)}.items():
        target = site / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def wheel(
    directory: Path,
    name: str,
    version: str,
    files: Mapping[str, str],
    *,
    summary: str = "tests",
    scripts: Mapping[str, str] | None = None,
) -> Path:
    """A pure-Python wheel of ``files`` in ``directory``."""
    everything = {**files, **_dist_info(name, version, summary, scripts or {})}
    record = f"{name.replace('-', '_')}-{version}.dist-info/RECORD"
    path = directory / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in {**everything, record: _record(everything, record)}.items():
            archive.writestr(member, text)
    return path
