"""What the commands that talk to an agentloom server share: where it is (``--base-url`` /
``AGENTLOOM_BASE_URL``), the key (``--api-key`` / ``AGENTLOOM_API_KEY``; the admin key
``--admin-key`` / ``AGENTLOOM_ADMIN_KEY``), the official ``openai`` client on it, and what the
server refused as one line on stderr with exit code 1.

Importing this module costs only click: ``openai`` is imported when a command runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from typing import TYPE_CHECKING, Any

import click

from agentloom.cli.options import fail
from agentloom.frozen import frozen

if TYPE_CHECKING:
    import httpx2
    import openai

__all__ = [
    "DEFAULT_BASE_URL",
    "NO_ADMIN_KEY",
    "Server",
    "admin_options",
    "api_key_option",
    "base_url_option",
    "server_options",
]

DEFAULT_BASE_URL = "http://127.0.0.1:8321/v1"
UNUSED_KEY = "unused"  # the SDK wants a key; a server without keys takes any
NO_ADMIN_KEY = (
    "this needs the server's admin key: set AGENTLOOM_ADMIN_KEY (or pass --admin-key) to the "
    "value the server was started with. A server started in keys mode without one has no "
    "admin: set AGENTLOOM_ADMIN_KEY to a secret of your own and restart it (docs/auth.md), or "
    "make a project key on its database: agentloom keys create --project default --database URL"
)

base_url_option = click.option(
    "--base-url",
    envvar="AGENTLOOM_BASE_URL",
    default=DEFAULT_BASE_URL,
    show_default=True,
    help="The server [env AGENTLOOM_BASE_URL].",
)
api_key_option = click.option(
    "--api-key", envvar="AGENTLOOM_API_KEY", default=None, help="[env AGENTLOOM_API_KEY]"
)
_admin_key_option = click.option(
    "--admin-key",
    envvar="AGENTLOOM_ADMIN_KEY",
    default=None,
    help="The server's admin key [env AGENTLOOM_ADMIN_KEY].",
)


@frozen
class Server:
    """An agentloom server and the key to use on it (a project key, or the admin key)."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    admin: bool = False  # the key is the admin key: a refusal says how to get one

    def client(self) -> openai.OpenAI:
        """The official client on the server (one retry: a command is run by a person)."""
        import httpx2
        import openai

        from agentloom.tls import context_for

        key = self.api_key or UNUSED_KEY
        http = httpx2.Client(
            verify=context_for(self.base_url), timeout=httpx2.Timeout(600, connect=5)
        )
        return openai.OpenAI(
            base_url=self.base_url,
            api_key=key,
            admin_api_key=key if self.admin else None,
            max_retries=1,
            http_client=http,
        )

    @contextmanager
    def talking(self) -> Iterator[openai.OpenAI]:
        """The client, closed after; what the server refused, or that it cannot be reached,
        as one line on stderr and exit code 1."""
        import openai

        try:
            with self.client() as client:
                yield client
        except openai.APIStatusError as exc:
            fail(self.refusal(exc))
        except openai.APIConnectionError as exc:
            fail(
                f"cannot reach the server at {self.base_url} ({exc.message}): start it with "
                "`agentloom serve`, or point --base-url / AGENTLOOM_BASE_URL at it"
            )

    def refusal(self, exc: openai.APIStatusError) -> str:
        """The server's own message (OpenAI's error envelope), its status and code."""
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message") or exc.message)
        code = body.get("code")
        said = f"{message} ({exc.status_code}{f' {code}' if code else ''})"
        if self.admin and exc.status_code in (401, 403):
            return f"{said}: {NO_ADMIN_KEY}"
        return said


def get_json(client: openai.OpenAI, path: str, **params: Any) -> Any:
    """``GET path`` (under the base URL) decoded: agentloom's routes the SDK has no method for."""
    import httpx2

    query = {key: value for key, value in params.items() if value is not None}
    reply: httpx2.Response = client.get(path, cast_to=httpx2.Response, options={"params": query})
    return reply.json()


Command = Callable[..., None]


def server_options(command: Command) -> Command:
    """``--base-url`` and ``--api-key``; the command gets them as one ``server: Server``."""

    def with_server(*args: Any, base_url: str, api_key: str | None, **kwargs: Any) -> None:
        command(*args, server=Server(base_url, api_key), **kwargs)

    wrapped: Command = functools.update_wrapper(with_server, command)
    return base_url_option(api_key_option(wrapped))


def admin_options(command: Command) -> Command:
    """``--base-url`` and ``--admin-key``; the command gets them as ``server: Server``."""

    def with_server(*args: Any, base_url: str, admin_key: str | None, **kwargs: Any) -> None:
        command(*args, server=Server(base_url, admin_key, admin=True), **kwargs)

    wrapped: Command = functools.update_wrapper(with_server, command)
    return base_url_option(_admin_key_option(wrapped))
