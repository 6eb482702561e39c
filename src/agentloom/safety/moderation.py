"""The ``moderation`` shield: asks an OpenAI-compatible ``POST /moderations`` endpoint.

Each flagged category of the first result becomes a violation with its score; with a
``threshold`` configured, every category whose score reaches it does instead.
"""

from __future__ import annotations

import json
from typing import Final

import httpx2
from pydantic import BaseModel, ConfigDict, ValidationError

from agentloom.safety.base import Role, ShieldError, ShieldKind, Verdict, Violation
from agentloom.safety.settings import ModerationShieldSettings
from agentloom.tls import client_context

_CONNECT_TIMEOUT: Final = 10.0
_MAX_DETAIL: Final = 300


class _Result(BaseModel):
    model_config = ConfigDict(extra="ignore")

    flagged: bool = False
    categories: dict[str, bool | None] = {}
    category_scores: dict[str, float | None] = {}


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[_Result]


class ModerationShield:
    kind: ShieldKind = "moderation"

    def __init__(self, settings: ModerationShieldSettings) -> None:
        self.id = settings.id
        self.model: str | None = settings.model
        self.provider: str | None = settings.base_url
        self._threshold = settings.threshold
        api_key = settings.resolved_api_key()
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(
            verify=client_context(),
            base_url=settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx2.Timeout(
                settings.timeout, connect=min(settings.timeout, _CONNECT_TIMEOUT)
            ),
        )

    async def check(self, text: str, *, role: Role) -> Verdict:
        body: dict[str, str] = {"input": text}
        if self.model is not None:
            body["model"] = self.model
        result = await self._post(body)
        return Verdict(self.id, self._violations(result))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _post(self, body: dict[str, str]) -> _Result:
        try:
            response = await self._client.post("moderations", json=body)
        except httpx2.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise ShieldError(f"the moderation endpoint could not be reached: {reason}") from exc
        if response.status_code >= 400:
            detail = response.content[:_MAX_DETAIL].decode("utf-8", "replace").strip()
            raise ShieldError(
                f"the moderation endpoint answered {response.status_code}: {detail}",
                status=response.status_code,
            )
        try:
            answer = _Answer.model_validate_json(response.content)
        except (ValidationError, json.JSONDecodeError) as exc:
            raise ShieldError(
                "the moderation endpoint sent an answer that is not a result"
            ) from exc
        if not answer.results:
            raise ShieldError("the moderation endpoint sent no result")
        return answer.results[0]

    def _violations(self, result: _Result) -> tuple[Violation, ...]:
        scores = result.category_scores
        if self._threshold is None:
            names = [name for name, on in result.categories.items() if on]
        else:
            names = [name for name, s in scores.items() if s is not None and s >= self._threshold]
        found = tuple(_violation(name, scores.get(name)) for name in names)
        if not found and result.flagged and self._threshold is None:
            return (_violation("flagged", None),)
        return found


def _violation(category: str, score: float | None) -> Violation:
    message = f"flagged by the moderation endpoint: {category}"
    return Violation(category, message, score=1.0 if score is None else score)
