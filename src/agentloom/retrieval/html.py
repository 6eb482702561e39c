"""The visible text of an HTML document (the stdlib parser; no network, no scripts run).

``<script>``, ``<style>``, ``<head>`` and other invisible elements are dropped; block elements
(paragraphs, headings, tables) stand apart, list items, table rows and ``<br>`` start a line;
runs of whitespace become one space, except inside ``<pre>``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_HIDDEN = frozenset(
    {"script", "style", "head", "noscript", "template", "svg", "math", "iframe", "object"}
)
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "caption", "div", "dl", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hr", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "ul", "details",
        "body", "html",
    }
)  # fmt: skip
_LINES = frozenset({"br", "li", "tr", "dt", "dd", "option"})  # start a line, no blank line
_CELLS = frozenset({"td", "th"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden: list[str] = []  # the open invisible elements
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and self._hidden == ["head"]:
            self._hidden.clear()  # a <head> left open ends where the body starts
        if tag in _HIDDEN:
            self._hidden.append(tag)
            return
        if self._hidden:
            return
        if tag == "pre":
            self._pre += 1
        if tag in _CELLS:
            self.parts.append(" | ")
        elif tag in _BLOCKS or tag in _LINES:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if (tag in _BLOCKS or tag in _LINES) and not self._hidden:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass
            return
        if self._hidden:
            return
        if tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "pre" and self._pre:
            self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        self.parts.append(data if self._pre else _SPACES.sub(" ", data))


def html_text(source: str) -> str:
    """The visible text of ``source``, one block per line."""
    collector = _TextCollector()
    collector.feed(source)
    collector.close()
    lines = (_strip_line(line) for line in "".join(collector.parts).split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _strip_line(line: str) -> str:
    line = line.strip(" ")
    if line.startswith("| "):
        line = line[2:]
    return line.rstrip()
