"""Eval task sets: JSON Lines files, one task a line, discriminated on ``type``.

```json
{"type": "qa", "id": "q1", "question": "What is 17 * 23?", "answer": "391"}
{"type": "retrieval", "id": "r1", "question": "...", "answer": "...", "documents": ["docs/a.md"]}
{"type": "sessions", "id": "s1", "sessions": [{"input": "I am Ada."},
                                             {"input": "Who am I?", "answer": "Ada"}]}
```

- ``qa`` (GAIA style): a question and its answer; ``file`` names an attachment (a path relative
  to the task file) the agent may read with ``file_read``. A line of GAIA's own
  ``metadata.jsonl`` (``task_id``, ``Question``, ``Final answer``, ``file_name``) is read as one.
- ``retrieval`` (FRAMES style): a question answered from a document set; ``documents`` are the
  files (relative to the task file) holding the evidence. The documents of every retrieval task
  of the set, and any ``--documents`` given to the run, form one index the agent searches.
- ``sessions`` (LifelongAgent style): sessions run in order by one agent, what it learnt carried
  from one to the next; a session with an ``answer`` is scored, one without only sets things up.

``answer`` may be a list of accepted answers; ``scorer`` picks a scorer (``agentloom.evals.
scorers``; default ``exact``). Ids are unique in a set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from agentloom.errors import InvalidRequestError
from agentloom.evals.scorers import SCORERS
from agentloom.frozen import frozen

__all__ = [
    "SHIPPED",
    "QATask",
    "RetrievalTask",
    "Session",
    "SessionsTask",
    "Task",
    "TaskKind",
    "TaskSet",
    "TaskSetError",
    "load_tasks",
    "shipped_path",
]

TaskKind: TypeAlias = Literal["qa", "retrieval", "sessions"]

# The task sets in the package: name -> file under agentloom/evals/data.
SHIPPED: dict[str, str] = {
    "gaia-sample": "gaia_sample.jsonl",
    "frames-sample": "frames_sample.jsonl",
    "lifelong-sample": "lifelong_sample.jsonl",
}


class TaskSetError(InvalidRequestError):
    """A task file that cannot be read: the message names the file and line."""


class _Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    scorer: str = "exact"

    @field_validator("scorer")
    @classmethod
    def _known_scorer(cls, name: str) -> str:
        if name not in SCORERS:
            raise ValueError(f"unknown scorer {name!r}; known scorers: {', '.join(SCORERS)}")
        return name


def _answers(value: str | list[str]) -> str | list[str]:
    if isinstance(value, list) and not value:
        raise ValueError("give at least one accepted answer")
    return value


Answer: TypeAlias = Annotated[str | list[str], AfterValidator(_answers)]


class QATask(_Task):
    type: Literal["qa"] = "qa"
    question: str = Field(min_length=1)
    answer: Answer
    file: str | None = None
    level: int | None = None  # GAIA's difficulty level, kept for the report


class RetrievalTask(_Task):
    type: Literal["retrieval"] = "retrieval"
    question: str = Field(min_length=1)
    answer: Answer
    documents: tuple[str, ...] = ()


class Session(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: str = Field(min_length=1)
    answer: Answer | None = None


class SessionsTask(_Task):
    type: Literal["sessions"] = "sessions"
    sessions: tuple[Session, ...] = Field(min_length=1)

    @field_validator("sessions")
    @classmethod
    def _one_scored(cls, sessions: tuple[Session, ...]) -> tuple[Session, ...]:
        if all(session.answer is None for session in sessions):
            raise ValueError("at least one session needs an answer to score")
        return sessions


Task: TypeAlias = Annotated[QATask | RetrievalTask | SessionsTask, Field(discriminator="type")]
_TASK: TypeAdapter[QATask | RetrievalTask | SessionsTask] = TypeAdapter(Task)


@frozen
class TaskSet:
    """The tasks of one file, the folder their relative paths start from, and the file's
    SHA-256 (a run file remembers it, so a resumed run scores the same tasks)."""

    path: Path
    tasks: tuple[QATask | RetrievalTask | SessionsTask, ...]
    digest: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    def kinds(self) -> set[TaskKind]:
        return {task.type for task in self.tasks}

    def documents(self) -> list[Path]:
        """Every document a retrieval task names, once each, in order of appearance."""
        named = (
            doc for task in self.tasks if isinstance(task, RetrievalTask) for doc in task.documents
        )
        return [self.folder / doc for doc in dict.fromkeys(named)]


def shipped_path(name: str) -> Path:
    """The file of the shipped task set ``name``."""
    folder = resources.files("agentloom.evals") / "data"
    return Path(str(folder / SHIPPED[name]))


def load_tasks(where: str | Path) -> TaskSet:
    """The task set in the file ``where``, or the shipped set of that name."""
    path = shipped_path(str(where)) if str(where) in SHIPPED else Path(where)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        known = ", ".join(SHIPPED)
        raise TaskSetError(
            f"cannot read the task file {path}: {exc.strerror} (shipped sets: {known})"
        ) from None
    tasks = tuple(_parse(path, number, line) for number, line in _lines(raw))
    if not tasks:
        raise TaskSetError(f"{path}: no tasks")
    _check_unique(path, tasks)
    _check_files(path, tasks)
    return TaskSet(path, tasks, hashlib.sha256(raw).hexdigest())


def _lines(raw: bytes) -> list[tuple[int, str]]:
    text = raw.decode("utf-8-sig")
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _parse(path: Path, number: int, line: str) -> QATask | RetrievalTask | SessionsTask:
    where = f"{path}:{number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TaskSetError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TaskSetError(f"{where}: a task is a JSON object")
    try:
        return _TASK.validate_python(_from_gaia(data))
    except ValidationError as exc:
        raise TaskSetError(f"{where}: {_problem(exc)}") from None


def _from_gaia(data: dict[str, object]) -> dict[str, object]:
    """A line of GAIA's ``metadata.jsonl`` as a ``qa`` task; any other line unchanged."""
    if "type" in data or "Question" not in data:
        return data
    gaia: dict[str, object] = {
        "type": "qa",
        "id": data.get("task_id"),
        "question": data.get("Question"),
        "answer": data.get("Final answer"),
    }
    if data.get("file_name"):
        gaia["file"] = data["file_name"]
    if isinstance(data.get("Level"), int | str) and str(data["Level"]).isdigit():
        gaia["level"] = int(str(data["Level"]))
    return gaia


def _problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    place = ".".join(str(part) for part in error["loc"][1:]) or str(
        error["loc"][0] if error["loc"] else "task"
    )
    if error["type"] == "union_tag_invalid" or error["type"] == "union_tag_not_found":
        return "'type' must be one of qa, retrieval, sessions"
    return f"{place}: {error['msg']}"


def _check_unique(path: Path, tasks: Sequence[QATask | RetrievalTask | SessionsTask]) -> None:
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskSetError(f"{path}: the id {task.id!r} is used twice")
        seen.add(task.id)


def _check_files(path: Path, tasks: Sequence[QATask | RetrievalTask | SessionsTask]) -> None:
    for task in tasks:
        named = [task.file] if isinstance(task, QATask) and task.file else []
        named += list(task.documents) if isinstance(task, RetrievalTask) else []
        for name in named:
            if not (path.parent / name).is_file():
                raise TaskSetError(f"{path}: task {task.id!r} names {name!r}, not a file beside it")
