"""What the code-agent tests share: a sandbox that runs here, short limits, scripted models."""

from __future__ import annotations

import os
from pathlib import Path

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn
from agentloom.llm import LLM
from agentloom.tools.sandbox import (
    BwrapSandbox,
    Limits,
    Sandbox,
    SubprocessSandbox,
    bwrap_available,
)

LIMITS = Limits(wall_seconds=20.0, cpu_seconds=60, memory_bytes=1 << 30, output_bytes=64 << 10)


def sandbox() -> Sandbox:
    """bubblewrap where installed; else the fallback with an interpreter the sandbox user may
    run (as root, the server's own may sit under /root)."""
    if bwrap_available():
        return BwrapSandbox()
    return SubprocessSandbox(python="/usr/bin/python3" if os.geteuid() == 0 else "")


def scripted(*turns: Turn) -> tuple[LLM, ScriptedModel]:
    model = ScriptedModel(list(turns))
    return LLM("m", provider=model), model


def texts(request: ChatRequest) -> list[str]:
    """The text of every message of a request."""
    return [m.content if isinstance(m.content, str) else "" for m in request.messages]


def children() -> list[int]:
    """This process's child processes (zombies included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(entry.name))
    return found
