"""The runner with the scripted model in process: scoring, usage, the concurrency bound, the
run file (resume after an interruption, retry), the deadline, errors, and what sessions carry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.evals.records import RunFile, RunFileError, TaskRecord
from agentloom.evals.runner import EvalSettings, run_eval
from agentloom.evals.strategies import parse_strategy
from agentloom.evals.tasks import TaskSet, load_tasks
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, ScriptItem, raise_error, text, tool_call
from agentloom.llm import LLM
from tests.evals.support import arithmetic, last_user, qa, remembering, write_tasks


def settings(*strategies: str, **given: object) -> EvalSettings:
    parsed = tuple(parse_strategy(s) for s in strategies or ("orchestrator",))
    return EvalSettings(model="m", strategies=parsed, **given)  # type: ignore[arg-type]


async def run(
    tasks: TaskSet, model: ScriptedModel, config: EvalSettings, tmp_path: Path, **given: object
) -> list[TaskRecord]:
    run_file = RunFile.open(tmp_path / "run.jsonl", tasks)
    scratch = tmp_path / "scratch"
    return await run_eval(
        tasks,
        config,
        run_file,
        lambda name: LLM(name, provider=model),
        scratch=scratch,
        **given,  # type: ignore[arg-type]
    )


@pytest.fixture
def arithmetic_tasks(tmp_path: Path) -> TaskSet:
    return load_tasks(
        write_tasks(
            tmp_path / "tasks.jsonl",
            [
                qa("mul", "What is 17 times 23?", "391"),
                qa("big", "What is 125 times 10?", "1250"),
                qa("capital", "What is the capital of Australia?", "Canberra"),
            ],
        )
    )


async def test_tasks_are_scored_and_recorded_as_they_finish(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    model = ScriptedModel(arithmetic)

    records = await run(arithmetic_tasks, model, settings("simple", "orchestrator"), tmp_path)

    assert [(r.task_id, r.strategy, r.score) for r in records] == [
        ("mul", "simple", 1.0), ("mul", "orchestrator", 1.0),
        ("big", "simple", 1.0), ("big", "orchestrator", 1.0),
        ("capital", "simple", 0.0), ("capital", "orchestrator", 0.0),
    ]  # fmt: skip
    first = records[0]
    assert (first.status, first.error) == ("ok", None)
    assert first.reply == "Easy. FINAL ANSWER: 391"
    assert first.expected == "391"
    assert (first.model, first.agent, first.kind) == ("m", "simple", "qa")
    assert (first.usage.model_calls, first.turns) == (1, 1)
    assert first.usage.input_tokens > 0
    assert first.latency_s >= 0
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["type"] == "run"
    assert sorted(json.loads(line)["task_id"] for line in lines[1:]) == sorted(
        r.task_id for r in records
    )
    # the default instructions ask for the final answer line
    system = model.requests[0].messages[0]
    assert system.role == "system"
    assert "FINAL ANSWER" in str(system.content)


async def test_tool_calls_and_tokens_are_counted(tmp_path: Path) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [qa("calc", "17 * 23?", "391")]))
    model = ScriptedModel(
        [[tool_call("calculator", {"expression": "17 * 23"})], "FINAL ANSWER: 391"]
    )

    [record] = await run(tasks, model, settings(tools=("calculator",)), tmp_path)

    assert record.score == 1.0
    assert (record.tool_calls, record.turns) == (1, 2)
    assert record.usage.model_calls == 2
    assert record.usage.total_tokens == record.usage.input_tokens + record.usage.output_tokens


async def test_no_more_tasks_run_at_once_than_the_bound(tmp_path: Path) -> None:
    tasks = load_tasks(
        write_tasks(
            tmp_path / "t.jsonl",
            [qa(f"t{n}", f"What is {n} times 2?", str(2 * n)) for n in range(6)],
        )
    )
    running, most, two_in = 0, 0, asyncio.Event()

    async def answer(request: ChatRequest) -> AsyncIterator[ScriptItem]:
        nonlocal running, most
        running += 1
        most = max(most, running)
        if running == 2:
            two_in.set()
        await two_in.wait()  # the first two wait for each other: the run is concurrent
        for _ in range(20):  # and give any other task every chance to start meanwhile
            await asyncio.sleep(0)
        running -= 1
        for item in text(arithmetic(request)):  # type: ignore[arg-type]
            yield item

    records = await run(
        tasks, ScriptedModel(answer), settings(concurrency=2, task_timeout=30), tmp_path
    )

    assert most == 2
    assert [r.score for r in records] == [1.0] * 6


async def test_an_interrupted_run_resumes_with_the_unfinished_tasks(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    never = asyncio.Event()

    async def stuck_on_the_capital(request: ChatRequest) -> AsyncIterator[ScriptItem]:
        if "capital" in last_user(request):
            await never.wait()
        for item in text(arithmetic(request)):  # type: ignore[arg-type]
            yield item

    finished: list[str] = []
    two_done = asyncio.Event()

    def on_record(record: TaskRecord) -> None:
        finished.append(record.task_id)
        if len(finished) == 2:
            two_done.set()

    config = settings(concurrency=1)
    first = asyncio.create_task(
        run(
            arithmetic_tasks,
            ScriptedModel(stuck_on_the_capital),
            config,
            tmp_path,
            on_record=on_record,
        )
    )
    await two_done.wait()
    first.cancel()  # as Ctrl-C does
    with pytest.raises(asyncio.CancelledError):
        await first
    kept = RunFile.open(tmp_path / "run.jsonl", arithmetic_tasks).records
    assert sorted(task for _, task in kept) == ["big", "mul"]

    model = ScriptedModel(arithmetic)
    records = await run(arithmetic_tasks, model, config, tmp_path)

    assert [last_user(request) for request in model.requests] == [
        "What is the capital of Australia?"
    ]
    assert [r.task_id for r in records] == ["mul", "big", "capital"]
    assert records[0] == kept[("orchestrator", "mul")]  # the first run's record, unchanged


async def test_a_task_past_its_deadline_times_out_and_the_others_go_on(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    async def silent_on_the_capital(request: ChatRequest) -> AsyncIterator[ScriptItem]:
        if "capital" in last_user(request):
            await asyncio.Event().wait()
        for item in text(arithmetic(request)):  # type: ignore[arg-type]
            yield item

    records = await run(
        arithmetic_tasks, ScriptedModel(silent_on_the_capital), settings(task_timeout=0.2), tmp_path
    )

    assert [(r.task_id, r.status) for r in records] == [
        ("mul", "ok"),
        ("big", "ok"),
        ("capital", "timeout"),
    ]
    assert records[2].score == 0.0
    assert records[2].error == "no answer within 0.2 s"


async def test_an_error_is_recorded_and_retried_on_request(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    def failing_on_the_capital(request: ChatRequest) -> list[ScriptItem]:
        if "capital" in last_user(request):
            return [raise_error(UpstreamError("the backend is down", status=503))]
        return list(text(arithmetic(request)))  # type: ignore[arg-type]

    records = await run(
        arithmetic_tasks, ScriptedModel(failing_on_the_capital), settings(), tmp_path
    )
    assert records[2].status == "error"
    assert "the backend is down" in str(records[2].error)

    again = ScriptedModel(lambda request: "FINAL ANSWER: Canberra")
    kept = await run(arithmetic_tasks, again, settings(), tmp_path)
    assert len(again.requests) == 0  # finished: not rerun
    assert kept[2].status == "error"

    retried = await run(arithmetic_tasks, again, settings(retry_failed=True), tmp_path)
    assert len(again.requests) == 1
    assert (retried[2].status, retried[2].score) == ("ok", 1.0)


async def test_a_strategy_that_refuses_the_tools_is_an_error_per_task(tmp_path: Path) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [qa("q", "What is 2 times 2?", "4")]))

    [record] = await run(
        tasks, ScriptedModel(arithmetic), settings("simple", tools=("calculator",)), tmp_path
    )

    assert record.status == "error"
    assert record.error == "the simple agent uses no tools; pick another agent for tools"


def test_a_run_file_of_other_tasks_or_another_model_is_refused(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    RunFile.open(path, arithmetic_tasks)
    other = load_tasks(write_tasks(tmp_path / "other.jsonl", [qa("x", "?", "1")]))

    with pytest.raises(RunFileError, match="holds a run of other tasks"):
        RunFile.open(path, other)
    assert RunFile.open(path, other, fresh=True).records == {}


async def test_resuming_with_another_model_for_a_strategy_is_refused(
    arithmetic_tasks: TaskSet, tmp_path: Path
) -> None:
    await run(arithmetic_tasks, ScriptedModel(arithmetic), settings(), tmp_path)

    other = EvalSettings(model="other", strategies=(parse_strategy("orchestrator"),))
    with pytest.raises(
        RunFileError, match="holds results of 'orchestrator' on model 'm', not 'other'"
    ):
        await run(arithmetic_tasks, ScriptedModel(arithmetic), other, tmp_path)
    relabelled = await run(
        arithmetic_tasks,
        ScriptedModel(arithmetic),
        settings("big=orchestrator:model=other"),
        tmp_path,
    )
    assert {r.model for r in relabelled if r.strategy == "big"} == {"other"}


def test_a_line_cut_short_is_dropped(arithmetic_tasks: TaskSet, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    RunFile.open(path, arithmetic_tasks)
    record = TaskRecord(
        strategy="s", agent="simple", model="m", task_id="mul", kind="qa", status="ok", score=1
    )
    path.write_text(path.read_text() + record.model_dump_json() + "\n" + '{"type": "result", "stra')

    resumed = RunFile.open(path, arithmetic_tasks)

    assert list(resumed.records) == [("s", "mul")]
    assert path.read_text().endswith("}\n")


async def test_bad_settings_are_refused(arithmetic_tasks: TaskSet, tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="give each --strategy once"):
        await run(arithmetic_tasks, ScriptedModel(), settings("react", "react"), tmp_path)


# --- sessions ------------------------------------------------------------------------------

SESSIONS = {
    "type": "sessions",
    "id": "number",
    "sessions": [
        {"input": "Hi, I'm Ada. My favourite number is 7."},
        {"input": "Something else: the weather is fine."},
        {"input": "What is my favourite number multiplied by 6?", "answer": "42"},
    ],
}


@pytest.mark.parametrize(
    ("strategy", "carry", "score"),
    [
        ("orchestrator", "conversation", 1.0),
        ("simple", "conversation", 1.0),
        ("orchestrator", "memory", 1.0),
        ("orchestrator", "none", 0.0),
        ("operative", "conversation", 1.0),  # resumes its own saved session
        ("operative", "none", 0.0),
    ],
)
async def test_what_sessions_carry(strategy: str, carry: str, score: float, tmp_path: Path) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [SESSIONS]))
    model = ScriptedModel(remembering)

    [record] = await run(tasks, model, settings(strategy, carry=carry), tmp_path)

    assert record.status == "ok", record.error
    assert record.score == score
    assert [s.score for s in record.sessions] == [None, None, score]
    assert record.sessions[2].reply.endswith("42" if score else "no idea")
    assert record.usage.model_calls == sum(s.usage.model_calls for s in record.sessions)


async def test_conversation_carry_sends_the_earlier_sessions(tmp_path: Path) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [SESSIONS]))
    model = ScriptedModel(remembering)

    await run(tasks, model, settings("simple"), tmp_path)

    last = model.requests[-1].messages
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]


async def test_memory_carry_keeps_notes_per_task(tmp_path: Path) -> None:
    other = {**SESSIONS, "id": "other", "sessions": SESSIONS["sessions"][1:]}  # type: ignore[index]
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [SESSIONS, other]))

    records = await run(
        tasks, ScriptedModel(remembering), settings(carry="memory", concurrency=1), tmp_path
    )

    assert [r.score for r in records] == [1.0, 0.0]  # the other task does not see the first's note
    assert records[0].tool_calls == 2  # memory_store, then memory_search


async def test_a_sessions_task_cut_by_its_deadline_keeps_its_finished_sessions(
    tmp_path: Path,
) -> None:
    two_scored = {
        "type": "sessions",
        "id": "two",
        "sessions": [{"input": "Say ok.", "answer": "ok"}, {"input": "Hang.", "answer": "x"}],
    }
    tasks = load_tasks(write_tasks(tmp_path / "t.jsonl", [two_scored]))

    async def hang_on_the_second(request: ChatRequest) -> AsyncIterator[ScriptItem]:
        if last_user(request) == "Hang.":
            await asyncio.Event().wait()
        yield text("FINAL ANSWER: ok")[0]

    [record] = await run(
        tasks, ScriptedModel(hang_on_the_second), settings(task_timeout=0.2), tmp_path
    )

    assert record.status == "timeout"
    assert [s.score for s in record.sessions] == [1.0]
    assert record.score == 0.5  # one of two scored sessions right
