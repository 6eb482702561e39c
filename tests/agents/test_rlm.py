"""RLM with a scripted model answering by request: the long context stays in the REPL, code
reads it and asks sub-calls about pieces of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

from agentloom.agents import RLMAgent, Tool, build_agent, function_tool
from agentloom.errors import UpstreamError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, ScriptItem, TurnPart, raise_error, text
from agentloom.llm import LLM, Message
from tests.agents.code_agents import LIMITS, children, sandbox, texts

NEEDLE = "The vault code is 7319."
FILLER = "".join(f"Line {i}: nothing to see here, just filler text.\n" for i in range(4000))
CONTEXT = FILLER[:90_000] + NEEDLE + "\n" + FILLER[90_000:]

Answer = Callable[[ChatRequest], "str | Sequence[TurnPart] | AsyncIterator[ScriptItem]"]


def code(*lines: str) -> str:
    return "```python\n" + "\n".join(lines) + "\n```"


def is_main(request: ChatRequest) -> bool:
    return request.messages[0].role == "system"


def turn_of(request: ChatRequest) -> int:
    """The main loop's turn (1-based): one more than the assistant messages so far."""
    return 1 + sum(1 for m in request.messages if m.role == "assistant")


def model(main: Sequence[str], sub: Answer) -> tuple[LLM, ScriptedModel]:
    """The main loop plays ``main`` turn by turn; sub-calls (no system message) get ``sub``."""

    def respond(request: ChatRequest) -> str | Sequence[TurnPart] | AsyncIterator[ScriptItem]:
        if is_main(request):
            return main[turn_of(request) - 1]
        return sub(request)

    scripted = ScriptedModel(respond)
    return LLM("m", provider=scripted), scripted


def agent(llm: LLM, *tools: Tool, **options: int) -> RLMAgent:
    return RLMAgent(llm, tools, sandbox=sandbox(), limits=LIMITS, **options)


def read_needle(request: ChatRequest) -> str:
    prompt = texts(request)[-1]
    return "7319" if "7319" in prompt else "not here"


async def test_the_context_lives_in_the_repl_never_in_a_prompt() -> None:
    llm, scripted = model(
        [
            code(
                "print(type(context).__name__, len(context))",
                "import re",
                "at = context.index('vault')",
                "answer = llm_query('What is the vault code? ' + context[at - 200 : at + 200])",
                "print(answer)",
            ),
            code("FINAL(answer)"),
        ],
        read_needle,
    )
    result = await agent(llm).run([Message.user(CONTEXT), Message.user("What is the vault code?")])
    assert result.content == "7319"
    main = [r for r in scripted.requests if is_main(r)]
    subs = [r for r in scripted.requests if not is_main(r)]
    assert len(main) == 2
    assert len(subs) == 1
    for request in main:
        assert all(NEEDLE not in t and FILLER[:500] not in t for t in texts(request))
    assert NEEDLE in texts(subs[0])[-1]
    assert all(len(t) < 10_000 for r in scripted.requests for t in texts(r))
    system, placeholder, question = texts(main[0])[:3]
    assert f"a str of {len(CONTEXT):,} characters" in system
    assert placeholder == (
        f"[A document of {len(CONTEXT):,} characters: it is in the REPL variable `context`.]"
    )
    assert question == "What is the vault code?"
    assert texts(main[1])[-1] == f"[code block 1]\nstdout:\nstr {len(CONTEXT)}\n7319\n"
    assert result.usage.model_calls == 3  # the sub-call counts
    assert result.metadata == {
        "code_runs": 2,
        "code_errors": 0,
        "sub_calls": 1,
        "context_chars": len(CONTEXT),
    }
    assert children() == []


async def test_llm_batch_runs_the_sub_calls_concurrently() -> None:
    started: list[str] = []
    all_started = asyncio.Event()

    async def wait_for_all(request: ChatRequest) -> AsyncIterator[ScriptItem]:
        prompt = texts(request)[-1]
        started.append(prompt)
        if len(started) == 4:
            all_started.set()
        await all_started.wait()  # one at a time, this would never be set
        for item in text(f"summary of {prompt}"):
            yield item

    llm, _scripted = model(
        [
            code(
                "chunks = [context[i : i + 100] for i in range(0, 400, 100)]",
                "answers = llm_batch([f'chunk {i}' for i, _ in enumerate(chunks)])",
                "print(answers)",
                "FINAL(len(answers))",
            )
        ],
        wait_for_all,
    )
    result = await agent(llm, batch_concurrency=4).run(
        [Message.user(CONTEXT), Message.user("Summarise.")]
    )
    assert result.content == "4"
    assert sorted(started) == ["chunk 0", "chunk 1", "chunk 2", "chunk 3"]
    assert result.metadata["sub_calls"] == 4
    assert result.usage.model_calls == 5


async def test_errors_are_reported_marked_and_counted_then_the_model_recovers() -> None:
    llm, scripted = model(
        [code("context.no_such_method()"), code("FINAL(context.count('vault'))")],
        read_needle,
    )
    result = await agent(llm).run([Message.user(CONTEXT), Message.user("How many vaults?")])
    observation = texts(scripted.requests[1])[-1]
    assert observation.startswith("[code block 1]\nerror: the code failed\nError:\n")
    assert observation.endswith("AttributeError: 'str' object has no attribute 'no_such_method'")
    assert result.content == "1"
    assert result.metadata["code_errors"] == 1
    assert result.metadata["code_runs"] == 2


async def test_a_failing_sub_call_raises_in_the_code() -> None:
    def fail(request: ChatRequest) -> Sequence[TurnPart]:
        if "bad" in texts(request)[-1]:
            return [raise_error(UpstreamError("the model is overloaded", status=503))]
        return "fine"

    llm, scripted = model(
        [
            code(
                "try:\n    llm_batch(['good', 'bad'])\nexcept HostError as e:\n    print(e)",
                "print(llm_query('good'))",
            ),
            code("FINAL('done')"),
        ],
        fail,
    )
    result = await agent(llm).run("short question")
    assert texts(scripted.requests[-1])[-1] == (
        "[code block 1]\nstdout:\n1 of 2 prompts failed; prompt 1: the model is overloaded\nfine\n"
    )
    assert result.content == "done"


async def test_the_sub_call_budget_is_enforced() -> None:
    llm, scripted = model(
        [code("llm_batch(['a', 'b', 'c'])"), code("FINAL(llm_query('a'))")],
        lambda request: "answer",
    )
    result = await agent(llm, max_sub_calls=2).run("q")
    assert (
        "HostError: the run may make 2 sub-calls; 0 are made, 3 more asked for"
        in (texts(scripted.requests[1])[-1])
    )
    assert result.content == "answer"
    assert result.metadata["sub_calls"] == 1


async def test_max_turns_without_final() -> None:
    llm, _ = model([code("x = 1"), code("x += 1"), code("x += 1")], read_needle)
    result = await agent(llm, max_turns=2).run([Message.user(CONTEXT), Message.user("?")])
    assert result.stop_reason == "max_turns"
    assert result.turns == 2


async def test_a_fixed_context_and_a_distinct_sub_model_and_tools() -> None:
    @function_tool
    def shout(words: str) -> str:
        """Upper-case some words."""
        return words.upper()

    main_llm, main = model(
        [code("FINAL(shout(llm_query('who? ' + context)))")], lambda request: "main model"
    )
    sub = ScriptedModel(lambda request: "the sub model")
    rlm = RLMAgent(
        main_llm,
        [shout],
        sub_llm=LLM("small", provider=sub),
        context_text="a short fixed document",
        sandbox=sandbox(),
        limits=LIMITS,
    )
    result = await rlm.run("Who wrote it?")
    assert result.content == "THE SUB MODEL"
    assert texts(sub.requests[0]) == ["who? a short fixed document"]
    assert texts(main.requests[0])[1:] == ["Who wrote it?"]  # the question stays in the prompt
    assert "a str of 22 characters" in texts(main.requests[0])[0]
    assert "- shout(words): Upper-case some words." in texts(main.requests[0])[0]


async def test_several_long_messages_become_a_list() -> None:
    llm, scripted = model([code("FINAL([len(c) for c in context])")], read_needle)
    result = await agent(llm).run(
        [Message.user("a" * 5000), Message.user("b" * 6000), Message.user("Sizes?")]
    )
    assert result.content == "[5000, 6000]"
    assert texts(scripted.requests[0])[1:] == [
        "[A document of 5,000 characters: it is in the REPL variable `context[0]`.]",
        "[A document of 6,000 characters: it is in the REPL variable `context[1]`.]",
        "Sizes?",
    ]


async def test_the_registry_builds_rlm() -> None:
    llm, _ = model(["hi"], read_needle)
    assert isinstance(build_agent("rlm", llm), RLMAgent)
