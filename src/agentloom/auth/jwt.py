"""Bearer JWTs from an OIDC provider, verified offline against its JWKS.

A token is checked once: its algorithm (asymmetric, from the configured list), its signature
against the provider's key named by ``kid``, ``iss``, ``aud``, ``exp`` and ``nbf`` (with
leeway), and the claim naming its project. The answer is then remembered by the token's exact
text until the token expires, so a repeated token costs a dictionary lookup. Whether its project
is active is asked of the key verifier on every request (cached there, and dropped by the same
epoch that revokes keys), so archiving a project stops its tokens as it stops its keys.
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any, Final, Protocol

import jwt

from agentloom.auth.jwks import FileJwks, JwksSource, SigningKeys, UnusableKey, UrlJwks
from agentloom.auth.verifier import Principal
from agentloom.config import JwtSettings
from agentloom.errors import AuthenticationError

__all__ = ["JwtVerifier", "build_jwt_verifier", "key_id_of", "looks_like_jwt", "refusal_reason"]

MAX_VERIFIED: Final = 10_000  # tokens remembered as valid
MAX_SHOWN: Final = 40  # characters of a header value an error message repeats
MAX_SUBJECT: Final = 100  # longer subjects are named by their hash (key ids are <= 128)
_SEGMENT: Final = r"[A-Za-z0-9_-]"
_JWT_SHAPE: Final = re.compile(rf"eyJ{_SEGMENT}*\.{_SEGMENT}+\.{_SEGMENT}*")  # eyJ: '{"'
_REQUIRED: Final = ["exp", "iss", "aud"]

_REASONS: Final[dict[type[jwt.InvalidTokenError], str]] = {
    jwt.ExpiredSignatureError: "the token has expired",
    jwt.ImmatureSignatureError: "the token is not valid yet (nbf)",
    jwt.InvalidAudienceError: "wrong audience: the token is not meant for this server",
    jwt.InvalidIssuerError: "wrong issuer: this server does not trust the token's issuer",
    jwt.InvalidSignatureError: "the token's signature does not verify",
    jwt.InvalidIssuedAtError: "the token's iat claim is invalid",
    jwt.InvalidAlgorithmError: "the token's algorithm does not match its signing key",
    jwt.DecodeError: "the token is not a well-formed JWT",
}


class ProjectCheck(Protocol):
    async def project_active(self, project_id: str) -> bool: ...


def looks_like_jwt(token: str) -> bool:
    """Three base64url segments, the first a JSON object: never an API key."""
    return _JWT_SHAPE.fullmatch(token) is not None


class JwtVerifier:
    def __init__(self, settings: JwtSettings, source: JwksSource, projects: ProjectCheck) -> None:
        self._settings = settings
        self._keys = SigningKeys(
            source,
            cache_seconds=settings.jwks_cache_seconds,
            refetch_seconds=settings.jwks_refetch_seconds,
            changed=self.forget,  # a key was withdrawn: check every token again
        )
        self._projects = projects
        self._verified: dict[str, tuple[Principal, float]] = {}  # token -> (who, good until)
        self._generation = 0  # moves when a key is withdrawn: a check racing that is not kept

    async def verify(self, token: str) -> Principal:
        """The principal of ``token``; :class:`AuthenticationError` saying what is wrong."""
        found = self._verified.get(token)
        if found is None or found[1] <= time.time():
            self._verified.pop(token, None)
            generation = self._generation
            found = await self._check(token)
            if generation == self._generation:
                self._remember(token, found)
        principal = found[0]
        assert principal.project_id is not None
        if not await self._projects.project_active(principal.project_id):
            raise _refused(f"its project '{principal.project_id}' does not exist or is archived")
        return principal

    @property
    def keys(self) -> SigningKeys:
        """The provider's signing keys (the console's sign-in checks ID tokens with them)."""
        return self._keys

    def forget(self) -> None:
        """Drop every remembered token (the provider withdrew a key)."""
        self._generation += 1
        self._verified.clear()

    async def start(self) -> None:
        """Load the provider's keys (a failure is logged; tokens wait for a later read)."""
        await self._keys.refresh()

    async def aclose(self) -> None:
        await self._keys.source.aclose()

    async def _check(self, token: str) -> tuple[Principal, float]:
        algorithm, kid = self._header(token)
        try:
            key = await self._keys.find(kid, algorithm)
        except UnusableKey as exc:
            raise _refused(str(exc)) from None
        if key is None:
            raise _refused(f"its signing key (kid {_shown(kid)}) is not one of the issuer's keys")
        claims = self._claims(token, key, algorithm)
        principal = self._principal(claims)
        return principal, float(claims["exp"]) + self._settings.leeway_seconds

    def _header(self, token: str) -> tuple[str, str | None]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise _refused("the token is not a well-formed JWT") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in self._settings.algorithms:
            accepted = ", ".join(self._settings.algorithms)
            raise _refused(f"its algorithm {_shown(algorithm)} is not accepted ({accepted})")
        return str(algorithm), kid if isinstance(kid, str) else None

    def _claims(self, token: str, key: jwt.PyJWK, algorithm: str) -> dict[str, Any]:
        try:
            return jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self._settings.audience,
                issuer=self._settings.issuer,
                leeway=self._settings.leeway_seconds,
                options={"require": _REQUIRED},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise _refused(f"the token has no {exc.claim!r} claim") from None
        except jwt.InvalidTokenError as exc:
            raise _refused(refusal_reason(exc)) from None

    def _principal(self, claims: dict[str, Any]) -> Principal:
        name = self._settings.project_claim
        project = claims.get(name)
        if not isinstance(project, str) or not project:
            raise _refused(f"the token has no {name!r} claim naming its project")
        return Principal(project, key_id_of(claims.get("sub")), float(claims["exp"]))

    def _remember(self, token: str, found: tuple[Principal, float]) -> None:
        if len(self._verified) >= MAX_VERIFIED:
            self._prune(time.time())
        self._verified[token] = found

    def _prune(self, now: float) -> None:
        """Drop the expired tokens, and the oldest tenth if that is not enough."""
        self._verified = {t: f for t, f in self._verified.items() if f[1] > now}
        if len(self._verified) >= MAX_VERIFIED:
            kept = list(self._verified.items())[MAX_VERIFIED // 10 :]
            self._verified = dict(kept)


def key_id_of(subject: object) -> str | None:
    """``jwt:<sub>``, the caller as usage and audit records name it (a long subject hashed)."""
    if not isinstance(subject, str) or not subject:
        return None
    if len(subject) > MAX_SUBJECT:
        subject = "sha256:" + hashlib.sha256(subject.encode()).hexdigest()
    return f"jwt:{subject}"


def refusal_reason(exc: jwt.InvalidTokenError) -> str:
    """Why PyJWT refused a token, in a few words."""
    for kind in type(exc).__mro__:
        if kind in _REASONS:
            return _REASONS[kind]
    return "the token is invalid"


def _shown(value: object) -> str:
    """A header value of the token, quoted, cut short (it is the caller's text)."""
    quoted = repr(value)
    return quoted if len(quoted) <= MAX_SHOWN else quoted[: MAX_SHOWN - 3] + "..."


def _refused(reason: str) -> AuthenticationError:
    return AuthenticationError(f"Invalid bearer JWT: {reason}.")


def jwks_source(settings: JwtSettings) -> JwksSource:
    if settings.jwks_url is not None:
        return UrlJwks(settings.jwks_url)
    assert settings.jwks_file is not None  # the settings hold exactly one of the two
    return FileJwks(settings.jwks_file)


def build_jwt_verifier(settings: JwtSettings, projects: ProjectCheck) -> JwtVerifier:
    """A verifier for ``[auth.jwt]``; its caller closes it (:meth:`JwtVerifier.aclose`)."""
    return JwtVerifier(settings, jwks_source(settings), projects)
