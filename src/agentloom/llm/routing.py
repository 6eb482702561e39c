"""Which wire path a model uses: an explicit override, then the capability table, then chat.

The table maps model-name patterns (``fnmatch`` style, case-insensitive) to a path. Models that
OpenAI serves best (or only) over the Responses API are listed; everything else speaks Chat
Completions, which every OpenAI-compatible server offers.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from agentloom.llm.types import Path

__all__ = ["CAPABILITIES", "choose_path"]

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


def choose_path(
    model: str,
    override: Path | None = None,
    table: Mapping[str, Path] = CAPABILITIES,
) -> Path:
    """The path for ``model``: ``override`` wins, then the first matching pattern, then chat."""
    if override is not None:
        return override
    name = model.lower().rsplit("/", 1)[-1]  # "openai/gpt-5" routes like "gpt-5"
    for pattern, path in table.items():
        if fnmatchcase(name, pattern.lower()):
            return path
    return "completions"
