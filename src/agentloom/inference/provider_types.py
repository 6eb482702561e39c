"""Every provider type agentloom can build, in one table keyed by the config's ``type``.

Implementations are imported when first built, so an unused backend (and its SDK) costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from agentloom.inference.base import Provider, ProviderConfig

__all__ = ["PROVIDER_TYPES", "UnknownProviderTypeError", "build_provider"]


class UnknownProviderTypeError(ValueError):
    """A provider config names a ``type`` that is not in :data:`PROVIDER_TYPES`."""


def _openai_compatible(config: ProviderConfig) -> Provider:
    from agentloom.inference.openai_compatible import OpenAICompatibleProvider

    return OpenAICompatibleProvider(config)


def _scripted(config: ProviderConfig) -> Provider:
    from agentloom.inference.scripted import ScriptedModel

    return ScriptedModel(models=config.models or ("scripted",))


PROVIDER_TYPES: dict[str, Callable[[ProviderConfig], Provider]] = {
    "openai_compatible": _openai_compatible,
    "scripted": _scripted,
}


def build_provider(config: ProviderConfig) -> Provider:
    factory = PROVIDER_TYPES.get(config.type)
    if factory is None:
        known = ", ".join(sorted(PROVIDER_TYPES))
        raise UnknownProviderTypeError(
            f"provider {config.name!r} has unknown type {config.type!r}; known types: {known}"
        )
    return factory(config)
