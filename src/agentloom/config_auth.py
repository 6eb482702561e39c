"""``[auth]``, ``[auth.jwt]`` and ``[auth.oidc]``: who may call, bearer JWTs, and signing in to the
console (part of :mod:`agentloom.config`, whose ``Settings`` holds them)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator

from agentloom.access_rules import AccessRules, parse_rules
from agentloom.config_base import StrictSettings as _Strict
from agentloom.errors import InvalidRequestError
from agentloom.redact import redact_url

JwtAlgorithm = Literal[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"
]  # asymmetric only: never "none", never HMAC (a public key must not become a shared secret)

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def _default_algorithms() -> list[JwtAlgorithm]:
    return ["RS256", "ES256"]


class JwtSettings(_Strict):
    """``[auth.jwt]``: bearer JWTs from an OIDC provider, checked offline against its JWKS."""

    issuer: str = Field(min_length=1)  # the ``iss`` a token must carry, exactly
    audience: str = Field(min_length=1)  # a value its ``aud`` must hold
    jwks_file: Path | None = None  # the provider's JWKS, kept on disk ...
    jwks_url: str | None = None  # ... or fetched (https; http only on a loopback host)
    project_claim: str = Field(default="agentloom_project", min_length=1)
    algorithms: list[JwtAlgorithm] = Field(default_factory=_default_algorithms, min_length=1)
    leeway_seconds: int = Field(default=30, ge=0, le=300)  # clock skew allowed on exp and nbf
    jwks_cache_seconds: float = Field(default=300.0, gt=0)  # the JWKS is read again after this
    # an unknown ``kid`` fetches the JWKS again, at most this often
    jwks_refetch_seconds: float = Field(default=30.0, ge=0)

    @model_validator(mode="after")
    def _one_source(self) -> JwtSettings:
        if (self.jwks_file is None) == (self.jwks_url is None):
            raise ValueError("[auth.jwt] needs exactly one of jwks_file and jwks_url")
        if self.jwks_url is not None:
            _check_jwks_url(self.jwks_url)
        return self


def _check_jwks_url(url: str, what: str = "[auth.jwt] jwks_url") -> None:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS:
        return
    raise ValueError(
        f"{what} must be an https URL (http only on a loopback host): {redact_url(url)!r}"
    )


class OidcSettings(_Strict):
    """``[auth.oidc]``: people sign in to the console with the issuer of ``[auth.jwt]``
    (authorization code with PKCE); the session is a sealed cookie."""

    client_id: str = Field(min_length=1)
    client_secret: SecretStr | None = None  # unset: a public client (PKCE alone)
    redirect_url: str = Field(min_length=1)  # this server's /auth/callback, as the issuer knows it
    scopes: list[str] = Field(default_factory=lambda: ["openid", "email", "profile"])
    display_name: str | None = None  # "Sign in with <display_name>" (default: the issuer's host)
    session_seconds: int = Field(default=8 * 3600, ge=60)  # a session lasts this long
    login_seconds: int = Field(default=600, ge=30)  # from /auth/login to the callback, at most
    timeout: float = Field(default=10.0, gt=0)  # each call to the issuer, at most
    secure_cookies: bool | None = None  # unset: Secure when redirect_url is https

    @model_validator(mode="after")
    def _checked(self) -> OidcSettings:
        if "openid" not in self.scopes:
            raise ValueError("[auth.oidc] scopes must include 'openid'")
        parts = urlsplit(self.redirect_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("[auth.oidc] redirect_url must be an absolute http(s) URL")
        return self

    @property
    def secure(self) -> bool:
        """Whether the cookies are marked Secure (sent over https only)."""
        if self.secure_cookies is not None:
            return self.secure_cookies
        return urlsplit(self.redirect_url).scheme == "https"


class AuthSettings(_Strict):
    """``[auth]``: who may call. ``mode`` unset means ``none`` on a loopback address, and
    ``agentloom serve`` refuses to start on any other (set ``keys``, or ``none`` on purpose)."""

    mode: Literal["none", "keys"] | None = None
    admin_key_env: str = "AGENTLOOM_ADMIN_KEY"  # the variable holding the admin key
    watch_interval: float = Field(default=0.5, gt=0)  # seconds between revocation checks
    jwt: JwtSettings | None = None  # bearer JWTs beside the API keys
    oidc: OidcSettings | None = None  # signing in to the console with the JWTs' issuer
    # the access rules of every project that has none of its own (docs/auth.md)
    access_rules: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _jwt_needs_keys(self) -> AuthSettings:
        if self.jwt is not None and self.mode != "keys":
            raise ValueError('[auth.jwt] needs [auth] mode = "keys" (JWTs are checked beside keys)')
        if self.access_rules:
            if self.mode != "keys":
                raise ValueError(
                    '[auth] access_rules needs [auth] mode = "keys" (without keys nobody owns'
                    " anything: every request is the default project's, with no user)"
                )
            self.default_rules()  # a bad rule is refused when the file is loaded
        if self.oidc is not None:
            if self.jwt is None:
                raise ValueError("[auth.oidc] needs [auth.jwt] (its issuer, keys and claim)")
            _check_jwks_url(self.jwt.issuer, "[auth.jwt] issuer, with [auth.oidc],")
        return self

    @property
    def keys(self) -> bool:
        return self.mode == "keys"

    def default_rules(self) -> AccessRules | None:
        """``access_rules``, parsed (``None``: none; a project without rules of its own is
        open to every key of the project)."""
        try:
            return parse_rules(self.access_rules, param="[auth] access_rules")
        except InvalidRequestError as exc:
            raise ValueError(exc.message) from None

    def admin_key(self, env: Mapping[str, str] | None = None) -> str | None:
        value = (os.environ if env is None else env).get(self.admin_key_env)
        return value or None
