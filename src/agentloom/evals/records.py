"""What a run records, and the run file it appends to as tasks finish (JSON Lines).

The file's first line is a :class:`RunHeader` (the task file and its SHA-256); each later line
a :class:`TaskRecord`, written when its task finishes. Rerunning with the same run file skips
the (strategy, task) pairs it holds: an interrupted run resumes where it stopped. A line cut
short by the interruption is dropped; for a pair recorded twice (``--retry-failed``) the last
line counts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentloom.errors import InvalidRequestError
from agentloom.evals.tasks import TaskKind, TaskSet

__all__ = [
    "PricedRecord",
    "RecordKey",
    "RunFile",
    "RunFileError",
    "RunHeader",
    "SessionOutcome",
    "Status",
    "TaskRecord",
    "TokenUsage",
    "now",
]

Status: TypeAlias = Literal["ok", "timeout", "error"]
RecordKey: TypeAlias = tuple[str, str]  # (strategy label, task id)


class RunFileError(InvalidRequestError):
    """A run file that does not belong to this run, or cannot be read."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenUsage(_Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    model_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def plus(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            model_calls=self.model_calls + other.model_calls,
        )


class SessionOutcome(_Record):
    """One session of a ``sessions`` task; ``score`` is ``None`` for an unscored one."""

    input: str
    reply: str
    expected: str | list[str] | None
    score: float | None
    usage: TokenUsage
    latency_s: float
    tool_calls: int


class TaskRecord(_Record):
    """One task run by one strategy: its score (0..1), what it cost and how it went."""

    type: Literal["result"] = "result"
    strategy: str
    agent: str
    model: str
    task_id: str
    kind: TaskKind
    status: Status
    score: float = Field(ge=0, le=1)
    reply: str = ""
    expected: str | list[str] | None = None
    sessions: tuple[SessionOutcome, ...] = ()
    usage: TokenUsage = TokenUsage()
    latency_s: float = 0.0
    tool_calls: int = 0
    turns: int = 0
    evidence_recall: float | None = None  # retrieval: share of the evidence documents found
    error: str | None = None
    finished_at: str = Field(default_factory=now)

    @property
    def key(self) -> RecordKey:
        return (self.strategy, self.task_id)


class PricedRecord(TaskRecord):
    """A record with its cost in dollars (``None``: the price table does not list its model)."""

    cost: float | None = None


class RunHeader(_Record):
    type: Literal["run"] = "run"
    tasks: str
    tasks_digest: str
    started_at: str = Field(default_factory=now)


class RunFile:
    """The run file at ``path``; :meth:`open` checks it and reads what it holds."""

    def __init__(self, path: Path, header: RunHeader, records: Iterable[TaskRecord]) -> None:
        self.path = path
        self.header = header
        self.records: dict[RecordKey, TaskRecord] = {record.key: record for record in records}
        self._lock = asyncio.Lock()

    @classmethod
    def open(cls, path: Path, tasks: TaskSet, *, fresh: bool = False) -> RunFile:
        """The run file for ``tasks``: created (or emptied with ``fresh``), else resumed."""
        if fresh or not path.exists() or path.stat().st_size == 0:
            header = RunHeader(tasks=str(tasks.path), tasks_digest=tasks.digest)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(header.model_dump_json() + "\n", encoding="utf-8")
            return cls(path, header, ())
        header, records = _read(path)
        if header.tasks_digest != tasks.digest:
            raise RunFileError(
                f"{path} holds a run of other tasks ({header.tasks}, changed since or another "
                "file): give another --run-file, or --fresh to start it over"
            )
        return cls(path, header, records)

    async def append(self, record: TaskRecord) -> None:
        async with self._lock:
            await asyncio.to_thread(self._write, record.model_dump_json() + "\n")
            self.records[record.key] = record

    def _write(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line)
            file.flush()
            os.fsync(file.fileno())


def _read(path: Path) -> tuple[RunHeader, list[TaskRecord]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RunFileError(f"cannot read the run file {path}: {exc}") from None
    if not text.endswith("\n"):  # the last line was cut short: drop it
        text = text[: text.rfind("\n") + 1]
        path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    try:
        header = RunHeader.model_validate_json(lines[0]) if lines else None
        records = [TaskRecord.model_validate_json(line) for line in lines[1:] if line.strip()]
    except ValidationError as exc:
        raise RunFileError(
            f"{path} is not an agentloom eval run file ({exc.errors()[0]['msg']})"
        ) from None
    if header is None:
        raise RunFileError(f"{path} is not an agentloom eval run file (no header line)")
    return header, records
