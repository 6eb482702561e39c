"""The README's "Use it with ..." snippets, so the tests run exactly what users copy.

Each ``### Client`` subsection holds fenced code blocks; :func:`snippet` returns one of them
with the README's address and model name swapped for the test server's.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Use it with ..."
README_URL = "http://127.0.0.1:8321/v1"
README_MODEL = "llama3.2"
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


@cache
def _subsections() -> dict[str, str]:
    text = README.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    body = text[start : end if end != -1 else None]
    parts = re.split(r"^### (.+)$", body, flags=re.MULTILINE)
    return {title.strip(): content for title, content in zip(parts[1::2], parts[2::2], strict=True)}


def snippet(client: str, language: str, *, url: str = README_URL) -> str:
    """The one ``language`` block under ``### client``, pointed at ``url``."""
    blocks = [code for lang, code in _BLOCK.findall(_subsections()[client]) if lang == language]
    assert len(blocks) == 1, f"README: {client!r} has {len(blocks)} {language} blocks"
    assert README_URL in blocks[0], f"README: the {client} snippet does not use {README_URL}"
    return blocks[0].replace(README_URL, url)
