"""Cutting text down to size for messages, summaries and snippets."""

from __future__ import annotations


def clip(text: str, limit: int, *, squash: bool = False) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut; ``squash``: runs of
    white space become one space first."""
    if squash:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
