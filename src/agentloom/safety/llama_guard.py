"""The ``llama_guard`` shield: a Llama Guard 3 style classifier served by a configured provider.

The text is put in Llama Guard 3's task prompt (the S1-S14 hazard categories, minus the
excluded ones) as the one message of a conversation, ``User:`` for what users and tools say,
``Agent:`` for the model's answers, and sent as a chat completion. The answer is ``safe``, or
``unsafe`` and a line of comma-separated category codes; anything else is a :class:`ShieldError`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Sequence
from typing import Final

from agentloom.errors import NotFoundError, UpstreamError
from agentloom.inference.base import ChatMessage, ChatRequest, Provider, TextDelta
from agentloom.inference.catalog import ModelCatalog
from agentloom.safety.base import Role, ShieldError, ShieldKind, Verdict, Violation
from agentloom.safety.categories import HAZARDS, HAZARDS_BY_CODE, Hazard
from agentloom.safety.settings import LlamaGuardShieldSettings

_TASK: Final = (
    "Task: Check if there is unsafe content in '{agent}' messages in conversations according "
    "our safety policy with the below categories."
)
_INSTRUCTIONS: Final = (
    "Provide your safety assessment for ONLY THE LAST {agent} message in the above "
    "conversation:\n"
    " - First line must read 'safe' or 'unsafe'.\n"
    " - If unsafe, a second line must include a comma-separated list of violated categories."
)
UNSPECIFIED: Final = "unsafe"  # the category of an `unsafe` answer that names none


def speaker(role: Role) -> str:
    """How the conversation names whoever said the text: the model is the ``Agent``."""
    return "Agent" if role == "assistant" else "User"


def render_prompt(text: str, role: Role, hazards: Sequence[Hazard] = HAZARDS) -> str:
    """Llama Guard 3's prompt for one message, offering ``hazards`` (with their own codes)."""
    agent = speaker(role)
    categories = "\n".join(f"{h.code}: {h.name}." for h in hazards)
    return (
        f"{_TASK.format(agent=agent)}\n\n"
        f"<BEGIN UNSAFE CONTENT CATEGORIES>\n{categories}\n<END UNSAFE CONTENT CATEGORIES>\n\n"
        f"<BEGIN CONVERSATION>\n\n{agent}: {text}\n\n<END CONVERSATION>\n\n"
        f"{_INSTRUCTIONS.format(agent=agent)}"
    )


def parse_answer(answer: str, enabled: Collection[str]) -> tuple[Violation, ...]:
    """The violations an answer reports, keeping only ``enabled`` category codes."""
    lines = [line.strip() for line in answer.strip().splitlines() if line.strip()]
    verdict = lines[0].lower() if lines else ""
    if verdict == "safe" and len(lines) == 1:
        return ()
    if verdict != "unsafe" or len(lines) > 2:
        raise ShieldError(f"the Llama Guard model gave an unparseable answer: {answer[:200]!r}")
    if len(lines) == 1:
        return (Violation(UNSPECIFIED, "unsafe content (no category given)"),)
    codes = _codes(lines[1], answer)
    return tuple(_violation(code) for code in dict.fromkeys(codes) if code in enabled)


def _codes(line: str, answer: str) -> list[str]:
    codes = [code.strip().upper() for code in line.split(",") if code.strip()]
    if not codes or not all(code in HAZARDS_BY_CODE for code in codes):
        raise ShieldError(f"the Llama Guard model gave an unparseable answer: {answer[:200]!r}")
    return codes


def _violation(code: str) -> Violation:
    hazard = HAZARDS_BY_CODE[code]
    return Violation(code, f"{hazard.code}: {hazard.name} ({hazard.description})")


class LlamaGuardShield:
    kind: ShieldKind = "llama_guard"

    def __init__(self, settings: LlamaGuardShieldSettings, catalog: ModelCatalog) -> None:
        self.id = settings.id
        self.model: str | None = settings.model
        self.provider: str | None = None  # whichever provider serves the model
        self._catalog = catalog
        self._max_tokens = settings.max_tokens
        excluded = set(settings.excluded_categories)
        self.hazards = tuple(h for h in HAZARDS if h.code not in excluded)
        self._enabled = frozenset(h.code for h in self.hazards)

    async def check(self, text: str, *, role: Role) -> Verdict:
        provider, backend_model = await self._resolve()
        request = ChatRequest(
            model=backend_model,
            messages=(ChatMessage(role="user", content=render_prompt(text, role, self.hazards)),),
            temperature=0.0,
            max_tokens=self._max_tokens,
        )
        answer = await _answer(provider, request)
        return Verdict(self.id, parse_answer(answer, self._enabled))

    async def aclose(self) -> None:
        """The provider belongs to the server's catalog, which closes it."""

    async def _resolve(self) -> tuple[Provider, str]:
        try:
            resolved = await self._catalog.resolve(self.model or "")
        except NotFoundError as exc:
            raise ShieldError(f"the Llama Guard model {self.model!r} is not served") from exc
        return resolved.provider, resolved.model.backend_id


async def _answer(provider: Provider, request: ChatRequest) -> str:
    parts: list[str] = []
    stream = provider.stream(request)
    try:
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                parts.append(chunk.text)
    except ShieldError:
        raise
    except UpstreamError as exc:
        raise ShieldError(
            f"the Llama Guard model failed: {exc.message}", status=exc.status
        ) from exc
    finally:
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()
    return "".join(parts)
