"""Two teams on one agentloom: projects and API keys through OpenAI's Admin API, a background
response streamed and resumed, and another project's id answering 404.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP), agentloom runs with API keys on a temporary SQLite file, and the official
``openai`` client talks to it over a real socket.

    python examples/projects_and_background.py
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

import openai
from openai import OpenAI

from agentloom.config import AuthSettings, DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve


def main() -> None:
    admin_key = "sk-admin-" + secrets.token_urlsafe(24)
    os.environ["AGENTLOOM_ADMIN_KEY"] = admin_key  # the admin key is read, never stored
    model = ScriptedModel(["A long report, written in the background."])
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            auth=AuthSettings(mode="keys"),
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with serve(create_app(settings)) as url:
            admin = OpenAI(base_url=url, api_key="unused", admin_api_key=admin_key)
            keys = {}
            for team in ("search", "billing"):
                project = admin.admin.organization.projects.create(name=team)
                account = admin.admin.organization.projects.service_accounts.create(
                    project.id, name="ci"
                )
                assert account.api_key is not None
                keys[team] = account.api_key.value
                print(f"project {team}: {project.id}, key {account.api_key.value[:11]}...")

            search = OpenAI(base_url=url, api_key=keys["search"])
            queued = search.responses.create(
                model="demo-model", input="Write the report.", background=True
            )
            print(f"created: {queued.status}, background={queued.background}")
            events = list(search.responses.retrieve(queued.id, stream=True))
            print(f"streamed: {[e.type for e in events][:3]} ... {events[-1].type}")
            resumed = list(search.responses.retrieve(queued.id, stream=True, starting_after=3))
            print(f"resumed after #3: {len(resumed)} events")
            print(f"answer: {search.responses.retrieve(queued.id).output_text}")

            billing = OpenAI(base_url=url, api_key=keys["billing"])
            try:
                billing.responses.retrieve(queued.id)
            except openai.NotFoundError:
                print("billing asking for search's response: 404")


if __name__ == "__main__":
    main()
