"""Credentials kept out of what is shown: a URL's userinfo (``http://user:pass@host/``), its
query and its fragment (where API keys travel) never reach an error message or a log line.

:func:`redact_url` is for a URL put in a message; :func:`redact_urls` scrubs the userinfo of
every URL inside free text (an error a library raised, a log line), and is applied to every
:class:`~agentloom.errors.AgentloomError` message and every formatted log record.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

__all__ = ["HIDDEN", "redact_url", "redact_urls"]

HIDDEN: Final = "***"  # what stands for the userinfo
# a scheme, then userinfo (no "/", "?", "#", quote or space in it) up to the host's "@", the
# last of the authority (a password may hold an unescaped "@")
_USERINFO: Final = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s'\"<>]+@")


def redact_url(url: str) -> str:
    """``url`` to show: its userinfo replaced by ``***``, its query and fragment left out."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all (a bad IPv6 literal, say): scrub what looks like one
        return redact_urls(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    return parts._replace(netloc=netloc, query="", fragment="").geturl()


def redact_urls(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***``."""
    if "@" not in text:
        return text
    return _USERINFO.sub(rf"\1{HIDDEN}@", text)
