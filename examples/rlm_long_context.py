"""A recursive language model over a long document, in-process and offline.

The document (about 450,000 characters of meeting notes) never enters the prompt: it is the
variable ``context`` of a sandboxed Python REPL. The model writes code that cuts it into
chunks and asks a sub-model about each chunk, all at once with ``llm_batch``, then gives its
answer with ``FINAL``. A scripted model stands in for the LLM; swap ``provider=...`` for
``base_url="http://localhost:8000/v1"`` to use a real one.

    python examples/rlm_long_context.py
"""

from __future__ import annotations

import asyncio
import re

from agentloom.agents import AgentFinished, RLMAgent, ToolFinished, TurnStarted
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM, Message

TEAMS = ["billing", "search", "mobile", "infra", "growth", "support"]


def meeting_notes() -> str:
    """A long, dull document with three deadlines hidden in it."""
    lines = [
        f"Meeting {n}: the {TEAMS[n % len(TEAMS)]} team reviewed its backlog; no decision."
        for n in range(7000)
    ]
    lines[1234] = "Meeting 1234: DEADLINE the billing migration must be done by 3 March."
    lines[4321] = "Meeting 4321: DEADLINE the mobile release ships on 14 April."
    lines[6543] = "Meeting 6543: DEADLINE the infra audit is due on 30 June."
    return "\n".join(lines)


# What the root model writes, turn by turn: look, then map the chunks, then answer.
PLAN = [
    "First, the shape of the context.\n"
    "```python\n"
    "print(len(context), context.count('\\n') + 1)\n"
    "print(context[:200])\n"
    "```",
    "I will ask about each 50,000-character chunk at once.\n"
    "```python\n"
    "size = 50_000\n"
    "chunks = [context[i : i + size] for i in range(0, len(context), size)]\n"
    "prompts = ['List every deadline in these notes, one per line, or NONE.\\n\\n' + c\n"
    "           for c in chunks]\n"
    "found = [a for a in llm_batch(prompts) if a != 'NONE']\n"
    "print(len(chunks), 'chunks;', found)\n"
    "```",
    "```python\nFINAL('The deadlines: ' + '; '.join(f.rstrip('.') for f in found) + '.')\n```",
]


def respond(request: ChatRequest) -> str:
    """The scripted stand-in: the root model plays PLAN; a sub-call reads its chunk."""
    first = request.messages[0]
    if first.role == "system":
        turn = sum(1 for m in request.messages if m.role == "assistant")
        return PLAN[turn]
    prompt = request.messages[-1].content
    assert isinstance(prompt, str)
    found = re.findall(r"DEADLINE (.+)", prompt)
    return "\n".join(found) or "NONE"


async def main() -> None:
    model = ScriptedModel(respond)
    agent = RLMAgent(LLM("scripted", provider=model))
    notes = meeting_notes()
    question = "What deadlines were set in these meetings?"
    async for event in agent.stream([Message.user(notes), Message.user(question)]):
        if isinstance(event, TurnStarted):
            print(f"[turn {event.turn}]")
        elif isinstance(event, ToolFinished):
            print("  " + event.outcome.output.strip().replace("\n", "\n  ")[:300])
        elif isinstance(event, AgentFinished):
            result = event.result
            print(f"\nanswer: {result.content}")
            print(f"context: {len(notes):,} characters, kept in the REPL")
            largest = max(len(m.content or "") for m in result.messages)
            print(f"largest message the root model saw: {largest:,} characters")
            print(f"model calls: {result.usage.model_calls} ({result.metadata['sub_calls']} sub)")


if __name__ == "__main__":
    asyncio.run(main())
