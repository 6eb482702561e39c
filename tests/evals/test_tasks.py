"""Reading task sets: the three kinds, GAIA's own lines, the shipped sets, and bad files told
by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentloom.evals.tasks import (
    SHIPPED,
    QATask,
    RetrievalTask,
    SessionsTask,
    TaskSetError,
    load_tasks,
)


def write(path: Path, *lines: object) -> Path:
    path.write_text(
        "".join((json.dumps(line) if not isinstance(line, str) else line) + "\n" for line in lines)
    )
    return path


def test_the_three_kinds_and_a_gaia_line(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("A document.")
    (tmp_path / "data.csv").write_text("a,b\n")
    path = write(
        tmp_path / "tasks.jsonl",
        {"type": "qa", "id": "q", "question": "Q?", "answer": ["a", "b"]},
        "",
        {
            "type": "retrieval",
            "id": "r",
            "question": "R?",
            "answer": "x",
            "documents": ["doc.md"],
            "scorer": "contains",
        },
        {
            "type": "sessions",
            "id": "s",
            "sessions": [{"input": "hi"}, {"input": "q?", "answer": "y"}],
        },
        {
            "task_id": "c61d",
            "Question": "G?",
            "Level": "2",
            "Final answer": "17",
            "file_name": "data.csv",
        },
    )

    tasks = load_tasks(path)

    assert [type(task) for task in tasks.tasks] == [QATask, RetrievalTask, SessionsTask, QATask]
    assert tasks.tasks[3] == QATask(id="c61d", question="G?", answer="17", file="data.csv", level=2)
    assert tasks.tasks[1].scorer == "contains"
    assert tasks.kinds() == {"qa", "retrieval", "sessions"}
    assert tasks.documents() == [tmp_path / "doc.md"]
    assert len(tasks.digest) == 64


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", ":1: not JSON"),
        ("[1]", ":1: a task is a JSON object"),
        ({"type": "quiz", "id": "x"}, ":1: 'type' must be one of qa, retrieval, sessions"),
        ({"id": "x", "question": "?"}, ":1: 'type' must be one of qa, retrieval, sessions"),
        ({"type": "qa", "id": "x", "question": "?"}, ":1: answer: Field required"),
        (
            {"type": "qa", "id": "x", "question": "?", "answer": []},
            "give at least one accepted answer",
        ),
        (
            {"type": "qa", "id": "x", "question": "?", "answer": "a", "extra": 1},
            ":1: extra: Extra inputs",
        ),
        (
            {"type": "qa", "id": "x", "question": "?", "answer": "a", "scorer": "fuzzy"},
            "unknown scorer 'fuzzy'",
        ),
        (
            {"type": "sessions", "id": "x", "sessions": [{"input": "hi"}]},
            "at least one session needs an answer",
        ),
        (
            {"type": "qa", "id": "x", "question": "?", "answer": "a", "file": "gone.csv"},
            "task 'x' names 'gone.csv', not a file beside it",
        ),
    ],
)
def test_a_bad_line_is_told_by_file_and_line(tmp_path: Path, line: object, problem: str) -> None:
    path = write(tmp_path / "tasks.jsonl", line)

    with pytest.raises(TaskSetError) as caught:
        load_tasks(path)

    assert str(path) in caught.value.message
    assert problem in caught.value.message


def test_ids_are_unique_and_a_set_is_not_empty(tmp_path: Path) -> None:
    task = {"type": "qa", "id": "same", "question": "?", "answer": "a"}
    with pytest.raises(TaskSetError, match="the id 'same' is used twice"):
        load_tasks(write(tmp_path / "twice.jsonl", task, task))
    with pytest.raises(TaskSetError, match="no tasks"):
        load_tasks(write(tmp_path / "empty.jsonl", ""))
    with pytest.raises(
        TaskSetError, match=r"cannot read the task file .*shipped sets: gaia-sample"
    ):
        load_tasks(tmp_path / "missing.jsonl")


@pytest.mark.parametrize("name", list(SHIPPED))
def test_the_shipped_sets_load_with_their_files(name: str) -> None:
    tasks = load_tasks(name)

    assert len(tasks.tasks) >= 3
    assert all(path.is_file() for path in tasks.documents())
