"""Sealed content: opaque strings the server hands to clients and later takes back (compaction
items' ``encrypted_content``; encrypted reasoning builds on the same seal).

A seal is AES-256-GCM under a server key, with the content's purpose (``"compaction"`` ...) as
associated data, so content sealed for one purpose is refused for another, and any change to
the string is detected. The string is ``al1.<key id>.<base64url(nonce | ciphertext)>``: the key
id lets old keys keep opening what they sealed after a new key takes over. Keys live in the
database (shared by every server process) or come from the configuration.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agentloom.frozen import frozen
from agentloom.tenancy import DEFAULT_PROJECT, current_project

_PREFIX = "al1"
_NONCE_BYTES = 12
KEY_BYTES = 32


class SealError(ValueError):
    """The content was not sealed by this server for this purpose, or was changed."""


@frozen
class SealingKey:
    kid: str
    key: bytes

    @classmethod
    def new(cls, *, kid: str | None = None) -> SealingKey:
        key = AESGCM.generate_key(bit_length=KEY_BYTES * 8)
        return cls(kid=kid or key_id(key), key=key)

    @classmethod
    def from_text(cls, text: str, *, kid: str | None = None) -> SealingKey:
        """A key written as base64 (url-safe or standard) of 32 bytes; its id is derived from
        it unless given."""
        urlsafe = text.strip().replace("+", "-").replace("/", "_")
        try:
            key = base64.urlsafe_b64decode(_padded(urlsafe))
        except ValueError as exc:
            raise ValueError("a sealing key is 32 bytes in base64") from exc
        if len(key) != KEY_BYTES:
            raise ValueError(f"a sealing key is {KEY_BYTES} bytes in base64, not {len(key)}")
        return cls(kid=kid or key_id(key), key=key)

    def text(self) -> str:
        return base64.urlsafe_b64encode(self.key).decode().rstrip("=")


def key_id(key: bytes) -> str:
    """A short, stable, non-secret name for a key."""
    return hashlib.sha256(b"agentloom-sealing-key" + key).hexdigest()[:16]


class Sealer:
    """Seals with the first key; opens with any of ``keys``."""

    def __init__(self, keys: Sequence[SealingKey]) -> None:
        if not keys:
            raise ValueError("a sealer needs at least one key")
        self._current = keys[0]
        self._ciphers = {k.kid: AESGCM(k.key) for k in keys}

    def seal(self, purpose: str, payload: bytes) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._ciphers[self._current.kid].encrypt(nonce, payload, _bound(purpose))
        body = base64.urlsafe_b64encode(nonce + sealed).decode().rstrip("=")
        return f"{_PREFIX}.{self._current.kid}.{body}"

    def open(self, purpose: str, token: str) -> bytes:
        prefix, _, rest = token.partition(".")
        kid, _, body = rest.partition(".")
        if prefix != _PREFIX or not body:
            raise SealError("not content sealed by this server")
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise SealError("sealed under a key this server does not have")
        try:
            raw = base64.urlsafe_b64decode(_padded(body))
        except ValueError:
            raise SealError("not content sealed by this server") from None
        try:
            return cipher.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _bound(purpose))
        except (InvalidTag, ValueError):
            raise SealError("the sealed content was changed, or sealed for another use") from None


def _bound(purpose: str) -> bytes:
    """The associated data: the purpose, and the project of the running work (content sealed
    for one project does not open in another). The default project's is the bare purpose, as
    before projects existed, so what was sealed then still opens."""
    project = current_project()
    return (purpose if project == DEFAULT_PROJECT else f"{purpose}@{project}").encode()


def _padded(text: str) -> str:
    return text + "=" * (-len(text) % 4)
