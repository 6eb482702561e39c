"""``POST /v1/responses/compact``: its body and the ``response.compaction`` object."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.items import StoredItem
from agentloom.api.requests import CreateResponseRequest, Input
from agentloom.api.response import ResponseUsage
from agentloom.api.wire import WireModel


class CompactRequest(WireModel):
    model: str = Field(min_length=1)
    input: Input = Field(default_factory=list)
    instructions: str | None = None
    previous_response_id: str | None = None
    prompt_cache_key: str | None = Field(default=None, max_length=1024)

    def as_create(self) -> CreateResponseRequest:
        """The same context, as a create request would assemble it."""
        return CreateResponseRequest(
            model=self.model,
            input=self.input,
            instructions=self.instructions,
            previous_response_id=self.previous_response_id,
            prompt_cache_key=self.prompt_cache_key,
            store=False,
        )


class CompactedResponse(WireModel):
    """The input messages of the compacted context, then one ``compaction`` item."""

    id: str
    object: Literal["response.compaction"] = "response.compaction"
    created_at: int
    output: list[StoredItem]
    usage: ResponseUsage
