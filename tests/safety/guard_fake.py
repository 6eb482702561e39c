"""A responder for the scripted model that answers like Llama Guard."""

from __future__ import annotations

from agentloom.inference.base import ChatRequest, TextPart

MARKER = "[[harm]]"


def guard(request: ChatRequest) -> str:
    """``unsafe`` / ``S1,S10`` when the prompt's conversation holds :data:`MARKER`, else
    ``safe``."""
    content = request.messages[-1].content
    if isinstance(content, str):
        prompt = content
    else:
        prompt = "".join(p.text for p in content or () if isinstance(p, TextPart))
    conversation = prompt.split("<BEGIN CONVERSATION>")[-1]
    return "unsafe\nS1,S10" if MARKER in conversation else "safe"
