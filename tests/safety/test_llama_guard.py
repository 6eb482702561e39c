"""The ``llama_guard`` shield: its prompt, its answer parser, and the whole check against a
scripted model served over HTTP by the fake backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentloom.errors import UpstreamError
from agentloom.inference.base import ProviderConfig
from agentloom.inference.catalog import ModelCatalog
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import ScriptedModel, delay, raise_error
from agentloom.safety.base import ShieldError
from agentloom.safety.categories import HAZARDS
from agentloom.safety.llama_guard import LlamaGuardShield, parse_answer, render_prompt
from agentloom.safety.service import CHECK_FAILED, GuardedShield, OnError, SafetyService
from agentloom.safety.settings import LlamaGuardShieldSettings
from agentloom.testing.backend import FakeBackend
from tests.safety.guard_fake import MARKER, guard

ALL = frozenset(h.code for h in HAZARDS)


@pytest.fixture
async def catalog(backend: FakeBackend) -> AsyncIterator[ModelCatalog]:
    config = ProviderConfig(
        name="fake",
        base_url=backend.base_url,
        models=("llama-guard-3",),
        discover=False,
        timeout=1.0,
        connect_timeout=1.0,
        http_client="lean",
    )
    provider = OpenAICompatibleProvider(config)
    yield ModelCatalog({"fake": provider}, {"fake": config})
    await provider.aclose()


def make_shield(catalog: ModelCatalog, **options: object) -> LlamaGuardShield:
    settings = LlamaGuardShieldSettings.model_validate(
        {"id": "guard", "model": "fake/llama-guard-3", **options}
    )
    return LlamaGuardShield(settings, catalog)


# --- the prompt ------------------------------------------------------------------------------


def test_the_prompt_follows_llama_guard_3() -> None:
    prompt = render_prompt("How do I bake bread?", "user")

    assert prompt.startswith(
        "Task: Check if there is unsafe content in 'User' messages in conversations according "
        "our safety policy with the below categories.\n\n<BEGIN UNSAFE CONTENT CATEGORIES>\n"
        "S1: Violent Crimes.\nS2: Non-Violent Crimes.\n"
    )
    assert "S14: Code Interpreter Abuse.\n<END UNSAFE CONTENT CATEGORIES>\n\n" in prompt
    assert "<BEGIN CONVERSATION>\n\nUser: How do I bake bread?\n\n<END CONVERSATION>" in prompt
    assert prompt.endswith(
        "Provide your safety assessment for ONLY THE LAST User message in the above "
        "conversation:\n - First line must read 'safe' or 'unsafe'.\n"
        " - If unsafe, a second line must include a comma-separated list of violated categories."
    )


def test_the_models_answers_are_the_agents() -> None:
    prompt = render_prompt("Here is how.", "assistant")

    assert "in 'Agent' messages" in prompt
    assert "\n\nAgent: Here is how.\n\n" in prompt
    assert "ONLY THE LAST Agent message" in prompt
    assert "User:" not in prompt


# --- the answer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "codes"),
    [
        ("safe", []),
        ("  Safe \n", []),
        ("unsafe\nS1,S10", ["S1", "S10"]),
        ("UNSAFE\n s1 , s10 ,\n", ["S1", "S10"]),
        ("\nunsafe\r\nS11\n", ["S11"]),
        ("unsafe\nS2,S2", ["S2"]),
        ("unsafe", ["unsafe"]),
    ],
)
def test_answers_are_parsed(answer: str, codes: list[str]) -> None:
    assert [v.category for v in parse_answer(answer, ALL)] == codes


def test_disabled_categories_in_an_answer_are_ignored() -> None:
    assert [v.category for v in parse_answer("unsafe\nS1,S10", ALL - {"S10"})] == ["S1"]
    assert parse_answer("unsafe\nS10", ALL - {"S10"}) == ()


def test_a_violation_names_its_hazard() -> None:
    (violation,) = parse_answer("unsafe\nS11", ALL)

    assert violation.message.startswith("S11: Self-Harm")


@pytest.mark.parametrize(
    "answer", ["", "I cannot help", "safe\nS1", "unsafe\nS99", "unsafe\nviolence", "maybe\nS1"]
)
def test_anything_else_is_unparseable(answer: str) -> None:
    with pytest.raises(ShieldError, match="unparseable answer"):
        parse_answer(answer, ALL)


# --- over HTTP -------------------------------------------------------------------------------


async def test_a_flagged_text_over_http(
    catalog: ModelCatalog, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(guard)
    shield = make_shield(catalog)

    unsafe = await shield.check(f"Tell me how to {MARKER}", role="user")
    safe = await shield.check("Tell me about bread", role="assistant")

    assert unsafe.categories == ("S1", "S10")
    assert safe.violations == ()
    first, second = backend.chat_requests
    assert first.model == "llama-guard-3"
    assert first.temperature == 0.0
    assert first.max_tokens == 20
    assert [m.role for m in first.messages] == ["user"]
    assert first.messages[0].content == render_prompt(f"Tell me how to {MARKER}", "user")
    assert "Agent: Tell me about bread" in str(second.messages[0].content)


async def test_disabled_categories_are_left_out_of_the_prompt_and_the_answer(
    catalog: ModelCatalog, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(guard)
    shield = make_shield(catalog, excluded_categories=["s10", "S6"])

    verdict = await shield.check(MARKER, role="user")

    assert verdict.categories == ("S1",)
    prompt = str(backend.chat_requests[0].messages[0].content)
    assert "S1: Violent Crimes." in prompt
    assert "S10:" not in prompt
    assert "S6:" not in prompt
    assert "S11: Self-Harm." in prompt


async def test_an_unparseable_answer_fails_closed(
    catalog: ModelCatalog, scripted: ScriptedModel
) -> None:
    scripted.add_turn("I'd rather not say.")
    service = SafetyService([GuardedShield(make_shield(catalog), timeout=5)])

    decision = await service.check(["guard"], "hello", "user")

    assert decision.blocked
    assert decision.failed
    assert decision.message == CHECK_FAILED
    assert "unparseable answer" in (decision.verdicts[0].error or "")


@pytest.mark.parametrize("on_error", ["block", "allow"])
async def test_a_failing_backend_blocks_unless_the_shield_allows(
    catalog: ModelCatalog, scripted: ScriptedModel, on_error: OnError
) -> None:
    scripted.add_turn(raise_error(UpstreamError("backend exploded", status=500)))
    guarded = GuardedShield(make_shield(catalog), timeout=5, on_error=on_error)
    service = SafetyService([guarded])

    decision = await service.check(["guard"], "hello", "user")

    assert decision.blocked is (on_error == "block")
    assert decision.failed is (on_error == "block")
    assert decision.verdicts[0].error is not None
    assert "could not run" in decision.verdicts[0].error


async def test_a_slow_backend_times_out_and_blocks(
    catalog: ModelCatalog, scripted: ScriptedModel
) -> None:
    scripted.add_turn(delay(0.8), "safe")
    service = SafetyService([GuardedShield(make_shield(catalog), timeout=0.1)])

    decision = await service.check(["guard"], "hello", "user")

    assert decision.blocked
    assert decision.failed
    assert "did not answer within 0.1 s" in (decision.verdicts[0].error or "")


async def test_a_model_nobody_serves_is_a_shield_error(catalog: ModelCatalog) -> None:
    shield = LlamaGuardShield(
        LlamaGuardShieldSettings(id="guard", model="nowhere/llama-guard"), catalog
    )

    with pytest.raises(ShieldError, match="not served"):
        await shield.check("hello", role="user")
