"""An OIDC provider's signing keys (its JWKS), from a file or a URL, cached.

The set is read at start, again when ``jwks_cache_seconds`` have passed, and again when a token
names a key it does not hold (a rotation), at most once per ``jwks_refetch_seconds``. A read
that fails keeps the keys already held, is logged, and is tried again after
``jwks_refetch_seconds``: a provider that is briefly down must not lock every caller out.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol

import anyio
import httpx2
from jwt import PyJWK, PyJWTError

from agentloom.tls import client_context

log = logging.getLogger(__name__)

MAX_JWKS_BYTES: Final = 1024 * 1024
FETCH_TIMEOUT: Final = 10.0
_SIGNING_KEY_TYPES: Final = frozenset({"RSA", "EC", "OKP"})

Jwk = dict[str, Any]  # one key as the provider publishes it (PyJWK's own input type)


class JwksUnavailable(Exception):
    """The key set could not be read, or is not a key set (never leaves this package)."""


class UnusableKey(Exception):
    """The provider holds the key a token names, but not for the token's algorithm."""


class JwksSource(Protocol):
    """Where the provider's JWKS comes from."""

    @property
    def where(self) -> str: ...

    async def read(self) -> bytes:
        """The JWKS document; :class:`JwksUnavailable` when it cannot be read."""
        ...

    async def aclose(self) -> None: ...


class FileJwks:
    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def where(self) -> str:
        return str(self._path)

    async def read(self) -> bytes:
        try:
            return await anyio.Path(self._path).read_bytes()
        except OSError as exc:
            raise JwksUnavailable(f"cannot read it: {exc.strerror or exc}") from exc

    async def aclose(self) -> None:
        return None


class UrlJwks:
    def __init__(self, url: str, *, timeout: float = FETCH_TIMEOUT) -> None:
        self._url = url
        self._client = httpx2.AsyncClient(
            verify=client_context(), timeout=timeout, follow_redirects=False
        )

    @property
    def where(self) -> str:
        return self._url

    async def read(self) -> bytes:
        try:
            reply = await self._client.get(self._url, headers={"accept": "application/json"})
        except httpx2.HTTPError as exc:
            raise JwksUnavailable(f"cannot fetch it: {exc or type(exc).__name__}") from exc
        if reply.status_code != 200:
            raise JwksUnavailable(f"the server answered {reply.status_code}")
        return reply.content

    async def aclose(self) -> None:
        await self._client.aclose()


def parse_jwks(body: bytes) -> dict[str | None, Jwk]:
    """The signing keys of a JWKS document by ``kid`` (``None`` for a key without one);
    encryption keys and shared secrets are left out."""
    if len(body) > MAX_JWKS_BYTES:
        raise JwksUnavailable(f"it is larger than {MAX_JWKS_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise JwksUnavailable("it is not JSON") from exc
    listed = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(listed, list):
        raise JwksUnavailable("it is not a JWKS (no 'keys' array)")
    return {_kid(jwk): jwk for jwk in listed if _signing_key(jwk)}


def _signing_key(jwk: object) -> bool:
    return (
        isinstance(jwk, dict)
        and jwk.get("kty") in _SIGNING_KEY_TYPES
        and jwk.get("use", "sig") == "sig"
    )


def _kid(jwk: Jwk) -> str | None:
    kid = jwk.get("kid")
    return kid if isinstance(kid, str) else None


class SigningKeys:
    """The provider's public keys, each bound to the algorithm a token asks for."""

    def __init__(
        self,
        source: JwksSource,
        *,
        cache_seconds: float,
        refetch_seconds: float,
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        self._source = source
        self._cache_seconds = cache_seconds
        self._refetch_seconds = refetch_seconds
        self._changed = changed  # told when a key is withdrawn or replaced
        self._keys: dict[str | None, Jwk] = {}
        self._bound: dict[tuple[str | None, str], PyJWK] = {}
        self._fresh_until = -math.inf
        self._read_at = -math.inf
        self._lock = anyio.Lock()

    @property
    def source(self) -> JwksSource:
        return self._source

    async def find(self, kid: str | None, algorithm: str) -> PyJWK | None:
        """The key ``kid`` for ``algorithm``; ``None`` when the provider has no such key.
        :class:`UnusableKey` when it has one, but not for that algorithm."""
        if time.monotonic() >= self._fresh_until:
            await self.refresh()
        jwk = self._pick(kid)
        if jwk is None and time.monotonic() - self._read_at >= self._refetch_seconds:
            await self.refresh()
            jwk = self._pick(kid)
        return None if jwk is None else self._bind(kid, jwk, algorithm)

    async def refresh(self) -> None:
        """Read the set again (once, however many callers ask at the same time)."""
        asked = time.monotonic()
        async with self._lock:
            if self._read_at >= asked:  # another caller read it meanwhile
                return
            self._read_at = time.monotonic()
            try:
                keys = parse_jwks(await self._source.read())
            except JwksUnavailable as exc:
                self._fresh_until = self._read_at + self._refetch_seconds
                log.warning(
                    "could not load the JWKS from %s: %s; keeping the %d keys held",
                    self._source.where,
                    exc,
                    len(self._keys),
                )
                return
            self._fresh_until = self._read_at + self._cache_seconds
            self._replace(keys)

    def _replace(self, keys: dict[str | None, Jwk]) -> None:
        withdrawn = any(keys.get(kid) != jwk for kid, jwk in self._keys.items())
        self._keys = keys
        if withdrawn:  # a key was taken away or replaced: what it verified is in doubt
            self._bound.clear()
            self._changed()

    def _pick(self, kid: str | None) -> Jwk | None:
        if kid is None and len(self._keys) == 1:  # a token without kid, a set of one key
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    def _bind(self, kid: str | None, jwk: Jwk, algorithm: str) -> PyJWK:
        bound = self._bound.get((kid, algorithm))
        if bound is None:
            declared = jwk.get("alg")
            if declared is not None and declared != algorithm:
                raise UnusableKey(f"the signing key is for {declared}, not {algorithm}")
            try:
                bound = PyJWK(jwk, algorithm)
            except PyJWTError as exc:
                raise UnusableKey(f"the signing key cannot verify {algorithm}") from exc
            self._bound[(kid, algorithm)] = bound
        return bound
