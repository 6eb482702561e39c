"""API keys: how they are made, hashed and shown.

A project key is ``sk-proj-`` and 43 characters of a random 256-bit value, so its hash needs no
slow function: HMAC-SHA256 under a server-wide secret (kept in the database, never sent) makes
the stored digest useless without that secret, and a lookup is one dictionary probe. Only the
digest and a redacted form (``sk-proj-abc...wxyz``) are stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

PROJECT_KEY_PREFIX: Final = "sk-proj-"
ADMIN_KEY_PREFIX: Final = "sk-admin-"
_SHOWN_HEAD: Final = 11
_SHOWN_TAIL: Final = 4


def new_key(prefix: str = PROJECT_KEY_PREFIX) -> str:
    return prefix + secrets.token_urlsafe(32)


def redact(key: str) -> str:
    return f"{key[:_SHOWN_HEAD]}...{key[-_SHOWN_TAIL:]}"


class KeyHasher:
    """The keyed hash of keys under one secret."""

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

    def digest(self, key: str) -> str:
        return hmac.new(self._secret, key.encode(), hashlib.sha256).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison (for the admin key, which is compared, not looked up)."""
    return hmac.compare_digest(given.encode(), expected.encode())
