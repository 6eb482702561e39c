"""``agentloom eval`` through the installed entry point (a real process): the shipped task sets
against the fake backend over a socket (Chat Completions, documents indexed in the process)
and against an agentloom server (Responses, documents in the server's vector store)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, ScriptItem, Turn, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.cli_support import connect, run_cli
from tests.evals.support import last_user, multi_hop, offered, remembering, said
from tests.plugins.server import FAKE_EMBEDDING_MODEL, make_settings

ANSWERS = {  # the shipped GAIA-style questions, one answered wrongly
    "17 multiplied by 23": "391",
    "prime numbers": "11, 13, 17, 19",
    "capital city of Australia": "Sydney",
    "train covers": "80 km/h",
}


def gaia_reader(request: ChatRequest) -> Turn | list[ScriptItem]:
    """Answers the shipped GAIA-style set; reads the attachment when it has file_read."""
    question = last_user(request)
    attached = re.search(r"Attached file: (\S+)", question)
    if attached is None:
        answer = next((a for q, a in ANSWERS.items() if q in question), "?")
        return f"Let me see. FINAL ANSWER: {answer}"
    if "file_read" not in offered(request):
        return "FINAL ANSWER: I cannot open files"
    read = [said(message) for message in request.messages if message.role == "tool"]
    if not read:
        return [tool_call("file_read", {"path": attached[1]})]
    bolts = sum(int(n) for n in re.findall(r"\d+,bolt,(\d+)", read[0]))
    return f"FINAL ANSWER: {bolts}"


def result_of(path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(path.read_text())
    return loaded


def accuracy(result: dict[str, object]) -> dict[str, float]:
    return {s["strategy"]: s["accuracy"] for s in result["summaries"] if s["kind"] == "all"}  # type: ignore[attr-defined, index]


def test_gaia_sample_two_strategies_priced_then_resumed(
    backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.respond_with(gaia_reader)
    prices = tmp_path / "prices.toml"
    prices.write_text(f'[models."{backend.model}"]\ninput = 1.0\noutput = 4.0\n')
    args = [
        "eval", "run", "gaia-sample", *connect(backend),
        "--strategy", "simple", "--strategy", "reader=orchestrator:tools=file_read",
        "--run-file", str(tmp_path / "gaia.jsonl"), "--prices", str(prices), "--concurrency", "2",
    ]  # fmt: skip

    done = run_cli(*args)

    assert done.returncode == 0, done.stderr
    result = result_of(tmp_path / "gaia.json")
    assert accuracy(result) == {"simple": 0.6, "reader": 0.8}
    records = {(r["strategy"], r["task_id"]): r for r in result["results"]}  # type: ignore[attr-defined]
    orders = records[("reader", "gaia-orders")]
    assert (orders["score"], orders["tool_calls"], orders["reply"]) == (
        1.0,
        1,
        "FINAL ANSWER: 1250",
    )
    assert records[("simple", "gaia-orders")]["score"] == 0.0
    usage = orders["usage"]
    assert orders["cost"] == pytest.approx(
        (usage["input_tokens"] * 1.0 + usage["output_tokens"] * 4.0) / 1e6
    )
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["strategy", "kind", "tasks", "accuracy", "failed", "tokens", "cost",
                                "latency", "p50", "tool", "calls", "evidence"]  # fmt: skip
    assert lines[2].split()[:5] == ["simple", "all", "5", "60.0%", "0"]
    assert lines[3].split()[:5] == ["reader", "all", "5", "80.0%", "0"]
    assert any(
        line.startswith("gaia-orders") and "0.00 ·" in line and "1.00 ·" in line for line in lines
    )
    assert len(done.stderr.splitlines()) == 10  # a progress line per task and strategy
    asked = len(backend.requests)
    assert asked == 11  # the reader read the file: one more call

    again = run_cli(*args)

    assert again.returncode == 0, again.stderr
    assert len(backend.requests) == asked  # everything was finished: nothing asked again
    assert again.stderr == ""
    assert again.stdout == done.stdout  # the same records, the same tables
    assert accuracy(result_of(tmp_path / "gaia.json")) == {"simple": 0.6, "reader": 0.8}

    single = run_cli(
        "eval", "run", "gaia-sample", *connect(backend), "--agent", "simple",
        "--run-file", str(tmp_path / "simple.jsonl"), "--json",
    )  # fmt: skip
    assert single.returncode == 0, single.stderr
    assert accuracy(json.loads(single.stdout)) == {"simple": 0.6}

    compared = run_cli(
        "eval", "compare", str(tmp_path / "gaia.json"), str(tmp_path / "simple.json")
    )

    assert compared.returncode == 0, compared.stderr
    rows = [line.split()[:4] for line in compared.stdout.splitlines()]
    assert ["A:simple", "all", "5", "60.0%"] in rows
    assert ["A:reader", "all", "5", "80.0%"] in rows
    assert ["B:simple", "all", "5", "60.0%"] in rows


def test_frames_sample_indexed_in_the_process(
    backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.respond_with(multi_hop)
    config = tmp_path / "agentloom.toml"
    config.write_text(
        f'[embeddings]\ntype = "openai_compatible"\nbase_url = "{backend.base_url}"\n'
        f'model = "{FAKE_EMBEDDING_MODEL}"\n'
    )

    done = run_cli(
        "eval", "run", "frames-sample", *connect(backend), "--config", str(config),
        "--run-file", str(tmp_path / "frames.jsonl"), "--json",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    birthplace = next(r for r in result["results"] if r["task_id"] == "frames-birthplace")
    assert (birthplace["score"], birthplace["evidence_recall"]) == (1.0, 1.0)
    assert birthplace["reply"] == "FINAL ANSWER: Lysvik"
    assert len(backend.embedding_requests) >= 2  # the documents, then each search's query


def test_lifelong_sample_carries_the_conversation(
    backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    def sessions_reader(request: ChatRequest) -> Turn | list[ScriptItem]:
        seen = "\n".join(said(message) for message in request.messages)
        question = last_user(request)
        facts = {
            "code name of my first project": r"first project's code name is (\w+)",
            "second project": r"code-named (\w+)",
            "live in from next week": r"I will live in (\w+)",
        }
        for asked, fact in facts.items():
            if asked in question:
                found = re.search(fact, seen)
                return f"FINAL ANSWER: {found[1] if found else 'unknown'}"
        return remembering(request)

    scripted.respond_with(sessions_reader)
    common = ["eval", "run", "lifelong-sample", *connect(backend), "--agent", "simple", "--json"]

    carried = run_cli(*common, "--run-file", str(tmp_path / "carried.jsonl"))
    forgotten = run_cli(*common, "--carry", "none", "--run-file", str(tmp_path / "none.jsonl"))

    assert carried.returncode == 0, carried.stderr
    assert forgotten.returncode == 0, forgotten.stderr
    assert accuracy(json.loads(carried.stdout)) == {"simple": 1.0}
    assert accuracy(json.loads(forgotten.stdout)) == {"simple": 0.0}
    codes = next(
        r for r in json.loads(carried.stdout)["results"] if r["task_id"] == "lifelong-code-names"
    )
    assert [s["score"] for s in codes["sessions"]] == [None, None, 1.0, 1.0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strategy", "wizard"], "agentloom: unknown agent 'wizard' in --strategy 'wizard'"),
        (["--carry", "all"], "Invalid value for '--carry'"),
        (["--concurrency", "0"], "Invalid value for '--concurrency'"),
    ],
)
def test_bad_options_are_one_line(
    backend: FakeBackend, args: list[str], message: str, tmp_path: Path
) -> None:
    done = run_cli(
        "eval",
        "run",
        "gaia-sample",
        *connect(backend),
        "--run-file",
        str(tmp_path / "r.jsonl"),
        *args,
    )

    assert done.returncode in (1, 2)
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_task_file_is_one_line(backend: FakeBackend, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"type": "qa", "id": "x", "question": "?"}\n')

    done = run_cli("eval", "run", str(tasks), *connect(backend))

    assert done.returncode == 1
    assert done.stderr == f"agentloom: {tasks}:1: answer: Field required\n"


# --- against an agentloom server ---------------------------------------------------------------


@pytest.fixture
def agentloom_url(backend: FakeBackend, tmp_path: Path) -> Iterator[str]:
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    with serve(create_app(settings)) as url:
        yield url


def test_frames_sample_in_the_servers_vector_store(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.respond_with(multi_hop)

    done = run_cli(
        "eval", "run", "frames-sample", "--path", "responses",
        "--model", backend.model, "--base-url", agentloom_url,
        "--run-file", str(tmp_path / "frames.jsonl"), "--json",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    birthplace = next(r for r in result["results"] if r["task_id"] == "frames-birthplace")
    assert (birthplace["score"], birthplace["evidence_recall"]) == (1.0, 1.0), birthplace
    assert birthplace["usage"]["model_calls"] == 3
    client = openai.OpenAI(base_url=agentloom_url, api_key="unused")
    assert client.vector_stores.list().data == []  # the run's store and files are deleted
    assert client.files.list().data == []
