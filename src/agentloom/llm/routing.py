"""Which wire path a model uses: an explicit override, then the capability table, then chat.

The table maps model-name patterns (``fnmatch`` style, case-insensitive) to a path. Models that
OpenAI serves best (or only) over the Responses API are listed; everything else speaks Chat
Completions, which every OpenAI-compatible server offers.

:data:`REASONING_MODELS` lists the reasoning models, which fix their own sampling: a call to one
drops ``temperature`` and ``top_p`` rather than have the server refuse them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from agentloom.llm.types import Path

__all__ = ["CAPABILITIES", "REASONING_MODELS", "choose_path", "is_reasoning_model"]

CAPABILITIES: Mapping[str, Path] = {
    "gpt-5*": "responses",
    "o1*": "responses",
    "o3*": "responses",
    "o4*": "responses",
    "codex-*": "responses",
    "*-codex*": "responses",
    "computer-use-*": "responses",
    "gpt-4.1*": "responses",
    "gpt-4o*": "responses",
}

REASONING_MODELS: tuple[str, ...] = ("gpt-5*", "o1*", "o3*", "o4*")


def is_reasoning_model(model: str, patterns: Sequence[str] = REASONING_MODELS) -> bool:
    """Whether ``model`` matches one of ``patterns`` (as :func:`choose_path` matches)."""
    name = _bare(model)
    return any(fnmatchcase(name, pattern.lower()) for pattern in patterns)


def _bare(model: str) -> str:
    return model.lower().rsplit("/", 1)[-1]  # "openai/gpt-5" is "gpt-5"


def choose_path(
    model: str,
    override: Path | None = None,
    table: Mapping[str, Path] = CAPABILITIES,
) -> Path:
    """The path for ``model``: ``override`` wins, then the first matching pattern, then chat."""
    if override is not None:
        return override
    name = _bare(model)
    for pattern, path in table.items():
        if fnmatchcase(name, pattern.lower()):
            return path
    return "completions"
