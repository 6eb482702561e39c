"""A client written against Llama Stack's Responses API, unchanged, on agentloom.

Its paths (``/v1/agents/responses``) and its request shapes (``max_infer_iters``, an
``input_image`` whose ``image_url`` is an object) work through the official ``openai`` client;
what is refused (``max_infer_iters`` above the server's cap, ``NaN`` in a body) is a 400 naming
the field. Offline: a scripted model stands in for the LLM.

    python examples/llama_stack_shapes.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx
from openai import BadRequestError, OpenAI

from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, text
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4Dw"
    "ABBAEAfbLI3wAAAABJRU5ErkJggg=="
)


def main() -> None:
    model = ScriptedModel([[text("A single pixel.")]])
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with serve(create_app(settings)) as agentloom_url:
            client = OpenAI(base_url=agentloom_url, api_key="unused")
            image = {"type": "input_image", "image_url": {"url": PIXEL}}
            seen: Any = client.post(
                "/agents/responses",
                body={
                    "model": "demo-model",
                    "input": [{"role": "user", "content": [image]}],
                },
                cast_to=httpx.Response,
            ).json()
            print(f"/v1/agents/responses: {seen['output'][0]['content'][0]['text']}")
            stored = client.responses.input_items.list(seen["id"]).data[0]
            print(f"image_url stored as a string: {stored.content[0].image_url[:22]}...")  # type: ignore[union-attr]

            try:
                client.responses.create(
                    model="demo-model", input="x", extra_body={"max_infer_iters": 1000}
                )
            except BadRequestError as refused:
                print(f"max_infer_iters above the cap: {refused.body['param']!r}")  # type: ignore[index]

            raw = b'{"model": "demo-model", "input": "x", "temperature": NaN}'
            answer = httpx.post(f"{agentloom_url}/responses", content=raw, timeout=10)
            error = answer.json()["error"]
            print(f"NaN refused ({answer.status_code}): param {error['param']!r}")


if __name__ == "__main__":
    main()
