"""A conversation kept by agentloom, compacted when it grows, with the official ``openai`` client.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP), agentloom runs on a temporary SQLite file, and the client talks to agentloom
over a real socket. Swap the scripted backend for your vLLM / Ollama URL to use a real model.

    python examples/conversation.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from openai import OpenAI

from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve


def main() -> None:
    model = ScriptedModel(
        [
            "Nice to meet you, Ada. Paris in spring is lovely: long walks along the Seine. " * 4,
            "Ada is planning a spring trip to Paris.",  # the compaction summary
            "Pack a light jacket, Ada.",
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with serve(create_app(settings)) as agentloom_url:
            client = OpenAI(base_url=agentloom_url, api_key="unused")
            conversation = client.conversations.create(metadata={"user": "ada"})
            first = client.responses.create(
                model="demo-model",
                conversation=conversation.id,
                input="Hi, I'm Ada and I'm going to Paris in spring.",
            )
            print(f"turn 1: {first.output_text[:60]}...")
            # The history is now over 40 tokens: it is summarised before the model answers.
            second = client.responses.create(
                model="demo-model",
                conversation=conversation.id,
                input="What should I pack?",
                context_management=[{"type": "compaction", "compact_threshold": 40}],
            )
            print(f"turn 2: {second.output_text} (output: {[i.type for i in second.output]})")
            saw = [m["content"] for m in backend.requests[-1]["messages"]]  # type: ignore[index]
            print(f"the model saw: {saw}")
            items = client.conversations.items.list(conversation.id, order="asc")
            print(f"conversation items: {[item.type for item in items]}")


if __name__ == "__main__":
    main()
