"""Two ``agentloom serve`` processes on one database keep one ledger: each logs and prices the
requests it answers, the costs report sums both, and a project's spend limit set through one
is enforced by both once their spend reaches it (issue 40)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, agentloom_serve

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

ADMIN = "sk-admin-" + secrets.token_urlsafe(24)
INPUT, OUTPUT = 1000.0, 2000.0  # dollars per 1M tokens: cents a request


def _config(path: Path, model: str) -> Path:
    path.write_text(
        f'[server]\nusage_flush_interval = 0.1\n\n[prices."{model}"]\n'
        f"input = {INPUT}\noutput = {OUTPUT}\n",
        encoding="utf-8",
    )
    return path


def _until(check: Any, within: float = WAIT) -> Any:
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "never held"
        time.sleep(0.05)


def test_two_processes_log_price_and_enforce_one_budget(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = {**_env(database_url, backend), "AGENTLOOM_AUTH": "keys", "AGENTLOOM_ADMIN_KEY": ADMIN}
    config = str(_config(tmp_path / "agentloom.toml", backend.model))
    with (
        agentloom_serve(env, tmp_path / "one.log", "--config", config) as one,
        agentloom_serve(env, tmp_path / "two.log", "--config", config) as two,
    ):
        admin = openai.OpenAI(base_url=one.base_url, api_key="x", admin_api_key=ADMIN)
        other_admin = openai.OpenAI(base_url=two.base_url, api_key="x", admin_api_key=ADMIN)
        project = admin.admin.organization.projects.create(name="p")
        account = admin.admin.organization.projects.service_accounts.create(project.id, name="ci")
        assert account.api_key is not None
        clients = [
            openai.OpenAI(base_url=s.base_url, api_key=account.api_key.value, max_retries=0)
            for s in (one, two)
        ]
        answers = [c.responses.create(model=backend.model, input="Hello there") for c in clients]
        start = int(time.time()) // 86_400 * 86_400
        spent = sum(
            (a.usage.input_tokens * INPUT + a.usage.output_tokens * OUTPUT) / 1e6  # type: ignore[union-attr]
            for a in answers
        )

        def costs() -> Any:
            page = other_admin.admin.organization.usage.costs(start_time=start, limit=1)
            results = page.data[0].results
            return results and abs(results[0].amount.value - spent) < 1e-9 and results

        _until(costs)
        with httpx2.Client(base_url=two.base_url, timeout=WAIT) as http:
            rows = http.get(
                "/organization/requests", headers={"authorization": f"Bearer {ADMIN}"}
            ).json()["data"]
        cents = int(spent * 100)
        other_admin.admin.organization.projects.spend_limit.update(
            project.id, currency="USD", interval="month", threshold_amount=cents
        )

        def refused_by(client: openai.OpenAI) -> bool:
            try:
                client.responses.create(model=backend.model, input="Hi")
            except openai.RateLimitError as exc:
                return exc.code == "insufficient_quota"
            return False

        refusals = [_until(lambda c=client: refused_by(c)) for client in clients]

    assert sorted(r["id"] for r in rows) == sorted(a._request_id or "" for a in answers)
    assert sum(r["cost"] for r in rows) == pytest.approx(spent)
    assert refusals == [True, True]
