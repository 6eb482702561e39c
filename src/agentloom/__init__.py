"""agentloom: an open, self-hostable OpenAI Responses API server and agent SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["__version__", "ask", "ask_async", "ask_full", "ask_full_async"]

if TYPE_CHECKING:
    from agentloom.quick import ask, ask_async, ask_full, ask_full_async

_LAZY = {"ask", "ask_async", "ask_full", "ask_full_async"}  # from agentloom.quick


def __getattr__(name: str) -> Any:
    """``agentloom.ask`` and friends, imported on first use so ``import agentloom`` stays cheap."""
    if name in _LAZY:
        from agentloom import quick

        return getattr(quick, name)
    raise AttributeError(f"module 'agentloom' has no attribute {name!r}")
