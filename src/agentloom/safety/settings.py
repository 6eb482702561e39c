"""The ``[safety]`` configuration: the shields a server runs and which of them apply by default.

```toml
[safety]
default_guardrails = ["rules"]      # shield ids checked on every response
moderation_shield = "rules"         # POST /v1/moderations' default; else the first rules shield
stream_batch_chars = 100            # streamed output is checked in batches of this many chars
stream_overlap_chars = 64           # each check re-reads (and holds back) this many checked ones

[[safety.shields]]
id = "rules"
type = "rules"                      # rules | llama_guard | moderation
timeout = 2.0                       # seconds; past it the check counts as failed
on_error = "block"                  # a failed check blocks ("allow": lets the text through)
detectors = ["email", "credit_card", "api_key", "private_key", "prompt_injection"]
```

A ``rules`` shield with id ``rules`` and every detector on exists when no rules shield is
configured (and the id is free).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from agentloom.safety.categories import HAZARD_CODES

DetectorName = Literal[
    "email", "phone", "credit_card", "iban", "api_key", "private_key", "prompt_injection"
]
ALL_DETECTORS: tuple[DetectorName, ...] = (
    "email",
    "phone",
    "credit_card",
    "iban",
    "api_key",
    "private_key",
    "prompt_injection",
)
BUILTIN_RULES_ID = "rules"

_ID_PATTERN = r"^[A-Za-z0-9_.\-]+$"
_CATEGORY_PATTERN = r"^[A-Za-z0-9_.\-/]+$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlocklistSettings(_Strict):
    """Words or phrases matched whole (word boundaries), case-insensitively."""

    category: str = Field(default="blocklist", pattern=_CATEGORY_PATTERN)
    words: list[str] = Field(min_length=1)

    @field_validator("words")
    @classmethod
    def _not_blank(cls, words: list[str]) -> list[str]:
        if any(not word.strip() for word in words):
            raise ValueError("blocklist words must not be blank")
        return words


class PatternSettings(_Strict):
    """A regular expression (Python syntax) whose matches are violations of ``category``."""

    pattern: str = Field(min_length=1)
    category: str = Field(default="custom", pattern=_CATEGORY_PATTERN)
    ignore_case: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        if compiled.match(""):
            raise ValueError(f"regular expression {pattern!r} matches the empty string")
        return pattern


class _ShieldBase(_Strict):
    id: str = Field(min_length=1, max_length=64, pattern=_ID_PATTERN)
    timeout: float = Field(default=10.0, gt=0)
    on_error: Literal["block", "allow"] = "block"


class RulesShieldSettings(_ShieldBase):
    type: Literal["rules"] = "rules"
    timeout: float = Field(default=2.0, gt=0)
    detectors: list[DetectorName] = Field(default_factory=lambda: list(ALL_DETECTORS))
    blocklists: list[BlocklistSettings] = Field(default_factory=list)
    patterns: list[PatternSettings] = Field(default_factory=list)
    injection_threshold: float = Field(default=1.0, gt=0)


class LlamaGuardShieldSettings(_ShieldBase):
    """A Llama Guard model served by a configured provider: ``model`` is a served model id
    (``"<model>"`` or ``"<provider>/<model>"``)."""

    type: Literal["llama_guard"] = "llama_guard"
    model: str = Field(min_length=1)
    excluded_categories: list[str] = Field(default_factory=list)  # e.g. ["S6", "S8"]
    max_tokens: int = Field(default=20, ge=1, le=1024)

    @field_validator("excluded_categories")
    @classmethod
    def _known_codes(cls, codes: list[str]) -> list[str]:
        normalised = [code.strip().upper() for code in codes]
        unknown = [code for code in normalised if code not in HAZARD_CODES]
        if unknown:
            raise ValueError(
                f"unknown Llama Guard categories {unknown}; known: S1 to S{len(HAZARD_CODES)}"
            )
        return normalised


class ModerationShieldSettings(_ShieldBase):
    """An OpenAI-compatible ``POST {base_url}/moderations``. ``threshold`` unset: the
    endpoint's own ``categories`` decide; set: a category is flagged when its score reaches it."""

    type: Literal["moderation"] = "moderation"
    base_url: str = Field(pattern=r"^https?://")
    model: str | None = "omni-moderation-latest"
    api_key: SecretStr | None = None
    api_key_env: str | None = None
    threshold: float | None = Field(default=None, ge=0, le=1)

    def resolved_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_env is None:
            return None
        return (os.environ if env is None else env).get(self.api_key_env)


ShieldSettings: TypeAlias = Annotated[
    RulesShieldSettings | LlamaGuardShieldSettings | ModerationShieldSettings,
    Field(discriminator="type"),
]


class SafetySettings(_Strict):
    default_guardrails: list[str] = Field(default_factory=list)
    moderation_shield: str | None = None
    shields: list[ShieldSettings] = Field(default_factory=list)
    # streamed output is checked every `stream_batch_chars` new characters, each check also
    # covering the last `stream_overlap_chars` already checked (and those are held back)
    stream_batch_chars: int = Field(default=100, ge=1)
    stream_overlap_chars: int = Field(default=64, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> SafetySettings:
        ids = [shield.id for shield in self.shields]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"shield ids must be unique; repeated: {', '.join(repeated)}")
        known = {shield.id for shield in self.effective_shields()}
        unknown = [i for i in self.default_guardrails if i not in known]
        if unknown:
            raise ValueError(f"default_guardrails names unknown shields: {', '.join(unknown)}")
        if self.moderation_shield is not None and self.moderation_shield not in known:
            raise ValueError(f"moderation_shield names an unknown shield: {self.moderation_shield}")
        return self

    def effective_shields(
        self,
    ) -> list[RulesShieldSettings | LlamaGuardShieldSettings | ModerationShieldSettings]:
        """The configured shields, plus the built-in ``rules`` one when no rules shield is
        configured and its id is free."""
        shields = list(self.shields)
        has_rules = any(isinstance(s, RulesShieldSettings) for s in shields)
        if not has_rules and all(s.id != BUILTIN_RULES_ID for s in shields):
            shields.append(RulesShieldSettings(id=BUILTIN_RULES_ID))
        return shields

    def effective_moderation_shield(self) -> str:
        """``moderation_shield``, else the first rules shield (else the first shield)."""
        if self.moderation_shield is not None:
            return self.moderation_shield
        shields = self.effective_shields()
        rules = [s.id for s in shields if isinstance(s, RulesShieldSettings)]
        return rules[0] if rules else shields[0].id
