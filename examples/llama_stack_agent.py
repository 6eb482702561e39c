"""Llama Stack's "Agent Execution Loop" example, run on agentloom.

The code in ``seed_example`` is the example of Llama Stack's agent documentation, unchanged but
where it names Llama Stack's own package (marked ``# adapted``): the client is ``openai.OpenAI``
and the names come from ``agentloom.agents.llama_stack``. Everything around it makes it run
anywhere, offline:

- a scripted model stands in for "Llama3.2-3B-Instruct" and another answers "safe" as the
  ``llama_guard`` shield's Llama Guard model, both served as OpenAI-compatible backends;
- a vector store named ``my_docs`` holds a style guide (``vector_db_ids`` may name a store);
- the document's URL, ``https://raw.githubusercontent.com/example/code.py`` in the original, is
  served by a small local site (``CODE_URL``);
- the model calls ``code_interpreter`` only where the sandbox (bubblewrap) is installed.

    python examples/llama_stack_agent.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from pprint import pprint  # the original's rich.pretty.pprint (rich is not a dependency)

import openai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from agentloom.agents.llama_stack import Agent, AgentEventLogger  # adapted
from agentloom.config import (
    CodeInterpreterSettings,
    DatabaseSettings,
    EmbeddingSettings,
    FilesSettings,
    ProviderSettings,
    Settings,
)
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.safety.settings import LlamaGuardShieldSettings, SafetySettings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve
from agentloom.tools.sandbox import bwrap_available

MODEL = "Llama3.2-3B-Instruct"
GUARD = "Llama-Guard-3-1B"
CODE = "numbers = range(10)\nprint(sum(numbers))\n"
STYLE_GUIDE = b"House style: code that sums numbers uses the built-in sum()."


def seed_example(HOST: str, PORT: int, CODE_URL: str) -> None:
    # Replace host and port
    client = openai.OpenAI(base_url=f"http://{HOST}:{PORT}/v1", api_key="unused")  # adapted

    agent = Agent(
        client,
        # Check with llama-stack-client models list
        model="Llama3.2-3B-Instruct",
        instructions="You are a helpful assistant",
        # Enable both RAG and tool usage
        tools=[
            {
                "name": "builtin::rag/knowledge_search",
                "args": {"vector_db_ids": ["my_docs"]},
            },
            "builtin::code_interpreter",
        ],
        # Configure safety (optional)
        input_shields=["llama_guard"],
        output_shields=["llama_guard"],
        # Control the inference loop
        max_infer_iters=5,
        sampling_params={
            "strategy": {"type": "top_p", "temperature": 0.7, "top_p": 0.95},
            "max_tokens": 2048,
        },
    )
    session_id = agent.create_session("monitored_session")

    # Stream the agent's execution steps
    response = agent.create_turn(
        messages=[{"role": "user", "content": "Analyze this code and run it"}],
        documents=[
            {
                "content": CODE_URL,  # adapted: served locally
                "mime_type": "text/plain",
            }
        ],
        session_id=session_id,
    )

    # Monitor each step of execution
    for log in AgentEventLogger().log(response):
        log.print()

    # Using non-streaming API, the response contains input, steps, and output.
    response = agent.create_turn(
        messages=[{"role": "user", "content": "Analyze this code and run it"}],
        documents=[
            {
                "content": CODE_URL,  # adapted: served locally
                "mime_type": "text/plain",
            }
        ],
        session_id=session_id,
        stream=False,  # adapted: the original leaves it out, and so streams
    )

    pprint(f"Input: {response.input_messages}")
    pprint(f"Output: {response.output_message.content}")
    pprint(f"Steps: {response.steps}")
    agent.close()


def script(sandboxed: bool) -> ScriptedModel:
    """The model's answers: search the documents, run the code (where it can), answer."""
    run = [tool_call("code_interpreter", {"code": "exec(open('/mnt/data/code.py').read())"})]
    ran = "Running it printed 45." if sandboxed else "It would print 45."
    return ScriptedModel(
        [
            [text("Let me look at the code."), tool_call("file_search", {"queries": ["sum"]})],
            *([run] if sandboxed else []),
            f"The code sums 0 to 9 with sum(), as the style guide asks. {ran}",
            *([run] if sandboxed else []),
            f"Again: {ran}",
        ]
    )


def guard(request: ChatRequest) -> str:
    return "safe"


def code_site() -> Starlette:
    async def code(request: Request) -> Response:
        return PlainTextResponse(CODE)

    return Starlette(routes=[Route("/example/code.py", code)])


def main() -> None:
    sandboxed = bwrap_available()
    backend = FakeBackend(script(sandboxed), models=[MODEL])
    guard_backend = FakeBackend(ScriptedModel(guard), models=[GUARD])
    with (
        tempfile.TemporaryDirectory() as data,
        backend.serve() as backend_url,
        guard_backend.serve() as guard_url,
        serve(code_site()) as site_url,
    ):
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            files=FilesSettings(directory=Path(data) / "files"),
            providers=[
                ProviderSettings(name="demo", base_url=backend_url),
                ProviderSettings(name="guard", base_url=guard_url),
            ],
            embeddings=EmbeddingSettings(
                type="openai_compatible", base_url=backend_url, model="demo-embeddings"
            ),
            code_interpreter=CodeInterpreterSettings(directory=Path(data) / "containers"),
            safety=SafetySettings(
                shields=[LlamaGuardShieldSettings(id="llama_guard", model=f"guard/{GUARD}")]
            ),
        )
        with serve(create_app(settings)) as agentloom_url:
            client = openai.OpenAI(base_url=agentloom_url, api_key="unused")
            guide = client.files.create(file=("style.md", STYLE_GUIDE), purpose="assistants")
            docs = client.vector_stores.create(name="my_docs")
            client.vector_stores.files.create_and_poll(file_id=guide.id, vector_store_id=docs.id)
            host, port = agentloom_url.removeprefix("http://").removesuffix("/v1").split(":")
            code_url = site_url.removesuffix("/v1") + "/example/code.py"
            seed_example(host, int(port), code_url)


if __name__ == "__main__":
    main()
