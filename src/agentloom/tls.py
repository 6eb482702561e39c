"""One TLS client context for every outbound connection of a process.

Loading the system's CA bundle takes ~45 ms, and each ``httpx2.AsyncClient`` built without a
context loads its own: a server start built three of them (provider, embeddings, moderation),
whatever the backends' schemes. Every client here is given this one instead, built on first use
with ``httpx2``'s own defaults (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured). A context is
safe to share: nothing here changes it after it is built.
"""

from __future__ import annotations

import functools
import ssl

__all__ = ["client_context"]


@functools.cache
def client_context() -> ssl.SSLContext:
    """The process's TLS context for outbound HTTPS, verifying against the system's CAs."""
    import httpx2

    return httpx2.create_ssl_context()
