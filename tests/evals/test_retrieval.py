"""Retrieval tasks over the shipped FRAMES-style set: the documents indexed in the process
(embedded by the fake backend over HTTP), searched by the agent in two hops."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import ToolError
from agentloom.config import EmbeddingSettings
from agentloom.evals.documents import LocalIndex, SearchDocumentsTool
from agentloom.evals.records import RunFile
from agentloom.evals.runner import EvalSettings, run_eval
from agentloom.evals.strategies import parse_strategy
from agentloom.evals.tasks import load_tasks
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM
from agentloom.testing.backend import FakeBackend
from tests.evals.support import multi_hop
from tests.plugins.server import FAKE_EMBEDDING_MODEL


def embeddings(backend: FakeBackend) -> EmbeddingSettings:
    return EmbeddingSettings(
        type="openai_compatible", base_url=backend.base_url, model=FAKE_EMBEDDING_MODEL
    )


async def test_the_local_index_finds_the_document_that_says_it(backend: FakeBackend) -> None:
    tasks = load_tasks("frames-sample")
    index = await LocalIndex.build(tasks.documents(), embeddings(backend))
    try:
        passages = await index.search("Skarholm population census", 2)
    finally:
        await index.aclose()

    assert passages[0].document == "skarholm.md"
    assert "2,340" in passages[0].text
    assert passages[0].score >= passages[1].score


async def test_a_two_hop_question_is_answered_from_the_documents(
    backend: FakeBackend, tmp_path: Path
) -> None:
    tasks = load_tasks("frames-sample")
    first = tasks.tasks[0]  # where was the lighthouse's designer born
    model = ScriptedModel(multi_hop)
    index = await LocalIndex.build(tasks.documents(), embeddings(backend))
    settings = EvalSettings(model="m", strategies=(parse_strategy("orchestrator"),))
    try:
        records = await run_eval(
            tasks,
            settings,
            RunFile.open(tmp_path / "run.jsonl", tasks),
            lambda name: LLM(name, provider=model),
            scratch=tmp_path,
            index=index,
        )
    finally:
        await index.aclose()

    record = next(r for r in records if r.task_id == first.id)
    assert record.score == 1.0, record.reply
    assert record.reply == "FINAL ANSWER: Lysvik"
    assert record.tool_calls == 2
    assert record.evidence_recall == 1.0
    offered = [spec.name for spec in model.requests[0].tools]
    assert offered == [SearchDocumentsTool.name]


async def test_a_search_with_no_query_is_told_to_the_model(backend: FakeBackend) -> None:
    tasks = load_tasks("frames-sample")
    index = await LocalIndex.build(tasks.documents()[:1], embeddings(backend))
    tool = SearchDocumentsTool(index)
    try:
        with pytest.raises(ToolError, match="give a non-empty 'query' to search for"):
            await tool.call({"query": "  "}, AgentContext())
        found = await tool.call({"query": "lighthouse"}, AgentContext())
    finally:
        await index.aclose()
    assert found.startswith("[1] vellmark_lighthouse.md (score ")
    assert tool.found == {"vellmark_lighthouse.md"}
