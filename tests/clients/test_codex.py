"""The Codex CLI (``codex exec``) with agentloom as its model provider, over a real socket.

Codex is configured as a user would (``[model_providers.agentloom]``, ``wire_api =
"responses"``); the scripted model behind the fake backend plays the model. Codex sends what it
sends to OpenAI: ``store: false`` with the whole history every turn, ``stream: true``,
``include: ["reasoning.encrypted_content"]``, its own function tools (the shell tool is
``exec_command`` with a ``cmd`` string), a ``namespace`` tool group (``multi_agent_v1``) unless
the ``multi_agent`` feature is off, a ``web_search`` tool with ``external_web_access: false``,
and, for models in its bundled catalog (``gpt-5.5``), the freeform ``custom`` tool
``apply_patch`` and a client-run ``tool_search`` behind which the namespace is deferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agentloom.errors import ContextLengthExceededError, UpstreamRateLimitError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import (
    Responder,
    ScriptedModel,
    ScriptedToolCall,
    Turn,
    raise_error,
    reasoning,
    tool_call,
)
from agentloom.testing.backend import FakeBackend
from tests.clients import codex
from tests.clients.recording import Recorder
from tests.e2e.support import received

CUSTOM_MODEL = "fake-model"  # not in Codex's catalog: fallback metadata, function tools only
CATALOG_MODEL = "gpt-5.5"  # in Codex's bundled catalog: its full tool set
NO_MULTI_AGENT = ("--disable", "multi_agent")  # drops the namespace tool group


@dataclass(frozen=True)
class Profile:
    """Which model Codex is told to use, and feature flags given to ``codex exec``."""

    model: str
    flags: tuple[str, ...] = ()


PROFILES = [
    pytest.param(Profile(CUSTOM_MODEL), id="custom-model"),
    pytest.param(Profile(CUSTOM_MODEL, NO_MULTI_AGENT), id="custom-model-no-multi-agent"),
    pytest.param(Profile(CATALOG_MODEL), id="catalog-model"),
    pytest.param(Profile(CATALOG_MODEL, NO_MULTI_AGENT), id="catalog-model-no-multi-agent"),
]
BASIC = Profile(CUSTOM_MODEL, NO_MULTI_AGENT)  # function tools only

PATCH = "*** Begin Patch\n*** Add File: patched.txt\n+agentloom-patched\n*** End Patch\n"


@pytest.fixture(autouse=True)
def _installed() -> None:
    """Skip (or fail, in CI) before starting anything when Codex is not installed."""
    codex.binary()


@pytest.fixture(params=PROFILES)
def profile(request: pytest.FixtureRequest) -> Profile:
    chosen: Profile = request.param
    return chosen


@pytest.fixture
def backend(backend: FakeBackend, profile: Profile) -> FakeBackend:
    """The fake backend, serving the model id Codex is told to use."""
    backend.models = (profile.model,)
    return backend


def run(profile: Profile, prompt: str, url: str, tmp_path: Path) -> codex.CodexRun:
    return codex.run_exec(
        prompt, base_url=url, model=profile.model, scratch=tmp_path, extra=profile.flags
    )


def test_plain_turn(
    profile: Profile,
    agentloom_url: str,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    scripted.add_turn("Hello from agentloom!")

    result = run(profile, "say hi", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe() + "\n" + _failures(recorder)
    assert [m["text"] for m in result.items("agent_message")] == ["Hello from agentloom!"]
    assert result.last_message == "Hello from agentloom!"
    sent = recorder.posts()[0].json()
    assert sent["store"] is False
    assert sent["stream"] is True


def test_shell_tool_round_trip(
    profile: Profile,
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """The model calls Codex's shell tool; Codex runs it and sends the output back."""
    command = "echo agentloom-ok > proof.txt && cat proof.txt"
    scripted.add_turns([tool_call("exec_command", {"cmd": command})], "The file is written.")

    result = run(profile, "write the proof file", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe() + "\n" + _failures(recorder)
    assert (tmp_path / "work" / "proof.txt").read_text() == "agentloom-ok\n"
    (execution,) = result.items("command_execution")
    assert execution["exit_code"] == 0
    assert execution["aggregated_output"] == "agentloom-ok\n"
    assert result.last_message == "The file is written."
    # Codex replayed the call and its output; agentloom handed the output to the model
    replayed = recorder.posts()[1].json()["input"]
    assert [i["type"] for i in replayed[-2:]] == ["function_call", "function_call_output"]
    tool_message = received(backend)[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "agentloom-ok" in tool_message["content"]


@pytest.mark.parametrize("profile", [pytest.param(BASIC, id="custom-model-no-multi-agent")])
def test_reasoning_replayed_sealed(
    profile: Profile,
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """Reasoning comes back sealed (Codex asked for it); Codex replays it and the backend gets
    its reasoning back."""
    scripted.add_turns(
        [reasoning("I should run it."), tool_call("exec_command", {"cmd": "true"})],
        "Done.",
    )

    result = run(profile, "run true", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe()
    replayed = [i for i in recorder.posts()[1].json()["input"] if i["type"] == "reasoning"]
    assert len(replayed) == 1
    assert isinstance(replayed[0]["encrypted_content"], str)
    assert replayed[0]["encrypted_content"]
    assert received(backend)[1]["messages"][-2]["reasoning_content"] == "I should run it."


@pytest.mark.parametrize("profile", [pytest.param(BASIC, id="custom-model-no-multi-agent")])
def test_reasoning_summary_is_shown(
    profile: Profile,
    agentloom_url: str,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """Codex asks for ``reasoning: {"summary": "auto"}`` and shows the summary it gets: the
    first paragraphs of the reasoning (an extract), not the whole of it."""
    thought = "**Planning**\n\nI will answer directly.\n\n" + "More detail. " * 60
    scripted.add_turn(reasoning(thought), "Answered.")

    result = run(profile, "hi", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe()
    assert recorder.posts()[0].json()["reasoning"] == {"summary": "auto"}
    shown = [item["text"] for item in result.items("reasoning")]
    assert shown == ["**Planning**\n\nI will answer directly."]
    assert result.last_message == "Answered."


@pytest.mark.parametrize(
    "profile",
    [pytest.param(Profile(CATALOG_MODEL, NO_MULTI_AGENT), id="catalog-model")],
)
def test_apply_patch_custom_tool(
    profile: Profile,
    agentloom_url: str,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """The freeform ``apply_patch`` tool, offered to the chat backend as a function with one
    string argument, is called; Codex gets a ``custom_tool_call`` and applies the patch."""
    scripted.respond_with(_call_flattened("apply_patch", PATCH, "Patched."))

    result = run(profile, "add patched.txt", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe() + "\n" + _failures(recorder)
    assert (tmp_path / "work" / "patched.txt").read_text() == "agentloom-patched\n"
    replayed = recorder.posts()[1].json()["input"]
    assert [i["type"] for i in replayed[-2:]] == ["custom_tool_call", "custom_tool_call_output"]
    assert result.last_message == "Patched."


@pytest.mark.parametrize("profile", [pytest.param(Profile(CUSTOM_MODEL), id="custom-model")])
def test_namespace_tool_dispatched(
    profile: Profile,
    agentloom_url: str,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """A call to a tool of the ``multi_agent_v1`` namespace reaches Codex as a
    ``function_call`` carrying the namespace, which Codex dispatches (not "unsupported")."""
    scripted.respond_with(_call_flattened("close_agent", None, "Closed."))

    result = run(profile, "close the agent", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe() + "\n" + _failures(recorder)
    replayed = recorder.posts()[1].json()["input"]
    call, output = replayed[-2:]
    assert call["type"] == "function_call"
    assert call["namespace"] == "multi_agent_v1"
    assert output["type"] == "function_call_output"
    assert "unsupported" not in str(output["output"]).lower()


@pytest.mark.parametrize("profile", [pytest.param(Profile(CATALOG_MODEL), id="catalog-model")])
def test_deferred_namespace_found_by_tool_search(
    profile: Profile,
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """For catalog models Codex defers ``multi_agent_v1`` behind its client-run ``tool_search``:
    the model searches, Codex answers with a ``tool_search_output`` naming the namespace, and
    agentloom offers its tools from then on; the model's call of one reaches Codex."""
    scripted.respond_with(_search_then_call("close agent", "close_agent", "Closed."))

    result = run(profile, "close the agent", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe() + "\n" + _failures(recorder)
    searched = recorder.posts()[1].json()["input"]
    assert [i["type"] for i in searched[-2:]] == ["tool_search_call", "tool_search_output"]
    assert searched[-1]["tools"][0]["name"] == "multi_agent_v1"
    call, output = recorder.posts()[2].json()["input"][-2:]
    assert (call["type"], call["namespace"]) == ("function_call", "multi_agent_v1")
    assert output["type"] == "function_call_output"
    assert "unsupported" not in str(output["output"]).lower()
    offered = [t["function"]["name"] for t in received(backend)[1]["tools"]]
    assert "multi_agent_v1__close_agent" in offered
    assert result.last_message == "Closed."


@pytest.mark.parametrize("profile", [pytest.param(BASIC, id="custom-model-no-multi-agent")])
def test_web_search_without_external_access_stays_offline(
    profile: Profile,
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    tmp_path: Path,
) -> None:
    """Codex offers ``web_search`` with ``external_web_access: false``: agentloom runs the
    search itself, without the live web, and Codex shows the search it made."""
    scripted.add_turns(
        [tool_call("web_search", {"query": "agentloom news"})], "Search is unavailable here."
    )

    result = run(profile, "search the news", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe()
    (search,) = result.items("web_search")
    assert search["query"] == "agentloom news"
    assert result.last_message == "Search is unavailable here."
    tool_message = received(backend)[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "unavailable" in tool_message["content"]


@pytest.mark.parametrize("profile", [pytest.param(BASIC, id="custom-model-no-multi-agent")])
def test_context_overflow_is_reported_as_such(
    profile: Profile, agentloom_url: str, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.add_turn(raise_error(ContextLengthExceededError("maximum context length is 8192")))

    result = run(profile, "hi", agentloom_url, tmp_path)

    assert result.returncode == 1
    (failed,) = [e for e in result.events if e["type"] == "turn.failed"]
    assert "ran out of room in the model's context window" in failed["error"]["message"]


@pytest.mark.parametrize("profile", [pytest.param(BASIC, id="custom-model-no-multi-agent")])
def test_rate_limit_is_retried(
    profile: Profile, agentloom_url: str, scripted: ScriptedModel, tmp_path: Path
) -> None:
    """A 429 upstream reaches Codex as ``rate_limit_exceeded`` with the retry hint; Codex
    retries and the next attempt is answered."""
    limited = UpstreamRateLimitError("Rate limit reached. Please try again in 50ms.")
    scripted.add_turns([raise_error(limited)], "Recovered.")

    result = run(profile, "hi", agentloom_url, tmp_path)

    assert result.returncode == 0, result.describe()
    (retry,) = result.errors()
    assert retry["message"].startswith("Reconnecting... 1/")
    assert "Please try again in 50ms" in retry["message"]
    assert result.last_message == "Recovered."


# --- helpers ---------------------------------------------------------------------------------


def _failures(recorder: Recorder) -> str:
    return "\n".join(e.describe() for e in recorder.failures())


def _search_then_call(query: str, suffix: str, answer: str) -> Responder:
    """A responder searching tools (Codex's ``tool_search``), then calling the one found whose
    name ends with ``suffix`` (every required parameter ``"no-such-agent"``), then answering."""

    def respond(request: ChatRequest) -> Turn:
        told = sum(m.role == "tool" for m in request.messages)
        if told == 0:
            return [tool_call("tool_search", {"query": query, "limit": 8})]
        if told > 1:
            return answer
        return [_call_of(request, suffix, None)]

    return respond


def _call_flattened(suffix: str, argument: str | None, answer: str) -> Responder:
    """A responder calling the one chat tool whose name ends with ``suffix``, then answering
    (see :func:`_call_of`)."""

    def respond(request: ChatRequest) -> Turn:
        if any(m.role == "tool" for m in request.messages):
            return answer
        return [_call_of(request, suffix, argument)]

    return respond


def _call_of(request: ChatRequest, suffix: str, argument: str | None) -> ScriptedToolCall:
    """A call of the one chat tool whose name ends with ``suffix``.

    The flattened name (and, for a freeform tool, its one string parameter) is agentloom's
    choice; ``argument`` fills that parameter, ``None`` fills every required parameter with
    ``"no-such-agent"``."""
    matches = [t for t in request.tools if t.name.endswith(suffix)]
    assert len(matches) == 1, [t.name for t in request.tools]
    spec = matches[0]
    properties, required = spec.parameters.get("properties"), spec.parameters.get("required")
    assert isinstance(properties, dict)
    assert isinstance(required, list)
    if argument is not None:
        (name,) = properties
        return tool_call(spec.name, {name: argument})
    return tool_call(spec.name, {str(n): "no-such-agent" for n in required})
