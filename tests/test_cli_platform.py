"""The platform's commands (files, vector-stores, responses/logs, models, usage, agents delete)
through the installed entry point against an agentloom server over a socket, itself backed by
the fake backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.cli_support import run_cli
from tests.plugins.server import make_settings


@pytest.fixture
def url(backend: FakeBackend, tmp_path: Path) -> Iterator[str]:
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    with serve(create_app(settings)) as served:
        yield served


def cli(url: str, *args: str) -> tuple[int, str, str]:
    done = run_cli(*args, env={"AGENTLOOM_BASE_URL": url})
    return done.returncode, done.stdout, done.stderr


def test_files_upload_list_get_delete(url: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Paris is the capital of France.\n")

    code, out, err = cli(url, "files", "upload", str(notes), "--json")
    assert code == 0, err
    (made,) = json.loads(out)
    assert (made["filename"], made["purpose"]) == ("notes.md", "assistants")

    code, out, err = cli(url, "files", "list")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == ["ID", "SIZE", "CREATED", "PURPOSE", "NAME"]
    assert row.startswith(made["id"])
    assert row.endswith("notes.md")
    assert cli(url, "files", "get", made["id"], "--output", "-")[1] == notes.read_text()

    assert cli(url, "files", "delete", made["id"])[:2] == (0, f"deleted {made['id']}\n")
    code, out, err = cli(url, "files", "get", made["id"])
    assert (code, out) == (1, "")
    assert err.startswith("agentloom: ")
    assert "(404" in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_vector_stores_take_a_directory_with_progress_and_search_it(
    url: str, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    (docs / "europe").mkdir(parents=True)
    (docs / "france.md").write_text("Paris is the capital of France.")
    (docs / "europe" / "germany.txt").write_text("Berlin is the capital of Germany.")
    (docs / ".hidden").write_text("left out")
    code, store_id, err = cli(url, "vector-stores", "create", "atlas")
    store_id = store_id.strip()
    assert code == 0, err

    code, out, err = cli(url, "vector-stores", "add", store_id, str(docs), "--json")

    assert code == 0, err
    added = json.loads(out)
    assert [each["status"] for each in added] == ["completed", "completed"]
    lines = err.splitlines()
    assert [line.split()[1] for line in lines[:-1]] == [
        "uploaded", "uploaded", "ingested", "ingested"
    ]  # fmt: skip
    assert "germany.txt" in lines[0]
    assert "france.md" in lines[1]
    assert lines[-1].startswith("[████████████████████] 2/2 files")

    code, out, err = cli(url, "vector-stores", "search", store_id, "capital of France", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["filename"] == "france.md"
    code, out, _ = cli(url, "vector-stores", "list")
    assert store_id in out
    assert "2/2" in out
    assert cli(url, "vector-stores", "wait", store_id)[0] == 0  # nothing left to wait for


def test_a_missing_directory_and_an_unknown_store_are_one_line_errors(
    url: str, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("text")

    code, _, err = cli(url, "vector-stores", "add", "vs_missing", str(tmp_path / "a.md"))

    assert code == 1
    assert err.splitlines()[-1].startswith("agentloom: ")
    assert "vs_missing" in err
    assert "Traceback" not in err


def test_responses_list_and_show_with_its_trace(
    url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Stored answer.")
    made = openai.OpenAI(base_url=url, api_key="unused").responses.create(
        model=backend.model, input="hello"
    )

    code, out, err = cli(url, "responses", "list", "--json")
    assert code == 0, err
    assert [each["id"] for each in json.loads(out)] == [made.id]
    code, out, err = cli(url, "logs", "show", made.id)
    assert code == 0, err
    assert f"{made.id}  completed  {backend.model}" in out
    assert "output: Stored answer." in out
    assert f"chat {backend.model}" in out  # the trace's model call
    code, out, err = cli(url, "responses", "show", made.id, "--json")
    shown = json.loads(out)
    assert shown["response"]["id"] == made.id
    assert shown["trace"]["spans"][0]["kind"] == "response"


def test_models_usage_and_ask_without_a_model(
    url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello from the only model.")

    code, out, err = cli(url, "ask", "--agent", "simple", "hi")
    assert (code, out) == (0, "Hello from the only model.\n"), err
    assert backend.requests[0]["model"] == backend.model

    code, out, _ = cli(url, "models", "--json")
    kinds = {model["id"]: model["kind"] for model in json.loads(out)}
    assert kinds[backend.model] == "chat"
    assert kinds["all-MiniLM-L6-v2"] == "embeddings"
    code, out, err = cli(url, "usage", "--by", "model")
    assert code == 0, err
    assert out.splitlines()[0].split()[:3] == ["START", "MODEL", "INPUT_TOKENS"]
    assert backend.model in out.splitlines()[1]


def test_agents_delete(url: str, backend: FakeBackend) -> None:
    code, agent_id, err = cli(url, "agents", "create", "helper", "--model", backend.model)
    assert code == 0, err

    assert cli(url, "agents", "delete", agent_id.strip())[:2] == (0, f"deleted {agent_id}")
    assert cli(url, "agents", "list", "--json")[1].strip() == "[]"
