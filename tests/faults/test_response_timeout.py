"""``[limits] response_timeout`` (issue 36): a response still running past it ends ``failed``,
saying so, and a background one frees its job slot (one slot here) for the next."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from agentloom.api.limits import RequestLimits
from agentloom.config import JobSettings, Settings
from agentloom.inference.scripted import ScriptedModel, stall, text
from agentloom.testing.backend import FakeBackend
from tests.faults.support import eventually, status_of
from tests.plugins.server import make_settings

BOUND = 15.0  # seconds: a wait still running after this has hung
BUDGET = 2.0  # seconds a response may run here


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    """The provider's socket timeout and deadlines long: only the budget ends a stall."""
    base = make_settings(backend, database_url, timeout=30.0, files_directory=tmp_path / "files")
    return base.model_copy(
        update={
            "limits": RequestLimits(response_timeout=BUDGET),
            "jobs": JobSettings(concurrency=1),
        }
    )


@pytest.fixture
async def http(live_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=live_url, timeout=BOUND) as client:
        yield client


async def test_a_background_response_past_it_fails_and_frees_its_slot(
    backend: FakeBackend, scripted: ScriptedModel, http: httpx2.AsyncClient
) -> None:
    scripted.add_turn(text("Hel"), stall(30))
    scripted.add_turns("Ordinary.", "Later.")
    body = {"model": backend.model, "input": "Hi", "background": True}
    stalled = (await http.post("/responses", json=body)).json()["id"]
    await eventually(lambda: _called(backend), "the backend to be called", BOUND)
    ordinary = await http.post("/responses", json={"model": backend.model, "input": "Hi"})
    later = (await http.post("/responses", json=body)).json()
    await eventually(lambda: _is(http, later["id"], "completed"), "the later one", BOUND)
    failed = (await http.get(f"/responses/{stalled}")).json()
    done = (await http.get(f"/responses/{later['id']}")).json()

    assert ordinary.json()["output"][0]["content"][0]["text"] == "Ordinary."
    assert later["status"] == "queued"  # the one slot was taken
    assert failed["status"] == "failed"
    assert failed["error"]["message"] == (
        f"the response did not finish within {BUDGET:g} s ([limits] response_timeout)"
    )
    [partial] = failed["output"]
    assert (partial["status"], partial["content"][0]["text"]) == ("incomplete", "Hel")
    assert done["output"][0]["content"][0]["text"] == "Later."


async def _called(backend: FakeBackend) -> bool:
    return bool(backend.requests)


async def _is(http: httpx2.AsyncClient, response_id: str, status: str) -> bool:
    return await status_of(http, response_id) == status
