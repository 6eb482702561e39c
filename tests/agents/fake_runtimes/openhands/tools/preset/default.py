"""Stand-in for ``openhands.tools.preset.default``: the default agent, with one ``terminal``
tool that lists the workspace (whatever command it is given)."""

from __future__ import annotations

import os
from typing import Any

from openhands.sdk import LLM, Agent


def _terminal(arguments: dict[str, Any], workspace: str) -> str:
    return "\n".join(sorted(os.listdir(workspace)))


def get_default_agent(llm: LLM, cli_mode: bool = False) -> Agent:
    assert cli_mode, "a server runs OpenHands without a browser"
    return Agent(llm, {"terminal": _terminal})
