"""A URL's credentials never reach a message or a log line: the helpers, the error root that
applies them to every message, the log formatters that apply them to every line. Error bodies
and the log of a real server: ``tests/faults/test_credentials_in_urls.py``."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.logs import JsonFormatter, TextFormatter
from agentloom.redact import redact_url, redact_urls

SECRET = "s3cretpw"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://user:{SECRET}@host/", "http://***@host/"),
        (f"https://user:{SECRET}@host:8443/v1?key={SECRET}#x", "https://***@host:8443/v1"),
        (f"http://user:p@ss{SECRET}@[::1]:80/mcp", "http://***@[::1]:80/mcp"),
        (f"http://{SECRET}@host", "http://***@host"),
        ("http://host:8000/v1", "http://host:8000/v1"),
    ],
)
def test_a_url_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_urls_in_text_lose_their_userinfo_and_nothing_else() -> None:
    text = (
        f"The MCP server URL 'http://user:{SECRET}@host/mcp' is refused; "
        f"tried HTTPS://a:{SECRET}@other:1/x and http://plain/path@not-userinfo, mail a@b.c"
    )

    assert redact_urls(text) == (
        "The MCP server URL 'http://***@host/mcp' is refused; "
        "tried HTTPS://***@other:1/x and http://plain/path@not-userinfo, mail a@b.c"
    )


def test_every_error_message_is_scrubbed() -> None:
    errors = [
        InvalidRequestError(f"bad http://u:{SECRET}@h/", param="x"),
        UpstreamError(f"could not reach http://u:{SECRET}@h/v1: refused"),
    ]

    for error in errors:
        assert SECRET not in error.message
        assert SECRET not in str(error)
        assert "http://***@h/" in error.stated()


def _record(message: str, *args: object) -> logging.LogRecord:
    try:
        raise OSError(f"connect to http://u:{SECRET}@h/ failed")
    except OSError:
        exc_info = sys.exc_info()
    return logging.LogRecord("agentloom.x", logging.WARNING, __file__, 1, message, args, exc_info)


@pytest.mark.parametrize("formatter", [TextFormatter(), JsonFormatter()], ids=["text", "json"])
def test_log_lines_are_scrubbed(formatter: logging.Formatter) -> None:
    record = _record("discovery failed for %s", f"http://user:{SECRET}@backend:11434/v1")

    line = formatter.format(record)

    assert SECRET not in line
    assert "http://***@backend:11434/v1" in line
    assert "http://***@h/" in line  # the traceback's too
    if isinstance(formatter, JsonFormatter):
        assert json.loads(line)["message"] == "discovery failed for http://***@backend:11434/v1"
