"""The base of every wire model, and the one rule for ``null`` on the wire.

An optional field is absent or of its type: a field whose value is ``None`` is left out of what
we send, unless its annotation says :data:`NULLABLE` — the fields the spec declares nullable
(``previous_response_id``, ``error``, ``completed_at``, ``usage`` ...), which are sent as ``null``
the way OpenAI sends them. ``tests/wire_audit.py`` holds every body, event and frame the server
sends to the Open Responses specification where it speaks, and to the ``openai`` package's
reading of OpenAI's spec everywhere (docs/limits.md).
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict


class _NullableMarker:
    """Metadata marking a field that is sent as ``null`` when it has no value."""

    def __repr__(self) -> str:
        return "NULLABLE"


NULLABLE = _NullableMarker()
T = TypeVar("T")
Nullable: TypeAlias = Annotated[T | None, NULLABLE]
"""``Nullable[str]``: a field sent as ``null`` when it is ``None`` (the spec allows it)."""


def _is_none(value: object) -> bool:
    return value is None


def _admits_none(annotation: object) -> bool:
    if annotation is None or annotation is type(None):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_admits_none(arg) for arg in typing.get_args(annotation))
    return False


class WireModel(BaseModel):
    """Base of every wire model: unknown fields are accepted and dropped (clients send extras);
    ``None`` is left out of what is sent unless the field is :data:`Nullable`."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        omitted = [
            info
            for info in cls.model_fields.values()
            if info.exclude_if is None
            and NULLABLE not in info.metadata
            and _admits_none(info.annotation)
        ]
        for info in omitted:
            info.exclude_if = _is_none
        if omitted:
            cls.model_rebuild(force=True)
