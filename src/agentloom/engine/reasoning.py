"""What a reasoning item carries besides its text: sealed reasoning and a summary.

Sealed reasoning (``include: ["reasoning.encrypted_content"]``) is for stateless clients
(``store: false``, the whole history replayed every turn, as Codex does): the item's
``encrypted_content`` is the reasoning the backend produced, sealed (see
:mod:`agentloom.sealing`, purpose ``"reasoning"``). When a client sends the item back, the
reasoning is opened and given back to the backend with the assistant turn it belongs to, whatever
else the item says (clients drop an item's ``content`` when they replay it). Content this server
did not seal, or that was changed, is a 400 naming the item; it is never logged.

The summary (``reasoning: {"summary": "auto" | "concise" | "detailed"}``) is an extract, not a
summary written by a model: the first paragraphs of the reasoning text, up to a length that
depends on the level asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Literal

from agentloom.api import events as ev
from agentloom.api.content import ReasoningText, SummaryText
from agentloom.api.items import Reasoning, StoredItem
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.sealing import Sealer, SealError

PURPOSE = "reasoning"
ENCRYPTED_INCLUDE = "reasoning.encrypted_content"
_VERSION = 1

SummaryLevel = Literal["auto", "concise", "detailed"]

# Characters of reasoning a summary keeps at most (whole paragraphs when they fit).
SUMMARY_LIMITS: dict[SummaryLevel, int] = {"concise": 280, "auto": 600, "detailed": 2000}
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_ELLIPSIS = "…"


class SealedReasoning:
    """Seals reasoning into ``encrypted_content`` and opens it again."""

    def __init__(self, sealer: Sealer) -> None:
        self._sealer = sealer

    def seal(self, text: str, *, model: str) -> str:
        payload = json.dumps({"v": _VERSION, "model": model, "text": text})
        return self._sealer.seal(PURPOSE, payload.encode())

    def open(self, token: str, *, param: str | None) -> str:
        """The reasoning inside ``token``; a 400 naming ``param`` if this server did not seal
        it for reasoning, or it was changed."""
        try:
            payload = json.loads(self._sealer.open(PURPOSE, token))
            text = payload["text"]
            if not isinstance(text, str):
                raise TypeError("no reasoning text in the sealed content")
            return text
        except (SealError, ValueError, KeyError, TypeError) as exc:
            raise InvalidRequestError(
                f"The reasoning item's encrypted_content cannot be read: {exc}. Send reasoning "
                "items exactly as this server returned them.",
                param=param,
                code="invalid_encrypted_content",
            ) from None

    def opened(self, items: Sequence[StoredItem], *, param: str) -> list[StoredItem]:
        """``items`` with each sealed reasoning item's content replaced by the reasoning it
        seals (``param`` names the list in errors)."""
        return [self._opened(item, f"{param}[{i}]") for i, item in enumerate(items)]

    def _opened(self, item: StoredItem, param: str) -> StoredItem:
        if not isinstance(item, Reasoning) or item.encrypted_content is None:
            return item
        text = self.open(item.encrypted_content, param=f"{param}.encrypted_content")
        return item.model_copy(update={"content": [ReasoningText(text=text)]})


@frozen
class ReasoningOutput:
    """How a model call's reasoning items are finished: sealed for ``model`` when ``sealed`` is
    given, summarised at ``summary`` when asked for."""

    sealed: SealedReasoning | None = None
    model: str = ""
    summary: SummaryLevel | None = None

    def item(self, item_id: str, text: str) -> Reasoning:
        """The finished reasoning item for ``text``."""
        encrypted = self.sealed.seal(text, model=self.model) if self.sealed else None
        return Reasoning(
            id=item_id,
            summary=[SummaryText(text=s) for s in self.summaries(text)],
            content=[ReasoningText(text=text)],
            encrypted_content=encrypted,
            status="completed",
        )

    def summaries(self, text: str) -> list[str]:
        if self.summary is None:
            return []
        extract = summary_extract(text, SUMMARY_LIMITS[self.summary])
        return [extract] if extract else []


def summary_extract(text: str, limit: int) -> str:
    """The first paragraphs of ``text`` that fit in ``limit`` characters; a first paragraph
    longer than that is cut at a word boundary and ends with an ellipsis."""
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    if not paragraphs:
        return ""
    kept = [paragraphs[0]]
    size = len(paragraphs[0])
    for paragraph in paragraphs[1:]:
        size += 2 + len(paragraph)
        if size > limit:
            break
        kept.append(paragraph)
    if len(kept[0]) > limit:
        return _cut(kept[0], limit)
    return "\n\n".join(kept)


def _cut(paragraph: str, limit: int) -> str:
    head = paragraph[: limit - len(_ELLIPSIS)]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:.") + _ELLIPSIS


def summary_events(
    seq: Callable[[], int], item: Reasoning, output_index: int
) -> list[ev.StreamEvent]:
    """The summary parts of a finished item, streamed in OpenAI's order: part added, text
    delta, text done, part done (each part whole: the extract is known when the reasoning
    ends)."""
    assert item.id is not None
    events: list[ev.StreamEvent] = []
    for index, part in enumerate(item.summary):
        at = _SummaryAt(item.id, output_index, index)
        events += [
            ev.ReasoningSummaryPartAdded(part=SummaryText(text=""), **at.fields(seq)),
            ev.ReasoningSummaryTextDelta(delta=part.text, **at.fields(seq)),
            ev.ReasoningSummaryTextDone(text=part.text, **at.fields(seq)),
            ev.ReasoningSummaryPartDone(part=part, **at.fields(seq)),
        ]
    return events


@frozen
class _SummaryAt:
    item_id: str
    output_index: int
    summary_index: int

    def fields(self, seq: Callable[[], int]) -> dict[str, int | str]:
        return {
            "sequence_number": seq(),
            "item_id": self.item_id,
            "output_index": self.output_index,
            "summary_index": self.summary_index,
        }
