"""``agentloom chat``: an interactive conversation with an agent on stdin.

The model's text streams to stdout as it arrives; each tool call gets an activity line
(``⚙ calculator({"expression": "6*7"}) -> 42``); a spinner runs on stderr while the model
thinks (when stderr is a terminal). The conversation carries over from turn to turn;
``/reset`` starts afresh, ``/exit`` (or end of input) ends it.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import aclosing
from typing import TYPE_CHECKING, TextIO

import click

from agentloom.cli.options import AgentChoice, agent_options, clean_errors, user_error

if TYPE_CHECKING:
    from agentloom.agents.base import AgentResult, BaseAgent
    from agentloom.cli.activity import Spinner
    from agentloom.llm.types import Message

__all__ = ["Repl", "chat"]

PROMPT = "you> "


@click.command()
@agent_options
def chat(choice: AgentChoice) -> None:
    """Chat with an agent: /reset forgets the conversation, /exit (or EOF) ends it."""
    with clean_errors():
        try:
            asyncio.run(_chat(choice))
        except KeyboardInterrupt:
            click.echo("", err=True)
            sys.exit(130)


async def _chat(choice: AgentChoice) -> None:
    from agentloom.agents.connection import open_agent

    connection = choice.connection()
    async with open_agent(connection, choice.agent, choice.tools, choice.options()) as agent:
        await Repl(agent, sys.stdin, sys.stdout, sys.stderr).run()


class Repl:
    """The read-answer loop over one agent; the conversation lives in :attr:`history`."""

    def __init__(self, agent: BaseAgent, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> None:
        from agentloom.cli.activity import Spinner

        self.agent = agent
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.history: list[Message] = []
        self.spinner: Spinner = Spinner(stderr)
        self.interactive = stdin.isatty()

    async def run(self) -> None:
        async with self.spinner:
            while (line := await self._read()) is not None:
                text = line.strip()
                if text in ("/exit", "/quit"):
                    return
                if text == "/reset":
                    self.history.clear()
                    self._note("(conversation cleared)")
                elif text:
                    await self.turn(text)

    async def turn(self, text: str) -> None:
        """One exchange; a failure is reported and leaves the conversation as it was."""
        from agentloom.llm.types import Message

        sent = [*self.history, Message.user(text)]
        try:
            result = await self._answer(sent)
        except Exception as exc:
            message = user_error(exc)
            if message is None:
                raise
            await self.spinner.stop()
            self._note(f"agentloom: {message}")
            return
        self.history = list(result.messages) or [*sent, Message.assistant(result.content)]

    async def _answer(self, sent: list[Message]) -> AgentResult:
        from agentloom.cli.activity import TurnView

        view = TurnView(self.stdout, self.spinner)
        async with aclosing(self.agent.stream(sent)) as events:
            async for event in events:
                result = await view.show(event)
                if result is not None:
                    return result
        raise RuntimeError("the agent ended without a result")

    async def _read(self) -> str | None:
        if self.interactive:
            try:
                return await asyncio.to_thread(input, PROMPT)
            except EOFError:
                return None
        line = await asyncio.to_thread(self.stdin.readline)
        return line or None

    def _note(self, text: str) -> None:
        self.stderr.write(text + "\n")
        self.stderr.flush()
