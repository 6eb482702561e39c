"""Managed agents (``/v1/managed-agents``), in OpenJarvis's shapes: its field names and values
(``agent_type``, ``config``, ``direction``, ``tasks``, the ``agents`` / ``messages`` / ``tasks``
keys of its lists), with OpenAI's list envelope besides (``data``, ``has_more`` ...) and the runs
that agentloom adds."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictStr

from agentloom.api.integers import INT32_MAX, StrictInt32
from agentloom.api.lists import ListPage
from agentloom.api.wire import Nullable, WireModel

NAME = Field(min_length=1, max_length=256)
TEXT_LIMIT = 1_000_000  # characters of a message, a task, instructions
MessageMode = Literal["queued", "immediate"]
RunStatus = Literal["queued", "in_progress", "completed", "failed", "cancelled"]
RunTrigger = Literal["manual", "message", "schedule"]


class ScheduleConfig(WireModel):
    """When the agent runs by itself: every ``every`` seconds, or at the times of ``cron``
    (five fields, UTC)."""

    type: Literal["interval", "cron"]
    every: StrictFloat | StrictInt32 | None = Field(default=None, gt=0, le=INT32_MAX)
    cron: str | None = Field(default=None, min_length=1, max_length=256)


class ManagedAgentConfig(WireModel):
    """An agent's configuration. Keys agentloom does not read are kept as they were given."""

    model_config = ConfigDict(extra="allow")

    model: str | None = Field(default=None, min_length=1, max_length=256)
    tools: list[StrictStr] = Field(default_factory=list, max_length=64)
    instructions: str | None = Field(default=None, max_length=TEXT_LIMIT)
    system_prompt: str | None = Field(default=None, max_length=TEXT_LIMIT)  # OpenJarvis's name
    task: str | None = Field(default=None, max_length=TEXT_LIMIT)  # what a tick works on
    max_turns: int = Field(default=10, ge=1, le=100)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    schedule: ScheduleConfig | None = None
    schedule_type: Literal["manual", "interval", "cron"] | None = None  # OpenJarvis's form
    schedule_value: StrictStr | StrictFloat | StrictInt32 | None = None
    strategies: dict[str, StrictStr] | None = None  # monitor_operative: axis -> choice

    @property
    def prompt(self) -> str | None:
        """The system prompt: ``instructions``, else OpenJarvis's ``system_prompt``."""
        return self.instructions if self.instructions is not None else self.system_prompt


DEFAULT_AGENT_TYPE: Final = "monitor_operative"
"""An agent's type when its creator names none (OpenJarvis's default). The only place it is
said: the console and the command line send no type unless one is chosen."""


class CreateManagedAgentRequest(WireModel):
    name: str = NAME
    agent_type: str = Field(default=DEFAULT_AGENT_TYPE, min_length=1, max_length=64)
    config: ManagedAgentConfig | None = None
    template_id: str | None = Field(default=None, min_length=1, max_length=96)


class UpdateManagedAgentRequest(WireModel):
    """``config`` replaces the whole configuration (as OpenJarvis's update does)."""

    name: str | None = Field(default=None, min_length=1, max_length=256)
    agent_type: str | None = Field(default=None, min_length=1, max_length=64)
    config: ManagedAgentConfig | None = None


class AgentSchedule(WireModel):
    """The agent's schedule as it runs: when it fires next, how often it fired."""

    id: str
    every: float | None = None
    cron: str | None = None
    next_run_at: int
    runs: int


class ManagedAgent(WireModel):
    id: str
    object: Literal["managed_agent"] = "managed_agent"
    name: str
    agent_type: str
    config: ManagedAgentConfig
    status: str  # idle, running, error
    summary_memory: str = ""
    created_at: int
    updated_at: int
    template_id: str | None = None
    schedule: AgentSchedule | None = None
    total_runs: int = 0
    total_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_cost: float = 0.0
    last_run_at: Nullable[int] = None
    last_activity_at: Nullable[int] = None
    current_activity: str = ""


class ManagedAgentPage(ListPage[ManagedAgent]):
    agents: list[ManagedAgent]  # OpenJarvis's key: the objects of ``data``


class DeletedManagedAgent(WireModel):
    id: str
    object: Literal["managed_agent.deleted"] = "managed_agent.deleted"
    deleted: bool = True


# --- messages ------------------------------------------------------------------------------


class SendMessageRequest(WireModel):
    """``stream``: run now and stream the reply; else the message is queued for a run
    (``mode: "immediate"`` starts one at once)."""

    content: str = Field(min_length=1, max_length=TEXT_LIMIT)
    mode: MessageMode = "queued"
    stream: StrictBool = False


class ToolCallRecord(WireModel):
    """One tool call of a reply: what was called and what it returned (OpenJarvis's keys)."""

    id: str
    tool: str
    arguments: str
    result: str
    success: bool
    latency: float  # milliseconds


class AgentMessage(WireModel):
    id: str
    object: Literal["managed_agent.message"] = "managed_agent.message"
    agent_id: str
    direction: Literal["user_to_agent", "agent_to_user"]
    content: str
    mode: MessageMode
    status: Literal["pending", "delivered", "incomplete"]
    created_at: int
    tool_calls: Nullable[list[ToolCallRecord]] = None
    run_id: str | None = None
    stop_reason: str | None = None  # a reply's: final, max_turns, loop_guard, error, cancelled


class AgentMessagePage(ListPage[AgentMessage]):
    messages: list[AgentMessage]  # OpenJarvis's key: the objects of ``data``


# --- runs ----------------------------------------------------------------------------------


class RunError(WireModel):
    code: str
    message: str


class RunUsage(WireModel):
    input_tokens: int
    output_tokens: int
    total_tokens: int


class AgentRun(WireModel):
    """One run of the agent over its queued messages (or a tick of its schedule)."""

    id: str
    object: Literal["managed_agent.run"] = "managed_agent.run"
    agent_id: str
    status: RunStatus
    trigger: RunTrigger
    created_at: int
    started_at: int | None = None
    ended_at: int | None = None
    error: RunError | None = None
    usage: RunUsage | None = None
    reply_id: str | None = None


# --- tasks ---------------------------------------------------------------------------------


class CreateTaskRequest(WireModel):
    description: str = Field(min_length=1, max_length=TEXT_LIMIT)
    status: str = Field(default="pending", min_length=1, max_length=32)


class UpdateTaskRequest(WireModel):
    description: str | None = Field(default=None, min_length=1, max_length=TEXT_LIMIT)
    status: str | None = Field(default=None, min_length=1, max_length=32)
    progress: dict[str, Any] | None = None
    findings: list[Any] | None = None


class AgentTask(WireModel):
    id: str
    object: Literal["managed_agent.task"] = "managed_agent.task"
    agent_id: str
    description: str
    status: str  # pending, in_progress, completed ... (OpenJarvis sets no list)
    progress: dict[str, Any]
    findings: list[Any]
    created_at: int
    updated_at: int


class AgentTaskList(WireModel):
    object: Literal["list"] = "list"
    data: list[AgentTask]
    tasks: list[AgentTask]  # OpenJarvis's key: the objects of ``data``


class DeletedAgentTask(WireModel):
    id: str
    object: Literal["managed_agent.task.deleted"] = "managed_agent.task.deleted"
    deleted: bool = True


# --- state ---------------------------------------------------------------------------------


class AgentTick(WireModel):
    """One tick of an operative's session."""

    number: int
    status: str  # running, ok, incomplete, error
    started_at: float
    finished_at: float | None = None
    summary: str = ""


class AgentState(WireModel):
    """What the agent keeps: its operative session's saved state and ticks (empty for the
    strategies that keep none), its tasks and its latest messages (newest first)."""

    object: Literal["managed_agent.state"] = "managed_agent.state"
    agent: ManagedAgent
    session_id: str
    state: dict[str, Any]
    history_messages: int  # messages in the operative session's history
    ticks: list[AgentTick]
    tasks: list[AgentTask]
    messages: list[AgentMessage]
