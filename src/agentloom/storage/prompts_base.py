"""The storage seam for prompts: every version of a prompt is a row, one of them the default.

Rows carry the JSON of the version's own fields (``body``: template, variables, metadata); the
engine owns that shape, the store owns versions, the default and pagination.
"""

from __future__ import annotations

from typing import Literal, Protocol

from agentloom.frozen import frozen
from agentloom.storage.base import Order, Page

AddOutcome = Literal["added", "missing", "stale"]
"""``add_version``: the version was added; the prompt does not exist; ``based_on`` is not the
latest version any more (another update won)."""


@frozen
class PromptRow:
    id: str
    version: int
    created_at: float  # unix seconds
    is_default: bool
    body: str  # JSON of the version's fields


class PromptStore(Protocol):
    async def create(self, row: PromptRow) -> None:
        """Insert the first version of a new prompt."""

    async def get(self, prompt_id: str, version: int | None) -> PromptRow | None:
        """That version of the prompt, or its default version when ``version`` is ``None``."""

    async def exists(self, prompt_id: str) -> bool: ...

    async def versions(self, prompt_id: str) -> list[PromptRow]:
        """Every version, oldest first; empty when the prompt does not exist."""

    async def add_version(self, row: PromptRow, *, based_on: int) -> AddOutcome:
        """Insert ``row`` (a new version) if ``based_on`` is still the latest version; a default
        ``row`` becomes the only default. Of concurrent updates from one version, one wins."""

    async def set_default(self, prompt_id: str, version: int) -> PromptRow | None:
        """Make ``version`` the only default and return it; ``None`` if there is no such
        version."""

    async def delete(self, prompt_id: str) -> bool: ...

    async def list_page(
        self, *, after: str | None, limit: int, order: Order
    ) -> Page[PromptRow] | None:
        """The default version of each prompt, by the prompt's creation; ``None`` when the
        ``after`` prompt does not exist."""
