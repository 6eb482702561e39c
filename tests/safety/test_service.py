"""The safety service (ids, concurrent checks, fail-closed decisions) and the ``[safety]``
settings it is built from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentloom.config import ConfigError, load_settings
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.inference.catalog import ModelCatalog
from agentloom.safety.base import Verdict, Violation
from agentloom.safety.rules import RulesShield
from agentloom.safety.service import (
    CHECK_FAILED,
    REFUSAL,
    Decision,
    GuardedShield,
    SafetyService,
    combine,
)
from agentloom.safety.settings import (
    LlamaGuardShieldSettings,
    ModerationShieldSettings,
    RulesShieldSettings,
    SafetySettings,
)
from agentloom.safety.shield_types import SHIELD_TYPES, build_safety


def rules(shield_id: str, **options: object) -> GuardedShield:
    settings = RulesShieldSettings.model_validate({"id": shield_id, **options})
    return GuardedShield(RulesShield(settings), timeout=1.0)


@pytest.fixture
def service() -> SafetyService:
    return SafetyService(
        [
            rules("pii", detectors=["email", "credit_card"]),
            rules("words", detectors=[], blocklists=[{"words": ["darn"]}]),
        ],
        default_guardrails=["words"],
    )


def test_ids_and_lookup(service: SafetyService) -> None:
    assert service.ids == ("pii", "words")
    assert service.get("words").shield.id == "words"
    assert service.moderation_shield == "pii"  # the first shield unless one is named
    with pytest.raises(NotFoundError) as caught:
        service.get("nope")
    assert caught.value.code == "shield_not_found"


def test_unknown_ids_are_an_invalid_request_naming_the_param(service: SafetyService) -> None:
    assert service.require(["words", "pii", "words"], "guardrails") == ("words", "pii")
    with pytest.raises(InvalidRequestError) as caught:
        service.require(["pii", "llama"], "guardrails")

    assert caught.value.param == "guardrails[1]"
    assert caught.value.code == "invalid_shield"
    assert "'llama'" in caught.value.message
    with pytest.raises(InvalidRequestError) as single:
        service.require_one("llama", "shield_id")
    assert single.value.param == "shield_id"


def test_guardrails_are_the_defaults_then_the_requested(service: SafetyService) -> None:
    assert service.guardrails(None) == ("words",)
    assert service.guardrails(["pii", "words"]) == ("words", "pii")
    with pytest.raises(InvalidRequestError):
        service.guardrails(["nope"])


async def test_every_shield_runs_and_the_decision_gathers_their_findings(
    service: SafetyService,
) -> None:
    decision = await service.check(["pii", "words"], "darn, mail bob@example.com", "user")

    assert decision.blocked
    assert not decision.failed
    assert decision.message == REFUSAL
    assert decision.categories == ("pii.email", "blocklist")
    assert [v.shield_id for v in decision.verdicts] == ["pii", "words"]


async def test_a_clean_text_and_no_shields_are_allowed(service: SafetyService) -> None:
    clean = await service.check(["pii", "words"], "Hello there", "assistant")
    nothing = await service.check([], "darn", "user")
    blank = await service.check(["words"], "   ", "user")

    for decision in (clean, nothing, blank):
        assert not decision.blocked
        assert decision.message == ""
    assert len(clean.verdicts) == 2


async def test_check_all_keeps_the_order(service: SafetyService) -> None:
    decisions = await service.check_all(
        ["pii"], [("fine", "user"), ("bob@example.com", "tool"), ("ok", "assistant")]
    )

    assert [d.blocked for d in decisions] == [False, True, False]
    merged = combine(decisions)
    assert merged.blocked
    assert merged.categories == ("pii.email",)
    assert not combine([decisions[0], decisions[2]]).blocked


def test_combine_prefers_the_violation_message() -> None:
    violation = Decision(True, (Verdict("a", (Violation("x", "x"),)),), ("x",), False, REFUSAL)
    failure = Decision(True, (Verdict("b", error="down"),), (), True, CHECK_FAILED)

    assert combine([failure]).message == CHECK_FAILED
    both = combine([failure, violation])
    assert both.message == REFUSAL
    assert both.failed


# --- settings --------------------------------------------------------------------------------


def test_a_builtin_rules_shield_exists_when_none_is_configured() -> None:
    settings = SafetySettings()

    (builtin,) = settings.effective_shields()
    assert isinstance(builtin, RulesShieldSettings)
    assert builtin.id == "rules"
    assert settings.effective_moderation_shield() == "rules"


def test_the_moderation_shield_defaults_to_the_first_rules_shield() -> None:
    settings = SafetySettings(
        shields=[
            ModerationShieldSettings(id="omni", base_url="http://mod.test/v1"),
            RulesShieldSettings(id="strict"),
        ]
    )

    assert [s.id for s in settings.effective_shields()] == ["omni", "strict"]
    assert settings.effective_moderation_shield() == "strict"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"default_guardrails": ["ghost"]}, "unknown shields: ghost"),
        ({"moderation_shield": "ghost"}, "unknown shield: ghost"),
        ({"shields": [{"id": "a", "type": "rules"}, {"id": "a", "type": "rules"}]}, "unique"),
        ({"shields": [{"id": "a", "type": "telepathy"}]}, "does not match any of the expected"),
        ({"shields": [{"id": "a", "type": "rules", "colour": "red"}]}, "Extra inputs"),
        ({"shields": [{"id": "a", "type": "llama_guard"}]}, "model"),
        (
            {
                "shields": [
                    {"id": "a", "type": "llama_guard", "model": "m", "excluded_categories": ["S15"]}
                ]
            },
            "S15",
        ),
        ({"shields": [{"id": "a", "type": "moderation", "base_url": "ftp://x"}]}, "base_url"),
        ({"shields": [{"id": "a", "type": "rules", "on_error": "shrug"}]}, "on_error"),
        ({"shields": [{"id": "a", "type": "rules", "timeout": 0}]}, "timeout"),
    ],
)
def test_invalid_safety_settings_are_rejected(raw: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        SafetySettings.model_validate(raw)


def test_the_safety_section_of_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "agentloom.toml"
    path.write_text(
        """
[safety]
default_guardrails = ["pii"]
moderation_shield = "guard"

[[safety.shields]]
id = "pii"
type = "rules"
detectors = ["email", "iban"]
on_error = "allow"

[[safety.shields.blocklists]]
category = "codename"
words = ["bluebird"]

[[safety.shields.patterns]]
pattern = "TICKET-[0-9]+"
category = "internal.ticket"

[[safety.shields]]
id = "guard"
type = "llama_guard"
model = "vllm/meta-llama/Llama-Guard-3-8B"
excluded_categories = ["S6"]
timeout = 3

[[safety.shields]]
id = "omni"
type = "moderation"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
threshold = 0.5
"""
    )

    safety = load_settings(path, env={}).safety

    pii, guard, omni = safety.effective_shields()
    assert isinstance(pii, RulesShieldSettings)
    assert pii.on_error == "allow"
    assert pii.blocklists[0].words == ["bluebird"]
    assert isinstance(guard, LlamaGuardShieldSettings)
    assert guard.excluded_categories == ["S6"]
    assert guard.timeout == 3
    assert isinstance(omni, ModerationShieldSettings)
    assert omni.resolved_api_key({"OPENAI_API_KEY": "k"}) == "k"
    assert safety.default_guardrails == ["pii"]


def test_an_invalid_safety_section_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "agentloom.toml"
    path.write_text('[safety]\ndefault_guardrails = ["ghost"]\n')

    with pytest.raises(ConfigError, match="ghost"):
        load_settings(path, env={})


@pytest.fixture
async def built() -> AsyncIterator[SafetyService]:
    settings = SafetySettings(
        default_guardrails=["rules"],
        shields=[
            LlamaGuardShieldSettings(id="guard", model="m", timeout=1.5, on_error="allow"),
            ModerationShieldSettings(id="omni", base_url="http://127.0.0.1:9/v1"),
        ],
    )
    service = build_safety(settings, ModelCatalog({}, {}))
    yield service
    await service.aclose()


def test_the_service_is_built_from_every_shield_type(built: SafetyService) -> None:
    assert set(SHIELD_TYPES) == {"rules", "llama_guard", "moderation"}
    assert built.ids == ("guard", "omni", "rules")
    assert [g.shield.kind for g in built.shields()] == ["llama_guard", "moderation", "rules"]
    assert built.get("guard").timeout == 1.5
    assert built.get("guard").on_error == "allow"
    assert built.default_guardrails == ("rules",)
    assert built.moderation_shield == "rules"


async def test_the_documented_configuration_loads(tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "safety.md").read_text()
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "agentloom.toml"
    path.write_text(example)

    service = build_safety(load_settings(path, env={}).safety, ModelCatalog({}, {}))
    try:
        assert service.ids == ("pii", "guard", "omni")
        decision = await service.check(
            ["pii"], "Status of TICKET-20931 and project  Bluebird?", "user"
        )
        assert decision.categories == ("internal.ticket", "codename")
    finally:
        await service.aclose()
