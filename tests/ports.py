"""A port for a server a test starts as a process of its own (it binds the port itself, later).

A port the kernel handed out for ``bind(0)`` lies in its ephemeral range, which it also hands
out to the many outgoing connections the suite makes: one of them could take the port in the
seconds before the server binds it ("address already in use"). These ports come from below
that range (Linux's default starts at 32768), at random, and are bindable when chosen.
"""

from __future__ import annotations

import random
import socket
from typing import Final

__all__ = ["unused_port"]

LOWEST: Final = 20000
HIGHEST: Final = 32000  # below the ephemeral range


def unused_port() -> int:
    """A port of 127.0.0.1 nothing listens on now, outside the kernel's ephemeral range."""
    for _ in range(200):
        port = random.randint(LOWEST, HIGHEST)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port of 127.0.0.1 between {LOWEST} and {HIGHEST}")
