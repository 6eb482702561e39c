"""``/v1/shields``, ``/v1/safety/run-shield`` and ``/v1/moderations``: the configured shields,
run on demand."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.safety import (
    ModerationImage,
    ModerationRequest,
    ModerationResponse,
    ModerationResult,
    RunShieldRequest,
    RunShieldResponse,
    SafetyViolation,
    ShieldList,
    ShieldMessage,
    ShieldObject,
    TextContent,
)
from agentloom.errors import InvalidRequestError
from agentloom.ids import new_id
from agentloom.inference.estimate import CHARS_PER_TOKEN
from agentloom.safety.base import Role, ShieldError
from agentloom.safety.categories import moderation_scores
from agentloom.safety.service import Decision, GuardedShield, SafetyService, combine
from agentloom.server.body import parse_body
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op

# OpenAI's moderation model names: each means the configured moderation shield.
OPENAI_MODERATION_MODELS: Final = frozenset(
    {
        "omni-moderation-latest",
        "omni-moderation-2024-09-26",
        "text-moderation-latest",
        "text-moderation-stable",
    }
)
_CHECKED_ROLES: Final[dict[str, Role]] = {"user": "user", "assistant": "assistant", "tool": "tool"}


def _shield_object(guarded: GuardedShield) -> ShieldObject:
    shield = guarded.shield
    return ShieldObject(
        id=shield.id,
        type=shield.kind,
        provider=shield.provider,
        model=shield.model,
        on_error=guarded.on_error,
        timeout=guarded.timeout,
    )


async def list_shields(request: Request) -> Response:
    shields = runtime_of(request).safety.shields()
    return json_response(ShieldList(data=[_shield_object(g) for g in shields]))


async def retrieve_shield(request: Request) -> Response:
    guarded = runtime_of(request).safety.get(request.path_params["shield_id"])
    return json_response(_shield_object(guarded))


# --- run-shield --------------------------------------------------------------------------------


def _message_text(message: ShieldMessage, index: int) -> str:
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    for part in message.content:
        if not isinstance(part, TextContent):
            raise _images_unsupported(f"messages[{index}].content")
    return "\n".join(part.text for part in message.content if isinstance(part, TextContent))


def _violation(decision: Decision, shield_id: str) -> SafetyViolation | None:
    if not decision.blocked:
        return None
    errors = [v.error for v in decision.verdicts if v.error is not None]
    metadata: dict[str, str | bool | list[str]] = {
        "shield_id": shield_id,
        "violation_type": ",".join(decision.categories),
        "categories": list(decision.categories),
        "failed": decision.failed,
    }
    if errors:
        metadata["errors"] = errors
    return SafetyViolation(user_message=decision.message, metadata=metadata)


async def run_shield(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, RunShieldRequest)
    shield_id = runtime.safety.require_one(body.shield_id, "shield_id")
    texts = [
        (_message_text(message, index), _CHECKED_ROLES[message.role])
        for index, message in enumerate(body.messages)
        if message.role in _CHECKED_ROLES
    ]
    decision = combine(await runtime.safety.check_all([shield_id], texts))
    return json_response(RunShieldResponse(violation=_violation(decision, shield_id)))


# --- moderations -------------------------------------------------------------------------------


def _moderation_shield(safety: SafetyService, model: str | None) -> str:
    if model is None or model in OPENAI_MODERATION_MODELS:
        return safety.moderation_shield
    return safety.require_one(model, "model")


def _inputs(body: ModerationRequest) -> list[str]:
    """One text per result: each string, or the text parts of a multimodal input together."""
    if isinstance(body.input, str):
        return [body.input]
    if not body.input:
        raise InvalidRequestError(
            "Invalid value for 'input': it must not be empty.", param="input", code="invalid_value"
        )
    texts: list[str] = []
    for index, item in enumerate(body.input):
        if isinstance(item, ModerationImage):
            raise _images_unsupported(f"input[{index}]")
        texts.append(item if isinstance(item, str) else item.text)
    return texts if isinstance(body.input[0], str) else ["\n".join(texts)]


def _images_unsupported(param: str) -> InvalidRequestError:
    return InvalidRequestError(
        "Image inputs are not supported by this shield: it checks text only.",
        param=param,
        code="invalid_value",
    )


def _result(decision: Decision) -> ModerationResult:
    failure = next((v.error for v in decision.verdicts if v.error is not None), None)
    if decision.failed and failure is not None:
        raise ShieldError(failure)
    scores, flagged = moderation_scores(
        v for verdict in decision.verdicts for v in verdict.violations
    )
    return ModerationResult(
        flagged=bool(flagged),
        categories={key: key in flagged for key in scores},
        category_scores=scores,
        category_applied_input_types={key: ["text"] for key in scores},
    )


async def create_moderation(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, ModerationRequest)
    shield_id = _moderation_shield(runtime.safety, body.model)
    texts: list[tuple[str, Role]] = [(text, "user") for text in _inputs(body)]
    decisions = await runtime.safety.check_all([shield_id], texts)
    tokens = sum(len(text) for text, _ in texts) // CHARS_PER_TOKEN  # estimated
    runtime.usage.record_moderation(shield_id, tokens)
    results = [_result(decision) for decision in decisions]
    moderation = ModerationResponse(
        id=new_id("modr", separator="-"), model=shield_id, results=results
    )
    return json_response(moderation)


routes = [
    ApiRoute("/v1/shields", GET=Op(list_shields, returns=ShieldList)),
    ApiRoute("/v1/shields/{shield_id:path}", GET=Op(retrieve_shield, returns=ShieldObject)),
    ApiRoute(
        "/v1/safety/run-shield",
        POST=Op(run_shield, body=RunShieldRequest, returns=RunShieldResponse),
    ),
    ApiRoute(
        "/v1/moderations",
        POST=Op(create_moderation, body=ModerationRequest, returns=ModerationResponse),
    ),
]
