"""What the eval tests share: task files written on the fly, and a scripted "reader" model that
answers by reading its request (so a test fails when the harness does not hand it what it
needs: the conversation carried, a memory note, a document found)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from agentloom.inference.base import ChatMessage, ChatRequest, TextPart
from agentloom.inference.scripted import ScriptItem, Turn, tool_call


def write_tasks(path: Path, tasks: Iterable[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks), encoding="utf-8")
    return path


def qa(task_id: str, question: str, answer: str) -> dict[str, object]:
    return {"type": "qa", "id": task_id, "question": question, "answer": answer}


def said(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(part.text for part in message.content or () if isinstance(part, TextPart))


def everything(request: ChatRequest) -> str:
    return "\n".join(said(message) for message in request.messages)


def last_user(request: ChatRequest) -> str:
    return next(said(m) for m in reversed(request.messages) if m.role == "user")


def offered(request: ChatRequest) -> set[str]:
    return {spec.name for spec in request.tools}


def arithmetic(request: ChatRequest) -> Turn:
    """Answers 'What is A times B?' with the product, 'Capital of X?' wrongly."""
    question = last_user(request)
    product = re.search(r"(\d+) times (\d+)", question)
    if product:
        return f"Easy. FINAL ANSWER: {int(product[1]) * int(product[2]):,}"
    return "FINAL ANSWER: I do not know"


def remembering(request: ChatRequest) -> Turn | list[ScriptItem]:
    """The sessions reader: stores a favourite number (in memory when it has the tools), and
    answers 'multiplied by 6' from whatever it can see: the conversation or a memory search."""
    question, seen, tools = last_user(request), everything(request), offered(request)
    last = request.messages[-1]
    if "favourite number is" in question and last.role == "user":
        if "memory_store" in tools:
            return [tool_call("memory_store", {"content": question})]
        return "Noted."
    if "multiplied by 6" in question and last.role == "user" and "memory_search" in tools:
        return [tool_call("memory_search", {"query": "favourite number"})]
    if "multiplied by 6" not in question:
        return "Noted."
    number = re.search(r"favourite number is (\d+)", seen)
    return f"FINAL ANSWER: {int(number[1]) * 6}" if number else "FINAL ANSWER: no idea"


def multi_hop(request: ChatRequest) -> Turn | list[ScriptItem]:
    """The retrieval reader: searches for the lighthouse's designer, then for where the
    designer was born, then answers with what the second search returned."""
    if "search_documents" not in offered(request):
        return "FINAL ANSWER: I cannot search"
    results = [said(m) for m in request.messages if m.role == "tool"]
    if not results:
        return [
            tool_call("search_documents", {"query": "Vellmark Lighthouse designed by engineer"})
        ]
    designer = re.search(r"designed by the engineer (\w+ \w+)", results[0])
    if len(results) == 1:
        if designer is None:
            return "FINAL ANSWER: not found"
        return [tool_call("search_documents", {"query": f"{designer[1]} born in town"})]
    town = re.search(r"born in the fishing town of (\w+)", results[1])
    return f"FINAL ANSWER: {town[1] if town else 'unknown'}"
