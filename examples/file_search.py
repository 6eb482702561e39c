"""Answering from your own files: upload, build a vector store, let the model search it.

Runs anywhere, offline: a scripted model stands in for the LLM and the fake backend's hashed
embeddings stand in for an embeddings model (drop ``embeddings=`` to use the embedded
all-MiniLM-L6-v2). agentloom runs on a temporary SQLite file; the client talks to it over a
real socket.

    python examples/file_search.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from openai import OpenAI

from agentloom.config import (
    DatabaseSettings,
    EmbeddingSettings,
    FilesSettings,
    ProviderSettings,
    Settings,
)
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

MANUAL = b"""# Zephyr X2 kettle

The Zephyr X2 boils a litre of water in ninety seconds.

Its warranty covers the heating element for five years from the date of purchase.
"""


def main() -> None:
    model = ScriptedModel(
        [
            [tool_call("file_search", {"queries": ["kettle warranty"]})],
            [text("The heating element is covered for five years [1].")],
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            files=FilesSettings(directory=Path(data) / "files"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
            embeddings=EmbeddingSettings(
                type="openai_compatible", base_url=backend_url, model="demo-embeddings"
            ),
        )
        with serve(create_app(settings)) as agentloom_url:
            client = OpenAI(base_url=agentloom_url, api_key="unused")
            manual = client.files.create(file=("kettle.md", MANUAL), purpose="assistants")
            store = client.vector_stores.create(name="manuals")
            client.vector_stores.files.create_and_poll(file_id=manual.id, vector_store_id=store.id)
            response = client.responses.create(
                model="demo-model",
                input="How long is the kettle's warranty?",
                tools=[{"type": "file_search", "vector_store_ids": [store.id]}],
                include=["file_search_call.results"],
            )
            search, answer = response.output
            assert search.type == "file_search_call"
            assert answer.type == "message"
            print(f"searched {search.queries}: {len(search.results or [])} passage(s)")
            part = answer.content[0]
            assert part.type == "output_text"
            print(f"answer: {part.text}")
            for citation in part.annotations:
                if citation.type == "file_citation":
                    print(f"cites {citation.filename} at character {citation.index}")


if __name__ == "__main__":
    main()
