"""The raw text input of a custom (freeform) tool call, out of the model's function arguments.

Chat backends see a custom tool as a function with one string parameter (see
:mod:`agentloom.engine.client_tools`), so the model answers ``{"input": "..."}``; some models send
the bare text instead. :class:`FreeformInput` decodes the string value as the arguments stream
in, so the client gets ``response.custom_tool_call_input.delta`` events of plain text, and
:meth:`FreeformInput.finish` gives the whole input.
"""

from __future__ import annotations

import json
import re
from typing import Literal

# ``{"<key>": "`` : the arguments are a JSON object whose string value is the input
_OPENING = re.compile(r'\s*\{\s*"[^"\\]*"\s*:\s*"')
# complete characters and escapes of a JSON string, up to its closing quote or a cut escape
_CHARACTERS = re.compile(r'(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
# a high surrogate escape at the end: its low half may follow in the next piece
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")


class FreeformInput:
    """Arguments in (:meth:`feed`), the input's text out, as far as it is known."""

    def __init__(self) -> None:
        self._raw = ""
        self._mode: Literal["undecided", "json", "bare", "closed"] = "undecided"
        self._position = 0  # in ``_raw``: what was decoded (json) or passed on (bare)

    def feed(self, arguments: str) -> str:
        """Add a piece of the arguments; returns the input text it completes (may be empty)."""
        self._raw += arguments
        if self._mode == "undecided":
            self._decide()
        if self._mode == "bare":
            text, self._position = self._raw[self._position :], len(self._raw)
            return text
        if self._mode == "json":
            return self._decode()
        return ""

    def finish(self) -> str:
        """The whole input: the string value of a JSON object (or a JSON string), else the
        arguments as they are."""
        try:
            value = json.loads(self._raw)
        except ValueError:
            return self._raw
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            if isinstance(value.get("input"), str):
                return str(value["input"])
            (only,) = value.values() if len(value) == 1 else (None,)
            if isinstance(only, str):
                return only
        return self._raw

    def _decide(self) -> None:
        opening = _OPENING.match(self._raw)
        if opening is not None:
            self._mode, self._position = "json", opening.end()
        elif not _may_open(self._raw):
            self._mode = "bare"

    def _decode(self) -> str:
        run = _CHARACTERS.match(self._raw, self._position)
        assert run is not None  # the pattern matches the empty string
        end = run.end()
        closed = end < len(self._raw) and self._raw[end] == '"'
        segment = self._raw[self._position : end]
        if not closed and _HIGH_SURROGATE.search(segment):
            end -= 6
            segment = segment[:-6]
        self._position = end
        if closed:
            self._mode = "closed"
        return str(json.loads(f'"{segment}"')) if segment else ""


def _may_open(raw: str) -> bool:
    """Whether ``raw`` may still become the opening of a JSON object with a string value."""
    compact = re.sub(r"\s+", "", raw)
    if not compact:
        return True
    if not compact.startswith("{"):
        return False
    return re.fullmatch(r'\{("[^"\\]*("(:)?)?)?', compact) is not None
