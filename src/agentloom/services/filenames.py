"""Uploaded file names made safe to store, show and send back in a download.

A client's name is kept readable, but only its last path component survives; control and
invisible characters, runs of dots, leading and trailing dots and spaces and characters that
filesystems or headers reserve are removed, and the result is cut to 255 UTF-8 bytes (keeping
the extension).
"""

from __future__ import annotations

import re
import unicodedata

MAX_FILENAME_BYTES = 255
DEFAULT_FILENAME = "file"
_MAX_SUFFIX = 16

_SEPARATORS = re.compile(r"[/\\]")
_RESERVED = re.compile(r'[<>:"|?*]')
_DOTS = re.compile(r"\.{2,}")
_SPACES = re.compile(r"\s+")


def sanitize_filename(raw: str) -> str:
    """A safe, readable version of ``raw`` (never empty)."""
    name = _SEPARATORS.split(unicodedata.normalize("NFC", raw))[-1]
    name = "".join(ch for ch in name if not unicodedata.category(ch).startswith("C"))
    name = _SPACES.sub(" ", _RESERVED.sub("_", name))
    name = _DOTS.sub(".", name).strip(" .")
    return _truncated(name) if name else DEFAULT_FILENAME


def _truncated(name: str) -> str:
    if len(name.encode()) <= MAX_FILENAME_BYTES:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem or len(suffix) > _MAX_SUFFIX:
        stem, suffix = name, ""
    ending = f".{suffix}" if suffix else ""
    room = MAX_FILENAME_BYTES - len(ending.encode())
    cut = stem.encode()[:room].decode("utf-8", errors="ignore").rstrip(" .")
    return f"{cut or DEFAULT_FILENAME}{ending}"
