"""agentloom: an open, self-hostable OpenAI Responses API server and agent SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Client",
    "Jarvis",
    "__version__",
    "ask",
    "ask_async",
    "ask_full",
    "ask_full_async",
]

if TYPE_CHECKING:
    from agentloom.client import Client, Jarvis
    from agentloom.quick import ask, ask_async, ask_full, ask_full_async

_LAZY = {"ask", "ask_async", "ask_full", "ask_full_async"}  # from agentloom.quick
_CLIENT = {"Client", "Jarvis"}  # from agentloom.client


def __getattr__(name: str) -> Any:
    """``agentloom.ask``, ``agentloom.Client`` and friends, imported on first use so
    ``import agentloom`` stays cheap."""
    if name in _LAZY:
        from agentloom import quick

        return getattr(quick, name)
    if name in _CLIENT:
        from agentloom import client

        return getattr(client, name)
    raise AttributeError(f"module 'agentloom' has no attribute {name!r}")
