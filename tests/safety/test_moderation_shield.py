"""The ``moderation`` shield against a fake ``/v1/moderations`` server over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from agentloom.safety.base import ShieldError
from agentloom.safety.moderation import ModerationShield
from agentloom.safety.service import CHECK_FAILED, GuardedShield, OnError, SafetyService
from agentloom.safety.settings import ModerationShieldSettings
from tests.safety.moderation_fake import MARKER, FakeModerations, serving

Make = Callable[..., ModerationShield]


@pytest.fixture(scope="module")
def _served() -> Iterator[FakeModerations]:
    with serving() as fake:
        yield fake


@pytest.fixture
def fake(_served: FakeModerations) -> FakeModerations:
    _served.reset()
    return _served


@pytest.fixture
async def make(fake: FakeModerations) -> AsyncIterator[Make]:
    """Builds moderation shields on the fake (``options`` over the defaults); closes them."""
    made: list[ModerationShield] = []

    def build(**options: object) -> ModerationShield:
        settings = {"id": "mod", "base_url": fake.base_url, "timeout": 2.0, **options}
        shield = ModerationShield(ModerationShieldSettings.model_validate(settings))
        made.append(shield)
        return shield

    yield build
    for shield in made:
        await shield.aclose()


async def test_flagged_categories_become_violations_with_their_scores(
    make: Make, fake: FakeModerations
) -> None:
    shield = make(api_key="secret-key", model="omni-moderation-latest")

    verdict = await shield.check(f"I will {MARKER} you", role="user")

    assert [(v.category, v.score) for v in verdict.violations] == [
        ("violence", 0.91),
        ("harassment", 0.62),
    ]
    assert fake.received[0].body == {
        "input": f"I will {MARKER} you",
        "model": "omni-moderation-latest",
    }
    assert fake.received[0].authorization == "Bearer secret-key"


async def test_a_safe_text_passes(make: Make, fake: FakeModerations) -> None:
    verdict = await make(model=None).check("Lovely weather today.", role="assistant")

    assert verdict.violations == ()
    assert fake.received[0].body == {"input": "Lovely weather today."}
    assert fake.received[0].authorization is None


async def test_a_threshold_decides_by_score(make: Make) -> None:
    verdict = await make(threshold=0.7).check(MARKER, role="user")

    assert verdict.categories == ("violence",)
    lenient = await make(threshold=0.95).check(MARKER, role="user")
    assert lenient.violations == ()


@pytest.mark.parametrize(
    ("status", "garbage", "message"),
    [(500, False, "answered 500"), (401, False, "answered 401"), (200, True, "not a result")],
)
async def test_a_failing_endpoint_is_a_shield_error(
    make: Make, fake: FakeModerations, status: int, garbage: bool, message: str
) -> None:
    fake.status = status
    fake.garbage = garbage

    with pytest.raises(ShieldError, match=message):
        await make().check("hello", role="user")


async def test_an_unreachable_endpoint_is_a_shield_error() -> None:
    settings = ModerationShieldSettings(id="mod", base_url="http://127.0.0.1:9/v1", timeout=1.0)
    shield = ModerationShield(settings)
    try:
        with pytest.raises(ShieldError, match="could not be reached"):
            await shield.check("hello", role="user")
    finally:
        await shield.aclose()


@pytest.mark.parametrize("on_error", ["block", "allow"])
async def test_fails_closed_unless_the_shield_allows(
    make: Make, fake: FakeModerations, on_error: OnError
) -> None:
    fake.status = 503
    service = SafetyService([GuardedShield(make(), timeout=2, on_error=on_error)])

    decision = await service.check(["mod"], "hello", "tool")

    assert decision.blocked is (on_error == "block")
    assert decision.message == (CHECK_FAILED if on_error == "block" else "")


async def test_a_slow_endpoint_times_out_and_blocks(make: Make, fake: FakeModerations) -> None:
    fake.delay = 0.5
    service = SafetyService([GuardedShield(make(), timeout=0.05)])

    decision = await service.check(["mod"], "hello", "user")

    assert decision.blocked
    assert decision.failed
    assert "did not answer within 0.05 s" in (decision.verdicts[0].error or "")
