"""List envelopes and small objects shared by several endpoints."""

from __future__ import annotations

from typing import Generic, Literal, TypeVar

from agentloom.api.wire import Nullable, WireModel

T = TypeVar("T")


class ListPage(WireModel, Generic[T]):
    object: Literal["list"] = "list"
    data: list[T]
    first_id: Nullable[str]  # null on an empty page, as OpenAI sends it
    last_id: Nullable[str]
    has_more: bool


class ModelObject(WireModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelList(WireModel):
    object: Literal["list"] = "list"
    data: list[ModelObject]
