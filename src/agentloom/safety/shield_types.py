"""Every shield type, in one table keyed by the config's ``type``, and the service built from
the ``[safety]`` settings. Implementations are imported when first built."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, TypeVar

from agentloom.frozen import frozen
from agentloom.inference.catalog import ModelCatalog
from agentloom.safety.base import Shield
from agentloom.safety.service import GuardedShield, SafetyService
from agentloom.safety.settings import (
    LlamaGuardShieldSettings,
    ModerationShieldSettings,
    RulesShieldSettings,
    SafetySettings,
)

__all__ = ["SHIELD_TYPES", "ShieldContext", "build_safety", "build_shield"]

AnyShieldSettings: TypeAlias = (
    RulesShieldSettings | LlamaGuardShieldSettings | ModerationShieldSettings
)
S = TypeVar("S", RulesShieldSettings, LlamaGuardShieldSettings, ModerationShieldSettings)


@frozen
class ShieldContext:
    """What shields may use from the server: the model catalog serving model-backed shields."""

    catalog: ModelCatalog


def _expect(settings: AnyShieldSettings, kind: type[S]) -> S:
    if not isinstance(settings, kind):
        raise TypeError(f"shield {settings.id!r}: expected {kind.__name__}")
    return settings


def _rules(settings: AnyShieldSettings, context: ShieldContext) -> Shield:
    from agentloom.safety.rules import RulesShield

    return RulesShield(_expect(settings, RulesShieldSettings))


def _llama_guard(settings: AnyShieldSettings, context: ShieldContext) -> Shield:
    from agentloom.safety.llama_guard import LlamaGuardShield

    return LlamaGuardShield(_expect(settings, LlamaGuardShieldSettings), context.catalog)


def _moderation(settings: AnyShieldSettings, context: ShieldContext) -> Shield:
    from agentloom.safety.moderation import ModerationShield

    return ModerationShield(_expect(settings, ModerationShieldSettings))


SHIELD_TYPES: dict[str, Callable[[AnyShieldSettings, ShieldContext], Shield]] = {
    "rules": _rules,
    "llama_guard": _llama_guard,
    "moderation": _moderation,
}


def build_shield(settings: AnyShieldSettings, context: ShieldContext) -> Shield:
    return SHIELD_TYPES[settings.type](settings, context)


def build_safety(
    settings: SafetySettings,
    catalog: ModelCatalog,
    on_verdict: Callable[[str, str], None] | None = None,
) -> SafetyService:
    """The service running every configured shield (and the built-in ``rules`` one);
    ``on_verdict`` is told of each verdict."""
    context = ShieldContext(catalog)
    guarded = [
        GuardedShield(build_shield(entry, context), entry.timeout, entry.on_error)
        for entry in settings.effective_shields()
    ]
    return SafetyService(
        guarded,
        default_guardrails=settings.default_guardrails,
        moderation_shield=settings.effective_moderation_shield(),
        on_verdict=on_verdict,
    )
