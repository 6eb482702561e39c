"""Standard Webhooks signatures, as OpenAI signs its deliveries.

A secret is ``whsec_`` and base64 of 32 random bytes. A delivery carries ``webhook-id`` (the
same on every attempt), ``webhook-timestamp`` (unix seconds, of this attempt) and
``webhook-signature``: ``v1,`` and base64 of HMAC-SHA256 under the secret's bytes of
``"{id}.{timestamp}.{body}"``, one per secret in force, space-separated (a rotation that keeps
the old secret for a while signs with both). ``openai``'s ``client.webhooks.unwrap`` checks
exactly this.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(os.urandom(32)).decode()


def hint(secret: str) -> str:
    """A masked form that tells secrets apart without giving them away."""
    return f"{SECRET_PREFIX}...{secret[-4:]}"


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signed_headers(
    secrets: Sequence[str], message_id: str, timestamp: int, body: str
) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, message_id, timestamp, body) for s in secrets),
    }
