"""Managed agents' stored rows as their wire objects (:mod:`agentloom.api.managed_agents`)."""

from __future__ import annotations

import json

from agentloom.api.lists import ListPage
from agentloom.api.managed_agents import (
    AgentMessage,
    AgentMessagePage,
    AgentRun,
    AgentSchedule,
    AgentTask,
    ManagedAgent,
    ManagedAgentConfig,
    ManagedAgentPage,
    RunError,
    RunUsage,
    ToolCallRecord,
)
from agentloom.storage.agent_runs import RunRow
from agentloom.storage.agent_tasks import TaskRow
from agentloom.storage.managed_agents import MessageRow, ScheduleView, StoredAgent

__all__ = ["agent_page", "agent_wire", "message_page", "message_wire", "run_wire", "task_wire"]


def agent_wire(stored: StoredAgent) -> ManagedAgent:
    row = stored.row
    return ManagedAgent(
        id=row.id,
        name=row.name,
        agent_type=row.agent_type,
        config=ManagedAgentConfig.model_validate_json(row.config),
        status=row.status,
        summary_memory=row.summary_memory,
        created_at=int(row.created_at),
        updated_at=int(row.updated_at),
        template_id=row.template_id,
        schedule=_schedule(stored.schedule),
        total_runs=row.total_runs,
        total_tokens=row.input_tokens + row.output_tokens,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        last_run_at=_seconds(row.last_run_at),
        last_activity_at=_seconds(row.last_activity_at),
    )


def _schedule(view: ScheduleView | None) -> AgentSchedule | None:
    if view is None:
        return None
    return AgentSchedule(
        id=view.id,
        every=view.every,
        cron=view.cron,
        next_run_at=int(view.next_run_at),
        runs=view.runs,
    )


def agent_page(agents: list[ManagedAgent], *, has_more: bool) -> ManagedAgentPage:
    page = ListPage.of(agents, has_more=has_more)
    return ManagedAgentPage(**dict(page), agents=agents)


def message_wire(row: MessageRow) -> AgentMessage:
    calls = None
    if row.tool_calls is not None:
        calls = [ToolCallRecord.model_validate(call) for call in json.loads(row.tool_calls)]
    return AgentMessage(
        id=row.id,
        agent_id=row.agent_id,
        direction=row.direction,
        content=row.content,
        mode=row.mode,
        status=row.status,
        created_at=int(row.created_at),
        tool_calls=calls,
        run_id=row.run_id,
        stop_reason=row.stop_reason,
    )


def message_page(messages: list[AgentMessage], *, has_more: bool) -> AgentMessagePage:
    page = ListPage.of(messages, has_more=has_more)
    return AgentMessagePage(**dict(page), messages=messages)


def run_wire(row: RunRow) -> AgentRun:
    error = None if row.error is None else RunError.model_validate_json(row.error)
    usage = None
    if row.status in ("completed", "failed") or row.input_tokens or row.output_tokens:
        total = row.input_tokens + row.output_tokens
        usage = RunUsage(
            input_tokens=row.input_tokens, output_tokens=row.output_tokens, total_tokens=total
        )
    return AgentRun(
        id=row.id,
        agent_id=row.agent_id,
        status=row.status,
        trigger=row.trigger,
        created_at=int(row.created_at),
        started_at=_seconds(row.started_at),
        ended_at=_seconds(row.ended_at),
        error=error,
        usage=usage,
        reply_id=row.reply_id,
    )


def task_wire(row: TaskRow) -> AgentTask:
    return AgentTask(
        id=row.id,
        agent_id=row.agent_id,
        description=row.description,
        status=row.status,
        progress=json.loads(row.progress),
        findings=json.loads(row.findings),
        created_at=int(row.created_at),
        updated_at=int(row.updated_at),
    )


def _seconds(moment: float | None) -> int | None:
    return None if moment is None else int(moment)
