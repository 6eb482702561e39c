"""Cutting text down to size for messages, summaries and snippets."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def clip(text: str, limit: int, *, squash: bool = False) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut; ``squash``: runs of
    white space become one space first."""
    if squash:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def shown_url(url: str) -> str:
    """``url`` as a message may show it: no credentials, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
