"""The model a managed agent calls: a served model of the server's own catalog, as an in-process
:class:`~agentloom.inference.base.Provider` for the SDK's :class:`~agentloom.llm.client.LLM`.

Every call goes through the catalog as a client's would: the project's model permissions and
rate limits apply (``resolve`` with admission), the request goes to the backend under its own id,
and the call is counted in the project's usage when it ends (:class:`UsageLedger`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from agentloom.inference.base import ChatRequest, Chunk, ModelInfo, TokenCount, Usage
from agentloom.inference.catalog import ModelCatalog
from agentloom.request_entry import current_entry
from agentloom.services.organization.usage import UsageLedger

__all__ = ["ProjectModel"]


class ProjectModel:
    """The served model ``model_id``, called as the running work's project. ``admitted``: its
    first call was admitted already (the model was resolved to check it, before a stream
    began); later calls are admitted each."""

    def __init__(
        self, catalog: ModelCatalog, usage: UsageLedger, model_id: str, *, admitted: bool = False
    ) -> None:
        self._catalog = catalog
        self._usage = usage
        self.model_id = model_id
        self._admitted = admitted

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        use, self._admitted = not self._admitted, False
        resolved = await self._catalog.resolve(self.model_id, use=use)
        sent = replace(request, model=resolved.model.backend_id)
        entry = current_entry()
        if entry is not None:  # the request log's row: who served the message
            entry.deployment = resolved.model.provider_name
        used: Usage | None = None
        try:
            async for chunk in resolved.provider.stream(sent):
                if isinstance(chunk, Usage):
                    used = chunk
                yield chunk
        finally:
            self._usage.record_call(self.model_id, used)

    async def count_tokens(self, request: ChatRequest) -> TokenCount:
        resolved = await self._catalog.resolve(self.model_id, use=False)
        return await resolved.provider.count_tokens(
            replace(request, model=resolved.model.backend_id)
        )

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(id=self.model_id)]

    async def aclose(self) -> None:
        """Nothing of its own to close: the catalog's providers are the server's."""
