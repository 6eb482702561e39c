"""Per-call generation options, shared by both paths, and how a call's options are merged over
the LLM's own.

``metadata`` is OpenAI's: at most 16 string pairs, keys up to 64 characters, values up to 512.
``extra_body`` is merged into the request's JSON body as it is (provider-specific fields), its
``metadata`` merged with ``metadata``; it cannot set what the adapter itself sends
(:data:`RESERVED_BODY_KEYS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Final, Literal, TypeVar

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference.base import ResponseFormat, ToolChoice
from agentloom.json_types import JSONValue

__all__ = [
    "METADATA_MAX_KEY",
    "METADATA_MAX_PAIRS",
    "METADATA_MAX_VALUE",
    "RESERVED_BODY_KEYS",
    "CallOptions",
    "ReasoningSummary",
    "body_extras",
    "check_metadata",
    "merge_options",
]

ReasoningSummary = Literal["auto", "concise", "detailed"]

METADATA_MAX_PAIRS: Final = 16
METADATA_MAX_KEY: Final = 64
METADATA_MAX_VALUE: Final = 512
# what the adapter sends itself: extra_body may not replace it (the stream would not be read)
RESERVED_BODY_KEYS: Final = frozenset(
    {"model", "messages", "input", "stream", "stream_options", "previous_response_id"}
)
_V = TypeVar("_V")
_MERGED: Final = ("metadata", "extra_body")  # merged key by key, the call's over the LLM's


@frozen
class CallOptions:
    """What a call may change; ``None`` (and ``"text"``) leave the LLM's own setting.

    ``reasoning_summary`` asks a reasoning model on the Responses path for a summary of its
    reasoning (``reasoning.summary``); Chat Completions has no such field and drops it.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    reasoning_summary: ReasoningSummary | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat = "text"
    metadata: Mapping[str, str] | None = None
    extra_body: Mapping[str, JSONValue] | None = None


_DEFAULTS: Final = CallOptions()


def merge_options(base: CallOptions, call: CallOptions | None) -> CallOptions:
    """``call``'s settings over ``base``'s: each one ``call`` sets wins, and its ``metadata``
    and ``extra_body`` are merged into ``base``'s, key by key. The merged metadata is checked."""
    merged = base
    if call is not None:
        changed = {
            f.name: getattr(call, f.name)
            for f in fields(CallOptions)
            if f.name not in _MERGED and getattr(call, f.name) != getattr(_DEFAULTS, f.name)
        }
        merged = replace(
            base,
            **changed,
            metadata=_merged(base.metadata, call.metadata),
            extra_body=_merged_body(base.extra_body, call.extra_body),
        )
    body_extras(merged)  # refuses bad metadata and extra_body before anything is sent
    return merged


def _merged(
    base: Mapping[str, _V] | None, call: Mapping[str, _V] | None
) -> Mapping[str, _V] | None:
    if not call:
        return base
    return {**(base or {}), **call}


def _merged_body(
    base: Mapping[str, JSONValue] | None, call: Mapping[str, JSONValue] | None
) -> Mapping[str, JSONValue] | None:
    """``call``'s extra_body over ``base``'s, their ``metadata`` objects merged too."""
    merged = _merged(base, call)
    first = base.get("metadata") if base else None
    second = call.get("metadata") if call else None
    if merged is not None and isinstance(first, dict) and isinstance(second, dict):
        return {**merged, "metadata": {**first, **second}}
    return merged


def body_extras(options: CallOptions) -> tuple[dict[str, str] | None, dict[str, JSONValue]]:
    """The request's ``metadata`` (``extra_body``'s, then ``metadata``'s pairs; ``None`` when
    there are none) and the rest of ``extra_body``, checked; :class:`InvalidRequestError`
    says what is wrong."""
    extra = dict(options.extra_body or {})
    reserved = sorted(RESERVED_BODY_KEYS.intersection(extra))
    if reserved:
        raise InvalidRequestError(
            f"extra_body cannot set {', '.join(map(repr, reserved))}: the adapter sends it",
            param="extra_body",
        )
    from_body = extra.pop("metadata", None)
    if from_body is not None and not isinstance(from_body, dict):
        raise InvalidRequestError(
            "extra_body's metadata must be an object of strings", param="extra_body.metadata"
        )
    pairs = {**(from_body or {}), **(options.metadata or {})}
    return (check_metadata(pairs) or None), extra


def check_metadata(metadata: Mapping[str, object]) -> dict[str, str]:
    """``metadata`` as OpenAI takes it, or :class:`InvalidRequestError` naming the rule broken."""
    if len(metadata) > METADATA_MAX_PAIRS:
        raise InvalidRequestError(
            f"metadata may have at most {METADATA_MAX_PAIRS} pairs, got {len(metadata)}",
            param="metadata",
        )
    checked: dict[str, str] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidRequestError(
                f"metadata keys and values must be strings, got {key!r}: {value!r}",
                param="metadata",
            )
        if len(key) > METADATA_MAX_KEY:
            raise InvalidRequestError(
                f"metadata key {key[:20]!r}... is {len(key)} characters, at most "
                f"{METADATA_MAX_KEY} are allowed",
                param=f"metadata.{key[:20]}",
            )
        if len(value) > METADATA_MAX_VALUE:
            raise InvalidRequestError(
                f"metadata value of {key!r} is {len(value)} characters, at most "
                f"{METADATA_MAX_VALUE} are allowed",
                param=f"metadata.{key}",
            )
        checked[key] = value
    return checked
