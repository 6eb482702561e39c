"""List envelopes and small objects shared by several endpoints."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from agentloom.api.wire import Nullable, WireModel

T = TypeVar("T")


class ListPage(WireModel, Generic[T]):
    object: Literal["list"] = "list"
    data: list[T]
    first_id: Nullable[str]  # null on an empty page, as OpenAI sends it
    last_id: Nullable[str]
    has_more: bool

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        """``ListPage[Prompt]`` is named ``PromptList`` (in the OpenAPI document too); a page of
        a union of models is an ``ItemList``."""
        (item,) = params
        name = item.__name__ if isinstance(item, type) else "Item"
        return f"{name}List"

    @classmethod
    def of(cls, data: list[T], *, has_more: bool) -> ListPage[T]:
        """A page of ``data`` (objects with an ``id``), its ends named by their ids."""
        ids = [getattr(item, "id", None) for item in data[:1] + data[-1:]]
        return cls(
            data=data,
            first_id=ids[0] if ids else None,
            last_id=ids[-1] if ids else None,
            has_more=has_more,
        )


ModelKind = Literal["chat", "embeddings"]


class ModelObject(WireModel):
    """OpenAI's model object, and ``kind`` (an agentloom extension, the name ``[[models]]``
    uses): ``chat`` for Responses and Chat Completions, ``embeddings`` for ``/v1/embeddings``."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str
    kind: ModelKind


class ModelList(WireModel):
    object: Literal["list"] = "list"
    data: list[ModelObject]


class Health(WireModel):
    """``GET /v1/health``."""

    status: Literal["ok"] = "ok"


class ReadinessCheck(WireModel):
    """One part the server depends on, as ``GET /v1/health/ready`` found it."""

    kind: Literal["database", "backend", "job_runner", "mcp_server", "web_search"]
    name: str  # the provider's, the MCP server's label, the search source's use and provider
    status: Literal["ok", "down"]
    error: str | None = None  # why it is down


class Readiness(WireModel):
    """``GET /v1/health/ready``: 200 when ``ready`` or ``degraded``, 503 when ``not_ready``."""

    status: Literal["ready", "degraded", "not_ready"]
    checks: list[ReadinessCheck]
