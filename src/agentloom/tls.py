"""One TLS client context for every outbound connection of a process.

Loading the system's CA bundle takes ~45 ms, and each ``httpx2.AsyncClient`` built without a
context loads its own: a server start built three of them (provider, embeddings, moderation),
whatever the backends' schemes. Every client here is given this one instead, built on first use
with ``httpx2``'s own defaults (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured). A context is
safe to share: nothing here changes it after it is built.

A client that only ever talks to one base URL takes :func:`context_for` it: a plain ``http``
URL never needs the CAs, so the command line's clients start without loading them.
"""

from __future__ import annotations

import functools
import ssl

__all__ = ["client_context", "context_for"]


@functools.cache
def client_context() -> ssl.SSLContext:
    """The process's TLS context for outbound HTTPS, verifying against the system's CAs."""
    import httpx2

    return httpx2.create_ssl_context()


def context_for(base_url: str) -> ssl.SSLContext:
    """:func:`client_context` for an ``https`` base URL; for any other, a context that trusts no
    CA (built in microseconds), so a redirect to ``https`` fails closed instead of unverified."""
    if base_url.lower().startswith("https:"):
        return client_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
